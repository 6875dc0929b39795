# rooms.cmake - the rooms of runtime/ and the arrows allowed between them: one place, read by CMakeLists.txt (each
# room is an OBJECT library that sees only its own headers and those of the rooms it USES) and by the structure test
# (tests/runtime/check_structure.cmake, runtime.structure: no include line may cross an arrow not listed here).
# The list is in floor order: a room uses only rooms before it, so no include or call cycle can run between rooms.
set(ST_ROOMS base conf boot transport select comm threads proc device)
set(ST_USES_base "")                                     # the floor: log, clock, poll, siphash, abort, half
set(ST_USES_conf base)                                   # the settings' table, HCCL's variables, group layouts
set(ST_USES_boot base conf)                              # the rendezvous: table of ranks, control sockets
set(ST_USES_transport base conf boot)                    # the transport table and its entries
set(ST_USES_select base conf boot)                       # registry, catalogues, auto's tables, the choice
set(ST_USES_comm base conf transport select)             # entry points, communicators, call model, kernels
set(ST_USES_threads base conf select comm)               # the threads backend
set(ST_USES_proc base conf boot transport select comm)   # the process backend
set(ST_USES_device base conf select comm threads)        # the device layer and its backends (docs/devices.md)
