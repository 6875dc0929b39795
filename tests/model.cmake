# model.cmake - the cost model (core/st_model.c) and `stitchc sim`, included from tests/CMakeLists.txt.
#
#   model.formulas       test_model: every (algorithm, collective) the spec gives a cost for, simulated on a flat
#                        machine over p = 2..1024 and three sizes, within 1% of the spec's formula or of the exact
#                        value the test states where they differ by design; symmetric against exact; AHC on pods
#                        64 + 128 against spec 9.7; a step as slow as its slowest rank
#   model.formulas_long  the same with p up to 1024 for the O(p^2) algorithms (label long)
#   model.cli.*          stitchc sim: the done-means ring figure in JSON, 100,000 ranks, options and errors
add_executable(test_model ${CMAKE_CURRENT_SOURCE_DIR}/model/test_model.c)
target_link_libraries(test_model PRIVATE stitch_front m)
target_compile_options(test_model PRIVATE -UNDEBUG)
add_test(NAME model.formulas COMMAND test_model ${STITCH_DSL})
add_test(NAME model.formulas_long COMMAND test_model ${STITCH_DSL} --long)
set_tests_properties(model.formulas_long PROPERTIES LABELS long)
