# package.cmake - the Debian packages (cmake/package.cmake) built with `cpack -G DEB`, checked, installed into this
# system with dpkg -i, used as a user would (stitch-perf, an external CMake project, a pkg-config program, an MPI
# program, the torch backend) and removed with dpkg --purge, leaving nothing (tests/package/run.sh says what and
# how it guards an existing install). In the default suite: as root (CI) it installs and removes; otherwise it builds
# and checks the packages, then skips (77) saying why. About 50 s as root on the shared 2-core machine (cpack about
# 20 s of it), 20 s otherwise.
add_test(NAME package.deb
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package/run.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${CMAKE_COMMAND}
                 ${CMAKE_CPACK_COMMAND} ${CMAKE_C_COMPILER} "${STITCH_SANITIZE}" $<IF:$<TARGET_EXISTS:stitch_torch>,ON,OFF>)
set_tests_properties(package.deb PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
