# Makefile - the front door of stitch, in the manner of Neovim's: a thin wrapper over CMake and ctest, so that
# `make test` is the one command a newcomer and CI both run. The real build lives in CMakeLists.txt.
#
#   make            configure and build into build/ (RelWithDebInfo)
#   make deps       install what is missing among the build dependencies (as root, Debian); otherwise say what is
#   make demo       deps + build, then verify and show the ring all_reduce for 5 ranks and benchmark it
#   make test       deps + build + ctest without the `long` label
#   make test-long  deps + build + ctest -L long (the long verification sweeps)
#   make test-loaded  make test's ctest beside a CPU hog of twice the core count (scripts/with_hog.sh): what a
#                   shared, oversubscribed CI machine does to the suite. CTEST_ARGS narrows either (the
#                   stall check: make test-loaded CTEST_ARGS="-R '^proc\.stall' --repeat until-fail:20")
#   make test-rxe   deps + build + ctest -L rxe: the verbs tests on real kernel verbs (rdma_rxe) in a QEMU guest
#                   (tests/rxe/run.sh; as root it installs qemu, busybox and rdma-core's userland, else skips)
#   make sanitize   deps + an ASan/UBSan build in build-asan/ + its ctest without `long`
#   make werror     deps + build everything (tests included) with -Werror (STITCH_WERROR=ON), once with gcc into
#                   build-werror-gcc/ and once with clang into build-werror-clang/, then `make analyze` on the latter
#   make analyze    clang's static analyzer over the project's C sources (tests included), with the flags of
#                   build-werror-clang/ (scripts/analyze.py); fails on any finding
#   make fuzz       deps + a libFuzzer tree (clang, STITCH_FUZZ=ON) in build-fuzz/, then each fuzz target for
#                   FUZZ_SECONDS (default 60) from its seed corpus (tests/fuzz): frontend, topofile, bootmsg,
#                   algofile; it prints the executions per target and in all, and fails on a crash
#                   (scripts/fuzz.sh says where the input is). The long form: `make fuzz FUZZ_SECONDS=3600`
#   make install    build, then install into PREFIX (default /usr/local; DESTDIR=/some/stage stages it there):
#                   README.md, "Install and use from your project"
#   make package    build, then the Debian packages in build/ (cpack -G DEB; cmake/package.cmake says which)
#   make clean      remove the build trees
#
# Variables: CTEST_ARGS (added to make test's and test-loaded's ctest), BUILD_DIR, ASAN_DIR, WERROR_DIR, FUZZ_DIR, FUZZ_SECONDS, FUZZ_TARGETS, BUILD_TYPE, JOBS, PREFIX, DESTDIR (e.g. `make test JOBS=4`). The compiler of build/ is
# the one CMake found when it first configured it (CC=clang make test, on a fresh tree, builds with clang).

BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
WERROR_DIR ?= build-werror
FUZZ_DIR   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= frontend topofile bootmsg algofile
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= 2
CMAKE      ?= cmake
CTEST      ?= ctest
PREFIX     ?= /usr/local
CTEST_ARGS ?=

# Debian packages the build and the tests need. libc6-dev is listed because gcc only recommends it; openmpi-bin
# (mpirun) and libopenmpi-dev (mpicc) for the launcher tests and scripts/bench_vs_mpi.sh; iproute2 (ip, tc) for
# the network-namespace tests; clang for `make werror` and `make fuzz` (libFuzzer); python3-matplotlib for
# scripts/plot_perf.py and its test (perf.plot); file and dpkg-dev (dpkg-shlibdeps) for `cpack -G DEB` (make
# package, the test package.deb).
DEPS_PKGS := cmake gcc clang libc6-dev make re2c lemon libyaml-dev pkg-config openmpi-bin libopenmpi-dev iproute2 libibverbs-dev \
             python3-matplotlib file dpkg-dev
# The PyTorch backend (bindings/torch) and its test (ctest label torch): Debian's torch 1.13, which is for
# /usr/bin/python3, its C++ headers and libraries, pybind11, Python's headers and g++ (about 1 GB with what they
# pull in). `make test TORCH_PKGS=` leaves them out; CMake then skips the backend and the test says why.
TORCH_PKGS ?= python3-torch libtorch-dev pybind11-dev python3-dev g++
DEPS_PKGS += $(TORCH_PKGS)

