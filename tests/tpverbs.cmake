# tpverbs.cmake - the verbs transport (runtime/tp_verbs.c): its pure decisions on recorded tables
# (tests/tpverbs/test_verbs_logic.c, every build, no device).
set(TPVERBS_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/tpverbs)
add_executable(test_verbs_logic ${TPVERBS_TESTS}/test_verbs_logic.c ${CMAKE_SOURCE_DIR}/runtime/verbs_logic.c)
target_include_directories(test_verbs_logic PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
foreach(sc dev gid credit)
  add_test(NAME verbs.logic.${sc} COMMAND test_verbs_logic ${sc})
  set_tests_properties(verbs.logic.${sc} PROPERTIES TIMEOUT 60)
endforeach()

# When verbs is chosen, and what is said when it cannot be (tests/tpverbs/test_verbs_select.c); one scenario per
# process, since libibverbs is looked for once per process.
if(STITCH_HAVE_VERBS)
  add_executable(test_verbs_select ${TPVERBS_TESTS}/test_verbs_select.c)
  target_link_libraries(test_verbs_select PRIVATE stitch)
  target_include_directories(test_verbs_select PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core)
  foreach(sc select nolib forced)
    add_test(NAME verbs.select.${sc} COMMAND test_verbs_select ${sc})
    set_tests_properties(verbs.select.${sc} PROPERTIES TIMEOUT 60 LABELS proc)
  endforeach()
  # stitch-info without the library: says so, and why
  stitch_info_test(verbs_nolib RC 0 ENV STITCH_IBVERBS_LIB=/nonexistent/libibverbs.so.1
                   STDOUT "\nverbs: unavailable: /nonexistent/libibverbs.so.1: cannot open shared object file")
endif()
