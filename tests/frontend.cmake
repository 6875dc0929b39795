# frontend.cmake - tests of the front end (re2c lexer, lemon parser, diagnostics), included from tests/CMakeLists.txt.
#
#   frontend_parse            table-driven unit test: AST shape and exact diagnostics per snippet
#   frontend_limits           input limits: FIFO, device, directory, size cap, BOM, long names, 100,000 lets
#   frontend_golden_<f>.dsl   st-parse on tests/frontend/bad/<f>.dsl must print exactly <f>.err
# Golden files change only through `cmake --build build --target update-golden-frontend`. The fuzz target and
# the replay of its corpus: fuzz.cmake.
set(ST_FRONT_TESTS ${CMAKE_CURRENT_LIST_DIR}/frontend)

add_executable(test_parse ${ST_FRONT_TESTS}/test_parse.c)
target_link_libraries(test_parse PRIVATE stitch_front)
target_compile_options(test_parse PRIVATE -UNDEBUG)
add_test(NAME frontend_parse COMMAND test_parse)

add_executable(test_limits ${ST_FRONT_TESTS}/test_limits.c)
target_link_libraries(test_limits PRIVATE stitch_front)
target_compile_options(test_limits PRIVATE -UNDEBUG)
add_test(NAME frontend_limits COMMAND test_limits)
set_tests_properties(frontend_limits PROPERTIES TIMEOUT 60) # a FIFO or /dev/zero must not hang the suite

add_executable(st-parse ${ST_FRONT_TESTS}/parse_main.c)
target_link_libraries(st-parse PRIVATE stitch_front)

# st-parse runs inside bad/ with the bare file name, so the paths in the messages do not depend on the checkout; its
# exit status is 1 when the golden file holds diagnostics, else 0 (read here: a changed .err reconfigures).
file(GLOB ST_FRONT_BAD CONFIGURE_DEPENDS ${ST_FRONT_TESTS}/bad/*.dsl)
set(ST_FRONT_UPDATES "")
foreach(dsl ${ST_FRONT_BAD})
  get_filename_component(name ${dsl} NAME)
  string(REGEX REPLACE "\\.dsl$" ".err" golden ${dsl})
  set(rc 1)
  if(EXISTS ${golden})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${golden})
    file(READ ${golden} text)
    if(text STREQUAL "")
      set(rc 0)
    endif()
  endif()
  set(run -DCMD=$<TARGET_FILE:st-parse> -DARGS=${name} -DCWD=${ST_FRONT_TESTS}/bad -DGOLDEN=${golden}
          -DGOLDEN_OF=output)
  add_test(NAME frontend_golden_${name} COMMAND ${CMAKE_COMMAND} ${run} -DRC=${rc} -P ${ST_RUN})
  list(APPEND ST_FRONT_UPDATES COMMAND ${CMAKE_COMMAND} ${run} -DUPDATE=1 -P ${ST_RUN})
endforeach()
add_custom_target(update-golden-frontend ${ST_FRONT_UPDATES}
  DEPENDS st-parse
  COMMENT "regenerating tests/frontend/bad/*.err")
