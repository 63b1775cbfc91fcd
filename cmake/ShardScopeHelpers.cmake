# Small helpers shared by every module.

# Warnings for our own targets (not for imported ones).
function(shardscope_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
      -Wunused -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough>)
  if(SHARDSCOPE_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

# shardscope_add_test(NAME <name> SOURCES <files...> LIBS <libs...> LABELS <labels...> [TIMEOUT s])
# One Qt Test executable per test file, registered with ctest under its labels.
function(shardscope_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  set_target_properties(${T_NAME} PROPERTIES AUTOMOC ON)
  target_link_libraries(${T_NAME} PRIVATE Qt6::Test ${T_LIBS})
  target_compile_definitions(${T_NAME} PRIVATE
    SHARDSCOPE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    SHARDSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SHARDSCOPE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  shardscope_warnings(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if("unit" IN_LIST T_LABELS)  # built by the target unit_tests (the sanitizer run)
    set_property(GLOBAL APPEND PROPERTY SHARDSCOPE_UNIT_TEST_TARGETS ${T_NAME})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;ASAN_OPTIONS=detect_leaks=0"
    SKIP_RETURN_CODE 77)
  if("gpu" IN_LIST T_LABELS)
    # GPU tests QSKIP in initTestCase without a GPU; ctest then reports them as skipped.
    set_tests_properties(${T_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP   : [A-Za-z_:]*initTestCase")
  endif()
endfunction()

# shardscope_add_gpu_test(NAME <name> SOURCES <files...> LIBS <libs...> [TIMEOUT s])
# A plain executable (no Qt, so scripts/gpu-check builds it on a bare GPU
# machine) labelled `gpu`: exit 0 passes, 77 skips (no GPU), anything else fails.
# tests/gpu/gpu_test.h is its harness.
function(shardscope_add_gpu_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/gpu)
  target_compile_definitions(${T_NAME} PRIVATE SHARDSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  shardscope_warnings(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if("unit" IN_LIST T_LABELS)  # built by the target unit_tests (the sanitizer run)
    set_property(GLOBAL APPEND PROPERTY SHARDSCOPE_UNIT_TEST_TARGETS ${T_NAME})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS gpu TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77)
endfunction()

# shardscope_uses_agent(<target>): a test or bench that starts a real
# shardscope-agent on loopback (tests/app/agent/agent_harness.h): the
# harness's folder, the agent's and the engine's paths, built first.
function(shardscope_uses_agent target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/app/agent)
  target_compile_definitions(${target} PRIVATE SHARDSCOPE_AGENT="$<TARGET_FILE:shardscope-agent>")
  add_dependencies(${target} shardscope-agent)
  if(TARGET shardscope-engine)
    target_compile_definitions(${target} PRIVATE SHARDSCOPE_ENGINE="$<TARGET_FILE:shardscope-engine>")
    add_dependencies(${target} shardscope-engine)
  else()
    target_compile_definitions(${target} PRIVATE SHARDSCOPE_ENGINE="shardscope-engine")
  endif()
endfunction()
