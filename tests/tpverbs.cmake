# tpverbs.cmake - the verbs transport (runtime/tp_verbs.c): its pure decisions on recorded tables
# (tests/tpverbs/test_verbs_logic.c, every build, no device).
set(TPVERBS_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/tpverbs)
add_executable(test_verbs_logic ${TPVERBS_TESTS}/test_verbs_logic.c ${CMAKE_SOURCE_DIR}/runtime/verbs_logic.c)
target_include_directories(test_verbs_logic PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
foreach(sc dev gid credit)
  add_test(NAME verbs.logic.${sc} COMMAND test_verbs_logic ${sc})
  set_tests_properties(verbs.logic.${sc} PROPERTIES TIMEOUT 60)
endforeach()
