# StitchDsl.cmake - compile a .dsl algorithm file into a target at build time. One implementation for stitch's own
# build (CMakeLists.txt includes it: the built-in catalogue, tests/catalogue) and for users' projects
# (find_package(stitch) includes the installed copy from stitchConfig.cmake).
#
# The caller sets, before including it:
#   STITCH_STITCHC               the stitchc executable target (in-tree: stitchc; installed: stitch::stitchc)
#   STITCH_STEPTAB_INCLUDE_DIR   the directory of st_steptab.h, the table format the generated C includes
#                                (in-tree: core/; installed: <prefix>/include/stitch)
#   STITCH_DSL_OUTPUT_DIR        optional: where the generated files go (default <build>/stitch_dsl)
#
# stitch_compile_dsl(<target> <file.dsl> <symbol> [RANKS A..B | NO_VERIFY])
#   runs `stitchc emit` on the file, which verifies every algorithm for p in RANKS (default: emit's, 1..32) and
#   fails the build on a counterexample (NO_VERIFY skips that, and stitchc prints a note), then writes C tables,
#   which record the range verified (none with NO_VERIFY): the runtime proves any plan outside it before its first
#   use and refuses one that is wrong (runtime/proof.c);
#   `const stitch_catalogue_t <symbol>` and a header <symbol>.h declaring it. The tables are compiled into <target>
#   (they are data only: nothing to link but libstitch) and <symbol>.h is put on <target>'s include path. The table
#   source alone sees st_steptab.h, so the program sees no more of libstitch than stitch.h.
# stitch_add_dsl(<target> <file.dsl> [RANKS A..B] [NAME <symbol>] [NO_VERIFY])
#   the same, with the symbol named by NAME, or else made from the file's name (my-algos.dsl: my_algos).
#
# The catalogue is not registered behind the program's back: #include "<symbol>.h" and pass &<symbol> in
# stitch_config_t.catalogues (runtime/registry.c says why the registry belongs to each communicator). Its
# algorithms are then chosen by name next to the built-in ones (config->algo, STITCH_ALGO,
# stitch_comm_set_algorithm). The tables are C: the project must enable the C language.
#
# Paths: stitchc runs in the top source directory with the file's path relative to it, so the tables and the
# runtime's messages name `algos.dsl` or `src/mine.dsl`, not a path of the build machine; a file outside the
# source tree (generated into the build tree, or elsewhere) is named by its absolute path.
include_guard(GLOBAL)

function(stitch_compile_dsl target dsl symbol)
  cmake_parse_arguments(D "NO_VERIFY" "RANKS" "" ${ARGN})
  if(D_UNPARSED_ARGUMENTS OR (D_NO_VERIFY AND D_RANKS))
    message(FATAL_ERROR "stitch_compile_dsl(${target} ${dsl} ${symbol} ${ARGN}): expected [RANKS A..B | NO_VERIFY]")
  endif()
  if(NOT symbol MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "stitch_compile_dsl(${target} ${dsl} ${symbol}): '${symbol}' is not a C identifier")
  endif()
  if(NOT TARGET ${STITCH_STITCHC})
    message(FATAL_ERROR "stitch_compile_dsl: no stitchc (STITCH_STITCHC is '${STITCH_STITCHC}'); "
                        "call find_package(stitch) first")
  endif()
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST langs)
    message(FATAL_ERROR "stitch_compile_dsl(${target} ${dsl}): the generated tables are C; enable the C language "
                        "(project(... LANGUAGES C CXX) or enable_language(C))")
  endif()
  set(verify "")
  if(D_NO_VERIFY)
    set(verify --no-verify)
  elseif(D_RANKS)
    set(verify --ranks ${D_RANKS})
  endif()
  set(dir ${STITCH_DSL_OUTPUT_DIR})
  if(NOT dir)
    set(dir ${CMAKE_BINARY_DIR}/stitch_dsl)
  endif()
  get_filename_component(abs ${dsl} ABSOLUTE)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${abs}) # the path the tables (and runtime errors) name
  if(rel MATCHES "^\\.\\./" OR IS_ABSOLUTE "${rel}")
    set(rel ${abs}) # outside the source tree: its absolute path, not ../../../../tmp/x.dsl
  endif()
  set(out ${dir}/${symbol}.c)
  set(hdr ${dir}/catalogues/${symbol}.h)
  file(MAKE_DIRECTORY ${dir}/catalogues)
  add_custom_command(
    OUTPUT ${out} ${hdr}
    COMMAND ${STITCH_STITCHC} emit ${rel} -o ${out} --header ${hdr} --symbol ${symbol} ${verify}
    DEPENDS ${STITCH_STITCHC} ${abs}
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    COMMENT "stitchc emit ${rel}")
  target_sources(${target} PRIVATE ${out} ${hdr})
  target_include_directories(${target} PRIVATE ${dir}/catalogues)
  set_source_files_properties(${out} TARGET_DIRECTORY ${target} PROPERTIES
                              INCLUDE_DIRECTORIES ${STITCH_STEPTAB_INCLUDE_DIR})
endfunction()

function(stitch_add_dsl target dsl)
  cmake_parse_arguments(D "NO_VERIFY" "RANKS;NAME" "" ${ARGN})
  if(D_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "stitch_add_dsl(${target} ${dsl} ${ARGN}): expected [RANKS A..B] [NAME symbol] [NO_VERIFY]")
  endif()
  set(symbol ${D_NAME})
  if(NOT symbol)
    get_filename_component(base ${dsl} NAME_WE)
    string(MAKE_C_IDENTIFIER "${base}" symbol)
  endif()
  set(opts "")
  if(D_RANKS)
    list(APPEND opts RANKS ${D_RANKS})
  endif()
  if(D_NO_VERIFY)
    list(APPEND opts NO_VERIFY)
  endif()
  stitch_compile_dsl(${target} ${dsl} ${symbol} ${opts})
endfunction()
