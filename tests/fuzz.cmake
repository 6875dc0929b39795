# fuzz.cmake - the libFuzzer targets (tests/fuzz/fuzz_*.c) and the replay of their seed corpora, included from
# tests/CMakeLists.txt.
#
#   fuzz_replay_<name>   every file of tests/fuzz/corpus/<name> through the target's entry point, in every build and
#                        with any compiler (no sanitizer needed), label fuzz: fuzzer finds stay fixed
#   fuzz-<name>          the libFuzzer binary, built only with STITCH_FUZZ=ON (clang; `make fuzz`, which runs them)
# Targets: frontend (parse and print the diagnostics), topofile (the YAML loader and the layout builder), bootmsg
# (the bootstrap's handshake checks, runtime/handshake.h), algofile (STITCH_ALGO_FILE: compile, then verify for a
# small p).
set(ST_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR}/fuzz)

# stitch_fuzz_target(<name> <libraries...>)
function(stitch_fuzz_target name)
  add_executable(fuzz-replay-${name} ${ST_FUZZ_DIR}/replay.c ${ST_FUZZ_DIR}/fuzz_${name}.c)
  set(bins fuzz-replay-${name})
  if(STITCH_FUZZ)
    add_executable(fuzz-${name} ${ST_FUZZ_DIR}/fuzz_${name}.c)
    target_link_options(fuzz-${name} PRIVATE -fsanitize=fuzzer)
    list(APPEND bins fuzz-${name})
  endif()
  foreach(bin ${bins})
    target_link_libraries(${bin} PRIVATE ${ARGN})
    target_include_directories(${bin} PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
    target_compile_options(${bin} PRIVATE -UNDEBUG)
  endforeach()
  add_test(NAME fuzz_replay_${name} COMMAND fuzz-replay-${name} ${ST_FUZZ_DIR}/corpus/${name})
  set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS fuzz TIMEOUT 300)
endfunction()

stitch_fuzz_target(frontend stitch_front)
stitch_fuzz_target(topofile stitch_topofile)
stitch_fuzz_target(bootmsg stitch)
stitch_fuzz_target(algofile stitch stitch_core)
