# ATTN_PCH: one precompiled header of upstream MLIR headers
# (cmake/pch/UpstreamHeaders.h), built once and reused by every target that
# compiles against MLIR. Most of a file's compile time is parsing those
# headers; the test suite builds the project twice, both with clang (the
# normal build and the sanitizer build: scripts/test.sh).
#
# On by default with clang only: clang loads its PCH lazily, while g++ reads
# its much larger one whole in every file, which cost as much as it saved
# (bench/NOTES.md, "Build time", 2026-12-06).
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(ATTN_PCH_DEFAULT ON)
else()
  set(ATTN_PCH_DEFAULT OFF)
endif()
option(ATTN_PCH "Precompile the upstream MLIR headers once per build"
  ${ATTN_PCH_DEFAULT})

# attn_use_pch(target...): each target reuses the header precompiled by an
# anchor object library with the same compile options (clang refuses a PCH
# built with other language or sanitizer options, e.g. the fuzzing
# instrumentation of fuzz/CMakeLists.txt), so targets are grouped by their
# COMPILE_OPTIONS, one anchor per group. Call it once every target exists.
function(attn_use_pch)
  if(NOT ATTN_PCH)
    return()
  endif()
  foreach(target ${ARGN})
    if(NOT TARGET ${target})
      continue()
    endif()
    get_target_property(options ${target} COMPILE_OPTIONS)
    if(NOT options)
      set(options "")
    endif()
    string(MD5 key "${options}")
    string(SUBSTRING "${key}" 0 8 key)
    set(anchor AttnUpstreamPch_${key})
    if(NOT TARGET ${anchor})
      add_library(${anchor} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/Anchor.cpp)
      set_target_properties(${anchor} PROPERTIES
        POSITION_INDEPENDENT_CODE ON
        COMPILE_OPTIONS "${options}")
      target_precompile_headers(${anchor} PRIVATE
        ${PROJECT_SOURCE_DIR}/cmake/pch/UpstreamHeaders.h)
    endif()
    target_precompile_headers(${target} REUSE_FROM ${anchor})
  endforeach()
endfunction()
