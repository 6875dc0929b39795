# Device communicators (docs/devices.md). test_device runs the device engine with data against the exact oracle:
# with --backend=host (the interpreter of dev_logic.h on host threads: every algorithm x collective, p = 1..8, all
# dtypes, bit-identity with the threads engine, errors) on every machine, and with --backend=cuda on a GPU (label
# gpu; exit 77 = skipped, with the reason, where there is none: cudaGetDeviceCount fails or gives 0).
# tests/device/run.sh is the check the GPU machine runs (scripts/device_build.sh builds what it needs here).
add_executable(test_device device/test_device.c)
target_include_directories(test_device PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/runtime ${CMAKE_SOURCE_DIR}/runtime
                           ${CMAKE_SOURCE_DIR}/core)
target_link_libraries(test_device PRIVATE stitch Threads::Threads)
if(TARGET stitch_cuda)
  target_link_libraries(test_device PRIVATE CUDA::cudart_static)
endif()
add_test(NAME device.host COMMAND test_device --backend=host)
set_tests_properties(device.host PROPERTIES TIMEOUT 900 LABELS device)
add_test(NAME device.cuda COMMAND test_device --backend=cuda matrix identical errors small)
set_tests_properties(device.cuda PROPERTIES TIMEOUT 900 LABELS "device;gpu" SKIP_RETURN_CODE 77)
