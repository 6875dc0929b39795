# install.cmake - the install and the CMake/pkg-config packages, as a user's project meets them (tests/install/run.sh
# says what it checks): a staged `cmake --install`, libstitch.so's exports against stitch.h (nm -D), and
# examples/app built and run against the staged install with find_package(stitch) and with pkg-config. About 10 s
# (two small builds); skipped (77) in a sanitizer build.
add_test(NAME install.staged
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${CMAKE_COMMAND}
                 ${CMAKE_C_COMPILER} "${STITCH_SANITIZE}")
set_tests_properties(install.staged PROPERTIES TIMEOUT 180 LABELS install SKIP_RETURN_CODE 77)
