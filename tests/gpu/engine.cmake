# The GPU engine end to end (NCCL communicators, CUPTI tracing, the store run).
shardscope_add_gpu_test(NAME test_cuda_engine SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_engine.cpp
                        LIBS shardscope_cuda TIMEOUT 600)
