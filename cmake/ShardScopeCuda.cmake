# SHARDSCOPE_WITH_CUDA: AUTO finds nvcc (PATH, CUDACXX or /usr/local/cuda),
# ON requires it, OFF skips it. Sets SHARDSCOPE_HAVE_CUDA.
set(SHARDSCOPE_HAVE_CUDA OFF)
if(NOT SHARDSCOPE_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (default sm_90, Hopper)")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA 20 flags for nvcc
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(SHARDSCOPE_HAVE_CUDA ON)
  elseif(SHARDSCOPE_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SHARDSCOPE_WITH_CUDA=ON but no CUDA compiler was found "
                        "(tried CUDACXX, PATH and /usr/local/cuda/bin/nvcc)")
  endif()
endif()
