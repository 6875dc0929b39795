# frontend.cmake - tests of the front end (re2c lexer, lemon parser, diagnostics), included from tests/CMakeLists.txt.
#
#   frontend_parse            table-driven unit test: AST shape and exact diagnostics per snippet
#   frontend_golden_<f>.dsl   st-parse on tests/frontend/bad/<f>.dsl must print exactly <f>.err
#   fuzz_replay_frontend      every file of the seed corpus through the fuzz entry point (no sanitizer needed)
#   fuzz-frontend             libFuzzer binary, built only when the C compiler is clang
# Golden files change only through `cmake --build build --target update-golden-frontend`.
set(ST_FRONT_TESTS ${CMAKE_CURRENT_LIST_DIR}/frontend)
set(ST_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR}/fuzz)

add_executable(test_parse ${ST_FRONT_TESTS}/test_parse.c)
target_link_libraries(test_parse PRIVATE stitch_front)
target_compile_options(test_parse PRIVATE -UNDEBUG)
add_test(NAME frontend_parse COMMAND test_parse)

add_executable(st-parse ${ST_FRONT_TESTS}/parse_main.c)
target_link_libraries(st-parse PRIVATE stitch_front)

file(GLOB ST_FRONT_BAD CONFIGURE_DEPENDS ${ST_FRONT_TESTS}/bad/*.dsl)
foreach(dsl ${ST_FRONT_BAD})
  get_filename_component(name ${dsl} NAME)
  add_test(NAME frontend_golden_${name}
           COMMAND ${CMAKE_COMMAND} -DST_PARSE=$<TARGET_FILE:st-parse> -DDIR=${ST_FRONT_TESTS}/bad -DNAME=${name}
                   -P ${ST_FRONT_TESTS}/golden.cmake)
endforeach()
add_custom_target(update-golden-frontend
  COMMAND ${CMAKE_COMMAND} -DST_PARSE=$<TARGET_FILE:st-parse> -DDIR=${ST_FRONT_TESTS}/bad -DUPDATE=ON
          -P ${ST_FRONT_TESTS}/golden.cmake
  DEPENDS st-parse
  COMMENT "regenerating tests/frontend/bad/*.err")

# The replay driver runs the fuzz entry point over the corpus in every build, so fuzzer finds stay fixed.
add_executable(fuzz-replay-frontend ${ST_FUZZ_DIR}/replay.c ${ST_FUZZ_DIR}/fuzz_frontend.c)
target_link_libraries(fuzz-replay-frontend PRIVATE stitch_front)
target_compile_options(fuzz-replay-frontend PRIVATE -UNDEBUG)
add_test(NAME fuzz_replay_frontend COMMAND fuzz-replay-frontend ${ST_FUZZ_DIR}/corpus/frontend)

if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  # libFuzzer needs coverage in the code under test, so the front end is compiled again, instrumented.
  set(ST_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_library(stitch_front_fuzz STATIC
    ${CMAKE_SOURCE_DIR}/dsl/ast.c ${CMAKE_SOURCE_DIR}/dsl/diag.c ${CMAKE_SOURCE_DIR}/dsl/frontend.c
    ${GEN}/lexer.c ${GEN}/parser.c)
  target_include_directories(stitch_front_fuzz PUBLIC ${CMAKE_SOURCE_DIR}/dsl ${CMAKE_SOURCE_DIR}/runtime ${GEN})
  target_compile_options(stitch_front_fuzz PRIVATE ${ST_FUZZ_FLAGS})
  add_executable(fuzz-frontend ${ST_FUZZ_DIR}/fuzz_frontend.c)
  target_compile_options(fuzz-frontend PRIVATE -fsanitize=fuzzer,address,undefined -UNDEBUG)
  target_link_options(fuzz-frontend PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz-frontend PRIVATE stitch_front_fuzz)
endif()
