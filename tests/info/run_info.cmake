# run_info.cmake - run stitch-info once and judge it by its exit status AND its output.
#
#   cmake -DCMD=<stitch-info> "-DARGS=a|b" -DRC=<status> [-DSTDOUT=<regex>] [-DSTDERR=<regex>] [-DSTDERR_EMPTY=1]
#         [-DENV=NAME=value] -P run_info.cmake
#
# STDOUT and STDERR must match somewhere in their stream. ctest splits arguments on ';', which HCCL_ALGO needs, so
# ARGS and ENV write it as '|' (HCCL_ALGO has no '|' of its own) and this script turns it back.
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" args "${ARGS}")
set(env_prefix "")
if(DEFINED ENV)
  string(REPLACE "|" "\\;" envv "${ENV}")
  set(env_prefix ${CMAKE_COMMAND} -E env "${envv}")
endif()
execute_process(COMMAND ${env_prefix} ${CMD} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("$ ${ENV} stitch-info ${ARGS}\n${out}${err}")

set(failures "")
if(NOT "${rc}" STREQUAL "${RC}")
  string(APPEND failures "exit status ${rc}, expected ${RC}\n")
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
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
