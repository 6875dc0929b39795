# check_structure.cmake - the runtime's boundaries, checked (cmake -DSRC=<source dir> -P check_structure.cmake).
cmake_minimum_required(VERSION 3.13)
#
# 1. A backend's state is touched only by its own files: comm->proc by the processes backend (proc.c, exec_msg.c, exec_pull.c),
#    comm->job by the threads backend (threads.c, exec.c) and the device backend, whose ranks are threads of one
#    job too (device/dev_comm.c). Everything else goes through the backend table
#    (runtime/comm.h), so a new backend is one table and its files, not a branch in every function.
# 2. No private header is named like a C or POSIX header: runtime/ and core/ are include directories of the
#    library's own sources, so a runtime/sched.h would hide <sched.h> from every file there (it once did).
# 3. No include line crosses a forbidden boundary: a file of runtime/<room>/ includes headers of its own room and of
#    the rooms that runtime/rooms.cmake lets it use (ST_USES_<room>), never another room's (a transport reaching
#    selection or a backend, comm/ reaching a backend, select/ reaching comm/ ...).
# 4. README.md's map of runtime/ (between its "runtime map" markers) names every file of runtime/, by its path
#    under runtime/ ("comm/api.c"), and names no file that is not there.

set(owners_proc proc.c exec_msg.c exec_pull.c p2p_msg.c)
set(owners_job threads.c exec.c p2p_threads.c dev_comm.c)
set(failures "")

file(GLOB sources RELATIVE ${SRC}/runtime ${SRC}/runtime/*/*.c)
foreach(path IN LISTS sources)
  file(READ ${SRC}/runtime/${path} text)
  get_filename_component(f ${path} NAME)
  foreach(field proc job)
    string(REGEX MATCHALL "comm->${field}[^a-z_]" hits "${text}")
    list(LENGTH hits n)
    if(n GREATER 0 AND NOT f IN_LIST owners_${field})
      string(REPLACE ";" " and " owners "${owners_${field}}")
      list(APPEND failures "runtime/${path}: uses comm->${field} (${n} times), but only its backend's files (${owners}) may")
    endif()
  endforeach()
endforeach()

set(system_headers
  assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign stdarg stdatomic
  stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar wchar wctype
  aio arpa cpio dirent dlfcn fcntl fmtmsg fnmatch ftw glob grp iconv langinfo libgen monetary mqueue ndbm net netdb
  netinet nl_types poll pthread pwd regex sched search semaphore spawn strings stropts syslog tar termios trace
  ulimit unistd utime utmpx wordexp alloca endian features getopt malloc memory byteswap error link elf)
file(GLOB headers ${SRC}/runtime/*/*.h ${SRC}/core/*.h)
foreach(h IN LISTS headers)
  get_filename_component(base ${h} NAME_WE)
  if(base IN_LIST system_headers)
    file(RELATIVE_PATH rel ${SRC} ${h})
    list(APPEND failures "${rel}: named like the system header <${base}.h>, which it would hide")
  endif()
endforeach()

# 3. The rooms' arrows.
include(${SRC}/runtime/rooms.cmake)
foreach(room IN LISTS ST_ROOMS)
  file(GLOB own RELATIVE ${SRC}/runtime/${room} ${SRC}/runtime/${room}/*.h ${SRC}/runtime/${room}/*.def)
  set(home_${room} ${own})
endforeach()
foreach(room IN LISTS ST_ROOMS)
  file(GLOB files RELATIVE ${SRC}/runtime ${SRC}/runtime/${room}/*.c ${SRC}/runtime/${room}/*.h)
  foreach(path IN LISTS files)
    file(STRINGS ${SRC}/runtime/${path} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[^\"]*\"([^\"]*)\".*" "\\1" inc "${line}")
      get_filename_component(inc ${inc} NAME)
      foreach(other IN LISTS ST_ROOMS)
        if(NOT other STREQUAL room AND inc IN_LIST home_${other} AND NOT other IN_LIST ST_USES_${room})
          string(REPLACE ";" ", " may "${ST_USES_${room}}")
          set(why "runtime/${path}: includes ${inc} of ${other}/, but ${room}/ may use only: ${may}")
          list(APPEND failures "${why} (rooms.cmake)")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

# 4. The README's map of runtime/, both ways.
set(readme ${SRC}/README.md)
if(DEFINED README)
  set(readme ${README})
endif()
file(READ ${readme} text)
string(FIND "${text}" "<!-- runtime map -->" from)
string(FIND "${text}" "<!-- end of runtime map -->" to)
if(from LESS 0 OR to LESS from)
  list(APPEND failures "${readme}: no map of runtime/ between <!-- runtime map --> and <!-- end of runtime map -->")
else()
  math(EXPR len "${to} - ${from}")
  string(SUBSTRING "${text}" ${from} ${len} map)
  file(GLOB_RECURSE all RELATIVE ${SRC}/runtime ${SRC}/runtime/*)
  foreach(path IN LISTS all)
    if(NOT path MATCHES "(^|/)README" AND NOT map MATCHES "`${path}`")
      list(APPEND failures "README.md: the map of runtime/ misses runtime/${path} (write it as `${path}`)")
    endif()
  endforeach()
  string(REGEX MATCHALL "`[a-z_/]+\\.(c|h|def|map|cmake)`" named "${map}")
  foreach(n IN LISTS named)
    string(REPLACE "`" "" n "${n}")
    if(NOT EXISTS ${SRC}/runtime/${n})
      list(APPEND failures "README.md: the map of runtime/ names ${n}, which runtime/ does not hold")
    endif()
  endforeach()
endif()

if(failures)
  list(JOIN failures "\n" text)
  message(FATAL_ERROR "${text}")
endif()
message(STATUS "structure: backends keep to their files; no header shadows a system header; every include keeps to "
               "the rooms' arrows; README.md maps every file of runtime/")
