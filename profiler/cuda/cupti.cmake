# CUPTI: record conversion (no GPU needed) and the tracer that drives CUPTI.
set(SHARDSCOPE_CUPTI_RECORD_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cupti_records.cpp)
set(SHARDSCOPE_CUPTI_TRACER_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cupti_tracer.cpp)
