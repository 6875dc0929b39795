# catalogue.cmake - a user's own algorithm files (tests/catalogue/*.dsl, none of them in algos.dsl) compiled into a
# test program with stitch_compile_dsl, the way a user's project does it, and run by libstitch on threads and on
# processes (tests/catalogue/test_catalogue.c says what each scenario checks).
set(CATALOGUE_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/catalogue)

add_executable(test_catalogue ${CATALOGUE_TESTS}/test_catalogue.c)
stitch_compile_dsl(test_catalogue ${CATALOGUE_TESTS}/mine.dsl st_test_mine RANKS 1..16)
stitch_compile_dsl(test_catalogue ${CATALOGUE_TESTS}/other.dsl st_test_other RANKS 1..16)
stitch_compile_dsl(test_catalogue ${CATALOGUE_TESTS}/clash.dsl st_test_clash RANKS 1..16)
# Only the public header and the generated ones: a user's program sees no more of libstitch.
target_link_libraries(test_catalogue PRIVATE stitch)
target_include_directories(test_catalogue PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/proc)
target_compile_options(test_catalogue PRIVATE -UNDEBUG)

foreach(sc threads unknown duplicate)
  add_test(NAME catalogue.${sc} COMMAND test_catalogue ${sc})
  set_tests_properties(catalogue.${sc} PROPERTIES TIMEOUT 60 LABELS runtime)
endforeach()
foreach(sc proc proc.mismatch proc.differ)
  add_test(NAME catalogue.${sc} COMMAND test_catalogue ${sc})
  set_tests_properties(catalogue.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()
