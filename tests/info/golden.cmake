# golden.cmake - run stitch-info and compare its stdout with a golden file checked into tests/info/golden/.
#
#   cmake -DCMD=<stitch-info> "-DARGS=a|b" -DGOLDEN=<file> -P golden.cmake
#
# The golden files pin what a selection policy decides (stitch-info --selection --servers: one line per server
# count and collective). A deliberate change of a policy regenerates them: run the tests with
# STITCH_UPDATE_GOLDEN=1 in the environment (ctest -R info.golden), which writes the files instead of comparing,
# then review the diff (git diff tests/info/golden/) and commit it.
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${CMD} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "stitch-info ${ARGS} exited ${rc}: ${err}")
endif()
if(DEFINED ENV{STITCH_UPDATE_GOLDEN} AND NOT "$ENV{STITCH_UPDATE_GOLDEN}" STREQUAL "" AND
   NOT "$ENV{STITCH_UPDATE_GOLDEN}" STREQUAL "0")
  file(WRITE ${GOLDEN} "${out}")
  message("updated ${GOLDEN}")
  return()
endif()
if(NOT EXISTS ${GOLDEN})
  message(FATAL_ERROR "${GOLDEN} is missing (STITCH_UPDATE_GOLDEN=1 writes it)")
endif()
file(READ ${GOLDEN} want)
if(NOT out STREQUAL want)
  string(REPLACE "\n" ";" got_lines "${out}")
  string(REPLACE "\n" ";" want_lines "${want}")
  set(diff "")
  set(shown 0)
  foreach(line IN LISTS got_lines)
    if(NOT line IN_LIST want_lines AND shown LESS 20)
      string(APPEND diff "  now:    ${line}\n")
      math(EXPR shown "${shown} + 1")
    endif()
  endforeach()
  foreach(line IN LISTS want_lines)
    if(NOT line IN_LIST got_lines AND shown LESS 40)
      string(APPEND diff "  golden: ${line}\n")
      math(EXPR shown "${shown} + 1")
    endif()
  endforeach()
  message(FATAL_ERROR "stitch-info ${ARGS} differs from ${GOLDEN} (lines that differ, first ones):\n${diff}"
                      "A deliberate change: rerun with STITCH_UPDATE_GOLDEN=1 and review git diff tests/info/golden/")
endif()
