# package.cmake - Debian packages of the install components (cmake/install.cmake, bindings/torch), made by
# `cpack -G DEB` in the build tree (or `cpack -G DEB --config build/CPackConfig.cmake -B <dir>` anywhere):
#
#   libstitch0           runtime   /usr/lib/libstitch.so.0*                          Depends (shlibdeps): libyaml
#   libstitch-dev        dev       headers, libstitch.so, libstitch.a, libstitch_mpi.a, the CMake package,
#                                  stitch.pc, stitch_mpi.pc, algos.dsl, the docs     Depends: libstitch0, stitch-tools
#                                  (= version; the CMake package's stitch::stitchc is the tools' stitchc),
#                                  libyaml-dev (libstitch.a's -lyaml); Suggests: mpi-default-dev (stitch_mpi)
#   stitch-tools         tools     stitchc, stitch-perf, stitch-info (linked statically with libstitch)
#   python3-stitch-torch torch     the Python package stitch_torch in /usr/lib/python3/dist-packages and
#                                  /usr/bin/stitch-torchrun (where bindings/torch is built)   Depends: python3-torch
#
# The prefix is /usr; the packages install with CMake's GNUInstallDirs paths as configured (lib/, not the multiarch
# lib/x86_64-linux-gnu/, unless configured with CMAKE_INSTALL_PREFIX=/usr), all of which the loader, pkg-config,
# CMake and python3 search. CPACK_SET_DESTDIR makes the install run with CMAKE_INSTALL_PREFIX=/usr (and DESTDIR set
# to CPack's staging directory), so that the torch package lands where /usr's python3 looks (bindings/torch decides at
# install time from the prefix). Run-time dependencies come from dpkg-shlibdeps (dpkg-dev) where it is installed,
# else from the lists below only. python3-stitch-torch's prerm (cmake/debian/torch/prerm) removes the __pycache__
# python3 writes beside the package. tests/package.cmake builds, installs, uses and removes them.
set(CPACK_PACKAGE_NAME stitch)
set(CPACK_PACKAGE_VENDOR "stitch")
set(CPACK_PACKAGE_CONTACT "stitch maintainers <stitch@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "collective communication whose algorithms are written in a DSL and verified for every rank count")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr) # with CPACK_SET_DESTDIR, the install's CMAKE_INSTALL_PREFIX
set(CPACK_SET_DESTDIR ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# libstitch0's shlibs file and its ldconfig postinst/postrm. (CPack has no per-package form of it, so it also looks at
# the torch module, and says in a developer warning that a Python module has no soname: harmless.)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
find_program(STITCH_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(STITCH_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libyaml-0-2")
  set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libyaml-0-2")
endif()

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libstitch0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libstitch-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libyaml-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "mpi-default-dev, pkg-config, cmake")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME stitch-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TORCH_PACKAGE_NAME python3-stitch-torch)
set(CPACK_DEBIAN_TORCH_PACKAGE_SECTION python)
set(CPACK_DEBIAN_TORCH_PACKAGE_DEPENDS "python3-torch")
set(CPACK_DEBIAN_TORCH_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/cmake/debian/torch/prerm)
set(CPACK_DEBIAN_TORCH_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_COMPONENTS_ALL runtime dev tools)
if(TARGET stitch_torch)
  list(APPEND CPACK_COMPONENTS_ALL torch)
endif()
include(CPack)
cpack_add_component(runtime DISPLAY_NAME "libstitch" DESCRIPTION "stitch's shared library, libstitch.so.0")
cpack_add_component(tools DISPLAY_NAME "stitch tools"
                    DESCRIPTION "stitch's tools: stitchc, stitch-perf (like nccl-tests) and stitch-info")
cpack_add_component(dev DISPLAY_NAME "stitch development files" DEPENDS runtime tools
                    DESCRIPTION "stitch's headers, libraries, CMake package and pkg-config files")
cpack_add_component(torch DISPLAY_NAME "stitch torch.distributed backend"
                    DESCRIPTION "the torch.distributed backend stitch (stitch_torch) and stitch-torchrun")
