# rxe.cmake - tier 2 of issue 11: tests on real kernel verbs (rdma_rxe, soft-RoCE) inside a QEMU guest under TCG,
# booted by tests/rxe/run.sh (read its opening comment): the host's tree read-only over 9p, rxe0 on the guest's
# eth0, the test's command run chrooted into the host's tree, which the guest sees whole (/tmp included). The
# guest's kernel, initramfs and run folders live in the build tree's rxe/ (RXE_CACHE). Each test is one guest boot
# (10 s to a minute of wall time on these 2-core VMs before the command, with the load; guest timing means nothing).
# Root installs the Debian packages (run.sh's RXE_PKGS); without root or packages the tests skip (77), and
# STITCH_REQUIRE_RXE=1 (.ci/run) makes that a failure. Labels "rxe;long": kept out of the default run (`make test`
# and the usual `ctest -LE long`: ten guest boots take 15 to 25 minutes on these 2-core VMs), run by `make test-rxe`
# (ctest -L rxe), which .ci/run runs as root after `make test`; `make test-long` runs them too.
set(RXE_RUN ${CMAKE_CURRENT_SOURCE_DIR}/rxe/run.sh)
set(RXE_CACHE ${CMAKE_BINARY_DIR}/rxe)
set(RXE_TESTS)

# rxe.smoke: ibv_devinfo in the guest shows rxe0 ACTIVE on Ethernet with the IPv4-mapped GID at index 1, and so
# does stitch-info through stitch's own verbs table.
add_test(NAME rxe.smoke COMMAND ${RXE_RUN} ${RXE_CACHE} -- ${CMAKE_CURRENT_SOURCE_DIR}/rxe/smoke.sh
         $<TARGET_FILE:stitch-info>)
list(APPEND RXE_TESTS rxe.smoke)

# rxe.paths (issue 25): rxe.smoke again, from a copy of what it needs laid out as a checkout under /tmp with a space
# in its path (tests/rxe/paths.sh): the guest must see a build tree there, and take no path from its command line.
add_test(NAME rxe.paths COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/rxe/paths.sh ${RXE_CACHE} $<TARGET_FILE:stitch-info>)
list(APPEND RXE_TESTS rxe.paths)

# rxe.colls.COLL: stitch-perf on 4 processes (torchrun-style, tests/proc/launch.sh judges every rank's "0 failed")
# over verbs on rxe0, every element checked, 8 B to 256 KiB; each rank's STITCH_DEBUG summary must say 3 peers over
# verbs. One guest per collective. all_to_all has no ring, nhr or rhd in the catalogue: it runs mesh and pairwise.
foreach(run "all_reduce ring nhr rhd" "reduce_scatter ring nhr rhd" "all_gather ring nhr rhd"
            "broadcast ring nhr rhd" "all_to_all mesh pairwise")
  separate_arguments(run)
  list(GET run 0 coll)
  list(REMOVE_AT run 0)
  add_test(NAME rxe.colls.${coll} COMMAND ${RXE_RUN} ${RXE_CACHE} -- ${CMAKE_CURRENT_SOURCE_DIR}/rxe/colls.sh
           $<TARGET_FILE:stitch-perf> ${CMAKE_CURRENT_SOURCE_DIR}/proc/launch.sh ${coll} ${run})
  list(APPEND RXE_TESTS rxe.colls.${coll})
endforeach()

# rxe.kill: rank 2 of 4 SIGKILLed mid-all_reduce over verbs; ranks 0, 1 and 3 must end in an error naming rank 2
# within 2 x STITCH_TIMEOUT (10 s, on the guest's clock), none hangs.
add_test(NAME rxe.kill COMMAND ${RXE_RUN} ${RXE_CACHE} -- ${CMAKE_CURRENT_SOURCE_DIR}/rxe/kill.sh
         $<TARGET_FILE:stitch-perf>)
list(APPEND RXE_TESTS rxe.kill)

# rxe.conformance: the verbs conformance suite (tests/verbs/conformance.c) against rxe (--real) and the emulator
# (--fake) in the same guest, then --compare: fails where rxe is not what a case expects, or where the emulator
# disagrees with rxe on an exact case or is more lenient on a class case (tests/rxe/conform.sh prints both tables).
if(TARGET conformance)
  add_test(NAME rxe.conformance COMMAND ${RXE_RUN} ${RXE_CACHE} -- ${CMAKE_CURRENT_SOURCE_DIR}/rxe/conform.sh
           $<TARGET_FILE:conformance>)
  list(APPEND RXE_TESTS rxe.conformance)
endif()

# rxe.proc.real: the transport's own process-mode test (tests/tpverbs/test_verbs_proc.c, mode real: 4 forked ranks,
# every pair over verbs through libibverbs, all_reduce / reduce_scatter / all_gather / broadcast / all_to_all, counts
# 0 to a many-segment one, every element checked), on rxe0. It skips (77) without a device, which in the guest
# would be a failure of the guest: STITCH_REQUIRE_RXE-style, a skip here is turned into exit 1.
if(TARGET test_verbs_proc)
  add_test(NAME rxe.proc.real COMMAND ${RXE_RUN} ${RXE_CACHE} -- sh -c
           "STITCH_IB_DEV=rxe0 \"$0\" real; s=$?; [ $s = 77 ] && { echo 'FAIL: no usable verbs device in the guest'; exit 1; }; exit $s"
           $<TARGET_FILE:test_verbs_proc>)
  list(APPEND RXE_TESTS rxe.proc.real)
endif()

# The first test of a fresh tree also installs packages, downloads the kernel and builds the initramfs (a minute).
set_tests_properties(${RXE_TESTS} PROPERTIES TIMEOUT 900 LABELS "rxe;long" SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
