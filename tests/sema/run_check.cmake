# run_check.cmake - `stitchc check FILE` must exit 1 and print exactly the diagnostics of FILE.err.
# -DSTITCHC=... -DFILE=... [-DUPDATE=1 rewrites the .err file instead].
get_filename_component(dir ${FILE} DIRECTORY)
get_filename_component(name ${FILE} NAME)
execute_process(COMMAND ${STITCHC} check ${name} WORKING_DIRECTORY ${dir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(UPDATE)
  file(WRITE ${FILE}.err "${err}")
  return()
endif()
file(READ ${FILE}.err want)
if(NOT rc EQUAL 1 OR NOT err STREQUAL want)
  message(FATAL_ERROR "stitchc check ${name}: exit ${rc} (want 1)\n--- got:\n${err}--- want:\n${want}")
endif()
