# netns.cmake - process mode across two network namespaces joined by a shaped veth pair (tests/netns/run.sh):
# 2 + 3 ranks, shm inside a namespace and tcp across. Root only: skipped (77) with the reason when not root,
# ip/tc are missing or namespaces cannot be created. Part of the default run (`make test` as root, .ci/run).
set(NETNS_RUN ${CMAKE_CURRENT_SOURCE_DIR}/netns/run.sh)
set(NETNS_PERF -d fp32 -o sum -b 8 -e 1M -f 4 -c 1 -w 1 --iters 3 --timeout 30)
add_test(NAME netns.ring.ifname COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> ifname all_reduce -a ring ${NETNS_PERF})
add_test(NAME netns.rhd.auto COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> auto all_reduce -a rhd ${NETNS_PERF})
add_test(NAME netns.reduce_scatter.auto
         COMMAND ${NETNS_RUN} $<TARGET_FILE:stitch-perf> auto reduce_scatter -a ring ${NETNS_PERF})
set_tests_properties(netns.ring.ifname netns.rhd.auto netns.reduce_scatter.auto PROPERTIES
                     TIMEOUT 120 LABELS "netns;proc" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
