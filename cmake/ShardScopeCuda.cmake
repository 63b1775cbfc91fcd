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

# The GPU backend also needs NCCL (collectives) and CUPTI (tracing); both ship
# with the CUDA toolkit (NCCL_ROOT points at another NCCL, e.g. NVIDIA's nvidia-nccl-cu13 wheel).
if(SHARDSCOPE_HAVE_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY OR NOT TARGET CUDA::cupti)
    if(SHARDSCOPE_WITH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "SHARDSCOPE_WITH_CUDA=ON needs NCCL (nccl.h: ${NCCL_INCLUDE_DIR}, libnccl: ${NCCL_LIBRARY}; "
                          "set NCCL_ROOT) and CUPTI (CUDA::cupti)")
    endif()
    message(WARNING "CUDA found but NCCL or CUPTI not: the CUDA backend is left out (set NCCL_ROOT)")
    set(SHARDSCOPE_HAVE_CUDA OFF)
  else()
    add_library(shardscope_nccl INTERFACE IMPORTED)
    target_include_directories(shardscope_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(shardscope_nccl INTERFACE ${NCCL_LIBRARY})
  endif()
endif()
