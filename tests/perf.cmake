# perf.cmake - tests of stitch-perf (tools/stitch_perf.c): real runs with checking on small size ranges, and the
# command line.
#
# A run passes only when stitch-perf exits 0 AND its closing line says "N passed, 0 failed" with N >= 1
# (tests/lib/run.cmake checks both). Every run checks each size out of place, then in place (nccl-tests' two
# column sets), so no test needs an in-place variant; -t is the rank count (threads), -n the timed iterations. The size ranges start at 0 bytes so the empty collective is covered,
# and the rank counts include non-powers of two (rhd folds them). `perf.sweep` runs every algorithm, collective,
# dtype and op (each run in and out of place), and is labelled `long`.

# A hung collective fails within this bound instead of the library's default of 300 s.
set(PERF_COMMON -w 1 --iters 3 --timeout 60)

# stitch_perf_test(<name> RC <status> [CLOSING <regex>] [STDOUT <regex>] [STDERR <regex>] [STDERR_EMPTY]
#                  [ENV NAME=value [ENV2 NAME=value [ENV3 NAME=value]]] [LABELS ...] ARGS <stitch-perf args...>)
function(stitch_perf_test name)
  cmake_parse_arguments(T "STDERR_EMPTY" "RC;CLOSING;STDOUT;STDERR;ENV;ENV2;ENV3" "ARGS;LABELS" ${ARGN})
  string(REPLACE ";" "|" args "${T_ARGS}")
  set(defs -DCMD=$<TARGET_FILE:stitch-perf> "-DARGS=${args}" -DRC=${T_RC})
  foreach(key CLOSING STDOUT STDERR ENV ENV2 ENV3)
    if(DEFINED T_${key})
      list(APPEND defs "-D${key}=${T_${key}}")
    endif()
  endforeach()
  if(T_STDERR_EMPTY)
    list(APPEND defs -DSTDERR_EMPTY=1)
  endif()
  add_test(NAME perf.${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${ST_RUN})
  set_tests_properties(perf.${name} PROPERTIES TIMEOUT 300 LABELS "perf;${T_LABELS}")
endfunction()

# stitch_perf_run(<name> <stitch-perf args...>): a checked run that must pass every size.
function(stitch_perf_run name)
  string(REPLACE ";" "|" args "${ARGN}")
  stitch_perf_test(${name} RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                   STDOUT "# Avg bus bandwidth : [0-9.]+\n" ARGS ${ARGN} -c 1 ${PERF_COMMON})
endfunction()

# ---- real runs, checked ---------------------------------------------------------------------------------------
stitch_perf_run(all_reduce.ring.p5.fp32.sum all_reduce -a ring -t 5 -d fp32 -o sum -b 0 -e 1M -f 4)
# auto under policy size (the rule before the cost model): mesh_oneshot up to 48 KiB sent per rank, ring above,
# checked on both sides of the switch (the output must show rows of both)
stitch_perf_test(all_reduce.auto.p5.bf16.sum RC 0 ENV STITCH_SELECT=size CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                 STDOUT " mesh_oneshot\n.* ring\n" ARGS all_reduce -t 5 -d bf16 -o sum -b 0 -e 1M -f 2 -c 1
                 ${PERF_COMMON})
stitch_perf_run(all_reduce.rhd.p7.fp16.prod all_reduce -a rhd -t 7 -d fp16 -o prod -b 0 -e 256K -f 8)
stitch_perf_run(all_reduce.mesh.p4.int64.min all_reduce -a mesh -t 4 -d int64 -o min -b 0 -e 256K -f 8)
stitch_perf_run(all_reduce.rhd.p1.int8.sum all_reduce -a rhd -t 1 -d int8 -o sum -b 0 -e 64K -f 16)
stitch_perf_run(reduce_scatter.rhd.p6.bf16.max reduce_scatter -a rhd -t 6 -d bf16 -o max -b 0 -e 1M -f 4)
stitch_perf_run(reduce_scatter.ring.p4.int32.sum
                reduce_scatter -a ring -t 4 -d int32 -o sum -b 0 -e 256K -f 8)
stitch_perf_run(reduce_scatter.mesh.p5.uint8.prod reduce_scatter -a mesh -t 5 -d uint8 -o prod -b 0 -e 256K -f 8)
stitch_perf_run(all_gather.mesh.p3.int8 all_gather -a mesh -t 3 -d int8 -b 0 -e 1M -f 4)
stitch_perf_run(all_gather.ring.p5.fp64 all_gather -a ring -t 5 -d fp64 -b 0 -e 256K -f 8)
stitch_perf_run(all_gather.rhd.p6.int16 all_gather -a rhd -t 6 -d int16 -b 0 -e 256K -f 8)
stitch_perf_run(broadcast.nhr.p5.bf16.root3 broadcast -a nhr -t 5 -r 3 -d bf16 -b 0 -e 1M -f 4)
stitch_perf_run(reduce.ring.p6.fp16.prod.root5 reduce -a ring -t 6 -r 5 -d fp16 -o prod -b 0 -e 256K -f 8)
stitch_perf_run(scatter.nb.p7.int32.root2 scatter -a nb -t 7 -r 2 -d int32 -b 0 -e 1M -f 4)
stitch_perf_run(gather.ring.p5.int8.root4 gather -a ring -t 5 -r 4 -d int8 -b 0 -e 256K -f 8)
stitch_perf_run(all_to_all.pairwise.p6.fp64 all_to_all -a pairwise -t 6 -d fp64 -b 0 -e 1M -f 4)
stitch_perf_run(all_to_all_v.pairwise.p5.int16 all_to_all_v -a pairwise -t 5 -d int16 -b 0 -e 256K -f 8)
stitch_perf_run(all_reduce.pipeline.p6.fp32.groups3x2 all_reduce -a pipeline --groups 3x2 -t 6 -d fp32 -b 0 -e 1M -f 4)
# mesh_det: scratch units and `at` (peers' copies parked in slots, a local reduce tree)
stitch_perf_run(reduce_scatter.mesh_det.p5.fp32.sum reduce_scatter -a mesh_det -t 5 -d fp32 -o sum -b 0 -e 1M -f 4)
stitch_perf_run(all_reduce.mesh_det.p5.fp32.sum all_reduce -a mesh_det -t 5 -d fp32 -o sum -b 0 -e 1M -f 4)
stitch_perf_run(all_reduce.mesh_det.p6.bf16.max all_reduce -a mesh_det -t 6 -d bf16 -o max -b 0 -e 256K -f 8)

# ---- the command line -------------------------------------------------------------------------------------------
stitch_perf_test(cli.help RC 0 STDERR_EMPTY STDOUT "^usage: stitch-perf COLL" ARGS --help)
stitch_perf_test(cli.help_lists_defaults RC 0
                 STDOUT "-t, --nthreads T[^\n]*\\(default: 2,.*-n, --iters N[^\n]*\\(default: 20\\).*--place both.out.in[^\n]*\\(default: both" ARGS -h)
# the library's tunables, expanded from runtime/tunables.def with their declared defaults
stitch_perf_test(cli.help_lists_tunables RC 0
                 STDOUT "\nEnvironment: .*\n  STITCH_SEGMENT_BYTES \\(default: 4m\\)\n.*\n  STITCH_DEBUG\n" ARGS -h)
stitch_perf_test(cli.bad_dtype RC 2
                 STDERR "^stitch-perf: error: unknown dtype 'fp33' \\(known: int8 uint8 int16 int32 int64 fp16 bf16 fp32 fp64\\)\n$"
                 ARGS all_reduce -d fp33)
stitch_perf_test(cli.bad_op RC 2 STDERR "^stitch-perf: error: unknown op 'avg' \\(known: sum prod max min\\)\n$"
                 ARGS all_reduce -o avg)
stitch_perf_test(cli.bad_collective RC 2 STDERR "^stitch-perf: error: unknown collective 'allreduce' \\(known: "
                 ARGS allreduce)
stitch_perf_test(cli.missing_collective RC 2 STDERR "^stitch-perf: error: missing the collective" ARGS -t 2)
stitch_perf_test(cli.bad_algorithm RC 2
                 STDERR "^stitch-perf: error: unknown algorithm 'nope' for all_reduce \\(known: [^)]*ring"
                 ARGS all_reduce -a nope)
stitch_perf_test(cli.bad_size RC 2 STDERR "^stitch-perf: error: invalid size '12X' for -b" ARGS all_reduce -b 12X)
stitch_perf_test(cli.negative_size RC 2 STDERR "^stitch-perf: error: invalid size '-1' for -e" ARGS all_reduce -e -1)
# One size grammar (core/st_size.h), the variables' and stitchc sim -b's: 1MiB, 1M and 1048576 are one size.
stitch_perf_test(cli.size_grammar RC 2 STDERR "^stitch-perf: error: -b 2097152 is larger than -e 1048576"
                 ARGS all_reduce -b 2MiB -e 1M)
stitch_perf_test(cli.size_plain RC 2 STDERR "^stitch-perf: error: -b 2097152 is larger than -e 1048576"
                 ARGS all_reduce -b 2097152 -e 1048576)
stitch_perf_test(cli.min_above_max RC 2 STDERR "^stitch-perf: error: -b 2048 is larger than -e 1024"
                 ARGS all_reduce -b 2K -e 1K)
stitch_perf_test(cli.bad_check RC 2 STDERR "^stitch-perf: error: invalid value '2' for -c" ARGS all_reduce -c 2)
stitch_perf_test(cli.bad_ranks RC 2 STDERR "^stitch-perf: error: invalid value '0' for -t" ARGS all_reduce -t 0)
stitch_perf_test(cli.bad_iters RC 2 STDERR "^stitch-perf: error: invalid value '0' for -n" ARGS all_reduce -n 0)
stitch_perf_test(cli.unknown_option RC 2 STDERR "^stitch-perf: error: unknown option '--frobnicate'"
                 ARGS all_reduce --frobnicate)
stitch_perf_test(cli.missing_value RC 2 STDERR "^stitch-perf: error: option '-d' needs a value" ARGS all_reduce -d)
stitch_perf_test(cli.bad_env_algo RC 2 ENV STITCH_ALGO=nope STDERR "^stitch-perf: error: init: stitch_comm_init_threads: "
                 ARGS all_reduce -t 2 -b 8 -e 8)
# -c 0 does not check: the #wrong column says N/A, and the run still passes. The last column names the algorithm
# each size ran: auto's choice, under policy model mesh_oneshot for these small vectors.
stitch_perf_test(cli.no_check RC 0 CLOSING "^3 passed, 0 failed$" STDOUT "  N/A  mesh_oneshot\n"
                 ARGS all_reduce -t 3 -b 1K -e 4K -f 2 -c 0 ${PERF_COMMON})

# nccl-tests' table: both column sets under their titles, each with time, algbw, busbw and #wrong, then the closing
# lines nccl-tests prints (a test of the issue's Done-means command, smaller)
stitch_perf_test(cli.table RC 0 CLOSING "^3 passed, 0 failed$" STDERR_EMPTY
                 STDOUT "# nThread 4 minBytes 8 maxBytes 2048 step: 16\\(factor\\) warmup iters: 1 iters: 3 .*\n#  +out-of-place  +in-place\n#  +size  +count  +type  +redop  +root  +time  +algbw  +busbw  +#wrong  +time  +algbw  +busbw  +#wrong  +algorithm\n#  +\\(B\\)  +\\(elements\\)  +\\(us\\)  +\\(GB/s\\)  +\\(GB/s\\)  +\\(us\\)  +\\(GB/s\\)  +\\(GB/s\\) *\n +8  +2  +fp32  +sum  +-1( +[0-9.]+)( +[0-9.]+)( +[0-9.]+) +0( +[0-9.]+)( +[0-9.]+)( +[0-9.]+) +0  +ring\n.*\n# Out of bounds values : 0 OK\n# Avg bus bandwidth : [0-9.]+\n#\n"
                 ARGS all_reduce -a ring -t 4 -b 8 -e 2K -f 16 -c 1 ${PERF_COMMON})
# all_to_all has no in-place form: its in-place columns say N/A, and --place in is refused
stitch_perf_test(cli.all_to_all_no_inplace RC 0 CLOSING "^2 passed, 0 failed$" STDERR_EMPTY
                 STDOUT "( +[0-9.]+)( +[0-9.]+)( +[0-9.]+) +0( +N/A)( +N/A)( +N/A)( +N/A)  pairwise\n"
                 ARGS all_to_all -a pairwise -t 3 -b 24 -e 96 -f 4 -c 1 ${PERF_COMMON})
stitch_perf_test(cli.all_to_all_place_in RC 2 STDERR "^stitch-perf: error: --place in: all_to_all has no in-place form"
                 ARGS all_to_all --place in)
stitch_perf_run(place_out all_reduce -a rhd -t 3 -d int32 -o sum -b 0 -e 64K -f 16 --place out)
stitch_perf_run(place_in reduce_scatter -a ring -t 3 -d fp16 -o sum -b 0 -e 64K -f 16 --place in)
# -i adds bytes (nccl-tests' -f 1 -i N; -i alone here): 0, 1K, 2K, 3K
stitch_perf_test(cli.stepbytes RC 0 CLOSING "^4 passed, 0 failed$" STDERR_EMPTY
                 STDOUT "step: 1024\\(bytes\\).*\n +3072  +768 "
                 ARGS all_reduce -t 2 -b 0 -e 3K -i 1K -c 1 ${PERF_COMMON})
stitch_perf_test(cli.step_both RC 2 STDERR "^stitch-perf: error: -i 1024 adds bytes and -f 4 multiplies: give one"
                 ARGS all_reduce -i 1K -f 4)
# -g counts devices per thread: only with --device; a host rank is a thread, counted by -t
stitch_perf_test(cli.gpus_without_device RC 2
                 STDERR "^stitch-perf: error: -g 2: devices per thread need --device \\(without a device layer each rank is one host thread: -t 8 for 8 ranks\\)"
                 ARGS all_reduce -t 4 -g 2)
# under a launcher (here STITCH_RANK) each process is one rank: -t above 1 is refused before any connection
stitch_perf_test(cli.launcher_threads RC 2 ENV STITCH_RANK=0
                 STDERR "^stitch-perf: error: under stitch each process is one rank: -t 4 is refused \\(the job's size is the rank count\\)\n$"
                 ARGS all_reduce -t 4)
stitch_perf_test(cli.ranks_and_threads RC 2 STDERR "^stitch-perf: error: --ranks 3 disagrees with -t 4"
                 ARGS all_reduce -t 4 --ranks 3)
# -z is accepted; host calls return done, so it changes nothing there (with --device it syncs after every call)
stitch_perf_run(blocking all_reduce -a ring -t 2 -d fp32 -o sum -b 8 -e 8K -f 32 -z 1)
# the device layer on host threads: -t 2 -g 2 is 4 device ranks, -z 1 waits for each call's stream
stitch_perf_run(device_host.t2g2.blocking all_reduce -a ring --device host -t 2 -g 2 -d fp32 -o sum -b 8 -e 64K -f 16
                -z 1)
stitch_perf_test(cli.json_unwritable RC 2 STDERR "^stitch-perf: error: -J [^:]*/no/such/dir/out.json: cannot write it: "
                 ARGS all_reduce -J ${CMAKE_CURRENT_BINARY_DIR}/no/such/dir/out.json)
# -J FILE: one JSON document with the table's figures (tests/perf/json.check.cmake); under mpirun: proc.cmake
set(PERF_JSON_ARGS all_reduce -a ring -d fp32 -o sum -b 64 -e 4K -f 8 -c 1 -w 1 -n 2 -T 60)
string(REPLACE ";" "|" PERF_JSON_ARGS "${PERF_JSON_ARGS}")
set(json ${CMAKE_CURRENT_BINARY_DIR}/perf_json.json)
add_test(NAME perf.json COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitch-perf> -DOUT=${json} -DREMOVE=${json}
                 "-DARGS=${PERF_JSON_ARGS}|-t|3|-J|${json}" -DCHECKS=${CMAKE_CURRENT_SOURCE_DIR}/perf/json.check.cmake
                 -P ${ST_RUN})
set_tests_properties(perf.json PROPERTIES TIMEOUT 120 LABELS perf)

# ---- topologies: --topo FILE, --layout SPEC, $STITCH_TOPO (stitch_config_t.topo; the rank count defaults to its
# ranks, and -t must agree with it) ---------------------------------------------------------------------------
set(TOPOS ${CMAKE_SOURCE_DIR}/topologies)
stitch_perf_run(topo.pipeline.layout2x2 all_reduce -a pipeline --layout 2,2 -d fp32 -o sum -b 4 -e 1M -f 16)
stitch_perf_run(topo.pipeline.servers2x8 reduce_scatter -a pipeline --topo ${TOPOS}/servers-2x8.yaml -d int32 -o sum
                -b 0 -e 256K -f 16)
# three levels: the levels the library built are printed, and every element checked
stitch_perf_test(topo.three_level RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                 STDOUT "# topology: --topo [^
]*three-level.yaml, 3 levels: level 0: 3 groups 4,2,3; level 1: 2 groups 6,3; level 2: 1 group 9
"
                 ARGS all_gather --topo ${TOPOS}/three-level.yaml -d bf16 -b 0 -e 64K -f 16 -c 1 ${PERF_COMMON})
