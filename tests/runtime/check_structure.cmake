# check_structure.cmake - the runtime's boundaries, checked (cmake -DSRC=<source dir> -P check_structure.cmake).
cmake_minimum_required(VERSION 3.13)
#
# 1. A backend's state is touched only by its own files: comm->proc by the processes backend (proc.c, exec_msg.c),
#    comm->job by the threads backend (threads.c, exec.c). Everything else goes through the backend table
#    (runtime/comm.h), so a new backend is one table and its files, not a branch in every function.
# 2. No private header is named like a C or POSIX header: runtime/ and core/ are include directories of the
#    library's own sources, so a runtime/sched.h would hide <sched.h> from every file there (it once did).

set(owners_proc proc.c exec_msg.c p2p_msg.c)
set(owners_job threads.c exec.c p2p_threads.c)
set(failures "")

file(GLOB sources RELATIVE ${SRC}/runtime ${SRC}/runtime/*.c)
foreach(f IN LISTS sources)
  file(READ ${SRC}/runtime/${f} text)
  foreach(field proc job)
    string(REGEX MATCHALL "comm->${field}[^a-z_]" hits "${text}")
    list(LENGTH hits n)
    if(n GREATER 0 AND NOT f IN_LIST owners_${field})
      string(REPLACE ";" " and " owners "${owners_${field}}")
      list(APPEND failures "runtime/${f}: uses comm->${field} (${n} times), but only its backend's files (${owners}) may")
    endif()
  endforeach()
endforeach()

set(system_headers
  assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign stdarg stdatomic
  stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar wchar wctype
  aio arpa cpio dirent dlfcn fcntl fmtmsg fnmatch ftw glob grp iconv langinfo libgen monetary mqueue ndbm net netdb
  netinet nl_types poll pthread pwd regex sched search semaphore spawn strings stropts syslog tar termios trace
  ulimit unistd utime utmpx wordexp alloca endian features getopt malloc memory byteswap error link elf)
file(GLOB headers ${SRC}/runtime/*.h ${SRC}/core/*.h)
foreach(h IN LISTS headers)
  get_filename_component(base ${h} NAME_WE)
  if(base IN_LIST system_headers)
    file(RELATIVE_PATH rel ${SRC} ${h})
    list(APPEND failures "${rel}: named like the system header <${base}.h>, which it would hide")
  endif()
endforeach()

if(failures)
  list(JOIN failures "\n" text)
  message(FATAL_ERROR "${text}")
endif()
message(STATUS "structure: backends keep to their files; no header shadows a system header")
