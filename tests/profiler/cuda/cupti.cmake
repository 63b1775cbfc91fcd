# CUPTI record conversion and its mapping onto engine spans, from hand-filled
# CUPTI record structs (no GPU needed).
shardscope_add_test(NAME test_cupti_records SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cupti_records.cpp
                    LIBS shardscope_cupti_records LABELS unit)
