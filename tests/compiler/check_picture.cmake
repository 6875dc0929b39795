# check_picture.cmake - `stitchc show --format svg|dot` output is a well-formed document, whatever the algorithm.
#
#   cmake -DCMD=<stitchc> -DARGS=<a|b|c> -DFORMAT=svg|dot -DOUT=<file> -P check_picture.cmake
#
# The shape is always checked (svg: an XML declaration, one <svg> root with a viewBox, `</svg>` last; dot: one
# `digraph`, balanced braces). The full check needs a tool that may be missing: xmllint --noout for SVG,
# Graphviz `dot` for DOT. Without it that part is skipped with a message and the test passes on the shape alone,
# so the suite does not depend on libxml2-utils or Graphviz. Arguments are joined with `|` (see run_golden.cmake).
cmake_minimum_required(VERSION 3.18)
foreach(v CMD ARGS FORMAT OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_picture.cmake: ${v} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${CMD} ${args} --format ${FORMAT} OUTPUT_FILE ${OUT} ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "command failed (exit ${rc}): ${CMD} ${args} --format ${FORMAT}\n${err}")
endif()
file(READ ${OUT} out)

if(FORMAT STREQUAL "svg")
  if(NOT out MATCHES "^<\\?xml version=\"1.0\"[^\n]*\\?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" [^>]*viewBox=")
    message(FATAL_ERROR "${OUT} does not start with an XML declaration and an <svg> root with a viewBox")
  endif()
  if(NOT out MATCHES "</svg>\n$")
    message(FATAL_ERROR "${OUT} does not end with </svg>")
  endif()
  set(tool_name xmllint)
  set(tool_args --noout ${OUT})
elseif(FORMAT STREQUAL "dot")
  if(NOT out MATCHES "^digraph [a-z]+ {\n.*\n}\n$")
    message(FATAL_ERROR "${OUT} is not one digraph")
  endif()
  string(REGEX REPLACE "[^{]" "" open "${out}")
  string(REGEX REPLACE "[^}]" "" close "${out}")
  string(LENGTH "${open}" nopen)
  string(LENGTH "${close}" nclose)
  if(NOT nopen EQUAL nclose)
    message(FATAL_ERROR "${OUT}: ${nopen} '{' but ${nclose} '}'")
  endif()
  set(tool_name dot)
  set(tool_args -Tsvg -o ${OUT}.svg ${OUT})
else()
  message(FATAL_ERROR "check_picture.cmake: unknown FORMAT '${FORMAT}'")
endif()

find_program(TOOL ${tool_name})
if(NOT TOOL)
  message(STATUS "${tool_name} not found: ${OUT} checked for shape only")
  return()
endif()
execute_process(COMMAND ${TOOL} ${tool_args} OUTPUT_VARIABLE tout ERROR_VARIABLE terr RESULT_VARIABLE trc)
if(NOT trc EQUAL 0 OR NOT terr STREQUAL "")
  message(FATAL_ERROR "${tool_name} rejects ${OUT} (exit ${trc}):\n${terr}")
endif()