stitch_perf_test(topo.layout3 RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                 STDOUT "# topology: --layout .2,3.,.1., 3 levels: level 0: 3 groups 2,3,1; level 1: 2 groups 5,1;"
                 ARGS all_reduce -a rhd --layout [2,3],[1] -d fp16 -o max -b 0 -e 64K -f 16 -c 1 ${PERF_COMMON})
stitch_perf_test(topo.env RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY ENV STITCH_TOPO=2,3
                 ARGS all_reduce -a ring -t 5 -d int64 -o sum -b 0 -e 64K -f 16 -c 1 ${PERF_COMMON})
stitch_perf_test(cli.topo_bad_file RC 2 STDERR "^[^
]*tests/topo/t_bad.yaml:4:13: error: a group must hold at least 1 rank, not 0
$"
                 ARGS all_reduce --topo ${CMAKE_SOURCE_DIR}/tests/topo/t_bad.yaml)
stitch_perf_test(cli.layout_bad RC 2 STDERR "^stitch-perf: error: --layout: bad layout '2,,3': column 3: expected a count"
                 ARGS all_reduce --layout 2,,3)
stitch_perf_test(cli.topo_ranks RC 2
                 STDERR "^stitch-perf: error: -t 4 makes 4 ranks, but --topo .*/unequal-2-3.yaml holds 5: give -t 5 \\(or --ranks 5\\), or leave the count to it\n$"
                 ARGS all_reduce --topo ${TOPOS}/unequal-2-3.yaml -t 4 -b 8 -e 8)
