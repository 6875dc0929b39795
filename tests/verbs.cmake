# verbs.cmake - the strict verbs emulator (tests/verbs/fakeverbs.c, fake_engine.c, fake_fabric.c; library
# stitch_fakeverbs for any test that installs it with st_verbs_set_api), its self-tests, and the conformance suite
# (tests/verbs/conformance.c) that runs the same misuse cases against the emulator here and against rdma_rxe in the
# QEMU guest (tests/rxe/), where a run's result file is compared with this one (conformance --compare).
set(VERBS_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/verbs)

add_library(stitch_fakeverbs STATIC ${VERBS_TESTS}/fakeverbs.c ${VERBS_TESTS}/fake_engine.c ${VERBS_TESTS}/fake_fabric.c)
target_include_directories(stitch_fakeverbs PUBLIC ${VERBS_TESTS} ${CMAKE_SOURCE_DIR}/runtime)
target_link_libraries(stitch_fakeverbs PUBLIC Threads::Threads PRIVATE rt)

add_executable(test_fakeverbs ${VERBS_TESTS}/test_fakeverbs.c)
target_link_libraries(test_fakeverbs PRIVATE stitch_fakeverbs)
target_compile_options(test_fakeverbs PRIVATE -UNDEBUG)
foreach(sc basic keys states flush rnr retry limits channel faults threads procs claim)
  add_test(NAME verbs.fake.${sc} COMMAND test_fakeverbs ${sc})
  set_tests_properties(verbs.fake.${sc} PROPERTIES TIMEOUT 60 LABELS verbs)
endforeach()

# The conformance suite against the emulator (every case must meet Appendix A's rxe result, or be one of a class
# row's alternatives), and its --compare mode checked on doctored result files (compare_check.sh). In the guest,
# tests/rxe runs `conformance --real --out rxe.txt` and `conformance --compare fake.txt rxe.txt`.
add_executable(conformance ${VERBS_TESTS}/conformance.c)
target_link_libraries(conformance PRIVATE stitch_fakeverbs stitch)
target_compile_options(conformance PRIVATE -UNDEBUG)
add_test(NAME verbs.conformance.fake COMMAND conformance --fake)
add_test(NAME verbs.conformance.compare COMMAND sh ${VERBS_TESTS}/compare_check.sh $<TARGET_FILE:conformance>)
# --real where a device exists; skipped (77) naming why elsewhere
add_test(NAME verbs.conformance.real COMMAND conformance --real)
set_tests_properties(verbs.conformance.fake verbs.conformance.compare verbs.conformance.real PROPERTIES
                     TIMEOUT 120 LABELS verbs SKIP_RETURN_CODE 77)
