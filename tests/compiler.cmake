# compiler.cmake - tests of stitchc: golden schedule views, the command line, and the emitted C tables.
#
# Included from tests/CMakeLists.txt. Two sections: the codegen/driver tests below, and the lead's (sema,
# verifier, diagnostics golden files) after them. Golden files live in tests/compiler/golden/ and change only
# through the explicit target `update-golden-compiler`; a test fails on any byte of difference.

# ==== codegen and driver (codegen/, tools/stitchc.c) ==============================================================

set(STITCH_DSL ${CMAKE_SOURCE_DIR}/algos.dsl)
set(COMPILER_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/compiler)
set(COMPILER_OUT ${CMAKE_CURRENT_BINARY_DIR}/compiler)
file(MAKE_DIRECTORY ${COMPILER_OUT})
set(STITCH_GOLDEN_UPDATES "")

# stitch_golden(<name> <golden file> <stitchc args...>): stitchc's stdout must equal golden/<file>.
# `"line": N` is ignored in the comparison (tests/lib/run.cmake's IGNORE: moving an algorithm within algos.dsl does
# not break a golden file about its schedule), and so is the path in the holdings view's `# error at PATH:` (the
# source tree's location).
function(stitch_golden name golden)
  string(REPLACE ";" "|" args "${ARGN}")
  set(common -DCMD=$<TARGET_FILE:stitchc> "-DARGS=${args}" -DGOLDEN=${COMPILER_TESTS}/golden/${golden})
  if(golden MATCHES "\\.json$")
    list(APPEND common -DJSON=1)
  endif()
  add_test(NAME compiler.golden.${name}
           COMMAND ${CMAKE_COMMAND} ${common} -DACTUAL=${COMPILER_OUT}/${golden}.actual
                   "-DIGNORE=\"line\": [0-9]+|# error at [^:]*:" -P ${ST_RUN})
  set(STITCH_GOLDEN_UPDATES ${STITCH_GOLDEN_UPDATES} COMMAND ${CMAKE_COMMAND} ${common} -DUPDATE=1
      -P ${ST_RUN} PARENT_SCOPE)
endfunction()

