# The embedding kernels against the CPU backend (gpu label), and their
# benchmark (a plain executable scripts/gpu-check runs, not a test).
shardscope_add_gpu_test(NAME test_cuda_kernels SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_kernels.cpp
                        LIBS shardscope_cuda TIMEOUT 300)
add_executable(bench_cuda_kernels ${CMAKE_CURRENT_LIST_DIR}/bench_cuda_kernels.cpp)
target_link_libraries(bench_cuda_kernels PRIVATE shardscope_cuda)
target_include_directories(bench_cuda_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR})
shardscope_warnings(bench_cuda_kernels)
