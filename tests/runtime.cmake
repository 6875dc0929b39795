# runtime.cmake - tests of libstitch (runtime/): reduction kernels, collectives with data, errors, the tcp and shm
# transports, choosing a transport per pair.
#
# Each program is a table of tests run one per child process with a timeout (tests/runtime/runner.h) and prints
# TAP. The default run holds a sample of the collectives matrix; the whole matrix is `runtime.collectives.full`,
# labelled `long`. NDEBUG is undefined in every test so assert() stays live.

set(RUNTIME_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/runtime)

function(stitch_runtime_test name)
  add_executable(test_runtime_${name} ${RUNTIME_TESTS}/test_${name}.c)
  target_link_libraries(test_runtime_${name} PRIVATE stitch)
  target_include_directories(test_runtime_${name} PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core ${RUNTIME_TESTS})
  target_compile_options(test_runtime_${name} PRIVATE -UNDEBUG)
endfunction()

stitch_runtime_test(reduce)
stitch_runtime_test(collectives)
stitch_runtime_test(errors)
stitch_runtime_test(mesh_det)
stitch_runtime_test(placement)
stitch_runtime_test(tcp)
stitch_runtime_test(shm)
stitch_runtime_test(transport)
stitch_runtime_test(wait)

add_test(NAME runtime.reduce COMMAND test_runtime_reduce)
add_test(NAME runtime.collectives COMMAND test_runtime_collectives)
add_test(NAME runtime.collectives.full COMMAND test_runtime_collectives --full matrix_small_p matrix_large_p ahc_groups)
add_test(NAME runtime.errors COMMAND test_runtime_errors)
add_test(NAME runtime.mesh_det COMMAND test_runtime_mesh_det)
add_test(NAME runtime.placement COMMAND test_runtime_placement)
add_test(NAME runtime.tcp COMMAND test_runtime_tcp)
add_test(NAME runtime.shm COMMAND test_runtime_shm)
add_test(NAME runtime.transport COMMAND test_runtime_transport)
add_test(NAME runtime.wait COMMAND test_runtime_wait)
set_tests_properties(runtime.reduce runtime.collectives runtime.errors runtime.mesh_det runtime.placement runtime.tcp runtime.shm
                     runtime.transport runtime.wait PROPERTIES TIMEOUT 120 LABELS runtime)
# The collectives sample runs every algorithm (composites included) with data: ~10 s, ~35 s under ASan; the
# ceiling leaves room for a loaded 2-core machine (it once took over 120 s under ASan at load 11).
set_tests_properties(runtime.collectives PROPERTIES TIMEOUT 400)

# The tunables' one declaration (runtime/tunables.def) against README.md's table (both ways; the test also shows
# that a README missing a row or with an extra one fails), the tests' clearing list and the declared defaults.
stitch_runtime_test(tunables)
target_compile_definitions(test_runtime_tunables PRIVATE STITCH_README="${CMAKE_SOURCE_DIR}/README.md")
add_test(NAME runtime.tunables COMMAND test_runtime_tunables)
set_tests_properties(runtime.tunables PROPERTIES TIMEOUT 60 LABELS runtime)

# HCCL's variables (spec 11.2, 12.1, 14.2): every HCCL_ALGO rejection with its exact message, the accepted forms,
# the split ratio and determinism rules, communicator > environment > default with the source recorded, and what
# the runtime selects from HCCL_ALGO.
stitch_runtime_test(hccl)
add_test(NAME runtime.hccl COMMAND test_runtime_hccl)
set_tests_properties(runtime.hccl PROPERTIES TIMEOUT 60 LABELS runtime)
set_tests_properties(runtime.collectives.full PROPERTIES TIMEOUT 3600 LABELS "runtime;long")

# auto's size tables (runtime/select.h): gap- and overlap-free on several layouts under every policy, the checker's
# rejections, policy hccl against spec 13's decisions, policy model through the predictor seam, the overrides, and
# STITCH_DEBUG's one line per (collective, size class).
stitch_runtime_test(select)
add_test(NAME runtime.select COMMAND test_runtime_select)
set_tests_properties(runtime.select PROPERTIES TIMEOUT 180 LABELS runtime)

