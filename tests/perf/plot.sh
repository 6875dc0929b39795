#!/usr/bin/env bash
# plot.sh - scripts/plot_perf.py on small generated inputs: a stitch-perf table and a stitch-perf -J document
# (both column sets), and a scripts/bench_vs_mpi.sh-shaped table, each make a PNG (checked: the PNG signature, an
# IHDR chunk of non-zero size first and an IEND chunk last), and one with every column group of today's script
# (registered, copy bound, torch) reads as one line per busbw column with its label; bad input (not one of the formats, a JSON document that
# is not stitch-perf's, a file that does not exist) exits 2 with a message naming the file and why, and writes no
# PNG. Skips (77) when no python3 here has matplotlib (Debian: python3-matplotlib, for /usr/bin/python3).
#
#   plot.sh STITCH-PERF PLOT_PERF.PY WORKDIR
perf=${1:?stitch-perf}; plot=${2:?plot_perf.py}; work=${3:?workdir}
py=
for c in /usr/bin/python3 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import matplotlib' 2>/dev/null; then py=$c; break; fi
done
[ -n "$py" ] || { echo "skip: no python3 with matplotlib (Debian: apt-get install python3-matplotlib)"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# A valid PNG: signature, then the IHDR chunk (length 13) with width and height > 0, and IEND last.
png_ok() {
    local f=$1 hex
    [ -s "$f" ] || { bad "$f was not written"; return; }
    hex=$(od -An -tx1 -N24 "$f" | tr -d ' \n')
    [ "${hex:0:16}" = 89504e470d0a1a0a ] || bad "$f: no PNG signature (${hex:0:16})"
    [ "${hex:16:16}" = 0000000d49484452 ] || bad "$f: the first chunk is not IHDR"
    [ $((16#${hex:32:8})) -gt 0 ] && [ $((16#${hex:40:8})) -gt 0 ] || bad "$f: IHDR gives a size of 0"
    [ "$(tail -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 49454e44ae426082 ] || bad "$f: no IEND chunk at its end"
    echo "# $f: PNG $((16#${hex:32:8})) x $((16#${hex:40:8})), $(wc -c <"$f") bytes"
}

# the inputs: two stitch-perf runs on 2 threads, 1 KiB .. 64 KiB
common=(-t 2 -d fp32 -o sum -b 1K -e 64K -f 8 -c 1 -w 1 -n 2 -T 60)
"$perf" all_reduce -a ring "${common[@]}" >"$work/ring.txt" || bad "stitch-perf ring exited $?"
"$perf" all_reduce -a rhd "${common[@]}" -J "$work/rhd.json" >/dev/null || bad "stitch-perf rhd -J exited $?"
cat >"$work/vs_mpi.txt" <<'TABLE'
# np=2  (time in us, busbw in GB/s; x = stitch time / MPI time on the same transport; median of 3)
             | shared memory: MPI vs stitch              | stitch threads          | tcp on loopback: MPI vs stitch            |
       bytes |    mpi_us  mpi_bw    shm_us  shm_bw     x |    thr_us  thr_bw     x |    mpi_us  mpi_bw    tcp_us  tcp_bw     x | algorithm
        1024 |       1.2   0.853       1.4   0.731  1.17 |       2.0   0.512  1.67 |      20.1   0.051      15.2   0.067  0.76 | mesh_oneshot
       65536 |      12.0   5.461      11.0   5.958  0.92 |      30.0   2.185  2.50 |     300.0   0.218     250.0   0.262  0.83 | ring
TABLE

echo "$ $py $plot -o $work/ring_rhd.png $work/ring.txt $work/rhd.json --place both"
"$py" "$plot" -o "$work/ring_rhd.png" "$work/ring.txt" "$work/rhd.json" --place both 2>"$work/err" ||
    bad "plot_perf.py on a table and a -J file exited $?: $(cat "$work/err")"
png_ok "$work/ring_rhd.png"
echo "$ $py $plot -o $work/vs_mpi.png $work/vs_mpi.txt -l 'this machine'"
"$py" "$plot" -o "$work/vs_mpi.png" "$work/vs_mpi.txt" -l "this machine" 2>"$work/err" ||
    bad "plot_perf.py on bench_vs_mpi.sh's table exited $?: $(cat "$work/err")"
png_ok "$work/vs_mpi.png"

# today's bench_vs_mpi.sh: every column group, a line per *_bw column (its label checked), a '-' cell left out
cat >"$work/vs_all.txt" <<'TABLE'
# bench_vs_mpi.sh on vm, 2 CPUs, 2026-12-05 19:17 UTC; load average before: 1.84 1.53 0.81
# np=2  (time in us, busbw in GB/s; x = stitch time / other time on the same transport; reg/thr, thr/cpy: busbw ratios; g/s = gloo time / stitch time; median of 1; load average now: 1.84 1.53 0.81)
             | shared memory: MPI vs stitch              | stitch registered       | stitch threads          | copy bound (memcpy)     | tcp on loopback: MPI vs stitch            | torch: gloo vs stitch                     |
       bytes |    mpi_us  mpi_bw    shm_us  shm_bw     x |    reg_us  reg_bw reg/thr |    thr_us  thr_bw     x |    cpy_us  cpy_bw thr/cpy |    mpi_us  mpi_bw    tcp_us  tcp_bw     x |   gloo_us gloo_bw    tch_us  tch_bw   g/s | algorithm
       32768 |      18.3   1.791       4.2   7.791  0.23 |       4.1   7.987    1.34 |       5.5   5.966  0.30 |       0.2 134.171    0.04 |      36.3   0.902      24.3   1.348  0.67 |    1610.5   0.020         -       -     - | ring
      524288 |      99.8   5.253      46.1  11.378  0.46 |      61.2   8.563    0.93 |      56.8   9.233  0.57 |      10.5  49.733    0.19 |     212.9   2.463     210.2   2.495  0.99 |    1620.4   0.324     144.7   3.624 11.20 | ring
TABLE
want="MPI shm np=2 (2)|stitch shm np=2 (2)|stitch registered np=2 (2)|stitch threads np=2 (2)|copy bound np=2 (2)|MPI tcp np=2 (2)|stitch tcp np=2 (2)|gloo (torch) np=2 (2)|stitch (torch) np=2 (1)"
got=$("$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import plot_perf
print("|".join("%s (%d)" % (l, len(p)) for l, p in plot_perf.read_input(sys.argv[2], ["out"])))' \
      "$(dirname "$plot")" "$work/vs_all.txt" 2>&1)
echo "# vs_all.txt: $got"
[ "$got" = "$want" ] || bad "bench_vs_mpi.sh's full table read as '$got', expected '$want'"
"$py" "$plot" -o "$work/vs_all.png" "$work/vs_all.txt" 2>"$work/err" ||
    bad "plot_perf.py on bench_vs_mpi.sh's full table exited $?: $(cat "$work/err")"
png_ok "$work/vs_all.png"

# bad input: exit 2, a message naming the file and why, no PNG
echo "not a table" >"$work/garbage.txt"
echo '{"results": []}' >"$work/other.json"
for case in "garbage.txt|garbage.txt: not a stitch-perf table" "other.json|other.json: a JSON document, but not stitch-perf -J's" \
            "missing.txt|missing.txt: cannot read it: No such file or directory"; do
    in=${case%%|*}; want=${case#*|}
    rm -f "$work/bad.png"
    "$py" "$plot" -o "$work/bad.png" "$work/$in" 2>"$work/err"; rc=$?
    echo "# $in: exit $rc: $(cat "$work/err")"
    [ $rc -eq 2 ] || bad "$in: exit status $rc, expected 2"
    grep -qF "plot_perf.py: error: $work/$want" "$work/err" || bad "$in: stderr does not say '$want'"
    [ ! -e "$work/bad.png" ] || bad "$in: a PNG was written for bad input"
done
[ $fail -eq 0 ] && echo "PASS: PNGs from a stitch-perf table, a -J document and bench_vs_mpi.sh tables (old and full); bad input refused"
exit $fail
