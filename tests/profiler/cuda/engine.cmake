# The GPU engine's layouts and communicator mapping, without a GPU.
shardscope_add_test(NAME test_exchange_layout SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_exchange_layout.cpp
                    LIBS shardscope_cuda LABELS unit)
