# info.cmake - tests of stitch-info (tools/stitch_info.c): the command line, the configuration it shows with each
# value's source, and a malformed value exiting 1 with the variable named (the message is config.c's, whose every
# rule tests/runtime/test_hccl.c checks). HCCL_ALGO's ';' is written '|' here (tests/lib/run.cmake's ENV says why).

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
  add_test(NAME info.${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${ST_RUN})
  set_tests_properties(info.${name} PROPERTIES TIMEOUT 60 LABELS info)
endfunction()

stitch_info_test(help RC 0 STDERR_EMPTY STDOUT "^usage: stitch-info \\[options\\]\n" ARGS --help)
stitch_info_test(bad_option RC 2 STDERR "stitch-info: unknown option '--nope' \\(see --help\\)" ARGS --nope)
# nothing set: the version, every collective's algorithms, every tunable from the default
stitch_info_test(defaults RC 0 STDERR_EMPTY
                 STDOUT "^stitch [0-9]+\\.[0-9]+ .*\n  all_reduce +ring, .*\n  STITCH_ALGO +'auto' +default\n.*  STITCH_TIMEOUT +'300' +default\n.*  HCCL_ALGO +\\(unset\\) +default\n.*  HCCL_DETERMINISTIC +\\(unset\\) +default\n.*  all_reduce +auto: policy model \\(STITCH_SELECT")
# Done means: HCCL_ALGO='level0:NA;level1:AHC' exits 0 and shows AHC at level1 and level2, from the environment
stitch_info_test(hccl_algo_ahc RC 0 ENV "HCCL_ALGO=level0:NA|level1:AHC"
                 STDOUT "  HCCL_ALGO +'level0:NA;level1:AHC' +environment\n.*HCCL_ALGO levels, from the environment: 'level0:NA;level1:AHC'\n.*  all_reduce +NA +AHC +AHC +- +environment\n  reduce_scatter +NA +AHC +AHC +- +environment\n  all_gather +NA +AHC +AHC +- +environment\n  broadcast +NA +- +- +- +environment\n")
# Done means: HCCL_ALGO='level1:FOO' exits 1 naming HCCL_ALGO
stitch_info_test(hccl_algo_bad RC 1 ENV "HCCL_ALGO=level1:FOO"
                 STDERR "^stitch-info: HCCL_ALGO='level1:FOO': algo config is invalid, algo FOO is not supported .*; expected level0:NA;level1:<algo> or ")
# STITCH_GROUPS as init checks it (issue 18): malformed exits 1; with --selection its groups shape the table, and
# a -n they do not add up to exits 1 with init's message
stitch_info_test(groups_bad RC 1 ENV "STITCH_GROUPS=2,,2"
                 STDERR "^stitch-info: STITCH_GROUPS='2,,2': expected SxL \\(S groups of L ranks\\) or group sizes")
stitch_info_test(groups_selection RC 0 STDERR_EMPTY ENV "STITCH_GROUPS=3x2" ARGS --selection
                 STDOUT "Selection table \\(policy model; 6 ranks; groups 3x2;")
stitch_info_test(groups_selection_n RC 1 ENV "STITCH_GROUPS=3x2" ARGS --selection -n 5
                 STDERR "^stitch-info: STITCH_GROUPS='3x2': expected SxL \\(S groups of L ranks, S \\* L = 5\\)")
stitch_info_test(bad_timeout RC 1 ENV "STITCH_TIMEOUT=5s" STDERR "^stitch-info: STITCH_TIMEOUT='5s': expected a positive")
stitch_info_test(bad_split_ratio RC 1 ENV "HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO=1.5"
                 STDERR "^stitch-info: HCCL_ALG_MULTIPLE_DIMENSION_SPLIT_RATIO='1.5': out of range")
stitch_info_test(bad_deterministic RC 1 ENV "HCCL_DETERMINISTIC=yes"
                 STDERR "^stitch-info: HCCL_DETERMINISTIC='yes': should be true, false or strict")
# values from the environment say so, and the selection follows them
stitch_info_test(environment RC 0 STDERR_EMPTY ENV "HCCL_ALGO=allreduce=level1:pipeline"
                 STDOUT "  HCCL_ALGO +'allreduce=level1:pipeline' +environment\n.*  all_reduce +- +pipeline +- +- +environment \\(per-operator entry\\)\n.*Selection.*\n  all_reduce +auto: HCCL_ALGO level1 pipeline, fitted to the layout \\(--selection prints the choice\\)\n  reduce_scatter +auto: policy model ")
# --topo FILE: the topology with alpha/beta/gamma per level, groups and sizes, the convergence ratio of each boundary
set(INFO_TOPOS ${CMAKE_SOURCE_DIR}/topologies)
stitch_info_test(topo_pods RC 0 STDERR_EMPTY ARGS --topo ${INFO_TOPOS}/pods-64-128.yaml
                 STDOUT "\nTopology 'pods-64-128' \\([^\n]*pods-64-128.yaml, from --topo\\):\n  ranks: 192; levels: 3; layout: .8,8,8,8,8,8,8,8.,.8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8.\n.*  0 +server +56 GB/s +1 us +1e-06 +1.786e-11 +24 +8 x24\n  1 +pod +25 GB/s +5 us +5e-06 +4e-11 +2 +64 \\(8\\), 128 \\(16\\)\n  2 +cluster +6.25 GB/s +10 us +1e-05 +1.6e-10 +1 +192 \\(2\\)\n  reduce bandwidth: 100 GB/s; gamma = 1/reduce_bandwidth = 1e-11 s/B\n.*    level0 server / level1 pod: 2.24\n    level1 pod / level2 cluster: 4\n  hosts: none named")
stitch_info_test(topo_hosts RC 0 STDERR_EMPTY ARGS --topo ${INFO_TOPOS}/unequal-1-4.yaml
                 STDOUT "  reduce bandwidth: not given \\(no gamma\\)\n.*    small +1 rank \\(layout positions 0..0\\), devices 0\n    big +4 ranks \\(layout positions 1..4\\), devices 0,1,2,3\n$")
stitch_info_test(topo_bad RC 1 ARGS --topo ${CMAKE_SOURCE_DIR}/tests/topo/t_bad.yaml
                 STDERR "^[^\n]*tests/topo/t_bad.yaml:4:13: error: a group must hold at least 1 rank, not 0\n$")
stitch_info_test(topo_env RC 0 STDERR_EMPTY ENV STITCH_TOPO=2,3
                 STDOUT "  STITCH_TOPO +'2,3' +environment\n.*\nTopology \\(2,3, from the environment\\):\n  ranks: 5; levels: 2; layout: 2,3\n")
# One grammar for group specs and one topology loader: SxL with a capital X as STITCH_GROUPS and as STITCH_TOPO's
# inline layout, read by the runtime's own loader (conf/topology.c)
stitch_info_test(groups_capital_x RC 0 STDERR_EMPTY ENV "STITCH_GROUPS=2X3" ARGS --selection
                 STDOUT "Selection table \\(policy model; 6 ranks; groups 2X3;")
stitch_info_test(topo_capital_x RC 0 STDERR_EMPTY ENV STITCH_TOPO=2X3
                 STDOUT "\nTopology \\(2X3, from the environment\\):\n  ranks: 6; levels: 2; layout: 3,3\n")
stitch_info_test(topo_env_bad RC 1 ENV STITCH_TOPO=/nonexistent/t.yaml
                 STDERR "^stitch-info: STITCH_TOPO: /nonexistent/t.yaml: error: cannot read")
stitch_info_test(topo_no_file RC 2 STDERR "^stitch-info: --topo needs a FILE" ARGS --topo)

# --selection: auto's table (runtime/select.h) per collective, starting at 0 and ending at max (the gap and overlap
# checks themselves are runtime.select's); issue 12's Done means on the 2+3 topology, policy hccl's AHC there, a
# forced collective, and the command line's errors.
set(INFO_COLLS all_reduce reduce_scatter all_gather broadcast reduce scatter gather all_to_all all_to_all_v)
set(INFO_SEL_RE "")
foreach(c ${INFO_COLLS})
  string(APPEND INFO_SEL_RE "\n  ${c} +\\[0, [^\n]*\n([^\n]*\n)*")
endforeach()
stitch_info_test(selection_2_3 RC 0 STDERR_EMPTY ARGS --selection --topo ${INFO_TOPOS}/unequal-2-3.yaml
                 STDOUT "^\nSelection table \\(policy model; 5 ranks; topology [^\n]*unequal-2-3.yaml;[^\n]*${INFO_SEL_RE}$")
stitch_info_test(selection_hccl RC 0 STDERR_EMPTY ARGS --selection --topo ${INFO_TOPOS}/unequal-2-3.yaml --policy hccl
                 STDOUT "policy hccl.*\n  all_reduce +\\[0, max\\] +ahc\n  reduce_scatter +\\[0, max\\] +ahc\n")
stitch_info_test(selection_n RC 0 STDERR_EMPTY ENV STITCH_ALGO=all_gather=ring ARGS --selection -n 4 --policy size
                 STDOUT "policy size; 4 ranks; one group;.*\n  all_reduce +\\[0, 16 KiB\\] +mesh_oneshot\n +\\[16385, max\\] +ring\n.*  all_gather +\\[0, max\\] +ring \\(forced\\)\n")
stitch_info_test(selection_bad_policy RC 2 STDERR "^stitch-info: --policy needs model, hccl, hccl_guide or size" ARGS --selection --policy best)
stitch_info_test(selection_bad_n RC 2 STDERR "^stitch-info: -n '0': expected a number of ranks" ARGS --selection -n 0)
stitch_info_test(selection_needs RC 2 STDERR "^stitch-info: -n and --policy go with --selection" ARGS -n 4)
stitch_info_test(selection_topo_p RC 1 STDERR "has 5 ranks .* but the communicator has 4" ARGS --selection -n 4 --topo ${INFO_TOPOS}/unequal-2-3.yaml)
# HCCL_ALGO's level1 chooses (runtime/select/select_conf.c): configured against chosen per collective and size
stitch_info_test(selection_level1_nhr RC 0 STDERR_EMPTY ENV "HCCL_ALGO=level0:NA|level1:NHR"
                 ARGS --selection --topo 1,1,1,1,1
                 STDOUT "\n  all_reduce +\\[0, max\\] +nhr  configured: level1 NHR\n.*\n  reduce +\\[0, max\\] +ring  configured: level1 NHR, not run: level1 NHR: stitch has no reduce of nhr; HCCL's default runs\n")
stitch_info_test(selection_level1_ring RC 0 STDERR_EMPTY ENV "HCCL_ALGO=level0:NA|level1:ring"
                 ARGS --selection --topo 4,4 --policy hccl
                 STDOUT "\n  all_reduce +\\[0, max\\] +hier \\(level1 ring\\)  configured: level1 ring\n")
stitch_info_test(selection_level1_one_server RC 0 STDERR_EMPTY ENV "HCCL_ALGO=level0:NA|level1:ring" ARGS --selection -n 4
                 STDOUT "\n  all_reduce +\\[0, 256 KiB\\] +mesh_oneshot  configured: level1 ring, not run: level1 ring: one server, so no level between servers \\(all_reduce\\); HCCL's default runs\n +\\[262145, max\\] +mesh  configured: level1 ring, not run: HCCL's default\n")

# Golden tables of HCCL's two policies (tests/info/golden.cmake: STITCH_UPDATE_GOLDEN=1 rewrites them): every
# decision of hccl (the A2 code, spec 13.2) and hccl_guide (the user guide, spec 13.1) for 1..130 servers of 1 and
# of 8 ranks, every collective, every size (each range by its first byte count). tests/runtime/test_select.c
# (guide_table) checks hccl_guide against the guide's rules written out independently.
foreach(policy hccl hccl_guide)
  foreach(L 1 8)
    add_test(NAME info.golden.${policy}.L${L}
             COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitch-info>
                     "-DARGS=--selection|--policy|${policy}|--servers|1..130|--per-server|${L}"
                     -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/info/golden/selection_${policy}_130x${L}.txt
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/info/golden.cmake)
    set_tests_properties(info.golden.${policy}.L${L} PROPERTIES TIMEOUT 120 LABELS info)
  endforeach()
endforeach()
# Done means: on 4, 7, 8, 33 and 64 one-rank servers hccl_guide gives the guide's algorithm at 1 MB and 512 MB:
# RHD for 4, 8, 64 (powers of two) at both; RHD at 1 MB and Ring at 512 MB for 7 (< 32 servers); RHD and NHR for 33
foreach(case "4;\\[0, max\\] +rhd" "8;\\[0, max\\] +rhd" "64;\\[0, max\\] +rhd"
             "7;\\[0, 268435455\\] +rhd\n +\\[256 MiB, max\\] +ring" "33;\\[0, 268435455\\] +rhd\n +\\[256 MiB, max\\] +nhr")
  list(GET case 0 S)
  list(GET case 1 want)
  stitch_info_test(selection_guide_${S} RC 0 STDERR_EMPTY ARGS --selection --policy hccl_guide --topo ${S}x1
                   STDOUT "\n  all_reduce +${want}\n")
endforeach()
# Servers that are not full meshes (topology level 0 `full_mesh: false`): stitch-info says so, and HCCL's policies
# keep to hier inside them (pipeline's intra part is a mesh, spec 7); a configured pipeline falls back, saying why
stitch_info_test(topo_ring_servers RC 0 STDERR_EMPTY ARGS --topo ${CMAKE_SOURCE_DIR}/topologies/servers-2x4-ring.yaml
                 STDOUT "\n  servers \\(level 0\\): not a full mesh, full_mesh: false \\(level0 runs ring\\)\n")
stitch_info_test(selection_ring_servers RC 0 STDERR_EMPTY
                 ARGS --selection --policy hccl --topo ${CMAKE_SOURCE_DIR}/topologies/servers-2x4-ring.yaml
                 STDOUT "\n  all_reduce +\\[0, max\\] +hier\n  reduce_scatter +\\[0, max\\] +hier\n")
stitch_info_test(selection_ring_servers_pipeline RC 0 STDERR_EMPTY ENV "HCCL_ALGO=level1:pipeline"
                 ARGS --selection --topo ${CMAKE_SOURCE_DIR}/topologies/servers-2x4-ring.yaml
                 STDOUT "\n  all_reduce +\\[0, max\\] +hier  configured: level1 pipeline, not run: level1 pipeline needs servers that are full meshes")

# AHC's inner algorithms (STITCH_AHC_INTRA / STITCH_AHC_INTER): --selection shows the pair per collective and what
# chose each side; a bad value exits 1 naming the variable and the values it takes.
stitch_info_test(ahc_inner_inter RC 0 STDERR_EMPTY ENV "STITCH_AHC_INTER=nhr" ARGS --selection --topo 3,5
                 STDOUT "AHC.s algorithms inside / across groups[^\n]*\n  all_reduce +intra (nb|nhr|ring) \\(model\\), inter nhr \\(configured\\)\n")
stitch_info_test(ahc_inner_intra RC 0 STDERR_EMPTY ENV "STITCH_AHC_INTRA=RING" ARGS --selection --topo 2,3,4
                 STDOUT "AHC.s algorithms inside / across groups[^\n]*\n(  [^\n]*\n)*  reduce_scatter +intra ring \\(configured\\), inter (nb|nhr|ring) \\(model\\)\n")
stitch_info_test(ahc_inner_bad RC 1 ENV "STITCH_AHC_INTRA=bruck"
                 STDERR "^stitch-info: STITCH_AHC_INTRA='bruck': expected auto, nb, nhr or ring")
stitch_info_test(ahc_inner_shown RC 0 STDERR_EMPTY ENV "STITCH_AHC_INTER=nb"
                 STDOUT "  STITCH_AHC_INTER +'nb' +environment\n")