# The runtime on a topology (STITCH_TOPO, stitch_config_t.topo): groups at every level in threads mode (a level
# all_gather of tests/runtime/levels.dsl must be right on three levels, and its copy broken after two levels refused),
# pipeline on servers-2x8.yaml, the topology/groups precedence, every error's message, stitch_topo_ranks, and process
# mode's placement by host name on a made-up bootstrap table.
stitch_runtime_test(topology)
stitch_compile_dsl(test_runtime_topology ${RUNTIME_TESTS}/levels.dsl st_test_levels NO_VERIFY)
target_compile_definitions(test_runtime_topology PRIVATE STITCH_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_test(NAME runtime.topology COMMAND test_runtime_topology)
set_tests_properties(runtime.topology PROPERTIES TIMEOUT 120 LABELS runtime)

# A caller frees its buffers the moment a failed call returns (abort, timeout, mismatch at a random moment of a
# large all_reduce / all_to_all_v): the default run does a few rounds of 4 MB per failure; the `long` run 100
# rounds of 64 MB each, meant for the ASan build.
stitch_runtime_test(abort_free)
add_test(NAME runtime.abort_free COMMAND test_runtime_abort_free)
add_test(NAME runtime.abort_free.long COMMAND test_runtime_abort_free abort_long timeout_long mismatch_long
         mismatch_v_long)
set_tests_properties(runtime.abort_free PROPERTIES TIMEOUT 120 LABELS runtime)
set_tests_properties(runtime.abort_free.long PROPERTIES TIMEOUT 7200 LABELS "runtime;long")

# The runtime's boundaries (backend state touched only by its backend; no private header named like a system one).
add_test(NAME runtime.structure COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -P ${RUNTIME_TESTS}/check_structure.cmake)
set_tests_properties(runtime.structure PROPERTIES LABELS runtime)

# Thread ranks running any number of calls ahead of each other (issue 18 items 1 and 9): thousands of rooted calls
# with rotating roots, count-0 calls and tree algorithms, and many-segment all_to_all / reduce_scatter, under the
# engine's preemption hook (job.h's st_job_preempt) and sleeps with no slice to hide a lost wake-up, results exact;
# and a call 2.5x longer than its timeout that keeps moving succeeds. ~14 s at load 20 on the 2-core VM.
stitch_runtime_test(threads_stress)
add_test(NAME runtime.threads_stress COMMAND test_runtime_threads_stress)
set_tests_properties(runtime.threads_stress PROPERTIES TIMEOUT 300 LABELS runtime)

# Sub-communicators on thread ranks (tests/runtime/test_split.c): nested splits and dup with data, STITCH_UNDEFINED,
# the parent's algorithm choice inherited, a user catalogue (levels.dsl) on the parent's three-level topology
# restricted to the children, and a rank that calls something else or nothing: an error naming it, not a hang.
stitch_runtime_test(split)
stitch_compile_dsl(test_runtime_split ${RUNTIME_TESTS}/levels.dsl st_test_levels NO_VERIFY)
add_test(NAME runtime.split COMMAND test_runtime_split)
set_tests_properties(runtime.split PROPERTIES TIMEOUT 120 LABELS runtime)

# Point-to-point on thread ranks (tests/runtime/test_p2p.c): grouped ring exchange in both orders and all pairs at
# once (no deadlock, data checked), a chain of blocking calls, a receive larger than its send and a group with an
# unmatched receive (errors naming the ranks within the timeout), the group's usage rules; the same with
# isend/irecv (in flight, around a collective), and their overlap with the caller.
stitch_runtime_test(p2p)
add_test(NAME runtime.p2p COMMAND test_runtime_p2p)
set_tests_properties(runtime.p2p PROPERTIES TIMEOUT 180 LABELS runtime)
# A thread's group record freed at thread exit (tests/runtime/test_p2p_exit.c; LeakSanitizer checks it under make
# sanitize, where it exits normally).
stitch_runtime_test(p2p_exit)
add_test(NAME runtime.p2p_exit COMMAND test_runtime_p2p_exit)
set_tests_properties(runtime.p2p_exit PROPERTIES TIMEOUT 60 LABELS runtime)

# Non-blocking collectives on thread ranks (tests/runtime/test_nb.c): 1,000 calls in flight with data checked in call
# order, test/wait/wait_all/free, blocking and non-blocking mixed, an abort and a silent rank failing every pending
# request with their message, bad handles and arguments, destroy with requests pending.
stitch_runtime_test(nb)
add_test(NAME runtime.nb COMMAND test_runtime_nb)
set_tests_properties(runtime.nb PROPERTIES TIMEOUT 300 LABELS runtime)

# The randomized differential test (tests/runtime/test_difftest.c, issue 18): batches of one communicator (random
# p = 1..9 and groups) running random cases - every collective x algorithm x dtype x op x count (0, 1, primes,
# not divisible by p, many segments) x in-place form x root - each output element against an exact oracle, guard
# zones around every buffer and the send buffer untouched. The default run is 15 s of batches; the long one 10
# minutes. A failure prints its parameters and `--seed S --batches 1 --case K` to replay it. Process mode:
# proc.difftest.* in proc.cmake, on the same program.
stitch_runtime_test(difftest)
target_include_directories(test_runtime_difftest PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/proc)
st_add_test(NAME runtime.difftest.threads COMMAND test_runtime_difftest --mode threads --seconds 15 TIMEOUT 900)
st_add_test(NAME runtime.difftest.threads.long COMMAND test_runtime_difftest --mode threads --seconds 600 LABELS long
            TIMEOUT 1800)
# The batch that found set_algorithm accepting a rooted algorithm whose root-independent `require` fails (reduce
# mesh_nhr_2d on groups 2,3: `require uniform()`), whose first call then aborted every rank: now refused at set time.
st_add_test(NAME runtime.difftest.seed63 COMMAND test_runtime_difftest --mode threads --seed 63 --batches 1 TIMEOUT 300)
# The test of the test: a damaged guard byte, output element or send buffer (rank 0, after each call) is reported.
foreach(w guard element send)
  st_add_test(NAME runtime.difftest.inject.${w} COMMAND test_runtime_difftest --mode threads --seed 5 --batches 1
              --inject ${w} TIMEOUT 300 PROPERTIES PASS_REGULAR_EXPRESSION "FAIL seed=5 case=0: .* rank=0: ")
endforeach()
