# verifyrange.cmake - nothing runs unproved (issue 18, items 2, 3 and 5): catalogues emitted for a range run
# outside it only after a proof, every root a call uses is proved, and stitch_comm_set_algorithm refuses an
# algorithm whose `require` does not hold (tests/verifyrange/test_verifyrange.c says what each scenario checks).
set(VERIFYRANGE_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/verifyrange)

add_executable(test_verifyrange ${VERIFYRANGE_TESTS}/test_verifyrange.c)
# late33 with stitch_add_dsl's default range (emit's 1..32), as a user's project would write it
stitch_add_dsl(test_verifyrange ${VERIFYRANGE_TESTS}/late33.dsl NAME st_test_late33)
stitch_add_dsl(test_verifyrange ${VERIFYRANGE_TESTS}/root5.dsl RANKS 1..64 NAME st_test_root5)
stitch_add_dsl(test_verifyrange ${VERIFYRANGE_TESTS}/even.dsl RANKS 1..8 NAME st_test_even)
target_link_libraries(test_verifyrange PRIVATE stitch)
target_compile_definitions(test_verifyrange PRIVATE ALGO_DIR="${VERIFYRANGE_TESTS}")
target_compile_options(test_verifyrange PRIVATE -UNDEBUG)

foreach(sc late33 root5 require)
  add_test(NAME verifyrange.${sc} COMMAND test_verifyrange ${sc})
  set_tests_properties(verifyrange.${sc} PROPERTIES TIMEOUT 120 LABELS runtime)
endforeach()
# 40, 64 and 100 thread ranks: about 10 s on an idle 2-core machine, most of it each rank building its whole schedule
add_test(NAME verifyrange.large COMMAND test_verifyrange large)
set_tests_properties(verifyrange.large PROPERTIES TIMEOUT 300 LABELS runtime)

# stitchc verify names the roots it sampled above p = 32, and --all-roots tries every one (root5 fails at p = 33)
add_test(NAME verifyrange.stitchc.sampled
         COMMAND stitchc verify ${VERIFYRANGE_TESTS}/root5.dsl --ranks 30..40)
set_tests_properties(verifyrange.stitchc.sampled PROPERTIES TIMEOUT 60 LABELS compiler
  PASS_REGULAR_EXPRESSION "every root up to p = 32, then roots 0\\.\\.3, p/2, p-2, p-1 only \\(--all-roots")
add_test(NAME verifyrange.stitchc.all_roots
         COMMAND stitchc verify ${VERIFYRANGE_TESTS}/root5.dsl --ranks 30..40 --all-roots)
set_tests_properties(verifyrange.stitchc.all_roots PROPERTIES TIMEOUT 60 LABELS compiler
  PASS_REGULAR_EXPRESSION "root5 broadcast is wrong for p = 33, root 5")
# an algorithm that needs equal groups and lacks `require uniform()`: the counterexample says what to add
add_test(NAME verifyrange.stitchc.require_hint COMMAND stitchc verify ${VERIFYRANGE_TESTS}/samering.dsl --ranks 1..8)
set_tests_properties(verifyrange.stitchc.require_hint PROPERTIES TIMEOUT 60 LABELS compiler
  PASS_REGULAR_EXPRESSION "note: samering all_gather holds on the layouts of equal groups tried before [0-9,]+; if it needs groups of equal size, add `require uniform\\(\\)`")
# the same algorithm loaded at run time on unequal groups: init fails, and the counterexample says what to add
add_test(NAME verifyrange.algofile.require_hint
         COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitch-perf>
                 "-DARGS=all_gather|-a|samering|-t|3|--groups|1,2|-b|4K|-e|4K|-c|1|-w|0|-n|1" -DRC=2
                 -DSTDOUT_EMPTY=1 "-DENV=STITCH_ALGO_FILE=${VERIFYRANGE_TESTS}/samering.dsl"
                 "-DSTDERR=samering.dsl:3: note: the communicator's groups are of unequal sizes; if samering all_gather needs groups of equal size, add `require uniform\\(\\)`"
                 -P ${ST_RUN})
set_tests_properties(verifyrange.algofile.require_hint PROPERTIES TIMEOUT 60 LABELS runtime)
