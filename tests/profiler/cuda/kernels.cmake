# The embedding kernels' launch math, without a GPU (nothing is launched).
shardscope_add_test(NAME test_cuda_launch_config SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_launch_config.cpp
                    LIBS shardscope_cuda LABELS unit)
