# netns.cmake - process mode across two network namespaces joined by a shaped veth pair (tests/netns/run.sh):
# 2 + 3 ranks (or the placement NETNS_PLACEMENT gives), shm inside a namespace and tcp across. Root only: skipped (77) with the reason when not root,
# ip/tc are missing or namespaces cannot be created. Part of the default run (`make test` as root, .ci/run).
set(NETNS_RUN ${CMAKE_CURRENT_SOURCE_DIR}/netns/run.sh)
set(NETNS_PERF -d fp32 -o sum -b 8 -e 1M -f 4 -c 1 -w 1 --iters 3 --timeout 30)
add_test(NAME netns.ring.ifname COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> ifname all_reduce -a ring ${NETNS_PERF})
add_test(NAME netns.rhd.auto COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> auto all_reduce -a rhd ${NETNS_PERF})
add_test(NAME netns.reduce_scatter.auto
         COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> auto reduce_scatter -a ring ${NETNS_PERF})
# Pipeline on the groups process mode makes from the hosts (placement.c): one group per namespace. Pipeline needs
# groups of equal size, so 6 ranks: 3 + 3 by slot, then interleaved (NETNS_PLACEMENT, one namespace letter per
# rank), where a group's ranks are not consecutive ({0,2,4} {1,3,5}; {0,3,5} {1,2,4}).
set(NETNS_PIPELINE_TESTS)
foreach(run "AAABBB all_reduce bySlot" "ABABAB all_reduce interleaved" "ABABAB all_gather interleaved"
            "ABBABA reduce_scatter interleaved")
  separate_arguments(run)
  list(GET run 0 placement)
  list(GET run 1 coll)
  list(GET run 2 tag)
  set(name netns.pipeline.${coll}.${tag})
  add_test(NAME ${name} COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> auto ${coll} -a pipeline ${NETNS_PERF})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT NETNS_PLACEMENT=${placement})
  list(APPEND NETNS_PIPELINE_TESTS ${name})
endforeach()
set_tests_properties(netns.ring.ifname netns.rhd.auto netns.reduce_scatter.auto ${NETNS_PIPELINE_TESTS} PROPERTIES
                     TIMEOUT 120 LABELS "netns;proc" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
# Issue 10 item 10 (tests/netns/ahc.sh): AHC against flat ring and NHR (the hierarchical ring on unequal groups)
# all_reduce on 2 + 3 ranks in two namespaces joined by a tbf-shaped veth (1 Gbit/s each way). Checks correctness
# (-c 1, every rank "0 failed"), the shm/tcp split and the groups, and that the table was measured; the busbw ratio
# is printed, never asserted. The default one is one round at 16 MB without the shm context (a few seconds); the
# long one is docs/performance.md's table (16 and 64 MB, 3 rounds, medians, shm context too; about 5 minutes).
set(NETNS_AHC ${CMAKE_CURRENT_SOURCE_DIR}/netns/ahc.sh)
add_test(NAME netns.ahc COMMAND ${NETNS_AHC} $<TARGET_FILE:stitch-perf>)
set_tests_properties(netns.ahc PROPERTIES ENVIRONMENT "NETNS_REPS=1;NETNS_ITERS=1;NETNS_SIZES=-b 16M -e 16M;NETNS_SHM=0"
                     TIMEOUT 180 LABELS "netns;proc" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
add_test(NAME netns.ahc.long COMMAND ${NETNS_AHC} $<TARGET_FILE:stitch-perf>)
set_tests_properties(netns.ahc.long PROPERTIES
                     ENVIRONMENT "NETNS_ALGOS=ring nhr ahc ahc_broke;NETNS_TABLE=${CMAKE_BINARY_DIR}/netns-ahc-table.txt"
                     TIMEOUT 1200 LABELS "netns;proc;long" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
