# hold.cmake: test hooks run by the build step (cmake -P, before the server is compiled).
# With STANDIN_HOLD=FILE in the environment, an instrumented build (its C flags have
# -fprofile-generate) creates FILE.held and waits while FILE exists, so a test can interrupt
# a build step at a known point (tests/e2e/pgo_recipes.t). Without it, nothing happens.
if(DEFINED ENV{STANDIN_HOLD} AND C_FLAGS MATCHES "-fprofile-generate")
  file(TOUCH "$ENV{STANDIN_HOLD}.held")
  while(EXISTS "$ENV{STANDIN_HOLD}")
    execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 0.1)
  endwhile()
endif()

# With STANDIN_FILL set, every build writes zeros to fill.bin in its build directory until
# the file system is full (dd fails with ENOSPC), then fails the step: the disk-full path of
# tests/e2e/pgo_recipes.t, on a small tmpfs work directory.
if(DEFINED ENV{STANDIN_FILL})
  execute_process(COMMAND dd if=/dev/zero of=fill.bin bs=64k RESULT_VARIABLE fill_rc)
  message(FATAL_ERROR "standin: filling the build directory stopped: ${fill_rc}")
endif()