# stitch_cli(<name> RC <status> [STDOUT <regex>] [STDERR <regex>] [STDOUT_EMPTY] [STDERR_EMPTY]
#            [NO_FILES <files...>] [MKFIFO <path>] ARGS <stitchc args...>)
# A `;` cannot appear in a regex here (it splits the argument): match it with `.`.
function(stitch_cli name)
  cmake_parse_arguments(C "STDOUT_EMPTY;STDERR_EMPTY" "RC;STDOUT;STDERR;MKFIFO" "ARGS;NO_FILES" ${ARGN})
  string(REPLACE ";" "|" args "${C_ARGS}")
  string(REPLACE ";" "|" no_files "${C_NO_FILES}")
  set(defs -DCMD=$<TARGET_FILE:stitchc> "-DARGS=${args}" -DRC=${C_RC})
  if(DEFINED C_STDOUT)
    list(APPEND defs "-DSTDOUT=${C_STDOUT}")
  endif()
  if(DEFINED C_STDERR)
    list(APPEND defs "-DSTDERR=${C_STDERR}")
  endif()
  if(C_STDOUT_EMPTY)
    list(APPEND defs -DSTDOUT_EMPTY=1)
  endif()
  if(C_STDERR_EMPTY)
    list(APPEND defs -DSTDERR_EMPTY=1)
  endif()
  if(no_files)
    list(APPEND defs "-DNO_FILES=${no_files}")
  endif()
  if(DEFINED C_MKFIFO)
    list(APPEND defs "-DMKFIFO=${C_MKFIFO}")
  endif()
  add_test(NAME compiler.cli.${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${ST_RUN})
  set_tests_properties(compiler.cli.${name} PROPERTIES TIMEOUT 60) # an input that blocks fails, not hangs
endfunction()

# ---- golden schedule views
stitch_golden(show_ring_rs_json show_ring_reduce_scatter_p5.json
              show ${STITCH_DSL} -a ring -c reduce_scatter -n 5 --format json)
stitch_golden(show_ring_ar_table show_ring_all_reduce_p4.txt
              show ${STITCH_DSL} -a ring -c all_reduce -n 4)
stitch_golden(show_root_table show_ring_broadcast_p4_root2.txt
              show ${COMPILER_TESTS}/rooted.dsl -a ring -c broadcast -n 4 --root 2)
stitch_golden(show_groups_json show_grp_all_gather_p5_groups.json
              show ${COMPILER_TESTS}/rooted.dsl -a grp -n 5 --groups 2,3 --format json)
stitch_golden(show_ring_rs_svg show_ring_reduce_scatter_p3.svg
              show ${STITCH_DSL} -a ring -c reduce_scatter -n 3 --format svg)
stitch_golden(show_ring_rs_dot show_ring_reduce_scatter_p3.dot
              show ${STITCH_DSL} -a ring -c reduce_scatter -n 3 --format dot)
# the holdings view: what each unit holds after each step, for a right algorithm, a rooted one and a wrong one
# (which ends with the verifier's message, pointing at the send that wrote the wrong unit last)
stitch_golden(show_ring_ar_holdings show_ring_all_reduce_p3_holdings.txt
              show ${STITCH_DSL} -a ring -c all_reduce -n 3 --format holdings)
stitch_golden(show_root_holdings show_ring_broadcast_p4_root2_holdings.txt
              show ${COMPILER_TESTS}/rooted.dsl -a ring -c broadcast -n 4 --root 2 -f holdings)
stitch_golden(show_wrong_holdings show_ring_copy_p3_holdings.txt
              show ${CMAKE_CURRENT_SOURCE_DIR}/verify/wrong_last.dsl -a ring_copy -n 3 -f holdings)
# AHC on groups 2+3 (spec 9.3): the whole schedule, and the logical same-index pairs it must hold
stitch_golden(show_ahc_ar_json show_ahc_all_reduce_2_3.json
              show ${STITCH_DSL} -a ahc -c all_reduce -g 2,3 --format json)
add_test(NAME compiler.ahc_pairs COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitchc>
         "-DARGS=show|${STITCH_DSL}|-a|ahc|-c|all_reduce|-g|2,3|--format|json" "-DSTDOUT=\"units\": 12,"
         -DCHECKS=${COMPILER_TESTS}/ahc_pairs.check.cmake -P ${ST_RUN})
# verify and show on one grouping (-g), and roles replaced (--use: the hook a configuration uses)
stitch_cli(verify_groups RC 0 STDOUT "verified 3 \\(algorithm, collective\\) pairs for p = 5..5"
           ARGS verify ${STITCH_DSL} -a ahc -g 2,3)
# -g's SxL is STITCH_GROUPS's (core/st_topo.h: one groups grammar), capital X included
stitch_cli(verify_groups_capital_x RC 0 STDOUT "verified [0-9]+ \\(algorithm, collective\\) pairs for p = 6..6"
           ARGS verify ${STITCH_DSL} -a ahc -g 2X3)
stitch_cli(show_groups_capital_x RC 0 STDOUT "^# hier all_reduce, p = 6, groups 2\\+2\\+2, U = 6 units, 6 steps\n"
           ARGS show ${STITCH_DSL} -a hier -c all_reduce -g 3X2)
stitch_cli(verify_groups_ranks RC 2 STDERR "--ranks and --groups exclude each other"
           ARGS verify ${STITCH_DSL} -a ahc -g 2,3 --ranks 5)
stitch_cli(use_level1 RC 0 STDOUT "^# hier all_reduce, p = 6, groups 2\\+2\\+2, U = 6 units, 4 steps\n"
           ARGS show ${STITCH_DSL} -a hier -c all_reduce -g 3x2 --use level1=mesh)
stitch_cli(use_default RC 0 STDOUT "^# hier all_reduce, p = 6, groups 2\\+2\\+2, U = 6 units, 6 steps\n"
           ARGS show ${STITCH_DSL} -a hier -c all_reduce -g 3x2)
stitch_cli(use_verify RC 0 STDOUT "verified 3 "
           ARGS verify ${STITCH_DSL} -a ahc -g 7,5,3 --use ahc_inter=nb,ahc_intra=ring)
stitch_cli(use_wrong_coll RC 2 STDERR "--use level1=pairwise: 'pairwise' implements none of the collectives of 'level1'"
           ARGS verify ${STITCH_DSL} -a hier -g 3x2 --use level1=pairwise)
add_custom_target(update-golden-compiler ${STITCH_GOLDEN_UPDATES} DEPENDS stitchc VERBATIM
                  COMMENT "rewriting tests/compiler/golden/ from the current stitchc")

# ---- the command line: exit status 0 ok, 1 bad input, 2 bad command line
stitch_cli(no_command RC 2 STDERR "stitchc: error: no command given" ARGS "")
stitch_cli(unknown_command RC 2 STDERR "^stitchc: error: unknown command 'frobnicate'\nTry 'stitchc --help'"
           ARGS frobnicate ${STITCH_DSL})
stitch_cli(unknown_top_option RC 2 STDERR "stitchc: error: unknown option '--frobnicate'" ARGS --frobnicate)
stitch_cli(unknown_option RC 2 STDERR "stitchc: error: unknown option '--bogus' for 'check'\nTry 'stitchc check --help'"
           ARGS check --bogus ${STITCH_DSL})
stitch_cli(missing_value RC 2 STDERR "option '-a' needs a value" ARGS verify ${STITCH_DSL} -a)
stitch_cli(no_file RC 2 STDERR "stitchc: error: no input file" ARGS check)
stitch_cli(help RC 0 STDOUT "commands:.*check.*verify.*show.*emit" ARGS --help)
stitch_cli(help_word RC 0 STDOUT "commands:" ARGS help)
stitch_cli(help_topic RC 0 STDOUT "^usage: stitchc verify FILE" ARGS help verify)
foreach(cmd check verify show emit)
  stitch_cli(help_${cmd} RC 0 STDOUT "^usage: stitchc ${cmd} FILE" ARGS ${cmd} --help)
endforeach()
stitch_cli(ranks_zero RC 2 STDERR "bad rank range '0..3'" ARGS verify ${STITCH_DSL} --ranks 0..3)
stitch_cli(ranks_reversed RC 2 STDERR "bad rank range '5..3'" ARGS verify ${STITCH_DSL} --ranks 5..3)
stitch_cli(ranks_too_many RC 2 STDERR "bad rank range '1..65537'" ARGS verify ${STITCH_DSL} --ranks 1..65537)
stitch_cli(ranks_garbage RC 2 STDERR "bad rank range '1..x'" ARGS verify ${STITCH_DSL} --ranks=1..x)
stitch_cli(unknown_collective RC 2 STDERR "unknown collective 'all_sum' \\(known: all_reduce, "
           ARGS verify ${STITCH_DSL} -c all_sum)
stitch_cli(missing_input RC 1 STDERR "^stitchc: error: cannot open '[^']*no_such_file.dsl': No such file or directory\n$"
           ARGS check ${COMPILER_OUT}/no_such_file.dsl)
# inputs that are not regular files are refused at once (a FIFO blocked stitchc forever, /dev/zero filled memory)
stitch_cli(input_fifo RC 1 STDERR "^[^\n]*/fifo.dsl: error: not a regular file \\(a FIFO or pipe\\). only regular files are read\n$"
           MKFIFO ${COMPILER_OUT}/fifo.dsl ARGS emit ${COMPILER_OUT}/fifo.dsl -o ${COMPILER_OUT}/fifo.c)
stitch_cli(input_dev_zero RC 1 STDERR "^/dev/zero: error: not a regular file \\(a character device\\)"
           ARGS check /dev/zero)
stitch_cli(input_stdin RC 2 STDERR "reading standard input \\('-'\\) is not supported. name a file" ARGS check -)
stitch_cli(check_ok RC 0 STDOUT_EMPTY ARGS check ${STITCH_DSL})
stitch_cli(check_from_in_step RC 1 STDERR "from_in_step.dsl:4:10: error: 'from' inside a step"
           ARGS check ${COMPILER_TESTS}/from_in_step.dsl)
stitch_cli(check_own_plans RC 0 STDOUT "  ring +all_reduce +own plan \\(from\\)\n.*  ahc +all_reduce +whole schedule: a phase on a sub-communicator"
           ARGS check -v ${STITCH_DSL})
stitch_cli(check_verbose RC 0 STDOUT "algos.dsl: [0-9]+ algorithms OK" ARGS check -v ${STITCH_DSL})
stitch_cli(check_bad RC 1 STDERR "bad.dsl:[0-9]+:[0-9]+: error: " ARGS check ${COMPILER_TESTS}/bad.dsl)
stitch_cli(verify_ring RC 0
           STDOUT "verified [0-9]+ \\(algorithm, collective\\) pairs for p = 1..16 in [0-9.]+ s\n$"
           ARGS verify ${STITCH_DSL} -a ring --ranks 1..16)
stitch_cli(verify_single_p RC 0 STDOUT "for p = 7..7 in" ARGS verify ${STITCH_DSL} -a ring --ranks 7)
stitch_cli(show_unknown_algorithm RC 1 STDERR "no algorithm 'nosuch' in '[^']*'; available: ring \\(reduce_scatter, all_gather, all_reduce\\), mesh \\("
           ARGS show ${STITCH_DSL} -a nosuch -n 4)
stitch_cli(show_bad_format RC 2 STDERR "unknown format 'svgz'" ARGS show ${STITCH_DSL} -a ring -n 4 --format svgz)
stitch_cli(help_show_holdings RC 0 STDOUT "holdings" ARGS show --help)
stitch_cli(show_svg RC 0 STDOUT "^<\\?xml [^\n]*\n<svg xmlns=\"http://www.w3.org/2000/svg\".*</svg>\n$"
           ARGS show ${STITCH_DSL} -a ring -c all_reduce -n 5 --format svg)
stitch_cli(show_dot RC 0 STDOUT "^digraph schedule {\n.*\n}\n$"
           ARGS show ${STITCH_DSL} -a ring -c all_reduce -n 5 -f dot)
stitch_cli(show_svg_too_many_ranks RC 1 STDERR "format 'svg' draws at most 256 ranks, not 257"
           ARGS show ${STITCH_DSL} -a ring -n 257 --format svg)
stitch_cli(show_bad_p RC 2 STDERR "bad rank count '0'" ARGS show ${STITCH_DSL} -a ring -n 0)
stitch_cli(show_bad_root RC 2 STDERR "bad root '4' \\(expected 0..3\\)"
           ARGS show ${COMPILER_TESTS}/rooted.dsl -a ring -n 4 --root 4)
stitch_cli(show_bad_groups RC 2 STDERR "bad groups '2,3' .*add up to p = 4"
           ARGS show ${COMPILER_TESTS}/rooted.dsl -a grp -n 4 -g 2,3)
stitch_cli(show_eval_error RC 1 STDERR "^[^\n]*eval_error.dsl:5: error: division by zero"
           ARGS show ${COMPILER_TESTS}/eval_error.dsl -a boom -n 3)
stitch_cli(verify_fails RC 1 STDOUT "eval_error.dsl:5: error: .*FAILED 1 of 1 \\(algorithm, collective\\) pairs for p = 1..3"
           ARGS verify ${COMPILER_TESTS}/eval_error.dsl --ranks 1..3)
stitch_cli(emit_bad_dsl RC 1 STDERR "bad.dsl:[0-9]+:[0-9]+: error: "
           NO_FILES ${COMPILER_OUT}/bad.c ${COMPILER_OUT}/bad.c.tmp ${COMPILER_OUT}/bad.h
           ARGS emit ${COMPILER_TESTS}/bad.dsl -o ${COMPILER_OUT}/bad.c --header ${COMPILER_OUT}/bad.h)
stitch_cli(emit_bad_symbol RC 2 STDERR "symbol '9lives' is not a C identifier"
           ARGS emit ${STITCH_DSL} -o ${COMPILER_OUT}/x.c --symbol 9lives)
stitch_cli(emit_unwritable RC 1 STDERR "stitchc: error: cannot open '.*/no/such/dir/x.c.tmp': No such file"
           ARGS emit ${STITCH_DSL} -o ${COMPILER_OUT}/no/such/dir/x.c)
# ... and says so before it verifies (it used to verify algos.dsl for p = 1..32 first: 20 s, 60 s under ASan)
set_tests_properties(compiler.cli.emit_unwritable PROPERTIES TIMEOUT 10)
# emit verifies (p = 1..32 by default) and writes nothing for a wrong algorithm: only the failure is printed
set(UNVERIFIED ${COMPILER_TESTS}/unverified.dsl)
stitch_cli(emit_unverified RC 1
           STDERR "^[^\n]*unverified.dsl:10: error: short all_gather is wrong for p = 2: [^\n]*\nstitchc: error: 1 \\(algorithm, collective\\) pair of '[^']*unverified.dsl' failed verification for p = 1..32. nothing written \\(--no-verify emits it anyway\\)\n$"
           NO_FILES ${COMPILER_OUT}/unverified.c ${COMPILER_OUT}/unverified.c.tmp ${COMPILER_OUT}/unverified.h
           ARGS emit ${UNVERIFIED} -o ${COMPILER_OUT}/unverified.c --header ${COMPILER_OUT}/unverified.h)
stitch_cli(emit_unverified_ranks RC 1 STDERR "is wrong for p = 3: .*failed verification for p = 3..5. nothing written"
           NO_FILES ${COMPILER_OUT}/unverified_p3.c ARGS emit ${UNVERIFIED} -o ${COMPILER_OUT}/unverified_p3.c --ranks 3..5)
stitch_cli(emit_ranks_ok RC 0 STDERR_EMPTY ARGS emit ${UNVERIFIED} -o ${COMPILER_OUT}/unverified_p1.c --ranks 1)
stitch_cli(emit_no_verify RC 0
           STDERR "^stitchc: note: '[^']*unverified.dsl' is emitted without verification \\(--no-verify\\)\n$"
           ARGS emit ${UNVERIFIED} -o ${COMPILER_OUT}/unverified_noverify.c --no-verify)
stitch_cli(emit_ranks_and_no_verify RC 2 STDERR "--ranks and --no-verify exclude each other"
           ARGS emit ${UNVERIFIED} -o ${COMPILER_OUT}/x.c --no-verify --ranks 1..4)
stitch_cli(emit_bad_ranks RC 2 STDERR "bad rank range '0..3'" ARGS emit ${UNVERIFIED} -o ${COMPILER_OUT}/x.c --ranks 0..3)
# stitch_compile_dsl's options, exercised by every build: RANKS 1 is the one range where `short` verifies, and
# NO_VERIFY emits it unproved (a note in the build log); without either the build would stop here.
add_library(compiler_dsl_options OBJECT)
stitch_compile_dsl(compiler_dsl_options ${UNVERIFIED} st_test_unverified_p1 RANKS 1)
stitch_compile_dsl(compiler_dsl_options ${UNVERIFIED} st_test_unverified_any NO_VERIFY)
target_link_libraries(compiler_dsl_options PRIVATE stitch_core)

# ---- pictures: every SVG and DOT is well-formed (xmllint, Graphviz dot when installed; the shape otherwise)
set(STITCH_PICTURES
    "ring_ar|-a|ring|-c|all_reduce|-n|5" "nhr_rs|-a|nhr|-c|reduce_scatter|-n|6" "mesh_ar|-a|mesh|-c|all_reduce|-n|4"
    "rhd_ar|-a|rhd|-c|all_reduce|-n|6" "pipeline_ag|-a|pipeline|-c|all_gather|-n|6|-g|2,2,2"
    "ring_bcast_root|-a|ring|-c|broadcast|-n|5|--root|3" "pairwise_a2a|-a|pairwise|-c|all_to_all|-n|4")
foreach(case IN LISTS STITCH_PICTURES)
  string(REGEX MATCH "^[^|]+" name "${case}")
  string(REGEX REPLACE "^[^|]+" "show|${STITCH_DSL}" args "${case}")
  foreach(format svg dot)
    add_test(NAME compiler.picture.${name}_${format}
             COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitchc> "-DARGS=${args}|--format|${format}"
                     -DFORMAT=${format} -DSAVE=${COMPILER_OUT}/picture_${name}.${format}
                     -DCHECKS=${COMPILER_TESTS}/picture.check.cmake -P ${ST_RUN})
  endforeach()
endforeach()

# ---- emitted C: compiled into a program (-Werror) that compares it with the in-memory catalogue
set(EMITTED ${COMPILER_OUT}/emitted_catalogue)
add_custom_command(
  OUTPUT ${EMITTED}.c ${EMITTED}.h
  COMMAND stitchc emit ${STITCH_DSL} -o ${EMITTED}.c --header ${EMITTED}.h --symbol st_test_catalogue
  DEPENDS stitchc ${STITCH_DSL}
  COMMENT "stitchc emit algos.dsl (test copy)")
add_executable(compiler_emit_check ${COMPILER_TESTS}/emit_check.c ${EMITTED}.c)
target_include_directories(compiler_emit_check PRIVATE ${COMPILER_OUT})
target_link_libraries(compiler_emit_check PRIVATE stitch_codegen)
target_compile_options(compiler_emit_check PRIVATE -Werror)
add_test(NAME compiler.emit.roundtrip COMMAND compiler_emit_check ${STITCH_DSL})
# The same checks on functions written for the native C's edges (emit_native.c): overflow, zero divisors, shift
# counts, recursion depth, a tail call, functions the machine must keep, a layout that fails at p = 5.
set(NATIVE_OUT ${COMPILER_OUT}/native)
file(MAKE_DIRECTORY ${NATIVE_OUT})
add_custom_command(
  OUTPUT ${NATIVE_OUT}/emitted_catalogue.c ${NATIVE_OUT}/emitted_catalogue.h
  COMMAND stitchc emit ${COMPILER_TESTS}/native.dsl --no-verify -o ${NATIVE_OUT}/emitted_catalogue.c
          --header ${NATIVE_OUT}/emitted_catalogue.h --symbol st_test_catalogue
  DEPENDS stitchc ${COMPILER_TESTS}/native.dsl
  COMMENT "stitchc emit native.dsl (native functions' edges)")
add_executable(compiler_emit_native ${COMPILER_TESTS}/emit_check.c ${NATIVE_OUT}/emitted_catalogue.c)
target_include_directories(compiler_emit_native PRIVATE ${NATIVE_OUT})
target_link_libraries(compiler_emit_native PRIVATE stitch_codegen)
target_compile_options(compiler_emit_native PRIVATE -Werror)
add_test(NAME compiler.emit.native COMMAND compiler_emit_native ${COMPILER_TESTS}/native.dsl)
# The same file under the strictest plain-C11 flags, as a user's project might compile it.
add_test(NAME compiler.emit.c11_pedantic
         COMMAND ${CMAKE_C_COMPILER} -std=c11 -pedantic -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
                 -fsyntax-only -I${CMAKE_SOURCE_DIR}/core ${EMITTED}.c)
# Same input, same bytes: emit twice and compare.
add_test(NAME compiler.emit.deterministic
         COMMAND ${CMAKE_COMMAND} -E compare_files ${EMITTED}.c ${COMPILER_OUT}/emitted_again.c)
add_test(NAME compiler.emit.again
         COMMAND stitchc emit ${STITCH_DSL} -o ${COMPILER_OUT}/emitted_again.c --symbol st_test_catalogue)
set_tests_properties(compiler.emit.again PROPERTIES FIXTURES_SETUP emit_again)
set_tests_properties(compiler.emit.deterministic PROPERTIES FIXTURES_REQUIRED emit_again)

# Phases whose unit pieces are the same on every rank are built once per instantiation (SUB_PIECES): which phases
# promise it (pieces_check) and that no rank-dependent piece is shared (verify fails on a wrong promise).
add_executable(compiler_pieces_check ${COMPILER_TESTS}/pieces_check.c)
target_link_libraries(compiler_pieces_check PRIVATE stitch_front stitch_warnings)
add_test(NAME compiler.pieces.promises COMMAND compiler_pieces_check ${COMPILER_TESTS}/pieces.dsl)
stitch_cli(verify_pieces RC 0 STDOUT "verified 8 \\(algorithm, collective\\) pairs for p = 1..64"
           ARGS verify ${COMPILER_TESTS}/pieces.dsl)

# ==== end of codegen and driver tests =============================================================================

# ---- the 2D split (spec 10, 12.3): the built-in formula, and R reaching the schedule --------------------------
add_executable(compiler_split_formula ${COMPILER_TESTS}/split_formula.c)
target_link_libraries(compiler_split_formula PRIVATE stitch_core stitch_warnings)
add_test(NAME compiler.split_formula COMMAND compiler_split_formula)
# R sets the units: fortieths in lowest terms (0.5: 2 per chunk, 0.3: 10, 0: 1), so the lanes' shares change
stitch_cli(show_split_default RC 0 STDOUT "\"units\": 16," ARGS show ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce
           --layout 2x4 --format json)
stitch_cli(show_split_0.3 RC 0 STDOUT "\"units\": 80," ARGS show ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce
           --layout 2x4 --split 0.3 --format json)
stitch_cli(show_split_0 RC 0 STDOUT "\"units\": 8," ARGS show ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce
           --layout 2x4 --split 0 --format json)
stitch_cli(show_split_bad RC 2 STDERR "bad split ratio '1.5'" ARGS show ${STITCH_DSL} -a mesh_nhr_2d -c all_reduce
           --layout 2x4 --split 1.5)
stitch_cli(verify_2d_2x4 RC 0 STDOUT "verified 5 \\(algorithm, collective\\) pairs" ARGS verify ${STITCH_DSL}
           -a mesh_nhr_2d --layout 2x4)
stitch_cli(verify_2d_2x4_split RC 0 STDOUT "verified 5 \\(algorithm, collective\\) pairs" ARGS verify ${STITCH_DSL}
           -a mesh_nhr_2d --layout 2x4 --split 0.3)

# One rank's own plan (`from`, st_sched_build_rank) equals its part of the whole schedule, for every rank, p and
# root of a grid; and the plan benchmark runs (tools/stitch_planbench.c; a smoke run at tiny p, not timed).
add_test(NAME compiler.own_plan COMMAND stitch-planbench --check -n 1..40
         -a ring,nhr,nb,rhd,mesh,mesh_oneshot,mesh_det,pipeline,level1)
add_test(NAME compiler.own_plan_a2a COMMAND stitch-planbench --check -n 1..24 -c all_to_all -a pairwise,mesh)
add_test(NAME compiler.own_plan_rooted COMMAND stitch-planbench --check -n 1..20 -c broadcast
         -a ring,nhr,nb,rhd,mesh,nb_binary,nhr_oneshot)
add_test(NAME compiler.planbench_smoke COMMAND stitch-planbench -n 16,33)
# Strided unit sets (issue 22 item 7): the cutter against the loop it replaces, NB's own plans at p about 1000
# (modular sets that wrap), and the catalogue's NHR and NB sends compiled as strided pieces, not loops of units
add_executable(compiler_piece_cut ${COMPILER_TESTS}/piece_cut.c)
target_link_libraries(compiler_piece_cut PRIVATE stitch_core stitch_warnings)
add_test(NAME compiler.piece_cut COMMAND compiler_piece_cut)
add_test(NAME compiler.own_plan_nb_1000 COMMAND stitch-planbench --check -n 1000..1002 -a nb)
add_test(NAME compiler.strided_sends COMMAND sh -c "$<TARGET_FILE:stitchc> emit ${STITCH_DSL} --no-verify -o strided_sends.c && test $(grep -c SET_STRIDE strided_sends.c) -ge 4")
# Comprehensions of ranges with affine ends (the 2D algorithm's lanes) as one SET_STRIDE 2 each: the schedules of
# sr (three of them, with negative slopes, empty ranges and no values) and sr_loop (the same behind a filter, so
# loops) agree at several p, and only sr's are strided
set(SR ${COMPILER_TESTS}/strided_ranges.dsl)
add_test(NAME compiler.strided_ranges COMMAND sh -c "for n in 1 2 5 8; do for a in sr sr_loop; do \
  $<TARGET_FILE:stitchc> show ${SR} -a $a -n $n --format json > sr_$a.json || exit 1; \
  sed -i 's/\"algorithm\": \"[a-z_]*\"//; s/\"line\": [0-9]*//g' sr_$a.json; done; \
  cmp sr_sr.json sr_sr_loop.json || exit 1; done; \
  $<TARGET_FILE:stitchc> emit ${SR} --no-verify -o strided_ranges.c && test $(grep -c '{[0-9]*, 2,.*SET_STRIDE' strided_ranges.c) -eq 3")

# `stitchc verify` shows a progress line on a terminal (tools/verify_progress.c), and nothing when stderr is not one
add_test(NAME compiler.verify_progress COMMAND ${COMPILER_TESTS}/verify_progress.sh $<TARGET_FILE:stitchc> ${STITCH_DSL}
                                               ${CMAKE_CURRENT_BINARY_DIR}/verify_progress)
set_tests_properties(compiler.verify_progress PROPERTIES TIMEOUT 300 LABELS compiler SKIP_RETURN_CODE 77)
