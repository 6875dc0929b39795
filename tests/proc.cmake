# proc.cmake - process mode: ranks as forked processes (shm, tcp, kill, mismatch, abort), stitch-perf under
# mpirun when Open MPI's mpirun is installed, and the network-namespace tests (label `netns`, root only).
set(PROC_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/proc)

add_executable(test_proc ${PROC_TESTS}/test_proc.c)
target_link_libraries(test_proc PRIVATE stitch)
target_compile_options(test_proc PRIVATE -UNDEBUG)

foreach(sc shm tcp odd kill mismatch abort)
  add_test(NAME proc.${sc} COMMAND test_proc ${sc})
  set_tests_properties(proc.${sc} PROPERTIES TIMEOUT 120 LABELS proc RUN_SERIAL TRUE)
endforeach()
