# install.cmake - the install and the CMake/pkg-config packages, as a user's project meets them (tests/install/run.sh
# says what it checks): a staged `cmake --install`, libstitch.so's exports against stitch.h (nm -D), and
# examples/app built and run against the staged install with find_package(stitch) (shared and static) and with
# pkg-config, and a wrong algorithm that must fail its build. 6-14 s on the shared 2-core machine (four tiny CMake
# and make builds); skipped (77) in a sanitizer build.
add_test(NAME install.staged
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${CMAKE_COMMAND}
                 ${CMAKE_C_COMPILER} "${STITCH_SANITIZE}")
set_tests_properties(install.staged PROPERTIES TIMEOUT 180 LABELS install SKIP_RETURN_CODE 77)
