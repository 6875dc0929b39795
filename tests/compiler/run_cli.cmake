# run_cli.cmake - run stitchc with arguments and check its exit status and output.
#
#   cmake -DCMD=<program> -DARGS=<a|b|c> -DRC=<expected exit status>
#         [-DSTDOUT=<regex>] [-DSTDERR=<regex>] [-DSTDOUT_EMPTY=1] [-DSTDERR_EMPTY=1]
#         [-DNO_FILES=<f1|f2>] [-DMKFIFO=<path>] -P run_cli.cmake
#
# NO_FILES are removed before the run and must not exist after it (a failed `emit` leaves nothing behind).
# MKFIFO is (re)created as a named pipe before the run, for inputs that must be refused rather than waited on.
# Arguments are joined with `|` (see run_golden.cmake).
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" no_files "${NO_FILES}")
foreach(f IN LISTS no_files)
  file(REMOVE "${f}")
endforeach()
if(DEFINED MKFIFO)
  file(REMOVE "${MKFIFO}")
  execute_process(COMMAND mkfifo "${MKFIFO}" RESULT_VARIABLE fifo_rc)
  if(NOT fifo_rc EQUAL 0)
    message(FATAL_ERROR "mkfifo ${MKFIFO} failed: ${fifo_rc}")
  endif()
endif()
execute_process(COMMAND ${CMD} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(what "${CMD} ${ARGS}\n--- stdout:\n${out}--- stderr:\n${err}")
if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "expected exit ${RC}, got ${rc}: ${what}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match '${STDOUT}': ${what}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}': ${what}")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  message(FATAL_ERROR "stdout should be empty: ${what}")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  message(FATAL_ERROR "stderr should be empty: ${what}")
endif()
foreach(f IN LISTS no_files)
  if(EXISTS "${f}")
    message(FATAL_ERROR "${f} should not exist after: ${what}")
  endif()
endforeach()
