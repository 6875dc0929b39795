# run_perf.cmake - run stitch-perf once and judge it by its exit status AND its output (ctest's pass/fail regular
# expressions would ignore the exit status, so both are checked here).
#
#   cmake -DCMD=<stitch-perf> "-DARGS=a|b|c" -DRC=<status> [-DCLOSING=<regex>] [-DSTDOUT=<regex>]
#         [-DSTDERR=<regex>] [-DSTDERR_EMPTY=1] [-DSTDOUT_EMPTY=1] [-DENV=NAME=value [-DENV2=.. -DENV3=..]] -P run_perf.cmake
#
# CLOSING must match the last line of stdout (stitch-perf's "N passed, N failed"); STDOUT and STDERR must match
# somewhere in their stream. Arguments are joined with '|' because ctest would split ';'.
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" args "${ARGS}")
set(env_prefix "")
if(DEFINED ENV)
  string(REPLACE "|" "\\;" envv "${ENV}") # HCCL_ALGO's ';' is written '|', as in tests/info/run_info.cmake
  set(env_prefix ${CMAKE_COMMAND} -E env "${envv}")
  foreach(more ENV2 ENV3) # further variables, one each
    if(DEFINED ${more})
      list(APPEND env_prefix "${${more}}")
    endif()
  endforeach()
endif()
execute_process(COMMAND ${env_prefix} ${CMD} ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE "|" " " shown "${ARGS}")
message("$ ${ENV} stitch-perf ${shown}\n${out}${err}")

set(failures "")
if(NOT "${rc}" STREQUAL "${RC}")
  string(APPEND failures "exit status ${rc}, expected ${RC}\n")
endif()
if(DEFINED CLOSING)
  string(REGEX REPLACE "\n$" "" trimmed "${out}")
  string(REGEX MATCH "[^\n]*$" last "${trimmed}")
  if(NOT last MATCHES "${CLOSING}")
    string(APPEND failures "last line of stdout is '${last}', expected a match for '${CLOSING}'\n")
  endif()
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  string(APPEND failures "stdout does not match '${STDOUT}'\n")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  string(APPEND failures "stderr does not match '${STDERR}'\n")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  string(APPEND failures "stderr is not empty\n")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  string(APPEND failures "stdout is not empty\n")
endif()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
