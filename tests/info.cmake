# info.cmake - tests of stitch-info (tools/stitch_info.c): the command line, the configuration it shows with each
# value's source, and a malformed value exiting 1 with the variable named (the message is config.c's, whose every
# rule tests/runtime/test_hccl.c checks). HCCL_ALGO's ';' is written '|' here (tests/info/run_info.cmake says why).

set(INFO_RUN ${CMAKE_CURRENT_SOURCE_DIR}/info/run_info.cmake)

# stitch_info_test(<name> RC <status> [STDOUT <regex>] [STDERR <regex>] [STDERR_EMPTY] [ENV NAME=value]
#                  [ARGS <stitch-info args...>])
function(stitch_info_test name)
  cmake_parse_arguments(T "STDERR_EMPTY" "RC;STDOUT;STDERR;ENV" "ARGS" ${ARGN})
  string(REPLACE ";" "|" args "${T_ARGS}")
  set(defs -DCMD=$<TARGET_FILE:stitch-info> "-DARGS=${args}" -DRC=${T_RC})
  foreach(key STDOUT STDERR ENV)
    if(DEFINED T_${key})
      list(APPEND defs "-D${key}=${T_${key}}")
    endif()
  endforeach()
  if(T_STDERR_EMPTY)
    list(APPEND defs -DSTDERR_EMPTY=1)
  endif()
  add_test(NAME info.${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${INFO_RUN})
  set_tests_properties(info.${name} PROPERTIES TIMEOUT 60 LABELS info)
endfunction()

stitch_info_test(help RC 0 STDERR_EMPTY STDOUT "^usage: stitch-info \\[options\\]\n" ARGS --help)
stitch_info_test(bad_option RC 2 STDERR "stitch-info: unknown option '--nope' \\(see --help\\)" ARGS --nope)
# nothing set: the version, every collective's algorithms, every tunable from the default
stitch_info_test(defaults RC 0 STDERR_EMPTY
                 STDOUT "^stitch [0-9]+\\.[0-9]+ .*\n  all_reduce +ring, .*\n  STITCH_ALGO +'auto' +default\n.*  STITCH_TIMEOUT +'300' +default\n.*  HCCL_ALGO +\\(unset\\) +default\n.*  HCCL_DETERMINISTIC +\\(unset\\) +default\n.*  all_reduce +auto: mesh_oneshot")
# Done means: HCCL_ALGO='level0:NA;level1:AHC' exits 0 and shows AHC at level1 and level2, from the environment
stitch_info_test(hccl_algo_ahc RC 0 ENV "HCCL_ALGO=level0:NA|level1:AHC"
                 STDOUT "  HCCL_ALGO +'level0:NA;level1:AHC' +environment\n.*HCCL_ALGO levels, from the environment: 'level0:NA;level1:AHC'\n.*  all_reduce +NA +AHC +AHC +- +environment\n  reduce_scatter +NA +AHC +AHC +- +environment\n  all_gather +NA +AHC +AHC +- +environment\n  broadcast +NA +- +- +- +environment\n")
# Done means: HCCL_ALGO='level1:FOO' exits 1 naming HCCL_ALGO
stitch_info_test(hccl_algo_bad RC 1 ENV "HCCL_ALGO=level1:FOO"
                 STDERR "^stitch-info: HCCL_ALGO='level1:FOO': algo config is invalid, algo FOO is not supported .*; expected level0:NA;level1:<algo> or ")
stitch_info_test(bad_timeout RC 1 ENV "STITCH_TIMEOUT=5s" STDERR "^stitch-info: STITCH_TIMEOUT='5s': expected a positive")
stitch_info_test(bad_split_ratio RC 1 ENV "HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO=1.5"
                 STDERR "^stitch-info: HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO='1.5': out of range")
stitch_info_test(bad_deterministic RC 1 ENV "HCCL_DETERMINISTIC=yes"
                 STDERR "^stitch-info: HCCL_DETERMINISTIC='yes': should be true, false or strict")
# values from the environment say so, and the selection follows them
stitch_info_test(environment RC 0 STDERR_EMPTY ENV "HCCL_ALGO=allreduce=level1:pipeline"
                 STDOUT "  HCCL_ALGO +'allreduce=level1:pipeline' +environment\n.*  all_reduce +- +pipeline +- +- +environment \\(per-operator entry\\)\n.*Selection.*\n  all_reduce +pipeline \\(HCCL_ALGO\\)\n  reduce_scatter +auto: ring\n")
