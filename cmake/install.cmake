# install.cmake - `cmake --install`: what goes where, and the two libraries a user links (included at the end of
# the library section of CMakeLists.txt, after every target_link_libraries on `stitch`).
#
#   include/stitch.h, include/stitch_mpi.h (where MPI is found)     the public headers
#   include/stitch/st_steptab.h       the step-table format, for the C that `stitchc emit` writes (not an API)
#   lib/libstitch.so.0.1.0, .so.0, .so   shared; exports the stitch_* functions and nothing else (libstitch.map)
#   lib/libstitch.a                   static, complete: libstitch's objects with the core's (needs -lyaml -lpthread -lm)
#   lib/libstitch_mpi.a               stitch_comm_init_mpi (where MPI is found; link with libstitch and MPI)
#   bin/stitchc, stitch-perf, stitch-info   the tools, linked statically against libstitch (stitch-info reads the
#                                     library's internals, and a tool that finds no libstitch.so is no use)
#   share/stitch/algos.dsl            the built-in catalogue's source
#   share/doc/stitch/                 README.md, docs/, examples/app/
#   lib/cmake/stitch/                 find_package(stitch): stitch::stitch (shared), stitch::stitch_static,
#                                     stitch::stitchc, and stitch_add_dsl / stitch_compile_dsl (StitchDsl.cmake)
#   lib/pkgconfig/stitch.pc           pkg-config; --variable=stitchc, steptabdir, algos for building tables by hand
#
# In the build tree `stitch` stays the static library of libstitch's own objects that the tools and tests link (they
# reach internals the installed libraries hide). The installed libraries are made from its objects and those of the
# internal libraries it links (stitch_core, stitch_topofile, and whatever is added later), found by walking
# LINK_LIBRARIES, so a library linked into `stitch` lands in libstitch.so/.a without an edit here. Both CMake's
# package and stitch.pc are relocatable (paths relative to their own place), so a DESTDIR staging works as is.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Our own static libraries that `tgt` links, transitively (into `out_internal`), and everything else it links, the
# system libraries and imported targets (into `out_external`).
function(st_link_closure tgt out_internal out_external)
  set(internal "")
  set(external "")
  set(todo ${tgt})
  while(todo)
    list(POP_FRONT todo t)
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(NOT libs)
      continue()
    endif()
    foreach(l IN LISTS libs)
      if(TARGET ${l})
        get_target_property(type ${l} TYPE)
        get_target_property(imported ${l} IMPORTED)
        if((type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "OBJECT_LIBRARY") AND NOT imported)
          if(NOT l IN_LIST internal)
            list(APPEND internal ${l})
            list(APPEND todo ${l})
          endif()
          continue()
        endif()
      endif()
      if(NOT l IN_LIST external)
        list(APPEND external ${l})
      endif()
    endforeach()
  endwhile()
  set(${out_internal} ${internal} PARENT_SCOPE)
  set(${out_external} ${external} PARENT_SCOPE)
endfunction()

st_link_closure(stitch st_internal st_external)
set(st_objects $<TARGET_OBJECTS:stitch>)
foreach(lib stitch ${st_internal})
  set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(NOT lib STREQUAL "stitch")
    list(APPEND st_objects $<TARGET_OBJECTS:${lib}>)
  endif()
endforeach()
set(st_public_include $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/runtime/include>
                      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# libstitch.so: the version script exports stitch_* and makes everything else local (st_* of the runtime, core and
# compiler, whatever their visibility in the objects); --no-undefined fails the link on a missing library.
set(st_map ${CMAKE_SOURCE_DIR}/runtime/libstitch.map)
add_library(stitch_shared SHARED ${st_objects})
set_target_properties(stitch_shared PROPERTIES OUTPUT_NAME stitch EXPORT_NAME stitch VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR} LINK_DEPENDS ${st_map})
# (Not under the sanitizers: clang leaves their runtime out of shared libraries, for the program to bring.)
target_link_options(stitch_shared PRIVATE -Wl,--version-script=${st_map}
                    $<$<NOT:$<BOOL:${STITCH_SANITIZE}>>:-Wl,--no-undefined>)
target_link_libraries(stitch_shared PRIVATE ${st_external})
target_include_directories(stitch_shared INTERFACE ${st_public_include})

# libstitch.a, complete: a user links it alone (with the system libraries below), not stitch_core & co. It is built
# in lib/static/ because the build tree's lib/libstitch.a is the internal `stitch`.
add_library(stitch_static STATIC ${st_objects})
set_target_properties(stitch_static PROPERTIES OUTPUT_NAME stitch EXPORT_NAME stitch_static
                      ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/static)
target_link_libraries(stitch_static INTERFACE Threads::Threads m ${YAML_LIBRARIES}
                      $<$<TARGET_EXISTS:stitch_cuda>:CUDA::cudart_static>)
target_include_directories(stitch_static INTERFACE ${st_public_include})

install(TARGETS stitch_shared stitch_static stitchc EXPORT stitchTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS stitch-perf stitch-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/runtime/include/stitch.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/core/st_steptab.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stitch)
if(TARGET stitch_mpi)
  install(FILES ${CMAKE_SOURCE_DIR}/runtime/mpi/stitch_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES $<TARGET_FILE:stitch_mpi> DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES ${CMAKE_SOURCE_DIR}/algos.dsl DESTINATION ${CMAKE_INSTALL_DATADIR}/stitch)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs ${CMAKE_SOURCE_DIR}/examples DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The CMake package.
set(st_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/stitch)
install(EXPORT stitchTargets NAMESPACE stitch:: DESTINATION ${st_cmakedir})
set(STITCH_STEPTAB_DIR ${CMAKE_INSTALL_INCLUDEDIR}/stitch)
set(STITCH_ALGOS_DIR ${CMAKE_INSTALL_DATADIR}/stitch)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/stitchConfig.cmake.in ${CMAKE_BINARY_DIR}/stitchConfig.cmake
                              INSTALL_DESTINATION ${st_cmakedir} PATH_VARS STITCH_STEPTAB_DIR STITCH_ALGOS_DIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/stitchConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/stitchConfig.cmake ${CMAKE_BINARY_DIR}/stitchConfigVersion.cmake
              ${CMAKE_SOURCE_DIR}/cmake/StitchDsl.cmake DESTINATION ${st_cmakedir})

# stitch.pc, with its prefix found from its own directory (${pcfiledir}).
set(st_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE ${CMAKE_INSTALL_LIBDIR})
  set(STITCH_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
else()
  file(RELATIVE_PATH st_up /p/${st_pcdir} /p)
  string(REGEX REPLACE "/$" "" st_up "${st_up}")
  set(STITCH_PC_PREFIX "\${pcfiledir}/${st_up}")
endif()
string(REPLACE ";" " -l" STITCH_PC_YAML "-l${YAML_LIBRARIES}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/stitch.pc.in ${CMAKE_BINARY_DIR}/stitch.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/stitch.pc DESTINATION ${st_pcdir})
