# Build options. CUDA and MPI are AUTO by default: used when found, skipped
# with a line in the feature summary when not.
set(SHARDSCOPE_WITH_CUDA "AUTO" CACHE STRING "Build CUDA code: AUTO, ON or OFF")
set_property(CACHE SHARDSCOPE_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(SHARDSCOPE_WITH_MPI "AUTO" CACHE STRING "Build MPI code: AUTO, ON or OFF")
set_property(CACHE SHARDSCOPE_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
option(SHARDSCOPE_BUILD_GUI "Build the desktop app" ON)
option(SHARDSCOPE_BUILD_AGENT "Build shardscope-agent, the remote transport and shardscope-cli remote" ON)
option(SHARDSCOPE_BUILD_TESTS "Build tests and benchmarks" ON)
option(SHARDSCOPE_WERROR "Treat compiler warnings as errors" OFF)
option(SHARDSCOPE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

foreach(opt SHARDSCOPE_WITH_CUDA SHARDSCOPE_WITH_MPI)
  if(NOT ${opt} MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${opt} must be AUTO, ON or OFF, not '${${opt}}'")
  endif()
endforeach()

if(SHARDSCOPE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
