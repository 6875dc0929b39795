# proc.cmake - process mode: ranks as forked processes (shm, tcp, kill, mismatch, abort), stitch-perf under
# mpirun when Open MPI's mpirun is installed, and the network-namespace tests (label `netns`, root only).
set(PROC_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/proc)

add_executable(test_proc ${PROC_TESTS}/test_proc.c)
target_link_libraries(test_proc PRIVATE stitch)
target_compile_options(test_proc PRIVATE -UNDEBUG)
target_compile_definitions(test_proc PRIVATE STITCH_SOURCE_DIR="${CMAKE_SOURCE_DIR}") # topo: topologies/
target_include_directories(test_proc PRIVATE ${CMAKE_SOURCE_DIR}/core) # topo_once: the topology value's counters

# topo_once: each rank reads STITCH_TOPO once and its dup shares the value; a malformed file fails every rank with
# FILE:LINE:COL.
foreach(sc shm tcp odd kill kill.tcp p2p.straight mismatch abort groups topo topo_once shmleak stall stall.tcp)
  add_test(NAME proc.${sc} COMMAND test_proc ${sc})
  set_tests_properties(proc.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()
# shmleak: SIGKILL of one rank / SIGINT to all at 0..40 ms after launch leaves nothing in /dev/shm; stall: after
# SIGSTOP of one rank every survivor's timeout names it. More signal times and repetitions behind `long`.
foreach(sc shmleak.long stall.long)
  add_test(NAME proc.${sc} COMMAND test_proc ${sc})
  set_tests_properties(proc.${sc} PROPERTIES TIMEOUT 600 LABELS "proc;long" RUN_SERIAL TRUE)
endforeach()

# The bootstrap against a rogue client on loopback (tests/proc/test_rogue.c): one that knows only the port (and the
# job id) cannot join or read the table, on the root's port or a rank's own; 80 silent or garbage connections do
# not stall a job; a rank refuses an impostor root; a rank with another secret fails at once saying so; a job across
# hosts without STITCH_SECRET warns once; so does rank 0 of a job with STITCH_SECRET set but empty;
# STITCH_DEBUG's bootstrap line comes once per init, however often stitch_launcher() is asked.
add_executable(test_rogue ${PROC_TESTS}/test_rogue.c)
target_link_libraries(test_rogue PRIVATE stitch)
target_include_directories(test_rogue PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core)
target_compile_options(test_rogue PRIVATE -UNDEBUG)
foreach(sc join stall pairwise impostor wrong_secret warn empty_secret debug_once)
  add_test(NAME proc.rogue.${sc} COMMAND test_rogue ${sc})
  set_tests_properties(proc.rogue.${sc} PROPERTIES TIMEOUT 60 LABELS proc RUN_SERIAL TRUE)
endforeach()

# Launcher mode: stitch-perf under a real launcher (tests/proc/launch.sh judges every rank's closing line).
# Small sizes (up to 4 MB) keep the default run fast; skipped (77) with the reason when mpirun is absent.
set(PROC_LAUNCH ${PROC_TESTS}/launch.sh)
set(PROC_PERF all_reduce -d fp32 -o sum -b 8 -e 4M -f 4 -c 1 -w 1 --iters 3 --timeout 60)
add_test(NAME proc.mpirun.np4.ring COMMAND ${PROC_LAUNCH} mpirun 4 -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a ring)
add_test(NAME proc.mpirun.np3.rhd.tcp
         COMMAND ${PROC_LAUNCH} mpirun 3 STITCH_TRANSPORT=tcp -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a rhd)
add_test(NAME proc.torchrun.np3 COMMAND ${PROC_LAUNCH} torchrun 3 -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a ring)
# AHC on unequal groups (2 + 3) in process mode: the groups come from STITCH_GROUPS, every rank checks its data
add_test(NAME proc.mpirun.np5.ahc.g2+3
         COMMAND ${PROC_LAUNCH} mpirun 5 STITCH_GROUPS=2,3 -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a ahc)
# a topology under mpirun: 2 + 3 ranks in rank order (--layout becomes stitch_config_t.topo on every rank)
add_test(NAME proc.mpirun.np5.layout
         COMMAND ${PROC_LAUNCH} mpirun 5 -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a ring --layout 2,3)
# every process rank builds its own plan (`from`): ring at np 8 runs its own program and its left neighbour's, not
# all 8 ranks', which the STITCH_DEBUG count shows on every rank
add_test(NAME proc.mpirun.np8.own_plan
         COMMAND ${PROC_LAUNCH} mpirun 8 STITCH_DEBUG=1 -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a ring)
set_tests_properties(proc.mpirun.np8.own_plan PROPERTIES
                     ENVIRONMENT "LAUNCH_EXPECT=plan of ring all_reduce \\(root 0\\): own plan \\(from\\), 2 ranks instantiated")
set_tests_properties(proc.mpirun.np4.ring proc.mpirun.np3.rhd.tcp proc.torchrun.np3 proc.mpirun.np5.ahc.g2+3
                     proc.mpirun.np5.layout proc.mpirun.np8.own_plan PROPERTIES
                     TIMEOUT 120 LABELS proc SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)

# stitch-perf -J under mpirun: rank 0's process writes one JSON document for the job (tests/perf/json.check.cmake),
# mode "processes", the sizes' results combined over the ranks; added where mpirun is found (perf.cmake's run)
find_program(PROC_MPIRUN mpirun)
if(PROC_MPIRUN)
  set(proc_json ${CMAKE_CURRENT_BINARY_DIR}/proc_json.json)
  add_test(NAME proc.mpirun.np3.json
           COMMAND ${CMAKE_COMMAND} -DCMD=${PROC_MPIRUN} -DOUT=${proc_json} -DREMOVE=${proc_json} -DMODE=processes
                   "-DARGS=--allow-run-as-root|--oversubscribe|-np|3|$<TARGET_FILE:stitch-perf>|${PERF_JSON_ARGS}|-J|${proc_json}"
                   -DCHECKS=${CMAKE_CURRENT_SOURCE_DIR}/perf/json.check.cmake -P ${ST_RUN})
  set_tests_properties(proc.mpirun.np3.json PROPERTIES TIMEOUT 120 LABELS "proc;perf" RUN_SERIAL TRUE)
endif()

# stitch_comm_init_mpi (library stitch_mpi, built only when CMake finds MPI): a tiny MPI program under mpirun
# makes a stitch communicator from MPI_COMM_WORLD and checks an all_reduce; skipped (77) when mpirun is absent.
if(TARGET stitch_mpi)
  add_executable(test_mpi_init ${PROC_TESTS}/test_mpi_init.c)
  target_link_libraries(test_mpi_init PRIVATE stitch_mpi)
  target_compile_options(test_mpi_init PRIVATE -UNDEBUG)
  foreach(np 2 3)
    add_test(NAME proc.mpi_init.np${np} COMMAND ${PROC_LAUNCH} mpirun ${np} -- $<TARGET_FILE:test_mpi_init>)
    set_tests_properties(proc.mpi_init.np${np} PROPERTIES TIMEOUT 120 LABELS proc SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
                         ENVIRONMENT "LSAN_OPTIONS=suppressions=${PROC_TESTS}/lsan_mpi.supp:print_suppressions=0;ASAN_OPTIONS=fast_unwind_on_malloc=0")
  endforeach()
endif()

# Every collective x algorithm in process mode (tests/proc/test_proc_colls.c): the sample matrix per rank count
# (every root, counts 0, 1, 7 and a many-segment one, dtypes/ops/in-place forms rotating), the np3 sample over
# tcp, pipeline all_to_all(v) on groups 2x2, 3x2, 2x3 and 5x1, bit-identical fp32 sums against thread mode, disagreeing roots / all_to_all_v counts, and ranks forcing
# different algorithms (every ordered pair, 3 ranks over shm; over tcp, all_reduce ring against each other, where
# a survivor must report the abort of the rank that exited, not its closed socket). The full matrix, and the
# algorithm pairs on more ranks and over tcp, are behind the `long` label.
add_executable(test_proc_colls ${PROC_TESTS}/test_proc_colls.c)
target_link_libraries(test_proc_colls PRIVATE stitch)
target_include_directories(test_proc_colls PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
target_compile_options(test_proc_colls PRIVATE -UNDEBUG)
foreach(sc np1 np2 np3 np4 np5 tcp det mismatch algos3 ring3.tcp pipeline)
  add_test(NAME proc.colls.${sc} COMMAND test_proc_colls ${sc})
  set_tests_properties(proc.colls.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()
# Fused receive-reduce-send (exec_msg.c) against STITCH_FUSE=0, bit for bit: every collective, algorithm and dtype
# on 2..5 ranks over shm, counts 0, 1, odd and larger than the fusion chunk (tests/proc/test_proc_fuse.c).
add_executable(test_proc_fuse ${PROC_TESTS}/test_proc_fuse.c)
target_link_libraries(test_proc_fuse PRIVATE stitch)
target_include_directories(test_proc_fuse PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
target_compile_options(test_proc_fuse PRIVATE -UNDEBUG)
foreach(np 2 3 4 5)
  add_test(NAME proc.fuse.np${np} COMMAND test_proc_fuse np${np})
  set_tests_properties(proc.fuse.np${np} PROPERTIES TIMEOUT 900 LABELS proc RUN_SERIAL TRUE)
endforeach()
add_test(NAME proc.fuse.np3.tcp COMMAND test_proc_fuse np3.tcp)
add_test(NAME proc.fuse.np3.tinyring COMMAND test_proc_fuse np3)
set_tests_properties(proc.fuse.np3.tcp proc.fuse.np3.tinyring PROPERTIES TIMEOUT 900 LABELS proc RUN_SERIAL TRUE)
set_tests_properties(proc.fuse.np3.tinyring PROPERTIES ENVIRONMENT STITCH_SHM_RING_BYTES=4096)
# Straight receives over tcp (exec_msg.c, "Straight in": a copied message read from the kernel into place) against
# every byte staged, bit for bit, with the same calls: np 2; np 3 through 4 KiB staging rings; np 2 with every
# straight read cut to 61 bytes (headers in two pieces, elements cut). About 55 s in all.
add_test(NAME proc.straight.np2 COMMAND test_proc_fuse np2.straight)
add_test(NAME proc.straight.np3.tinyring COMMAND test_proc_fuse np3.straight)
add_test(NAME proc.straight.np2.pieces COMMAND test_proc_fuse np2.straight.pieces)
set_tests_properties(proc.straight.np2 proc.straight.np3.tinyring proc.straight.np2.pieces PROPERTIES TIMEOUT 900
                     LABELS proc RUN_SERIAL TRUE)
set_tests_properties(proc.straight.np3.tinyring PROPERTIES ENVIRONMENT STITCH_TCP_RING_BYTES=4096)
# Through 4 KiB shm rings: the np3 sample, and proc.shm's data (messages up to megabytes), so every large message
# is cut into frames, skip frames fill ring ends, and sends are taken in 64-byte pieces when the ring is short
# (tp_shm.c).
add_test(NAME proc.colls.np3.tinyring COMMAND test_proc_colls np3)
add_test(NAME proc.shm.tinyring COMMAND test_proc shm)
set_tests_properties(proc.colls.np3.tinyring proc.shm.tinyring PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE
                     ENVIRONMENT STITCH_SHM_RING_BYTES=4096)
add_test(NAME proc.colls.full COMMAND test_proc_colls full)
set_tests_properties(proc.colls.full PROPERTIES TIMEOUT 3600 LABELS "proc;long" RUN_SERIAL TRUE)
foreach(sc algos4 algos5 algos3.tcp algos4.tcp)
  add_test(NAME proc.colls.${sc} COMMAND test_proc_colls ${sc})
  set_tests_properties(proc.colls.${sc} PROPERTIES TIMEOUT 600 LABELS "proc;long" RUN_SERIAL TRUE)
endforeach()

# stitch-perf under mpirun for the collectives beyond all_reduce, rooted ones at a root other than 0.
set(PROC_PERF_SMALL -b 8 -e 256K -f 8 -c 1 -w 1 --iters 2 --timeout 60)
foreach(coll reduce_scatter all_gather broadcast reduce scatter gather all_to_all all_to_all_v)
  add_test(NAME proc.mpirun.np3.${coll} COMMAND ${PROC_LAUNCH} mpirun 3 -- $<TARGET_FILE:stitch-perf> ${coll} -r 2
           ${PROC_PERF_SMALL})
  set_tests_properties(proc.mpirun.np3.${coll} PROPERTIES TIMEOUT 120 LABELS proc SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# Registered memory (tests/proc/test_proc_regmem.c): every collective on registered buffers pulls, exact, on 2-5
# processes, whole and as slices; one unregistered rank makes every call stream (exact); a free waits for a peer's
# borrow and a later borrow is refused; a rank killed mid-call fails its peers naming it; forged handles (generation,
# id, bounds) are refused; stitch_mem_free's checks; thread mode's plain memory; STITCH_CMA=1 pulls plain buffers
# with process_vm_readv (alone and mixed with registered ones), and one rank without it makes every call stream;
# `late`: every collective run on plain buffers before the first stitch_mem_alloc (own plans) pulls on registered
# buffers after it.
add_executable(test_proc_regmem ${PROC_TESTS}/test_proc_regmem.c)
target_link_libraries(test_proc_regmem PRIVATE stitch)
target_include_directories(test_proc_regmem PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core
                           ${CMAKE_SOURCE_DIR}/runtime/base ${CMAKE_SOURCE_DIR}/runtime/comm
                           ${CMAKE_SOURCE_DIR}/runtime/proc ${CMAKE_SOURCE_DIR}/runtime/transport
                           ${CMAKE_SOURCE_DIR}/runtime/boot ${CMAKE_SOURCE_DIR}/runtime/conf
                           ${CMAKE_SOURCE_DIR}/runtime/select)
target_compile_options(test_proc_regmem PRIVATE -UNDEBUG)
foreach(sc np2 np3 np4 np5 slices mixed free kill forged.gen forged.id forged.bounds threads cma cma.mixed cma.off late)
  add_test(NAME proc.regmem.${sc} COMMAND test_proc_regmem ${sc})
  set_tests_properties(proc.regmem.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()

# stitch-perf --mem registered under mpirun: buffers from stitch_mem_alloc, the pull engine from 256 KiB (every element
# checked, STITCH_DEBUG's line on every rank), for all_reduce and for reduce_scatter (whose work buffer moves to
# registered scratch); and STITCH_CMA=1 on plain buffers
foreach(coll all_reduce reduce_scatter)
  add_test(NAME proc.mpirun.np3.registered.${coll} COMMAND ${PROC_LAUNCH} mpirun 3 STITCH_DEBUG=1 -- $<TARGET_FILE:stitch-perf> ${coll}
           -b 64K -e 4M -f 4 -c 1 -w 1 --iters 3 --timeout 60 --mem registered)
endforeach()
add_test(NAME proc.mpirun.np3.cma COMMAND ${PROC_LAUNCH} mpirun 3 STITCH_CMA=1 STITCH_DEBUG=1 -- $<TARGET_FILE:stitch-perf> all_reduce
         -b 64K -e 4M -f 4 -c 1 -w 1 --iters 3 --timeout 60)
set_tests_properties(proc.mpirun.np3.registered.all_reduce proc.mpirun.np3.registered.reduce_scatter proc.mpirun.np3.cma
                     PROPERTIES TIMEOUT 120 LABELS proc SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
set_tests_properties(proc.mpirun.np3.registered.all_reduce proc.mpirun.np3.registered.reduce_scatter PROPERTIES
                     ENVIRONMENT "LAUNCH_EXPECT=pulls from registered memory \\(the first such call\\)")
set_tests_properties(proc.mpirun.np3.cma PROPERTIES ENVIRONMENT "LAUNCH_EXPECT=pulls with process_vm_readv")

# Cross-memory attach (process_vm_readv) between two processes, the candidate fallback for unregistered buffers
# (tests/proc/bench_cma.c; figures in docs/performance.md): here one quick round at 1 MB, data checked.
add_executable(bench_cma ${PROC_TESTS}/bench_cma.c)
add_test(NAME proc.cma.smoke COMMAND bench_cma 1048576 2)
set_tests_properties(proc.cma.smoke PROPERTIES TIMEOUT 60 LABELS "proc;perf")

# Compact messages (a few bytes over shm, one ring line) and tiny calls replayed: streams of tiny and non-tiny calls
# on 2, 3, 5 ranks are bit-identical with and without each and did use them (counters), neither over tcp; a tiny call
# whose fingerprint differs on one rank fails every rank naming both sides, replayed or not; a receive that finds one
# names it, and a replayed call that finds a point-to-point message; a rank that dies between replayed calls is named
# (tests/proc/test_proc_tiny.c).
add_executable(test_proc_tiny ${PROC_TESTS}/test_proc_tiny.c)
target_link_libraries(test_proc_tiny PRIVATE stitch)
target_compile_options(test_proc_tiny PRIVATE -UNDEBUG)
foreach(sc np2 np3 np5 np3.tcp mismatch.np2 mismatch.np3 mismatch.np5 p2p p2p.replayed death.np3 a2av.np1 a2av.np2
           a2av.np3 inplace.np2 inplace.np3 a2a.np2 a2a.np3)
  add_test(NAME proc.tiny.${sc} COMMAND test_proc_tiny ${sc})
  set_tests_properties(proc.tiny.${sc} PROPERTIES TIMEOUT 300 LABELS proc RUN_SERIAL TRUE)
endforeach()
# The same streams on 4 KiB rings, whose wraps cut small messages: replayed ones sent in part and gathered.
foreach(np np2 np3)
  add_test(NAME proc.tiny.${np}.tinyring COMMAND test_proc_tiny ${np})
  set_tests_properties(proc.tiny.${np}.tinyring PROPERTIES TIMEOUT 300 LABELS proc RUN_SERIAL TRUE
                       ENVIRONMENT STITCH_SHM_RING_BYTES=4096)
endforeach()

# A rank's argument error aborts the others at once over the control channels (tests/proc/test_proc_errors.c).
add_executable(test_proc_errors ${PROC_TESTS}/test_proc_errors.c)
target_link_libraries(test_proc_errors PRIVATE stitch)
target_compile_options(test_proc_errors PRIVATE -UNDEBUG)
add_test(NAME proc.errors.argerror COMMAND test_proc_errors argerror)
set_tests_properties(proc.errors.argerror PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
# One rank's init fails before its bootstrap (one scenario per cause): every rank fails within seconds naming it
# and why, not after the 300 s timeout with a bootstrap error.
foreach(sc algo_missing algo_malformed algo_fifo topo segment)
  add_test(NAME proc.errors.init.${sc} COMMAND test_proc_errors init.${sc})
  set_tests_properties(proc.errors.init.${sc} PROPERTIES TIMEOUT 60 LABELS proc RUN_SERIAL TRUE)
endforeach()
# The 2D Mesh+NHR split (spec 10) in process mode: two hosts' worth of groups of 4 from STITCH_GROUPS
add_test(NAME proc.mpirun.np8.mesh_nhr_2d.g2x4
         COMMAND ${PROC_LAUNCH} mpirun 8 STITCH_GROUPS=4,4 -- $<TARGET_FILE:stitch-perf> ${PROC_PERF} -a mesh_nhr_2d)
set_tests_properties(proc.mpirun.np8.mesh_nhr_2d.g2x4 PROPERTIES TIMEOUT 300 LABELS proc RUN_SERIAL TRUE SKIP_RETURN_CODE 77)

# The threads stress's rooted streams in process mode (tests/proc/test_proc_stress.c, issue 18 item 1): rotating
# and random roots, count-0 calls, tree algorithms, ranks napping at random between calls; results exact.
add_executable(test_proc_stress ${PROC_TESTS}/test_proc_stress.c)
target_link_libraries(test_proc_stress PRIVATE stitch)
target_include_directories(test_proc_stress PRIVATE ${CMAKE_SOURCE_DIR}/tests/runtime)
target_compile_options(test_proc_stress PRIVATE -UNDEBUG)
foreach(sc scatter_mesh mixed)
  add_test(NAME proc.stress.${sc} COMMAND test_proc_stress ${sc})
  set_tests_properties(proc.stress.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()

# Sub-communicators with ranks as processes (tests/proc/test_proc_split.c, bodies shared with runtime.split): each
# child bootstraps among its members over shm (or tcp, forced); nested splits, dup, barrier, inherited choices, and
# a rank that calls something else or nothing fails every other rank within the timeout, naming it.
add_executable(test_proc_split ${PROC_TESTS}/test_proc_split.c)
target_link_libraries(test_proc_split PRIVATE stitch)
target_include_directories(test_proc_split PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
target_compile_options(test_proc_split PRIVATE -UNDEBUG)
foreach(sc nested nested.tcp inherit mismatch absent)
  add_test(NAME proc.split.${sc} COMMAND test_proc_split ${sc})
  set_tests_properties(proc.split.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()

# Point-to-point with ranks as processes, over shm and tcp (tests/proc/test_proc_p2p.c, bodies shared with
# runtime.p2p): grouped ring and all-pairs exchange with messages larger than the rings, a blocking chain, a receive
# larger than its send, a group with an unmatched receive; the same with isend/irecv, and their overlap.
add_executable(test_proc_p2p ${PROC_TESTS}/test_proc_p2p.c)
target_link_libraries(test_proc_p2p PRIVATE stitch)
target_include_directories(test_proc_p2p PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
target_compile_options(test_proc_p2p PRIVATE -UNDEBUG)
foreach(sc ring ring.tcp all_pairs all_pairs.tcp chain bigger_recv unmatched usage iring iring.tcp ioverlap
           ibigger_recv iunmatched iusage istream istream.tcp iahead iahead.tcp)
  add_test(NAME proc.p2p.${sc} COMMAND test_proc_p2p ${sc})
  set_tests_properties(proc.p2p.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()

# Non-blocking collectives with ranks as processes, over shm and tcp (tests/proc/test_proc_nb.c, bodies shared with
# runtime.nb): 1,000 calls in flight, test/wait/free, blocking and non-blocking mixed, abort, a silent rank, bad
# input, destroy with requests pending, and a peer killed while the survivors' requests are pending.
add_executable(test_proc_nb ${PROC_TESTS}/test_proc_nb.c)
target_link_libraries(test_proc_nb PRIVATE stitch)
target_include_directories(test_proc_nb PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
target_compile_options(test_proc_nb PRIVATE -UNDEBUG)
foreach(sc flight flight.tcp mix mix.tcp semantics bad abort absent killed destroy)
  add_test(NAME proc.nb.${sc} COMMAND test_proc_nb ${sc})
  set_tests_properties(proc.nb.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()

# The randomized differential test in process mode (test_runtime_difftest, tests/runtime.cmake): each batch forks
# p ranks over shm. 15 s of batches by default, 10 minutes behind `long`.
st_add_test(NAME proc.difftest.shm COMMAND test_runtime_difftest --mode proc --seconds 15 TIMEOUT 900
            PROPERTIES RUN_SERIAL TRUE)
st_add_test(NAME proc.difftest.shm.long COMMAND test_runtime_difftest --mode proc --seconds 600 LABELS long
            TIMEOUT 1800 PROPERTIES RUN_SERIAL TRUE)
