# picture.check.cmake - `stitchc show --format svg|dot` output is a well-formed document, whatever the algorithm: a
# check for tests/lib/run.cmake (CHECKS=), which saved stdout in SAVE; FORMAT is svg or dot.
#
# The shape is always checked (svg: an XML declaration, one <svg> root with a viewBox, `</svg>` last; dot: one
# `digraph`, balanced braces). The full check needs a tool that may be missing: xmllint --noout for SVG,
# Graphviz `dot` for DOT. Without it that part is skipped with a message and the test passes on the shape alone,
# so the suite does not depend on libxml2-utils or Graphviz.
if(FORMAT STREQUAL "svg")
  if(NOT out MATCHES "^<\\?xml version=\"1.0\"[^\n]*\\?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" [^>]*viewBox=")
    string(APPEND failures "${SAVE} does not start with an XML declaration and an <svg> root with a viewBox\n")
  endif()
  if(NOT out MATCHES "</svg>\n$")
    string(APPEND failures "${SAVE} does not end with </svg>\n")
  endif()
  set(tool_name xmllint)
  set(tool_args --noout ${SAVE})
elseif(FORMAT STREQUAL "dot")
  if(NOT out MATCHES "^digraph [a-z]+ {\n.*\n}\n$")
    string(APPEND failures "${SAVE} is not one digraph\n")
  endif()
  string(REGEX REPLACE "[^{]" "" open "${out}")
  string(REGEX REPLACE "[^}]" "" close "${out}")
  string(LENGTH "${open}" nopen)
  string(LENGTH "${close}" nclose)
  if(NOT nopen EQUAL nclose)
    string(APPEND failures "${SAVE}: ${nopen} '{' but ${nclose} '}'\n")
  endif()
  set(tool_name dot)
  set(tool_args -Tsvg -o ${SAVE}.svg ${SAVE})
else()
  message(FATAL_ERROR "picture.check.cmake: unknown FORMAT '${FORMAT}'")
endif()

find_program(TOOL ${tool_name})
if(NOT TOOL)
  message(STATUS "${tool_name} not found: ${SAVE} checked for shape only")
else()
  execute_process(COMMAND ${TOOL} ${tool_args} OUTPUT_VARIABLE tout ERROR_VARIABLE terr RESULT_VARIABLE trc)
  if(NOT trc EQUAL 0 OR NOT terr STREQUAL "")
    string(APPEND failures "${tool_name} rejects ${SAVE} (exit ${trc}):\n${terr}\n")
  endif()
endif()
