# verify.cmake - the catalogue is verified, and the verifier and sema reject what they must.
#
# verify.catalogue proves algos.dsl for p = 1..64 (the default build's promise); verify.catalogue_512 sweeps to
# p = 512 under the `long` label. Each tests/verify/*.dsl is an algorithm broken in one way (postcondition, double
# reduction, hazard, write/write, peer or unit out of range, sending unheld data, rank-dependent structure,
# evaluation error, contract mismatch) and must fail with its `# expect:` message. Each tests/sema/*.dsl must give
# exactly the diagnostics of its .err golden file (rewritten only by `update-golden-sema`).

add_test(NAME verify.catalogue COMMAND stitchc verify ${CMAKE_SOURCE_DIR}/algos.dsl --ranks 1..64)
add_test(NAME verify.catalogue_512 COMMAND stitchc verify ${CMAKE_SOURCE_DIR}/algos.dsl --ranks 1..512)
set_tests_properties(verify.catalogue_512 PROPERTIES LABELS long TIMEOUT 3600)

# Composites on unequal groups (AHC, AHC_BROKE, hier's fallback) on named layouts, one `-g` run each: a group of 1,
# the spec's 2+3 and 7+5+3, gcd > 1, near-equal, and 20+21, beyond the layout sweep. The default sweep above tries a
# sample of the layouts of up to 3 groups of 1..8 for composites; topo.sweep_long.catalogue (`long`) tries them all.
set(layout_runs "")
foreach(l 1 2,3 3,2 1,4 4,1 7,5,3 3,4 4,6 2,2,3 1,1,1 8,1,3 20,21)
  foreach(a ahc ahc_align ahc_broke hier)
    list(APPEND layout_runs "-a|${a}|-g|${l}")
  endforeach()
endforeach()
string(REPLACE ";" "^" layout_runs "${layout_runs}")
add_test(NAME verify.layouts COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitchc>
         "-DARGS=verify|${CMAKE_SOURCE_DIR}/algos.dsl" "-DEACH=${layout_runs}" -P ${ST_RUN})

# Pipeline's all_to_all (relayed through the same-index ranks, scratch slots) and all_to_all_v (direct) on equal
# layouts beyond the SxL groupings verify.catalogue tries for p = 1..64: one rank per server, one server, 8x8, 16x4.
foreach(c all_to_all all_to_all_v)
  add_test(NAME verify.pipeline.${c} COMMAND stitchc verify ${CMAKE_SOURCE_DIR}/algos.dsl -a pipeline -c ${c}
           --ranks 1..64)
endforeach()
set(pipeline_runs "")
foreach(l 2x2 3x2 2x3 4x4 3x5 5x1 1x7 8x8 16x4 4x16)
  list(APPEND pipeline_runs "-a|pipeline|-g|${l}")
endforeach()
string(REPLACE ";" "^" pipeline_runs "${pipeline_runs}")
add_test(NAME verify.layouts_pipeline COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitchc>
         "-DARGS=verify|${CMAKE_SOURCE_DIR}/algos.dsl" "-DEACH=${pipeline_runs}" -P ${ST_RUN})
set_tests_properties(verify.pipeline.all_to_all verify.pipeline.all_to_all_v verify.layouts_pipeline
                     PROPERTIES TIMEOUT 300 LABELS verify)

# verify_dsl_header(<file> <key> <var>): the text of the file's `# <key>: ` line, ';' written '|' (tests/lib/run.cmake)
# (file(READ), not file(STRINGS): a message may hold ';', which STRINGS would split into a list). Read when CMake
# configures; a changed file reconfigures.
function(verify_dsl_header file key var)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(READ ${file} text)
  string(REGEX MATCH "# ${key}: [^\n]*" line "${text}")
  string(REGEX REPLACE "^# ${key}: " "" line "${line}")
  string(REPLACE ";" "|" line "${line}")
  set(${var} "${line}" PARENT_SCOPE)
endfunction()