# the rank count from $STITCH_TOPO (issue 23: it used to start 2 ranks and fail at init), and -t against it
stitch_perf_test(topo.env_count RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY ENV STITCH_TOPO=2,3
                 STDOUT "# nRanks 5 \\(ranks are threads of one process; from STITCH_TOPO=2,3\\)"
                 ARGS all_reduce -a ring -b 0 -e 4K -f 16 -c 1 ${PERF_COMMON})
stitch_perf_test(cli.topo_env_ranks RC 2 ENV STITCH_TOPO=2,3
                 STDERR "^stitch-perf: error: -t 4 makes 4 ranks, but STITCH_TOPO=2,3 holds 5: give -t 5"
                 ARGS all_reduce -t 4)
# --layout's SxL with a capital X, as STITCH_GROUPS and STITCH_TOPO read it: 2X3 is 6 ranks
stitch_perf_test(cli.layout_capital_x RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$"
                 ARGS all_reduce --layout 2X3 -b 8 -e 8)
stitch_perf_test(cli.topo_and_groups RC 2 STDERR "^stitch-perf: error: --groups and --layout exclude each other"
                 ARGS all_reduce --layout 2,2 --groups 2x2)
# the communicator's form wins: --groups (config->groups) over $STITCH_TOPO, whose 5 ranks would not fit
stitch_perf_test(topo.groups_over_env RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY ENV STITCH_TOPO=2,3
                 ARGS all_reduce -a pipeline --groups 2x2 -t 4 -b 8 -e 8 -c 1 ${PERF_COMMON})

