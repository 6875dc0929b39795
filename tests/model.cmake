# model.cmake - the cost model (core/st_model.c) and `stitchc sim`, included from tests/CMakeLists.txt.
#
#   model.formulas       test_model: every (algorithm, collective) the spec gives a cost for, simulated on a flat
#                        machine over p = 2..1024 and three sizes, within 1% of the spec's formula or of the exact
#                        value the test states where they differ by design; symmetric against exact; AHC on pods
#                        64 + 128 against spec 9.7; a step as slow as its slowest rank
#   model.formulas_long  the same with p up to 1024 for the O(p^2) algorithms (label long)
#   model.cli.*          stitchc sim: the done-means ring figure in JSON, 100,000 ranks, options and errors
add_executable(test_model ${CMAKE_CURRENT_SOURCE_DIR}/model/test_model.c)
target_link_libraries(test_model PRIVATE stitch_front m)
target_compile_options(test_model PRIVATE -UNDEBUG)
add_test(NAME model.formulas COMMAND test_model ${STITCH_DSL})
add_test(NAME model.formulas_long COMMAND test_model ${STITCH_DSL} --long)
set_tests_properties(model.formulas_long PROPERTIES LABELS long)

# stitchc sim (named compiler.cli.sim_* by stitch_cli). The done-means figure: ring all_reduce of 256 MiB on the
# flat 16-rank topology is 2(p-1)a + 2(p-1)/p n b + (p-1)/p n g = 22949.2416 us (p = 16 divides n: exact).
set(SIM_TOPOS ${CMAKE_SOURCE_DIR}/topologies)
stitch_cli(sim_ring_json RC 0 STDERR_EMPTY
           STDOUT "^..algorithm.: .ring., .collective.: .all_reduce., .ranks.: 16, .bytes.: 268435456, .*time_us.: 22949\\.2416[0-9]*, .algbw_GBps.: 11\\.69[0-9]*, .busbw_GBps.: 21\\.93[0-9]*, .steps.: .\n  ..step.: 0, .start_us.: 0\\.000000, .time_us.: 848\\.8608"
           ARGS sim ${STITCH_DSL} -a ring -c all_reduce --topo ${SIM_TOPOS}/flat-16.yaml -b 256M --format json)
# 100,000 ranks the symmetric way (ring: 2(p-1) a + ...: 224156.949 us with 1 us, 25 GB/s, 100 GB/s)
stitch_cli(sim_ring_100k RC 0 STDOUT "p = 100000, 256 MiB, flat, 199998 steps, symmetric model \\(representatives 0..0\\)\ntime 224156\\.9[0-9]* us"
           ARGS sim ${STITCH_DSL} -a ring -c all_reduce -n 100000 -b 256M)
stitch_cli(sim_nb_100k RC 0 STDOUT "p = 100000, 256 MiB, flat, 34 steps, symmetric model"
           ARGS sim ${STITCH_DSL} -a nb -c all_reduce -n 100000 -b 256M)
# A million ranks of NHR: its tree map's table (a layout) has a fuel budget per unit, not a rank's run's (refused
# with "ran more than 268435456 instructions" when the table drew on the rank's fuel)
stitch_cli(sim_nhr_1m RC 0 STDOUT "p = 1000000, 256 MiB, flat, 40 steps, symmetric model"
           ARGS sim ${STITCH_DSL} -a nhr -c all_reduce -n 1000000 -b 256M)
stitch_cli(sim_ahc_pods RC 0 STDOUT "time 24772\\.508 us"
           ARGS sim ${STITCH_DSL} -a ahc_align -c all_reduce --topo ${SIM_TOPOS}/pods-64-128-flat.yaml -b 256M
                --intra nb --inter nb)
stitch_cli(sim_svg RC 0 STDOUT "^<\\?xml[^\n]*\n<svg .*<title>rank 7, step 5: .*</svg>\n$"
           ARGS sim ${STITCH_DSL} -a ring -c all_reduce -n 8 -b 1M --format svg)
stitch_cli(sim_not_symmetric RC 1 STDERR "algos.dsl:[0-9]+: error: rhd is not shift-symmetric for p = 100000: rank 1"
           ARGS sim ${STITCH_DSL} -a rhd -c all_reduce -n 100000 -b 1M --method symmetric)
# auto then runs every rank (up to ST_MODEL_EXACT_RANKS, within the memory estimate), as a schedule could not
stitch_cli(sim_exact_100k RC 0 STDOUT "rhd all_reduce, p = 100000, 1 MiB, flat, 34 steps, exact model"
           ARGS sim ${STITCH_DSL} -a rhd -c all_reduce -n 100000 -b 1M)
