#!/bin/bash
# device_build.sh - build what tests/device/run.sh runs on the GPU machine, here, into build-cuda/ (small enough to
# carry: the GPU machine may lack re2c, lemon and libyaml).
#
#   scripts/device_build.sh            # full build in build-cuda-full/, then build-cuda/{bin,lib} (about 10 MB)
#
# build-cuda/bin holds test_device, stitch-perf and stitch-info (libstitch and the CUDA runtime linked in
# statically, sm_90); build-cuda/lib holds libyaml's shared object, which they load (run.sh sets
# LD_LIBRARY_PATH). -DSTITCH_CUDA=ON: a missing toolkit fails the build instead of leaving the backend out.
set -euo pipefail
cd "$(dirname "$0")/.."
full=build-cuda-full out=build-cuda
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$full" -DCMAKE_BUILD_TYPE=Release -DSTITCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${launcher[@]}" >/dev/null
nice cmake --build "$full" -j"${JOBS:-2}" --target test_device stitch-perf stitch-info
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for b in test_device stitch-perf stitch-info; do
  cp "$full/bin/$b" "$out/bin/"
  strip "$out/bin/$b"
done
# every shared library they need that is not part of the C library or the CUDA driver
ldd "$out/bin/test_device" "$out/bin/stitch-perf" "$out/bin/stitch-info" | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libgcc_s|ld-linux[^/]*)\.so' | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
cp algos.dsl "$out/" 2>/dev/null || true
du -sh "$out"
ls -l "$out/bin" "$out/lib"