# ---- AHC, AHC_BROKE and hier on groups (threads; --groups or --layout), checked: a sample up to 256 KiB; under
# `long` the issue's runs, 4 B .. 16 MiB on 2+3, 7+5+3 and 1+4 for both AHC forms and their three collectives
stitch_perf_run(all_reduce.ahc.g2+3.fp32.sum all_reduce -a ahc --layout 2,3 -d fp32 -o sum -b 4 -e 256K -f 8)
stitch_perf_run(reduce_scatter.ahc.g2+3.bf16.max reduce_scatter -a ahc --groups 2,3 -d bf16 -o max -b 4 -e 256K -f 8)
stitch_perf_run(all_gather.ahc.g2+3.int8 all_gather -a ahc --groups 2,3 -d int8 -b 4 -e 256K -f 8)
stitch_perf_run(all_reduce.ahc.g7+5+3.fp16.sum all_reduce -a ahc --layout 7,5,3 -d fp16 -o sum -b 4 -e 256K -f 16)
stitch_perf_run(all_gather.ahc.g1+4.fp64 all_gather -a ahc --groups 1,4 -d fp64 -b 4 -e 256K -f 16)
stitch_perf_run(all_reduce.ahc_broke.g2+3.int32.prod all_reduce -a ahc_broke --groups 2,3 -d int32 -o prod -b 4
                -e 256K -f 8)
