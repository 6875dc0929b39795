#!/usr/bin/python3
"""plot_perf.py - busbw against size, log-log, one line per library / algorithm, from benchmark outputs.

    scripts/plot_perf.py -o OUT.png [--title T] [--place out|in|both] [-l LABEL ...] FILE...

Each FILE is one of (found by its content, not its name):
  - stitch-perf's table (stdout; several runs may follow each other in one file): one line per run, labelled
    "COLL ALGO pN" from its header (ALGO: the algorithm asked for, auto when the library picked per size);
  - stitch-perf -J FILE's JSON document: the same, from its "options";
  - scripts/bench_vs_mpi.sh's output: one line per busbw column and np ("MPI shm np=2", "stitch shm np=2",
    "stitch registered np=2", "stitch threads np=2", "copy bound np=2", "MPI tcp np=2", "stitch tcp np=2",
    "gloo (torch) np=2", "stitch (torch) np=2"; older outputs have fewer columns). A cell that is not a number
    ("-") is left out of its line.
stitch-perf's out-of-place busbw is plotted (--place in: the in-place one; both: a line each, "(in-place)" added).
-l LABEL, once per FILE in order, replaces the labels of that file's lines (a file with several lines gets
"LABEL: line"). Sizes of 0 bytes, a busbw of 0 (too small to show at the table's precision) and failed rows are
left out (failed rows are reported on stderr). Exit status: 0, or 2 with a message for input it cannot read.
Debian: apt-get install python3-matplotlib (this script runs under /usr/bin/python3, where Debian installs it).
"""
import argparse
import json
import re
import sys

PROG = "plot_perf.py"


class InputError(Exception):
    """Input that is not one of the three formats, or holds nothing to plot: the message says where and why."""


def _num(text, where):
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{where}: '{text}' is not a number") from None


# ---- stitch-perf's table ---------------------------------------------------------------------------------------

def _perf_header(line, run):
    """Fill run (a dict) from stitch-perf's header lines."""
    m = re.match(r"# stitch-perf (\S+), stitch", line)
    if m:
        run["coll"] = m.group(1)
    m = re.match(r"# nRanks (\d+) .*algorithm: (\S+)", line)
    if m:
        run["ranks"], run["algo"] = int(m.group(1)), m.group(2)
    m = re.match(r"# nThread \d+ nRanks (\d+) .*algorithm: (\S+)", line)  # the single-column-set table before
    if m:
        run["ranks"], run["algo"] = int(m.group(1)), m.group(2)
    if line.startswith("#") and "#wrong" in line:
        # the columns: two sets (size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong),
        # or the older single set (size count type redop time(us) algbw busbw #wrong algorithm)
        run["busbw_field"] = {"out": 7, "in": 11} if line.count("#wrong") == 2 else {"out": 6}


def _perf_row(fields, run, place, where, failed):
    field = run.get("busbw_field", {}).get(place)
    if field is None or len(fields) <= field + 1:
        return None
    wrong = fields[field + 1]
    if fields[field] == "N/A":
        return None
    if wrong == "error" or (wrong.isdigit() and int(wrong) > 0):
        failed.append(f"{where}: size {fields[0]}: {'failed' if wrong == 'error' else wrong + ' wrong elements'}")
        return None
    return _num(fields[0], where), _num(fields[field], where)


def read_perf_text(name, text, places):
    runs, run = [], None
    failed = []
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{n}"
        if line.startswith("# stitch-perf "):
            run = {"points": {p: [] for p in places}}
            runs.append(run)
        if run is None:
            continue
        if line.startswith("#"):
            _perf_header(line, run)
            continue
        fields = line.split()
        if not fields or not fields[0].isdigit():
            continue
        for p in places:
            pt = _perf_row(fields, run, p, where, failed)
            if pt:
                run["points"][p].append(pt)
    for f in failed:
        print(f"{PROG}: warning: {f}: left out", file=sys.stderr)
    series = []
    for r in runs:
        if "busbw_field" not in r:
            raise InputError(f"{name}: a stitch-perf run without its column header line (#wrong): truncated?")
        base = f"{r.get('coll', '?')} {r.get('algo', '?')} p{r.get('ranks', '?')}"
        for p in places:
            if p in r["busbw_field"]:
                series.append((base + (" (in-place)" if p == "in" else ""), r["points"][p]))
    return series


# ---- stitch-perf -J ----------------------------------------------------------------------------------------------

def read_perf_json(name, text, places):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    if not isinstance(doc, dict) or doc.get("program") != "stitch-perf" or "results" not in doc:
        raise InputError(f"{name}: a JSON document, but not stitch-perf -J's (no \"program\": \"stitch-perf\" "
                         "with \"results\")")
    o = doc.get("options", {})
    base = f"{o.get('collective', '?')} {o.get('algorithm', '?')} p{o.get('ranks', '?')}"
    series = []
    for p in places:
        key = "out_of_place" if p == "out" else "in_place"
        pts = []
        for i, r in enumerate(doc["results"]):
            s = r.get(key)
            if s is None:
                continue
            if s.get("error") or (s.get("wrong") or 0) > 0:
                print(f"{PROG}: warning: {name}: results[{i}] (size {r.get('size')}): failed: left out",
                      file=sys.stderr)
                continue
            pts.append((float(r["size"]), float(s["busbw_GBps"])))
        if any(r.get(key) is not None for r in doc["results"]):
            series.append((base + (" (in-place)" if p == "in" else ""), pts))
    return series


