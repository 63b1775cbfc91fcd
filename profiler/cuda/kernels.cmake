# The embedding kernels and their launch math (owned with embedding_cuda.h):
# the public API's host side in two C++20 files, the kernels in CUDA C++17,
# and embedding_launch.h between them.
set(SHARDSCOPE_CUDA_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/embedding_cuda.cu
  ${CMAKE_CURRENT_LIST_DIR}/embedding_cuda.cpp
  ${CMAKE_CURRENT_LIST_DIR}/embedding_cuda_ops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/launch_config.cpp)