stitch_perf_run(reduce_scatter.ahc_broke.g7+5+3.fp32.min reduce_scatter -a ahc_broke --groups 7,5,3 -d fp32 -o min
                -b 4 -e 256K -f 16)
stitch_perf_run(all_gather.ahc_broke.g1+4.int16 all_gather -a ahc_broke --groups 1,4 -d int16 -b 4 -e 256K -f 16)
stitch_perf_run(all_reduce.hier.g3x2.fp32.sum all_reduce -a hier --groups 3x2 -d fp32 -o sum -b 4 -e 256K -f 8)
stitch_perf_run(broadcast.hier.g2x3.bf16.root4 broadcast -a hier --groups 2x3 -r 4 -d bf16 -b 4 -e 256K -f 8)
stitch_perf_run(all_to_all.hier.2x4.fp32 all_to_all -a hier --layout 2x4 -d fp32 -b 4 -e 256K -f 8)
foreach(layout 2,3 7,5,3 1,4)
  string(REPLACE "," "+" name ${layout})
  foreach(algo ahc ahc_broke)
    foreach(coll all_reduce reduce_scatter all_gather)
      stitch_perf_test(${coll}.${algo}.g${name}.16M RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                       LABELS long ARGS ${coll} -a ${algo} --layout ${layout} -d fp32 -o sum -b 4 -e 16M -f 4 -c 1
                       ${PERF_COMMON})
    endforeach()
  endforeach()
