# torch.cmake - the torch.distributed backend "stitch" (bindings/torch) under torchrun with 3 processes, label
# `torch`, one torchrun job (tests/torch/all.py, to start PyTorch once): every collective and dtype against
# computed values plus the error cases (tests/torch/colls.py), then a DistributedDataParallel loop trained on stitch
# and on gloo in the same job, whose parameters must agree (tests/torch/ddp.py says within what, and why not bit
# for bit), groups.py (new_group by stitch_comm_split, send/recv, barrier) and nonblocking.py (async_op=True: overlap
# shown by messages, isend/irecv, every collective in flight, errors and the group's timeout reaching the Work; its
# 2 s timeout case adds 2 s). Skipped (77) with the reason when the
# backend is not built (no torch here: bindings/torch/CMakeLists.txt).
# About 8 s of CPU; 35 s of wall time on the shared 2-core machine it was written on.
set(TORCH_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/torch)
if(TARGET stitch_torch)
  set(torch_module ${CMAKE_BINARY_DIR}/lib) # the package build/lib/stitch_torch
else()
  set(torch_module "-${STITCH_TORCH_REASON}")
endif()
add_test(NAME torch.np3 COMMAND ${TORCH_TESTS}/run.sh ${STITCH_TORCH_PYTHON} ${torch_module} 3 ${TORCH_TESTS}/all.py)
set_tests_properties(torch.np3 PROPERTIES TIMEOUT 180 LABELS torch SKIP_RETURN_CODE 77)
# torch.installed: the same tests/torch/all.py from a staged install (cmake --install into a fresh prefix), on 2 and 3
# processes under the installed stitch-torchrun, after `import stitch_torch` from there (tests/torch/installed.sh).
# About 40 s of wall time on the shared 2-core machine.
add_test(NAME torch.installed COMMAND ${TORCH_TESTS}/installed.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
                                      ${STITCH_TORCH_PYTHON} ${torch_module})
set_tests_properties(torch.installed PROPERTIES TIMEOUT 360 LABELS "torch;install" SKIP_RETURN_CODE 77)