stitch_cli(sim_no_bytes RC 2 STDERR "stitchc: error: missing -b BYTES"
           ARGS sim ${STITCH_DSL} -a ring -n 4)
# One size grammar (core/st_size.h) with the variables and stitch-perf: 256MiB, 256M and 268435456 are one size.
foreach(b 256MiB 256M 268435456)
  stitch_cli(sim_bytes_${b} RC 0 STDOUT "p = 8, 256 MiB, flat" ARGS sim ${STITCH_DSL} -a ring -n 8 -b ${b})
endforeach()
stitch_cli(sim_bad_bytes RC 2 STDERR "bad size '12x'" ARGS sim ${STITCH_DSL} -a ring -n 4 -b 12x)
stitch_cli(sim_two_machines RC 2 STDERR "--topo, --layout and -n exclude each other"
           ARGS sim ${STITCH_DSL} -a ring -n 4 --layout 2,2 -b 1M)
stitch_cli(sim_svg_too_big RC 2 STDERR "--format svg draws at most 256 ranks, not 300"
           ARGS sim ${STITCH_DSL} -a ring -n 300 -b 1M --format svg)
stitch_cli(sim_bad_intra RC 2 STDERR "--intra nosuch: no algorithm 'nosuch'"
           ARGS sim ${STITCH_DSL} -a ahc -c all_reduce --layout 2,3 -b 1M --intra nosuch)
# HCCL_ALGO as at run time: level1 AHC is the algorithm when -a is not given; a level1 ring replaces hier's role
add_test(NAME model.cli.hccl_algo_ahc
         COMMAND ${CMAKE_COMMAND} -E env "HCCL_ALGO=level0:NA;level1:AHC"
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -c all_reduce --layout 2,3 -b 1M)
set_tests_properties(model.cli.hccl_algo_ahc PROPERTIES PASS_REGULAR_EXPRESSION "^# ahc all_reduce, p = 5")
add_test(NAME model.cli.hccl_algo_role
         COMMAND ${CMAKE_COMMAND} -E env "HCCL_ALGO=level0:NA;level1:ring"
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -a hier -c all_reduce --layout 4x4 -b 1M)
set_tests_properties(model.cli.hccl_algo_role PROPERTIES PASS_REGULAR_EXPRESSION "^# hier all_reduce, p = 16, 1 MiB, 4,4,4,4, 8 steps")
add_test(NAME model.cli.hccl_algo_bad
         COMMAND ${CMAKE_COMMAND} -E env "HCCL_ALGO=level1:nosuch"
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -a ring --layout 4x4 -b 1M)
set_tests_properties(model.cli.hccl_algo_bad PROPERTIES PASS_REGULAR_EXPRESSION "stitchc: error: HCCL_ALGO='level1:nosuch'" WILL_FAIL FALSE)
# Beyond 1024 ranks the symmetric model runs; RHD is not shift-symmetric, so every rank runs instead (exact)
stitch_cli(sim_fallback RC 0 STDOUT "rhd all_reduce, p = 2000, 1 MiB, flat, 22 steps, exact model"
           ARGS sim ${STITCH_DSL} -a rhd -c all_reduce -n 2000 -b 1M)
# AHC and hier across 300 groups: their helpers over the groups are tail calls (accumulators), which the machine
# runs in one frame, so no longer "recursion deeper than 200 calls"
stitch_cli(sim_ahc_300_groups RC 0 STDOUT "ahc all_reduce, p = 1200, 64 MiB, 4,4,4,.*, 22 steps.*\ntime [0-9.]+ us"
           ARGS sim ${STITCH_DSL} -a ahc -c all_reduce --layout 300x4 -b 64M)
stitch_cli(sim_hier_300_groups RC 0 STDOUT "hier all_reduce, p = 1200"
           ARGS sim ${STITCH_DSL} -a hier -c all_reduce --layout 300x4 -b 64M)
# AHC on two groups of 50,000 has no symmetry; every rank's program would take minutes: refused with the estimate
stitch_cli(sim_no_symmetry RC 1 STDERR "simulating ahc on every one of the 100000 ranks would run about [0-9.]+ billion instructions"
           ARGS sim ${STITCH_DSL} -a ahc -c all_reduce --layout 2x50000 -b 1M)
