# run_ok.cmake - `stitchc verify` must accept an algorithm (the idioms that docs/language.md recommends).
# -DSTITCHC=... -DFILE=tests/verify/ok/x.dsl. The file's `# ranks: ` line lists the ranges to verify, separated by
# spaces (`1 2 4 8` or `3..9`); each must verify with exit status 0.
file(STRINGS ${FILE} ranks REGEX "^# ranks: ")
string(REGEX REPLACE "^# ranks: " "" ranks "${ranks}")
separate_arguments(ranks)
if(NOT ranks)
  message(FATAL_ERROR "${FILE} has no '# ranks: ' line")
endif()
get_filename_component(dir ${FILE} DIRECTORY)
get_filename_component(name ${FILE} NAME)
foreach(range ${ranks})
  execute_process(COMMAND ${STITCHC} verify ${name} --ranks ${range} WORKING_DIRECTORY ${dir}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "stitchc verify ${name} --ranks ${range}: exit ${rc}, expected 0; got:\n${out}${err}")
  endif()
endforeach()
