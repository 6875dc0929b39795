# topo.cmake - topology files and layouts (core/st_topofile.c, core/st_topo.c), included from tests/CMakeLists.txt.
#
#   topo.loader           every topologies/*.yaml example loads; a table of malformed texts each with its exact
#                         `t.yaml:LINE:COL: error:`; FIFO, directory, missing file; --layout texts; level queries
#   topo.cli.*            stitchc verify/show with --layout and --topo; a malformed topology exits 1
# The loader's fuzz target and the replay of its corpus: fuzz.cmake.
add_executable(test_topofile ${CMAKE_CURRENT_SOURCE_DIR}/topo/test_topofile.c)
target_link_libraries(test_topofile PRIVATE stitch_topofile)
target_compile_options(test_topofile PRIVATE -UNDEBUG)
add_test(NAME topo.loader COMMAND test_topofile ${CMAKE_SOURCE_DIR}/topologies)
set_tests_properties(topo.loader PROPERTIES TIMEOUT 60) # a FIFO must not hang the suite

set(ST_TOPOS ${CMAKE_SOURCE_DIR}/topologies)
stitch_cli(topo_verify_layout RC 0 STDOUT "verified 88 \\(algorithm, collective\\) pairs for p = 5..5"
           ARGS verify ${STITCH_DSL} --layout 2,3)
stitch_cli(topo_verify_layout3 RC 0 STDOUT "not applicable: pipeline all_gather on \\[2,3\\],\\[4\\]"
           ARGS verify ${STITCH_DSL} --layout [2,3],[4])
stitch_cli(topo_verify_pods RC 0 STDOUT "verified pipeline     all_gather      the given layout"
           ARGS verify ${STITCH_DSL} --topo ${ST_TOPOS}/pods-64-128.yaml -a pipeline)
stitch_cli(topo_verify_bad_topo RC 1 STDERR "t_bad.yaml:4:13: error: a group must hold at least 1 rank, not 0"
           ARGS verify ${STITCH_DSL} --topo ${CMAKE_CURRENT_SOURCE_DIR}/topo/t_bad.yaml)
stitch_cli(topo_verify_bad_layout RC 2 STDERR "bad layout '2,x': column 3: expected a count of ranks or "
           ARGS verify ${STITCH_DSL} --layout 2,x)
# --topo takes what STITCH_TOPO takes (one loader, core/st_topofile_open): an inline layout, SxL with a capital X
stitch_cli(topo_verify_inline_capital_x RC 0 STDOUT "verified 3 \\(algorithm, collective\\) pairs for p = 6..6"
           ARGS verify ${STITCH_DSL} -a ahc --topo 2X3)
stitch_cli(topo_verify_ranks_and_layout RC 2 STDERR "--ranks and --layout exclude each other"
           ARGS verify ${STITCH_DSL} --layout 2,3 --ranks 5)
stitch_cli(topo_show_layout RC 0 STDOUT "\"ranks\": 5, \"groups\": .1, 1, 1, 1, 1."
           ARGS show ${STITCH_DSL} -a pipeline -c all_gather --layout 1,1,1,1,1 --format json)
stitch_cli(topo_show_topo_refused RC 1 STDERR "require. at line [0-9]+ does not hold"
           ARGS show ${STITCH_DSL} -a pipeline -c all_gather --topo ${ST_TOPOS}/unequal-2-3.yaml)
stitch_cli(topo_show_n_mismatch RC 2 STDERR "-n 4 disagrees with the layout 2,3, which has 5 ranks"
           ARGS show ${STITCH_DSL} -a ring -c all_reduce --layout 2,3 -n 4)
stitch_cli(topo_show_groups_still RC 0 STDOUT "\"ranks\": 6, \"groups\": .2, 2, 2."
           ARGS show ${STITCH_DSL} -a pipeline -c all_gather -n 6 -g 3x2 --format json)

# The long layout sweep (up to 4 servers; pods of up to 3 servers of 1..4 ranks) over the catalogue and the level
# all_gather, under the `long` label.
add_test(NAME topo.sweep_long.catalogue COMMAND stitchc verify ${STITCH_DSL} --sweep long)
add_test(NAME topo.sweep_long.levels COMMAND stitchc verify ${CMAKE_CURRENT_SOURCE_DIR}/verify/ok/levels_all_gather.dsl
         --ranks 1..24 --sweep long)
set_tests_properties(topo.sweep_long.catalogue topo.sweep_long.levels PROPERTIES LABELS long TIMEOUT 1800)