endforeach()

# ---- a rank dies in one phase (the test hook STITCH_PERF_DIE_AT, tests/perf/die_at.sh): every survivor names
# itself, the phase it was in and the dead rank (the library's message), and still ends with its closing line.
# Thread mode: rank 2 of 4 threads aborts its communicator; process mode: rank 2 of 4 processes (STITCH_RANK/SIZE/
# ROOT) SIGKILLs itself. -w 2 / --iters 2 / -c 0 -w 0 give each phase the second synchronisation that places the
# survivors in it (tools/stitch_perf.c at phase_name). In thread mode a death at init or at a barrier is seen in
# the next library call (the benchmark's pthread barriers cannot fail): warm-up and timed loop.
set(DIE_AT ${CMAKE_CURRENT_SOURCE_DIR}/perf/die_at.sh)
set(DIE_AT_ARGS all_reduce -a ring -d fp32 -o sum -b 1K -e 2K -f 2 --iters 2)
foreach(mode threads proc)
  foreach(case "init;init;warm-up;-c;0;-w;2" "check;check;check;-c;1;-w;2" "warm-up;warm-up;warm-up;-c;0;-w;2"
               "barrier;barrier;timed-loop;-c;0;-w;0" "timed-loop;timed-loop;timed-loop;-c;0;-w;2")
    list(GET case 0 phase)
    list(GET case 1 proc_seen)
    list(GET case 2 threads_seen)
    list(SUBLIST case 3 -1 opts)
    if(mode STREQUAL "threads")
      set(name perf.die_at.threads.${phase})
      add_test(NAME ${name} COMMAND ${DIE_AT} threads $<TARGET_FILE:stitch-perf> 4 2 ${phase} ${threads_seen}
               ${DIE_AT_ARGS} ${opts})
      set_tests_properties(${name} PROPERTIES TIMEOUT 150 LABELS perf)
    else()
      set(name proc.die_at.${phase})
      add_test(NAME ${name} COMMAND ${DIE_AT} proc $<TARGET_FILE:stitch-perf> 4 2 ${phase} ${proc_seen}
               ${DIE_AT_ARGS} ${opts})
      set_tests_properties(${name} PROPERTIES TIMEOUT 150 LABELS "proc;perf" RUN_SERIAL TRUE)
    endif()
  endforeach()
endforeach()
stitch_perf_test(cli.bad_die_at RC 2 ENV STITCH_PERF_DIE_AT=2:warmup
                 STDERR "^stitch-perf: error: bad STITCH_PERF_DIE_AT '2:warmup' \\(a test hook: RANK:PHASE"
                 ARGS all_reduce -t 4)

# ---- the long sweep: every algorithm x collective x dtype x op, in and out of place ---------------------------
# Every (algorithm, collective) of the catalogue, for a few rank counts; rooted ones with the last rank as root,
# pipeline with groups; each run checks out of place, then in place (all_to_all*: out of place only), and must exit 0
# with "N passed, 0 failed". The runs are listed one a line in the build tree; every failure is shown.
set(sweep_pairs ring:all_reduce ring:reduce_scatter ring:all_gather mesh:all_reduce mesh:reduce_scatter
    mesh:all_gather rhd:all_reduce rhd:reduce_scatter rhd:all_gather nhr:all_reduce nhr:reduce_scatter
    nhr:all_gather nhr_oneshot:all_reduce nb:all_reduce nb:reduce_scatter nb:all_gather pipeline:all_reduce
    pipeline:reduce_scatter pipeline:all_gather ring:broadcast mesh:broadcast rhd:broadcast nhr:broadcast
    nhr_oneshot:broadcast nb:broadcast nb_binary:broadcast ring:reduce mesh:reduce rhd:reduce
    nhr_oneshot:reduce ring:scatter mesh:scatter nhr:scatter nb:scatter ring:gather mesh:gather
    mesh:all_to_all pairwise:all_to_all pairwise:all_to_all_v)
