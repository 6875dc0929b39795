# sweep.cmake - the long perf sweep: stitch-perf -c 1 over every algorithm, collective, dtype and op, in and out
# of place, for a few rank counts; every run must exit 0 with "N passed, 0 failed". All failures are listed.
#
#   cmake -DCMD=<stitch-perf> [-DRANKS="2;3;8"] -P sweep.cmake
cmake_minimum_required(VERSION 3.18)
if(NOT DEFINED RANKS)
  set(RANKS 2 3 5 6 8 13)
endif()
set(failures "")
set(runs 0)
# Every (algorithm, collective) of the catalogue; rooted ones with the last rank as root, pipeline with groups.
set(pairs ring:all_reduce ring:reduce_scatter ring:all_gather mesh:all_reduce mesh:reduce_scatter
          mesh:all_gather rhd:all_reduce rhd:reduce_scatter rhd:all_gather nhr:all_reduce nhr:reduce_scatter
          nhr:all_gather nhr_oneshot:all_reduce nb:all_reduce nb:reduce_scatter nb:all_gather pipeline:all_reduce
          pipeline:reduce_scatter pipeline:all_gather ring:broadcast mesh:broadcast rhd:broadcast nhr:broadcast
          nhr_oneshot:broadcast nb:broadcast nb_binary:broadcast ring:reduce mesh:reduce rhd:reduce
          nhr_oneshot:reduce ring:scatter mesh:scatter nhr:scatter nb:scatter ring:gather mesh:gather
          mesh:all_to_all pairwise:all_to_all pairwise:all_to_all_v)
foreach(pair ${pairs})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 algo)
  list(GET pair 1 coll)
  set(ops sum prod max min)
  if(NOT coll MATCHES "reduce")
    set(ops sum) # the op is ignored
  endif()
  foreach(dtype int8 uint8 int16 int32 int64 fp16 bf16 fp32 fp64)
    foreach(op ${ops})
      foreach(p ${RANKS})
        math(EXPR root "${p} - 1")
        set(extra -r ${root})
        if(algo STREQUAL "pipeline" AND p EQUAL 8)
          list(APPEND extra --groups 4x2)
        endif()
        # each run checks out of place, then in place (the two column sets; all_to_all*: out of place only)
        set(args ${coll} -a ${algo} -t ${p} -d ${dtype} -o ${op} -b 0 -e 64K -f 8 -c 1 -w 1 -n 1
                 --timeout 60 ${extra})
        execute_process(COMMAND ${CMD} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
        math(EXPR runs "${runs} + 1")
        if(NOT rc EQUAL 0 OR NOT out MATCHES "\n[1-9][0-9]* passed, 0 failed\n$")
          string(REPLACE ";" " " shown "${args}")
          string(APPEND failures "stitch-perf ${shown}: exit ${rc}\n${err}")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
message("${runs} runs")
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
