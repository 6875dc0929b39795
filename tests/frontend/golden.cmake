# golden.cmake - compare (or, with -DUPDATE=ON, regenerate) the diagnostics st-parse prints for bad/*.dsl.
#
#   cmake -DST_PARSE=<st-parse> -DDIR=<tests/frontend/bad> -DNAME=<file.dsl> -P golden.cmake   one check
#   cmake -DST_PARSE=<st-parse> -DDIR=<tests/frontend/bad> -DUPDATE=ON -P golden.cmake          rewrite every .err
# st-parse runs inside DIR with the bare file name, so the paths in the messages do not depend on the checkout.
function(run_one name out_var rc_var)
  execute_process(COMMAND ${ST_PARSE} ${name} WORKING_DIRECTORY ${DIR}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

if(UPDATE)
  file(GLOB files RELATIVE ${DIR} ${DIR}/*.dsl)
  foreach(name ${files})
    run_one(${name} text rc)
    string(REGEX REPLACE "\\.dsl$" ".err" golden ${name})
    file(WRITE ${DIR}/${golden} "${text}")
    message(STATUS "wrote ${golden} (exit ${rc})")
  endforeach()
  return()
endif()

run_one(${NAME} text rc)
string(REGEX REPLACE "\\.dsl$" ".err" golden ${NAME})
if(NOT EXISTS ${DIR}/${golden})
  message(FATAL_ERROR "${golden} is missing; run the update-golden-frontend target")
endif()
file(READ ${DIR}/${golden} want)
if(NOT text STREQUAL want)
  message(FATAL_ERROR "diagnostics for ${NAME} differ from ${golden}\n--- got:\n${text}--- want:\n${want}")
endif()
if(want STREQUAL "" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME}: no diagnostics expected but st-parse exited ${rc}")
elseif(NOT want STREQUAL "" AND NOT rc EQUAL 1)
  message(FATAL_ERROR "${NAME}: st-parse exited ${rc}, expected 1")
endif()