# ---- scripts/bench_vs_mpi.sh -------------------------------------------------------------------------------------

# The column names of the header line ("bytes | mpi_us mpi_bw shm_us shm_bw x | reg_us reg_bw reg/thr | thr_us
# thr_bw x | cpy_us cpy_bw thr/cpy | mpi_us mpi_bw tcp_us tcp_bw x | gloo_us gloo_bw tch_us tch_bw g/s | treg_us
# treg_bw g/r | algorithm";
# older outputs lack some groups, and the torch group is there only when torch was) name the lines: each *_bw column
# is one.
_BW_LABEL = {"shm_bw": "stitch shm", "tcp_bw": "stitch tcp", "thr_bw": "stitch threads", "reg_bw": "stitch registered",
             "cpy_bw": "copy bound", "gloo_bw": "gloo (torch)", "tch_bw": "stitch (torch)",
             "treg_bw": "stitch (torch, registered)"}


def _bw_columns(groups):
    """[(group, field, label)] for the *_bw columns of a header line split at '|'."""
    cols = []
    for g, names in enumerate(groups):
        for f, col in enumerate(names):
            if col == "mpi_bw":
                peer = "shm" if "shm_bw" in names else "tcp" if "tcp_bw" in names else "?"
                cols.append((g, f, f"MPI {peer}"))
            elif col in _BW_LABEL:
                cols.append((g, f, _BW_LABEL[col]))
    return cols


def read_bench_vs_mpi(name, text):
    series, np_, cols = {}, None, None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"# np=(\d+)", line)
        if m:
            np_, cols = m.group(1), None
            continue
        groups = [g.split() for g in line.split("|")]
        if groups[0] == ["bytes"]:
            cols = _bw_columns(groups)
            continue
        if np_ is None or not cols or not groups[0] or not groups[0][0].isdigit():
            continue
        size = _num(groups[0][0], f"{name}:{n}")
        for g, f, label in cols:
            if g >= len(groups) or f >= len(groups[g]):
                raise InputError(f"{name}:{n}: a row shorter than its header line (no column {label})")
            pts = series.setdefault(f"{label} np={np_}", [])
            if groups[g][f] != "-":
                pts.append((size, _num(groups[g][f], f"{name}:{n}")))
    return list(series.items())


# ---- input, plot -----------------------------------------------------------------------------------------------

def read_input(name, places):
    try:
        with open(name, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{name}: cannot read it: {e.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{name}: not text (a stitch-perf table or -J file, or bench_vs_mpi.sh's output)") from None
    if text.lstrip().startswith("{"):
        series = read_perf_json(name, text, places)
    elif "# stitch-perf " in text:
        series = read_perf_text(name, text, places)
    elif re.search(r"^# np=\d+", text, re.M):
        series = read_bench_vs_mpi(name, text)
    else:
        raise InputError(f"{name}: not a stitch-perf table (no '# stitch-perf COLL' header), a stitch-perf -J "
                         "document or scripts/bench_vs_mpi.sh's output (no '# np=N' header)")
    if not series or not any(pts for _, pts in series):
        raise InputError(f"{name}: no rows to plot (every size failed, or the run printed no row)")
    return series


def _size_label(v):
    """2^k bytes as nccl-tests users write sizes: 8, 1K, 64M."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if v >= scale:
            return f"{v / scale:g}{unit}"
    return f"{v:g}"


def plot(series, out, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        raise InputError("matplotlib is not installed for this python "
                         f"({sys.executable}): apt-get install python3-matplotlib") from None
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    markers = "os^vD<>ph*"
    shown = 0
    for i, (label, pts) in enumerate(series):
        pts = sorted((s, b) for s, b in pts if s > 0 and b > 0)  # log axes: 0 cannot be drawn
        if not pts:
            print(f"{PROG}: warning: '{label}': no size with a busbw above 0: not drawn", file=sys.stderr)
            continue
        ax.plot([s for s, _ in pts], [b for _, b in pts], marker=markers[i % len(markers)], markersize=4,
                linewidth=1.4, label=label)
        shown += 1
    if shown == 0:
        raise InputError("nothing to draw: no line has a size and a busbw above 0")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: _size_label(v)))
    ax.set_yscale("log")
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.15)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(out, format="png")
    except OSError as e:
        raise InputError(f"{out}: cannot write it: {e.strerror}") from None
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("-o", "--output", required=True, metavar="OUT.png")
    ap.add_argument("-l", "--label", action="append", default=[], metavar="LABEL",
                    help="the label of each FILE's lines, in order")
    ap.add_argument("--title", default="busbw against size")
    ap.add_argument("--place", choices=["out", "in", "both"], default="out",
                    help="stitch-perf's column set (default: out)")
    a = ap.parse_args(argv)
    if len(a.label) > len(a.files):
        ap.error(f"{len(a.label)} labels for {len(a.files)} files")
    places = ["out", "in"] if a.place == "both" else [a.place]
    try:
        series = []
        for i, name in enumerate(a.files):
            got = read_input(name, places)
            if i < len(a.label) and a.label[i]:
                got = [(a.label[i] if len(got) == 1 else f"{a.label[i]}: {l}", pts) for l, pts in got]
            series += got
        plot(series, a.output, a.title)
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