# cmake --build runs make underneath: keep its "Entering directory" lines out of the log.
MAKEFLAGS += --no-print-directory

# The targets run their prerequisites in order (deps before build); the parallelism is inside cmake --build.
.NOTPARALLEL:
.PHONY: all build deps demo test test-long test-loaded test-rxe sanitize werror analyze fuzz install package clean

all: build

# A package counts as present when dpkg says it is installed, or (for the tools) when its command is on PATH
# (openmpi-bin's is mpirun, iproute2's is ip), so
# an up-to-date machine does no apt work at all. `apt-get update` runs only when something must be installed.
deps:
	@missing=""; \
	for p in $(DEPS_PKGS); do \
	  if dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed'; then continue; fi; \
	  case $$p in openmpi-bin) c=mpirun ;; iproute2) c=ip ;; lib*) c= ;; *) c=$$p ;; esac; \
	  if [ -n "$$c" ] && command -v $$c >/dev/null 2>&1; then continue; fi; \
	  missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present ($(DEPS_PKGS))"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "deps: missing packages:$$missing" >&2; \
	  echo "deps: install them as root: apt-get install$$missing" >&2; exit 1; \
	fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "deps: missing packages:$$missing, and no apt-get here: install them with your package manager" >&2; \
	  exit 1; \
	fi; \
	echo "deps: installing$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -q && apt-get install -y -q$$missing

build:
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	$(CMAKE) --build $(BUILD_DIR) -j$(JOBS)

demo: deps build
	$(BUILD_DIR)/bin/stitchc verify algos.dsl -a ring -c all_reduce --ranks 5..5
	$(BUILD_DIR)/bin/stitchc show algos.dsl -a ring -c all_reduce -n 5
	$(BUILD_DIR)/bin/stitch-perf all_reduce -a ring -t 5 -d fp32 -o sum -b 4 -e 16M -f 4 -c 1

test: deps build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -LE long $(CTEST_ARGS)

test-loaded: deps build
	scripts/with_hog.sh $(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -LE long $(CTEST_ARGS)

test-long: deps build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -L long

# --prepare first installs the guest's packages and builds its kernel and initramfs, outside ctest's timeouts; when
# it cannot (77: not root, packages missing) ctest then reports every rxe test skipped with the reason.
test-rxe: deps build
	tests/rxe/run.sh --prepare $(BUILD_DIR)/rxe || [ $$? = 77 ]
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -L rxe

sanitize: deps
	$(CMAKE) -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSTITCH_SANITIZE=ON
	$(CMAKE) --build $(ASAN_DIR) -j$(JOBS)
	$(CTEST) --test-dir $(ASAN_DIR) --output-on-failure -j$(JOBS) -LE long

# Each compiler gets its own tree; CMAKE_C_COMPILER is given explicitly because CC is read only on a first configure.
werror: deps
	$(CMAKE) -S . -B $(WERROR_DIR)-gcc -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_C_COMPILER=gcc -DSTITCH_WERROR=ON
	$(CMAKE) --build $(WERROR_DIR)-gcc -j$(JOBS)
	$(MAKE) --no-print-directory analyze

# The clang -Werror tree, then the analyzer with its flags (it needs the generated headers the build makes).
analyze: deps
	$(CMAKE) -S . -B $(WERROR_DIR)-clang -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_C_COMPILER=clang -DSTITCH_WERROR=ON \
	    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
	$(CMAKE) --build $(WERROR_DIR)-clang -j$(JOBS)
	python3 scripts/analyze.py $(WERROR_DIR)-clang -j $(JOBS)

# Only the fuzz binaries are built in that tree (everything in it is instrumented, so the rest would be slow).
fuzz: deps
	$(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_C_COMPILER=clang -DSTITCH_FUZZ=ON
	$(CMAKE) --build $(FUZZ_DIR) -j$(JOBS) --target $(addprefix fuzz-,$(FUZZ_TARGETS))
	scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

install: build
	DESTDIR=$(DESTDIR) $(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

package: build
	cd $(BUILD_DIR) && cpack -G DEB

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(WERROR_DIR)-gcc $(WERROR_DIR)-clang $(FUZZ_DIR)
