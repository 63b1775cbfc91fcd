# The local machine's GPUs as a cluster: synthetic device lists (no GPU needed).
shardscope_add_test(NAME test_local_cluster SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_local_cluster.cpp
  LIBS shardscope_engine LABELS unit)
