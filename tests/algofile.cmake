# algofile.cmake - algorithm files compiled while the program runs (STITCH_ALGO_FILE, stitch_catalogue_load; issue
# 13, item 3): the C scenarios of tests/algofile/test_algofile.c, and stitch-perf given a file of algorithms that
# algos.dsl does not have, on threads and on processes, and a file with an error.
set(ALGOFILE_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/algofile)

add_executable(test_algofile ${ALGOFILE_TESTS}/test_algofile.c)
# the same files emitted at build time, to compare the loaded catalogues with (scenario hash)
stitch_compile_dsl(test_algofile ${ALGOFILE_TESTS}/star.dsl st_test_star RANKS 1..16)
stitch_compile_dsl(test_algofile ${ALGOFILE_TESTS}/double_ring.dsl st_test_double_ring RANKS 1..16)
target_link_libraries(test_algofile PRIVATE stitch)
# core/ for st_steptab.h: the hash scenario compares the tables field by field
target_include_directories(test_algofile PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/proc ${CMAKE_SOURCE_DIR}/core)
target_compile_definitions(test_algofile PRIVATE ALGOFILE_DIR="${ALGOFILE_TESTS}")
target_compile_options(test_algofile PRIVATE -UNDEBUG)

foreach(sc hash api env errors)
  add_test(NAME algofile.${sc} COMMAND test_algofile ${sc})
  set_tests_properties(algofile.${sc} PROPERTIES TIMEOUT 60 LABELS runtime)
endforeach()
foreach(sc proc proc.differ proc.wrong proc.groups)
  add_test(NAME algofile.${sc} COMMAND test_algofile ${sc})
  set_tests_properties(algofile.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()

# Issue 13's Done-means line: STITCH_ALGO_FILE=<file> stitch-perf all_reduce -a <its algorithm> -t 4 -c 1 ends
# with "0 failed" (tests/lib/run.cmake checks the exit status and the closing line).
set(ALGOFILE_PERF -b 0 -e 1M -f 4 -c 1 -w 1 --iters 3 --timeout 60)
# algofile_perf(<name> <file> <status> <closing regex, or EMPTY: no stdout at all> <stitch-perf args...>)
function(algofile_perf name file rc closing)
  string(REPLACE ";" "|" args "${ARGN}")
  set(judge "-DCLOSING=${closing}")
  if(closing STREQUAL "EMPTY")
    set(judge -DSTDOUT_EMPTY=1)
  endif()
  add_test(NAME algofile.perf.${name}
           COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitch-perf> "-DARGS=${args}" -DRC=${rc}
                   ${judge} "-DENV=STITCH_ALGO_FILE=${ALGOFILE_TESTS}/${file}" ${ALGOFILE_PERF_EXTRA}
                   -P ${ST_RUN})
  set_tests_properties(algofile.perf.${name} PROPERTIES TIMEOUT 120 LABELS perf)
endfunction()
algofile_perf(star.p4 star.dsl 0 "^[1-9][0-9]* passed, 0 failed$" all_reduce -a star -t 4 ${ALGOFILE_PERF})
algofile_perf(double_ring.p5 double_ring.dsl 0 "^[1-9][0-9]* passed, 0 failed$"
              all_reduce -a double_ring -t 5 ${ALGOFILE_PERF})
algofile_perf(broadcast.star.p3 star.dsl 0 "^[1-9][0-9]* passed, 0 failed$"
              broadcast -a star -r 2 -t 3 ${ALGOFILE_PERF})
# a file with an error: the compiler's FILE:LINE:COL on stderr, exit 2, and nothing on stdout (no row ran)
set(ALGOFILE_PERF_EXTRA "-DSTDERR=\n[^\n]*/syntax.dsl:5:24: error: expected expression before 'reduce'")
algofile_perf(syntax syntax.dsl 2 EMPTY all_reduce -a oops -t 4 ${ALGOFILE_PERF})
set(ALGOFILE_PERF_EXTRA "-DSTDERR=\n[^\n]*/wrong.dsl:3: error: lonely all_reduce is wrong for p = 4")
algofile_perf(wrong wrong.dsl 2 EMPTY all_reduce -a lonely -t 4 ${ALGOFILE_PERF})
# verified on the communicator's own groups: ingroup is right for one group, wrong for 2x2
set(ALGOFILE_PERF_EXTRA "-DSTDERR=\n[^\n]*/ingroup.dsl:7:17: error: ingroup all_reduce is wrong for p = 4 as the communicator's groups")
algofile_perf(ingroup.2x2 ingroup.dsl 2 EMPTY all_reduce -a ingroup -t 4 --groups 2x2 ${ALGOFILE_PERF})
unset(ALGOFILE_PERF_EXTRA)
algofile_perf(ingroup.flat ingroup.dsl 0 "^[1-9][0-9]* passed, 0 failed$" all_reduce -a ingroup -t 4 ${ALGOFILE_PERF})

# The same under a launcher, one rank per process (tests/proc/launch.sh judges every rank's closing line).
add_test(NAME algofile.torchrun.np4.star
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/proc/launch.sh torchrun 4 STITCH_ALGO_FILE=${ALGOFILE_TESTS}/star.dsl --
                 $<TARGET_FILE:stitch-perf> all_reduce -a star ${ALGOFILE_PERF})
set_tests_properties(algofile.torchrun.np4.star PROPERTIES TIMEOUT 120 LABELS proc SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