# HCCL_ALGO's level1 chooses as at run time (runtime/select/select_conf.c): NHR on one-rank servers is nhr itself,
# ring on 4 servers of 4 is hier (1 + 6 + 1 steps: ring between the servers); one server has no level1
add_test(NAME model.cli.hccl_algo_level1_nhr
         COMMAND ${CMAKE_COMMAND} -E env "HCCL_ALGO=level0:NA;level1:NHR"
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -c all_reduce --layout 1,1,1,1,1 -b 1M)
set_tests_properties(model.cli.hccl_algo_level1_nhr PROPERTIES PASS_REGULAR_EXPRESSION "^# nhr all_reduce, p = 5")
add_test(NAME model.cli.hccl_algo_level1_ring
         COMMAND ${CMAKE_COMMAND} -E env "HCCL_ALGO=level0:NA;level1:ring"
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -c all_reduce --layout 4x4 -b 1M)
set_tests_properties(model.cli.hccl_algo_level1_ring PROPERTIES
                     PASS_REGULAR_EXPRESSION "^# hier all_reduce, p = 16, 1 MiB, 4,4,4,4, 8 steps")
add_test(NAME model.cli.hccl_algo_level1_one_server
         COMMAND ${CMAKE_COMMAND} -E env "HCCL_ALGO=level0:NA;level1:ring"
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -c all_reduce -n 4 -b 1M)
set_tests_properties(model.cli.hccl_algo_level1_one_server PROPERTIES PASS_REGULAR_EXPRESSION
                     "missing -a ALGO \\(HCCL_ALGO's level1 ring: one server, so no level between servers")
# The split ratio as at run time (spec 12.2): --split (the config) > HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO >
# the formula from the topology's bandwidths (0.875 on servers-2x8.yaml, as perf.split_ratio.debug_formula shows the
# runtime using) > its fallback 0.5; a note names which
stitch_cli(sim_split_formula RC 0 STDERR "stitchc: note: split ratio 0.875 \\(the formula, spec 12.3: L = 8, S = 2"
           ARGS sim ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce --topo ${SIM_TOPOS}/servers-2x8.yaml -b 1M)
stitch_cli(sim_split_fallback RC 0 STDERR "stitchc: note: split ratio 0.5 \\(the formula's fallback"
           ARGS sim ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce --layout 2x4 -b 1M)
stitch_cli(sim_split_option RC 0 STDERR "stitchc: note: split ratio 0.25 \\(--split"
           ARGS sim ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce --topo ${SIM_TOPOS}/servers-2x8.yaml -b 1M --split 0.25)
add_test(NAME model.cli.sim_split_env
         COMMAND ${CMAKE_COMMAND} -E env HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO=0.3
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce
                 --topo ${SIM_TOPOS}/servers-2x8.yaml -b 1M)
set_tests_properties(model.cli.sim_split_env PROPERTIES PASS_REGULAR_EXPRESSION
                     "stitchc: note: split ratio 0.3 \\(HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO\\)")
add_test(NAME model.cli.sim_split_env_bad
         COMMAND ${CMAKE_COMMAND} -E env HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO=.5
                 $<TARGET_FILE:stitchc> sim ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce --layout 2x4 -b 1M)
set_tests_properties(model.cli.sim_split_env_bad PROPERTIES PASS_REGULAR_EXPRESSION
                     "stitchc: error: HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO='.5': expected a non-negative number")

# issue 22 item 7: scripts/scale_bench.sh, time and peak memory of `stitchc sim` and `stitch-info --selection` on
# two unequal super-pods (gen_superpods.sh). The fast one: 2,000 ranks, every sim line priced (rc=0), and the
# selection done (rc=0: no timeout) under a generous 60 s limit (about 4 s on a shared 2-core machine since the
# class plan; 51-83 s before it) in under 1000 MB; the long one: 1k .. 1M ranks (docs/cost-model.md).
add_test(NAME info.scale_bench_2k
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/../scripts/scale_bench.sh -b ${CMAKE_BINARY_DIR} -t 60 2k)
set_tests_properties(info.scale_bench_2k PROPERTIES TIMEOUT 240 LABELS info
                     PASS_REGULAR_EXPRESSION "2k +2000 stitch-info +select +seconds=[0-9.]+ +peak_mb=[0-9]?[0-9]?[0-9] +rc=0"
                     FAIL_REGULAR_EXPRESSION "crashed|stitchc-sim [^\n]*rc=[1-9]")
add_test(NAME model.scale_bench_long
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/../scripts/scale_bench.sh -b ${CMAKE_BINARY_DIR} -t 600 1k 10k 100k 1m)
set_tests_properties(model.scale_bench_long PROPERTIES TIMEOUT 7200 LABELS long
                     FAIL_REGULAR_EXPRESSION "crashed")