set(sweep_runs "")
foreach(pair ${sweep_pairs})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 algo)
  list(GET pair 1 coll)
  set(ops sum prod max min)
  if(NOT coll MATCHES "reduce")
    set(ops sum) # the op is ignored
  endif()
  foreach(dtype int8 uint8 int16 int32 int64 fp16 bf16 fp32 fp64)
    foreach(op ${ops})
      foreach(p 2 3 5 6 8 13)
        math(EXPR root "${p} - 1")
        set(extra "|-r|${root}")
        if(algo STREQUAL "pipeline" AND p EQUAL 8)
          string(APPEND extra "|--groups|4x2")
        endif()
        string(APPEND sweep_runs "${coll}|-a|${algo}|-t|${p}|-d|${dtype}|-o|${op}|-b|0|-e|64K|-f|8|-c|1|-w|1|-n|1"
                                 "|--timeout|60${extra}\n")
      endforeach()
    endforeach()
  endforeach()
endforeach()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/perf_sweep.runs "${sweep_runs}")
add_test(NAME perf.sweep
         COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitch-perf>
                 -DEACH_FILE=${CMAKE_CURRENT_BINARY_DIR}/perf_sweep.runs
                 "-DSTDOUT=\n[1-9][0-9]* passed, 0 failed\n$" -P ${ST_RUN})
set_tests_properties(perf.sweep PROPERTIES TIMEOUT 3600 LABELS "perf;long")

# ---- the 2D Mesh+NHR split (spec 10) on 2 servers of 4: every collective it implements, checked; R from the
# environment (stitch_config_t.split_ratio has no stitch-perf option yet) -----------------------------------
foreach(coll all_reduce reduce_scatter all_gather broadcast reduce)
  stitch_perf_run(${coll}.mesh_nhr_2d.2x4.fp32 ${coll} -a mesh_nhr_2d --layout 2x4 -d fp32 -o sum -b 4 -e 256K -f 8)
  stitch_perf_test(${coll}.mesh_nhr_2d.2x4.16M RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY LABELS long
                   ARGS ${coll} -a mesh_nhr_2d --layout 2x4 -d fp32 -o sum -b 4 -e 16M -f 4 -c 1 ${PERF_COMMON})
endforeach()
stitch_perf_test(all_reduce.mesh_nhr_2d.2x4.env0.3 RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                 ENV HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO=0.3
                 ARGS all_reduce -a mesh_nhr_2d --layout 2x4 -d bf16 -o max -b 4 -e 256K -f 8 -c 1 ${PERF_COMMON})
stitch_perf_test(all_gather.mesh_nhr_2d.2x4.env1 RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" STDERR_EMPTY
                 ENV HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO=1
                 ARGS all_gather -a mesh_nhr_2d --layout 2x4 -d int32 -b 4 -e 256K -f 8 -c 1 ${PERF_COMMON})

