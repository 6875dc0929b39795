# install.cmake - `cmake --install`: what goes where, and the two libraries a user links (included at the end of
# the library section of CMakeLists.txt, after every target_link_libraries on `stitch`).
#
#   include/stitch.h, include/stitch_mpi.h (where MPI is found)     the public headers
#   include/stitch/st_steptab.h       the step-table format, for the C that `stitchc emit` writes (not an API)
#   include/stitch/st_arith.h         the step machine's arithmetic, which the emitted native functions use
#   lib/libstitch.so.0.1.0, .so.0, .so   shared; exports the stitch_* functions and nothing else (libstitch.map)
#   lib/libstitch.a                   static, complete: libstitch's objects with the core's (needs -lyaml -lpthread -lm)
#   lib/libstitch_mpi.a               stitch_comm_init_mpi (where MPI is found; link with libstitch and MPI)
#   bin/stitchc, stitch-perf, stitch-info   the tools, linked statically against libstitch (stitch-info reads the
#                                     library's internals, and a tool that finds no libstitch.so is no use)
#   share/stitch/algos.dsl            the built-in catalogue's source
#   share/doc/stitch/                 README.md, docs/, examples/app/
#   lib/cmake/stitch/                 find_package(stitch): stitch::stitch (shared), stitch::stitch_static,
#                                     stitch::stitchc, and stitch_add_dsl / stitch_compile_dsl (StitchDsl.cmake);
#                                     stitch::stitch_mpi (where MPI is found) with COMPONENTS mpi or MPI::MPI_C known
#   lib/pkgconfig/stitch.pc           pkg-config; --variable=stitchc, steptabdir, algos for building tables by hand
#   lib/pkgconfig/stitch_mpi.pc       pkg-config for libstitch_mpi (Requires stitch and the MPI's own module)
#   (bindings/torch/CMakeLists.txt adds the Python package stitch_torch and bin/stitch-torchrun)
#
# Every file belongs to one install component, which cmake/package.cmake makes a Debian package of: runtime
# (libstitch.so.0*), dev (headers, libstitch.so, the static libraries, the CMake package, the .pc files, algos.dsl,
# the docs), tools (stitchc, stitch-perf, stitch-info) and torch (bindings/torch). `cmake --install` installs all.
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

install(TARGETS stitch_shared EXPORT stitchTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(TARGETS stitch_static EXPORT stitchTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(TARGETS stitchc EXPORT stitchTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
install(TARGETS stitch-perf stitch-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
install(FILES ${CMAKE_SOURCE_DIR}/runtime/include/stitch.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(FILES ${CMAKE_SOURCE_DIR}/core/st_steptab.h ${CMAKE_SOURCE_DIR}/core/st_arith.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stitch COMPONENT dev)
install(FILES ${CMAKE_SOURCE_DIR}/algos.dsl DESTINATION ${CMAKE_INSTALL_DATADIR}/stitch COMPONENT dev)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs ${CMAKE_SOURCE_DIR}/examples DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT dev)

# stitch_mpi, installed: the build tree's stitch_mpi links the internal `stitch`; the installed library is made of
# its objects and links libstitch.so and MPI (stitch::stitch_mpi, a separate export set that stitchConfig.cmake
# loads only with MPI found, so a user without MPI is not made to find it).
set(st_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/stitch)
if(TARGET stitch_mpi)
  set_target_properties(stitch_mpi PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_library(stitch_mpi_installed STATIC $<TARGET_OBJECTS:stitch_mpi>)
  set_target_properties(stitch_mpi_installed PROPERTIES OUTPUT_NAME stitch_mpi EXPORT_NAME stitch_mpi
                        ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/static)
  target_link_libraries(stitch_mpi_installed INTERFACE stitch_shared MPI::MPI_C)
  target_include_directories(stitch_mpi_installed INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/runtime/mpi>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS stitch_mpi_installed EXPORT stitchMpiTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT dev)
  install(FILES ${CMAKE_SOURCE_DIR}/runtime/mpi/stitch_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
  install(EXPORT stitchMpiTargets NAMESPACE stitch:: DESTINATION ${st_cmakedir} COMPONENT dev)
endif()

# The CMake package.
install(EXPORT stitchTargets NAMESPACE stitch:: DESTINATION ${st_cmakedir} COMPONENT dev)
set(STITCH_STEPTAB_DIR ${CMAKE_INSTALL_INCLUDEDIR}/stitch)
set(STITCH_ALGOS_DIR ${CMAKE_INSTALL_DATADIR}/stitch)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/stitchConfig.cmake.in ${CMAKE_BINARY_DIR}/stitchConfig.cmake
                              INSTALL_DESTINATION ${st_cmakedir} PATH_VARS STITCH_STEPTAB_DIR STITCH_ALGOS_DIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/stitchConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/stitchConfig.cmake ${CMAKE_BINARY_DIR}/stitchConfigVersion.cmake
              ${CMAKE_SOURCE_DIR}/cmake/StitchDsl.cmake DESTINATION ${st_cmakedir} COMPONENT dev)

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
install(FILES ${CMAKE_BINARY_DIR}/stitch.pc DESTINATION ${st_pcdir} COMPONENT dev)

# stitch_mpi.pc: MPI's flags from the MPI's own pkg-config module where there is one (Debian's mpi-c, the
# alternative mpi-default-dev chooses; Open MPI's ompi-c; MPICH's mpich), else the include directories and
# libraries CMake found, written out.
if(TARGET stitch_mpi)
  find_package(PkgConfig QUIET)
  set(STITCH_PC_MPI_REQUIRES "")
  if(PKG_CONFIG_FOUND)
    foreach(m mpi-c ompi-c mpich)
      execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --exists ${m} RESULT_VARIABLE rc)
      if(rc EQUAL 0)
        set(STITCH_PC_MPI_REQUIRES " ${m}")
        break()
      endif()
    endforeach()
  endif()
  set(STITCH_PC_MPI_CFLAGS "")
  set(STITCH_PC_MPI_LIBS "")
  if(NOT STITCH_PC_MPI_REQUIRES)
    foreach(d ${MPI_C_INCLUDE_DIRS})
      string(APPEND STITCH_PC_MPI_CFLAGS " -I${d}")
    endforeach()
    foreach(l ${MPI_C_LIBRARIES})
      string(APPEND STITCH_PC_MPI_LIBS " ${l}")
    endforeach()
  endif()
  configure_file(${CMAKE_SOURCE_DIR}/cmake/stitch_mpi.pc.in ${CMAKE_BINARY_DIR}/stitch_mpi.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/stitch_mpi.pc DESTINATION ${st_pcdir} COMPONENT dev)
endif()
