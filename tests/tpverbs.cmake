# tpverbs.cmake - the verbs transport (runtime/tp_verbs.c): its pure decisions on recorded tables
# (tests/tpverbs/test_verbs_logic.c, every build, no device).
set(TPVERBS_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/tpverbs)
add_executable(test_verbs_logic ${TPVERBS_TESTS}/test_verbs_logic.c ${CMAKE_SOURCE_DIR}/runtime/transport/verbs_logic.c
               ${CMAKE_SOURCE_DIR}/runtime/transport/mr_cache.c)
target_include_directories(test_verbs_logic PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
foreach(sc dev gid credit mrc)
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

# The transport in process mode (tests/tpverbs/test_verbs_proc.c): over the emulator (when tests/verbs.cmake made
# stitch_fakeverbs) every collective with ring, nhr and rhd on 4 processes, through 4 KiB rings too, and the fault
# matrix; `real` runs the collectives through the real libibverbs (skips without a device: the rxe guest runs it).
if(STITCH_HAVE_VERBS)
  add_executable(test_verbs_proc ${TPVERBS_TESTS}/test_verbs_proc.c)
  target_link_libraries(test_verbs_proc PRIVATE stitch)
  target_include_directories(test_verbs_proc PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core
                             ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
  set(TPVERBS_PROC real)
  if(TARGET stitch_fakeverbs)
    target_link_libraries(test_verbs_proc PRIVATE stitch_fakeverbs)
    target_compile_definitions(test_verbs_proc PRIVATE ST_HAVE_FAKE=1)
    list(APPEND TPVERBS_PROC colls colls.tiny fault.drop fault.rkey fault.qperr fault.portdown fault.deadpeer
         fault.rnr)
  endif()
  foreach(sc ${TPVERBS_PROC})
    add_test(NAME verbs.proc.${sc} COMMAND test_verbs_proc ${sc})
    set_tests_properties(verbs.proc.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
  endforeach()
  # The one-sided path over the emulator (tests/tpverbs/test_verbs_rma.c): every collective on 2-4 ranks
  # bit-identical to the stream path, no registration in the steady state, the cache's eviction and invalidation,
  # a peer dying mid-write.
  if(TARGET stitch_fakeverbs)
    add_executable(test_verbs_rma ${TPVERBS_TESTS}/test_verbs_rma.c)
    target_link_libraries(test_verbs_rma PRIVATE stitch stitch_fakeverbs)
    target_include_directories(test_verbs_rma PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core
                               ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
    foreach(sc colls.2 colls.3 colls.4 steady evict invalidate fault.deadpeer)
      add_test(NAME verbs.rma.${sc} COMMAND test_verbs_rma ${sc})
      set_tests_properties(verbs.rma.${sc} PROPERTIES TIMEOUT 180 LABELS "proc;verbs" RUN_SERIAL TRUE)
    endforeach()
  endif()
endif()
