# hold.cmake: a test hook run by the build step (cmake -P, before the server is compiled).
# With STANDIN_HOLD=FILE in the environment, an instrumented build (its C flags have
# -fprofile-generate) creates FILE.held and waits while FILE exists, so a test can interrupt
# a build step at a known point (tests/e2e/pgo_recipes.t). Without it, nothing happens.
if(DEFINED ENV{STANDIN_HOLD} AND C_FLAGS MATCHES "-fprofile-generate")
  file(TOUCH "$ENV{STANDIN_HOLD}.held")
  while(EXISTS "$ENV{STANDIN_HOLD}")
    execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 0.1)
  endwhile()
endif()
