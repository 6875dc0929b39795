# run_golden.cmake - run a command and compare its standard output with a golden file, byte for byte.
#
#   cmake -DCMD=<program> -DARGS=<a|b|c> -DGOLDEN=<file> [-DACTUAL=<file>] [-DIGNORE=<regex>] [-DJSON=1]
#         [-DUPDATE=1] -P run_golden.cmake
#
# Arguments are joined with `|` because a `;` list does not survive add_test and add_custom_target intact.
# The test fails on a non-zero exit, on any difference (a unified diff is printed and the actual output kept
# in ACTUAL), and with JSON=1 when the output is not one valid JSON value. IGNORE is a regex whose matches are
# blanked on both sides before comparing (used for `"line": N`, so moving an algorithm within algos.dsl does not
# break a golden file about its schedule). UPDATE=1 rewrites the golden file instead (the update-golden-compiler
# target); golden files change only through it.
cmake_minimum_required(VERSION 3.18)
foreach(v CMD GOLDEN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_golden.cmake: ${v} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${CMD} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "command failed (exit ${rc}): ${CMD} ${args}\n${err}")
endif()
if(UPDATE)
  file(WRITE "${GOLDEN}" "${out}")
  message(STATUS "updated ${GOLDEN}")
  return()
endif()
if(JSON AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
  string(JSON type ERROR_VARIABLE jerr TYPE "${out}")
  if(jerr)
    message(FATAL_ERROR "output is not valid JSON: ${jerr}")
  endif()
endif()
if(NOT EXISTS "${GOLDEN}")
  message(FATAL_ERROR "golden file ${GOLDEN} is missing; build the update-golden-compiler target")
endif()
file(READ "${GOLDEN}" want)
set(got "${out}")
if(DEFINED IGNORE) # not if(IGNORE): the word IGNORE is one of if()'s false constants
  string(REGEX REPLACE "${IGNORE}" "<ignored>" got "${got}")
  string(REGEX REPLACE "${IGNORE}" "<ignored>" want "${want}")
endif()
if(NOT got STREQUAL want)
  if(NOT ACTUAL)
    set(ACTUAL "${GOLDEN}.actual")
  endif()
  file(WRITE "${ACTUAL}" "${out}")
  execute_process(COMMAND diff -u "${GOLDEN}" "${ACTUAL}" OUTPUT_VARIABLE d)
  message(FATAL_ERROR "output differs from ${GOLDEN} (actual output in ${ACTUAL}):\n${d}")
endif()