# Each broken file must be refused (exit 1) for its `# ranks:` range with its `# expect:` text, and with one error
# per algorithm that failed (the first counterexample ends that algorithm's verification).
file(GLOB broken ${CMAKE_CURRENT_SOURCE_DIR}/verify/*.dsl)
foreach(f ${broken})
  get_filename_component(n ${f} NAME_WE)
  get_filename_component(name ${f} NAME)
  verify_dsl_header(${f} expect expect)
  verify_dsl_header(${f} ranks ranks)
  add_test(NAME verify.rejects.${n}
           COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitchc> "-DARGS=verify|${name}|--ranks|${ranks}"
                   -DCWD=${CMAKE_CURRENT_SOURCE_DIR}/verify -DRC=1 "-DCONTAINS=${expect}"
                   -DCHECKS=${CMAKE_CURRENT_SOURCE_DIR}/verify/one_error_each.check.cmake -P ${ST_RUN})
endforeach()

# Each tests/verify/ok/*.dsl is an idiom the docs recommend (the recursive-doubling exchange through scratch, an
# all_to_all relay through scratch) and must verify for each range of its `# ranks:` line (`1 2 4 8` or `3..9`). A
# `# warning: ` line is a lint warning the output must hold (a redundant step is right, but worth a word); without
# one, the output must hold no warning.
file(GLOB accepted ${CMAKE_CURRENT_SOURCE_DIR}/verify/ok/*.dsl)
foreach(f ${accepted})
  get_filename_component(n ${f} NAME_WE)
  get_filename_component(name ${f} NAME)
  verify_dsl_header(${f} ranks ranks)
  verify_dsl_header(${f} warning warning)
  if(NOT ranks)
    message(FATAL_ERROR "${f} has no '# ranks: ' line")
  endif()
  string(REGEX REPLACE " +" "^--ranks|" ranks "--ranks|${ranks}")
  set(lint -DLACKS=warning:)
  if(warning)
    set(lint "-DCONTAINS=${warning}")
  endif()
  add_test(NAME verify.accepts.${n}
           COMMAND ${CMAKE_COMMAND} -DCMD=$<TARGET_FILE:stitchc> -DARGS=verify|${name} "-DEACH=${ranks}"
                   -DCWD=${CMAKE_CURRENT_SOURCE_DIR}/verify/ok ${lint} -P ${ST_RUN})
endforeach()

# Each tests/sema/*.dsl: `stitchc check FILE` exits 1 and prints exactly the diagnostics of FILE.err (stderr).
file(GLOB sema_cases ${CMAKE_CURRENT_SOURCE_DIR}/sema/*.dsl)
set(sema_updates "")
foreach(f ${sema_cases})
  get_filename_component(n ${f} NAME_WE)
  get_filename_component(name ${f} NAME)
  set(run -DCMD=$<TARGET_FILE:stitchc> -DARGS=check|${name} -DCWD=${CMAKE_CURRENT_SOURCE_DIR}/sema
          -DGOLDEN=${f}.err -DGOLDEN_OF=stderr)
  add_test(NAME sema.diagnostics.${n} COMMAND ${CMAKE_COMMAND} ${run} -DRC=1 -P ${ST_RUN})
  list(APPEND sema_updates COMMAND ${CMAKE_COMMAND} ${run} -DUPDATE=1 -P ${ST_RUN})
endforeach()
add_custom_target(update-golden-sema ${sema_updates} DEPENDS stitchc VERBATIM)

# The spec's worked examples, step counts and volumes (tests/compiler/spec_examples.c).
add_executable(spec_examples ${CMAKE_CURRENT_SOURCE_DIR}/compiler/spec_examples.c)
target_link_libraries(spec_examples PRIVATE stitch_front)
add_test(NAME compiler.spec_examples COMMAND spec_examples ${CMAKE_SOURCE_DIR}/algos.dsl)

# The verifier refuses exactly what the runtime refuses (tests/verify/agree.c asks st_exec_prepare_entry for every
# rank's plan, then st_verify): the relay without scratch is refused by both with the same words, the same relay
# through scratch and the catalogue are accepted by both; the recursive-doubling exchange is refused by both.
add_executable(verify_agree ${CMAKE_CURRENT_SOURCE_DIR}/verify/agree.c)
target_link_libraries(verify_agree PRIVATE stitch_front stitch)
target_include_directories(verify_agree PRIVATE ${CMAKE_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/core)
add_test(NAME verify.agree.a2a_relay COMMAND verify_agree ${CMAKE_CURRENT_SOURCE_DIR}/verify/a2a_relay.dsl 3
         runtime-refuses "would receive unit 7 (block 7: from rank 2 to rank 1), which it has no storage for")
add_test(NAME verify.agree.a2a_relay_scratch COMMAND verify_agree
         ${CMAKE_CURRENT_SOURCE_DIR}/verify/ok/a2a_relay_scratch.dsl 3 runtime-accepts)
add_test(NAME verify.agree.rd_exchange COMMAND verify_agree ${CMAKE_CURRENT_SOURCE_DIR}/verify/rd_exchange.dsl 4
         runtime-refuses "receive into a scratch unit (`at`) and combine it in the next step")
add_test(NAME verify.agree.rd_scratch COMMAND verify_agree ${CMAKE_CURRENT_SOURCE_DIR}/verify/ok/rd_scratch.dsl 8
         runtime-accepts)
add_test(NAME verify.agree.catalogue COMMAND verify_agree ${CMAKE_SOURCE_DIR}/algos.dsl 7 runtime-accepts)