# ---- stitch-perf --calibrate and scripts/select_vs_measured.sh: a smoke run (2 ranks, 1-4 KiB, one round) that checks
# the output is well formed (calibration, topology snippet, predicted and measured rows, summary), never its timing --
add_test(NAME perf.select_vs_measured.smoke
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/perf/select_vs_measured_smoke.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(perf.select_vs_measured.smoke PROPERTIES TIMEOUT 300 LABELS perf)

# ---- scripts/plot_perf.py: PNGs from small generated stitch-perf outputs (table and -J) and a bench_vs_mpi.sh-shaped
# table, and bad input refused (skipped where no python3 has matplotlib) -------------------------------------------
add_test(NAME perf.plot COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/perf/plot.sh $<TARGET_FILE:stitch-perf>
                                ${CMAKE_SOURCE_DIR}/scripts/plot_perf.py ${CMAKE_CURRENT_BINARY_DIR}/plot)
set_tests_properties(perf.plot PROPERTIES TIMEOUT 120 LABELS perf SKIP_RETURN_CODE 77)

# HCCL_ALGO's level1 picks the algorithm between servers at every size (runtime/select/select_conf.c): NHR and H-D_R
# on one-rank servers run nhr and rhd themselves; ring on 2 servers of 4 runs hier (ring between the servers: the
# schedule's steps are checked in tests/runtime/test_hccl.c, roles)
stitch_perf_test(hccl_algo.level1_nhr RC 0 ENV "HCCL_ALGO=level0:NA|level1:NHR" STDERR_EMPTY
                 CLOSING "^6 passed, 0 failed$" STDOUT " nhr\n.* nhr\n.* nhr\n.* nhr\n.* nhr\n.* nhr\n"
                 ARGS all_reduce --layout 1,1,1,1,1 -b 4 -e 4M -f 16 -c 1 ${PERF_COMMON})
stitch_perf_test(hccl_algo.level1_hdr RC 0 ENV "HCCL_ALGO=level0:NA|level1:H-D_R" STDERR_EMPTY
                 CLOSING "^6 passed, 0 failed$" STDOUT " rhd\n.* rhd\n.* rhd\n.* rhd\n.* rhd\n.* rhd\n"
                 ARGS all_reduce --layout 1,1,1,1,1 -b 4 -e 4M -f 16 -c 1 ${PERF_COMMON})
stitch_perf_test(hccl_algo.level1_ring_2x4 RC 0 ENV "HCCL_ALGO=level0:NA|level1:ring" STDERR_EMPTY
                 CLOSING "^6 passed, 0 failed$" STDOUT " hier\n.* hier\n.* hier\n.* hier\n.* hier\n.* hier\n"
                 ARGS all_reduce --layout 4,4 -b 4 -e 4M -f 16 -c 1 ${PERF_COMMON})
# STITCH_DEBUG names the split ratio a call's plan uses and where it came from (runtime/comm/plan.c)
stitch_perf_test(split_ratio.debug_formula RC 0 ENV STITCH_DEBUG=1 CLOSING "^1 passed, 0 failed$"
                 STDERR "plan of mesh_nhr_2d all_reduce \\(root 0\\): [^\n]*; split ratio 0.875 \\(the formula, spec 12.3: L = 8, S = 2"
                 ARGS all_reduce -a mesh_nhr_2d --topo ${TOPOS}/servers-2x8.yaml -b 4K -e 4K -c 1 ${PERF_COMMON})

# AHC's inner algorithms at run time (STITCH_AHC_INTRA / STITCH_AHC_INTER, issue 22 item 6): every pair of NB, NHR
# and Ring runs with data on unequal layouts, ahc (LCM alignment) on 3,5 and ahc_broke on 2,3,4, the collective
# rotating, and STITCH_DEBUG's plan line names the pair that ran (so a value that did not reach the roles fails).
set(ahc_colls all_reduce reduce_scatter all_gather)
set(ahc_i 0)
foreach(intra nb nhr ring)
  foreach(inter nb nhr ring)
    math(EXPR ci "${ahc_i} % 3")
    list(GET ahc_colls ${ci} coll)
    math(EXPR ahc_i "${ahc_i} + 1")
    foreach(run "ahc|3,5|fp32" "ahc_broke|2,3,4|int32")
      string(REPLACE "|" ";" run "${run}")
      list(GET run 0 algo)
      list(GET run 1 layout)
      list(GET run 2 dt)
      stitch_perf_test(ahc_inner.${intra}.${inter}.${algo}.${coll} RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$"
                       ENV STITCH_AHC_INTRA=${intra} ENV2 STITCH_AHC_INTER=${inter} ENV3 STITCH_DEBUG=1
                       STDERR "plan of ${algo} ${coll} [^\n]*; AHC intra ${intra} \\(configured\\), inter ${inter} \\(configured\\)"
                       ARGS ${coll} -a ${algo} --layout ${layout} -d ${dt} -b 0 -e 64K -f 64 -c 1 ${PERF_COMMON})
    endforeach()
  endforeach()
endforeach()
# auto: the cost model picks (the plan line says so) and the data is right
stitch_perf_test(ahc_inner.auto RC 0 CLOSING "^[1-9][0-9]* passed, 0 failed$" ENV STITCH_DEBUG=1
                 STDERR "plan of ahc all_reduce [^\n]*; AHC intra (nb|nhr|ring) \\(model\\), inter (nb|nhr|ring) \\(model\\)"
                 ARGS all_reduce -a ahc --layout 3,5 -d fp32 -b 0 -e 64K -f 64 -c 1 ${PERF_COMMON})

# copy_bench (tools/copy_bench.c), bench_vs_mpi.sh's copy bound: a real run of every size, and sizes that would make
# its doubling loop wrap (it looped for ever on MAXBYTES near 2^64) refused.
add_test(NAME perf.copy_bench COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:copy_bench> "-DARGS=2|1|4096|4|1|2"
  "-DCLOSING=^ +4096 +[0-9.]+ +[0-9.]+$" -P ${ST_RUN})
add_test(NAME perf.copy_bench.huge COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:copy_bench>
  "-DARGS=1|8|18446744073709551615" -DRC=2 "-DSTDERR=copy_bench: error: MAXBYTES 18446744073709551615 or FACTOR 4 too large"
  -P ${ST_RUN})
set_tests_properties(perf.copy_bench perf.copy_bench.huge PROPERTIES TIMEOUT 60 LABELS perf)
