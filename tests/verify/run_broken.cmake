# run_broken.cmake - `stitchc verify` must reject a deliberately broken algorithm with the expected message.
# -DSTITCHC=... -DFILE=tests/verify/x.dsl. The file's `# expect:` line holds the text that must appear in the
# output and its `# ranks: A..B` line the range to verify; the exit status must be 1, and the output must hold one
# error per algorithm that failed (the first counterexample ends that algorithm's verification).
# (file(READ), not file(STRINGS): a message may hold ';', which STRINGS would split into a list)
file(READ ${FILE} text)
string(REGEX MATCH "# expect: [^\n]*" expect "${text}")
string(REGEX MATCH "# ranks: [^\n]*" ranks "${text}")
string(REGEX REPLACE "^# expect: " "" expect "${expect}")
string(REGEX REPLACE "^# ranks: " "" ranks "${ranks}")
get_filename_component(dir ${FILE} DIRECTORY)
get_filename_component(name ${FILE} NAME)
execute_process(COMMAND ${STITCHC} verify ${name} --ranks ${ranks} WORKING_DIRECTORY ${dir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${out}${err}" "${expect}" at)
string(REGEX MATCHALL ": error: " errors "${out}${err}")
list(LENGTH errors nerrors)
string(REGEX MATCH "FAILED ([0-9]+) of" failed "${out}${err}")
if(NOT rc EQUAL 1 OR at EQUAL -1 OR NOT nerrors EQUAL "${CMAKE_MATCH_1}")
  message(FATAL_ERROR "stitchc verify ${name} --ranks ${ranks}: exit ${rc}, expected 1 and the text\n"
                      "  ${expect}\nand one error per failed algorithm; got (${nerrors} errors):\n${out}${err}")
endif()
