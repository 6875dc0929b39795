# run_layouts.cmake - `stitchc verify FILE -a ALGO -g LAYOUT` for every layout of LAYOUTS (';'-separated, written
# with '|' on the command line) and every algorithm of ALGOS: each must verify. -DSTITCHC -DFILE -DALGOS -DLAYOUTS.
string(REPLACE "|" ";" algos "${ALGOS}")
string(REPLACE "|" ";" layouts "${LAYOUTS}")
set(n 0)
foreach(l ${layouts})
  foreach(a ${algos})
    execute_process(COMMAND ${STITCHC} verify ${FILE} -a ${a} -g ${l} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "stitchc verify -a ${a} -g ${l}: exit ${rc}\n${out}${err}")
    endif()
    math(EXPR n "${n} + 1")
  endforeach()
endforeach()
message(STATUS "${n} (algorithm, layout) runs verified")
