# fprofile.cmake: the stand-in's implementation of MySQL's two PGO options, written from the
# description in ../shared/reference/pgo.md §1.1-1.2 (not MySQL's code):
#
#   FPROFILE_GENERATE=ON  instrument: C and C++ flags get -fprofile-generate=${FPROFILE_DIR}
#                         (GCC also -fprofile-update=prefer-atomic)
#   FPROFILE_USE=ON       use the profile: -fprofile-use=${FPROFILE_DIR}
#                         (GCC also -fprofile-correction -fprofile-partial-training)
#   both ON               a configure-time FATAL_ERROR
#   FPROFILE_DIR          the profile directory; default GCC ${CMAKE_BINARY_DIR}-profile-data
#                         (a sibling of the build directory), clang
#                         ${CMAKE_BINARY_DIR}/../profile-data
#
# GCC names each .gcda file after the mangled absolute path of its object, so the USE build
# must compile in the same build directory as the GENERATE build (MySQL's documented rule).
# MySQL's side effects (REPRODUCIBLE_BUILD, LTO by default with USE) are left out: the
# stand-in only has to show where the flags go.

option(FPROFILE_GENERATE "Add -fprofile-generate" OFF)
option(FPROFILE_USE "Add -fprofile-use" OFF)

if(FPROFILE_GENERATE AND FPROFILE_USE)
  message(FATAL_ERROR "Cannot combine -fprofile-generate and -fprofile-use")
endif()

if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(FPROFILE_DIR_DEFAULT "${CMAKE_BINARY_DIR}/../profile-data")
else()
  set(FPROFILE_DIR_DEFAULT "${CMAKE_BINARY_DIR}-profile-data")
endif()
if(NOT DEFINED FPROFILE_DIR)
  set(FPROFILE_DIR "${FPROFILE_DIR_DEFAULT}")
endif()

if(FPROFILE_GENERATE)
  string(APPEND CMAKE_C_FLAGS " -fprofile-generate=${FPROFILE_DIR}")
  string(APPEND CMAKE_CXX_FLAGS " -fprofile-generate=${FPROFILE_DIR}")
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    string(APPEND CMAKE_C_FLAGS " -fprofile-update=prefer-atomic")
    string(APPEND CMAKE_CXX_FLAGS " -fprofile-update=prefer-atomic")
  endif()
endif()

if(FPROFILE_USE)
  string(APPEND CMAKE_C_FLAGS " -fprofile-use=${FPROFILE_DIR}")
  string(APPEND CMAKE_CXX_FLAGS " -fprofile-use=${FPROFILE_DIR}")
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    # profile collection in a threaded server is not race-free without atomic updates
    string(APPEND CMAKE_C_FLAGS " -fprofile-correction -fprofile-partial-training")
    string(APPEND CMAKE_CXX_FLAGS " -fprofile-correction -fprofile-partial-training")
  endif()
endif()
