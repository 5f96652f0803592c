#!/usr/bin/python3
"""rows.py - the one owner of the benchmarks' row format, and of the median.

Every benchmark prints rows of one schema (bench/README.md):

    bench,impl,shm,procs,pinned,iters,metric,value,unit,spread

bench, impl, shm, metric and unit not empty, procs, pinned and iters whole
numbers, value a finite number, spread "LOW-HIGH" (either may be negative) or
empty (one measurement).  Header ("bench,..."),
comment ("#...") and blank lines are not rows.  This module parses and
validates them (parse_line, read), computes the one median (median, the
estimator of bench/common/stat.h), and is what every script uses:

    rows.py header   the schema's header line
    rows.py check [--rename NAME] [--lohi] [FILE...]   the rows of FILEs
        (stdin: -), header, comment and blank lines dropped, bench renamed
        with --rename; a malformed line is said on stderr and left out, and
        the exit status is then 1 (report.sh, bench.sh).  --lohi: the spread
        as two fields, its ends as printed (the value twice if it is empty):
        tests/check_bench.c reads rows so
    rows.py md [--pivot] [--bench NAME] FILE...   a markdown table: every row,
        or with --pivot a line per configuration and a column per metric
        ("metric (unit)"), in the order they first appear; exit 1 if no row
    rows.py apps FILE   apps.sh's apps.csv (app,NAME,INPUT,IMPL,SHM,PROCS,
        SECONDS,verified|FAILED,PINNED: one line per measured run) as rows:
        per run and implementation the median of the verified runs, the
        lowest and highest as spread
    rows.py pick METRIC... < ROWS   "impl,metric,value" of the rows of those
        metrics (ab.sh)
    rows.py ab FILE   ab.sh's lines round,build,bench,alg,metric,value: each
        bench,alg,metric's median per build (old, new) and new/old
    rows.py jobs FILE   streams.sh's lines job,build,bench,alg,metric,value:
        each bench,alg,metric's lowest, median and highest job per build, the
        highest over the lowest, and the median of the per-job new/old
"""

import csv
import math
import re
import sys
from dataclasses import dataclass

HEADER = "bench,impl,shm,procs,pinned,iters,metric,value,unit,spread"
FIELDS = tuple(HEADER.split(","))

_INT = re.compile(r"^[0-9]+$")
_NUM = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_VALUE = re.compile(rf"^{_NUM}$")
_SPREAD = re.compile(rf"^({_NUM})-({_NUM})$")


class Malformed(ValueError):
    """A line that is neither a row of the schema nor a header, comment or
    blank line."""


@dataclass
class Row:
    bench: str
    impl: str
    shm: str
    procs: int
    pinned: int
    iters: int
    metric: str
    value: float
    unit: str
    lo: float  # the spread; lo = hi = value for an empty one
    hi: float
    text: str  # the line as printed
    lo_text: str  # the spread's ends as printed (the value's text if empty)
    hi_text: str

    def fields(self):
        return self.text.split(",")


def skipped(line):
    """Is line a header, comment or blank line (no row, no error)?"""
    s = line.strip()
    return not s or s.startswith("#") or s.startswith("bench,")


def parse_line(line):
    """The Row of one line, None for a header, comment or blank line; raises
    Malformed for anything else."""
    line = line.rstrip("\r\n")
    if skipped(line):
        return None
    f = line.split(",")
    if len(f) != 10:
        raise Malformed(f"not 10 fields: {line}")
    bench, impl, shm, procs, pinned, iters, metric, value, unit, spread = f
    if not (bench and impl and shm and metric and unit):
        raise Malformed(f"an empty bench, impl, shm, metric or unit: {line}")
    if not (_INT.match(procs) and _INT.match(pinned) and _INT.match(iters)):
        raise Malformed(f"procs, pinned or iters not a whole number: {line}")
    if not _VALUE.match(value) or not math.isfinite(float(value)):
        raise Malformed(f"value not a number: {line}")
    v = float(value)
    lo_text = hi_text = value
    if spread:
        m = _SPREAD.match(spread)
        if not m:
            raise Malformed(f"spread not LOW-HIGH: {line}")
        lo_text, hi_text = m.group(1), m.group(2)
    lo, hi = sorted((float(lo_text), float(hi_text)))
    return Row(bench, impl, shm, int(procs), int(pinned), int(iters), metric, v, unit, lo, hi,
               line, lo_text, hi_text)


def read(lines, errors=None):
    """The rows of an iterable of lines; a malformed line is left out and,
    if errors is a list, its message appended to it."""
    out = []
    for line in lines:
        try:
            r = parse_line(line)
        except Malformed as e:
            if errors is not None:
                errors.append(str(e))
            continue
        if r:
            out.append(r)
    return out


def read_file(path, errors=None):
    with open(path, newline="") as f:
        return read(f, errors)


def median(values):
    """The median of a non-empty sequence (the mean of the middle two of an
    even count): bench/common/stat.c's bm_median."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def _open_all(paths):
    for p in paths or ["-"]:
        if p == "-":
            yield from sys.stdin
        else:
            with open(p, newline="") as f:
                yield from f


def cmd_check(args):
    rename, lohi = None, False
    while args[:1] in (["--rename"], ["--lohi"]):
        if args[0] == "--lohi":
            lohi, args = True, args[1:]
        else:
            rename, args = args[1], args[2:]
    errors = []
    for r in read(_open_all(args), errors):
        f = r.fields()
        if rename:
            f[0] = rename
        if lohi:
            f[9:] = [r.lo_text, r.hi_text]
        print(",".join(f))
    for e in errors:
        print(f"malformed row: {e}", file=sys.stderr)
    return 1 if errors else 0


def _md(head, align, lines):
    out = ["| " + " | ".join(head) + " |", "|" + "".join(align)]
    out += ["| " + " | ".join(l) + " |" for l in lines]
    return "\n".join(out)


def cmd_md(args):
    pivot = bench = None
    while args and args[0] in ("--pivot", "--bench"):
        if args[0] == "--pivot":
            pivot, args = True, args[1:]
        else:
            bench, args = args[1], args[2:]
    rows = [r for r in read(_open_all(args)) if bench is None or r.bench == bench]
    if not rows:
        return 1
    if not pivot:
        right = {"procs", "pinned", "iters", "value"}
        print(_md(FIELDS, ["---:|" if h in right else "---|" for h in FIELDS],
                  [r.fields() for r in rows]))
        return 0
    keys, cols, val = [], [], {}
    for r in rows:
        k = tuple(r.fields()[:5])
        c = f"{r.metric} ({r.unit})"
        keys += [k] if k not in keys else []
        cols += [c] if c not in cols else []
        val[k, c] = r.fields()[7]
    print(_md(list(FIELDS[:5]) + cols, ["---|"] * 3 + ["---:|"] * (2 + len(cols)),
              [list(k) + [val.get((k, c), "–") for c in cols] for k in keys]))
    return 0


def apps_rows(lines):
    """apps.csv's lines as rows (text): see the module's doc.  A configuration
    whose runs were not all pinned counts as unpinned."""
    order, runs = [], {}
    for f in csv.reader(lines):
        if len(f) < 9 or f[0] != "app" or f[7] != "verified":
            continue
        m = f[1] if f[1] != "con" else "con_comm" if f[2].startswith("comm") else "con_comp"
        k = (m, f[3])
        if k not in runs:
            order.append(k)
            runs[k] = {"shm": f[4], "procs": int(f[5]), "pinned": 1, "t": []}
        runs[k]["t"].append(float(f[6]))
        runs[k]["pinned"] &= f[8] == "1"
    for m, impl in order:
        c = runs[m, impl]
        t = c["t"]
        yield (f"apps,{impl},{c['shm']},{c['procs']},{int(c['pinned'])},{len(t)},{m},"
               f"{median(t):.4f},s,{min(t):.4f}-{max(t):.4f}")


def cmd_apps(args):
    with open(args[0], newline="") as f:
        for line in apps_rows(f):
            print(line)
    return 0


def cmd_pick(args):
    want = set(args)
    for r in read(sys.stdin):
        if r.metric in want:
            print(f"{r.impl},{r.metric},{r.fields()[7]}")
    return 0


def cmd_ab(args):
    vals, keys = {}, []
    with open(args[0], newline="") as f:
        for line in csv.reader(f):
            if len(line) != 6:
                continue
            _, build, *key, value = line
            key = ",".join(key)
            keys += [key] if key not in keys else []
            vals.setdefault((build, key), []).append(float(value))
    for key in sorted(keys):
        o, n = median(vals.get(("old", key), [math.nan])), median(vals.get(("new", key), [math.nan]))
        print(f"{key:<32} {o:g} {n:g} {n / o if o else math.nan:.3f}")
    return 0


def cmd_jobs(args):
    vals, keys = {}, []
    with open(args[0], newline="") as f:
        for line in csv.reader(f):
            if len(line) != 6 or line[0].startswith("#"):
                continue
            job, build, *key, value = line
            key = ",".join(key)
            keys += [key] if key not in keys else []
            vals.setdefault(key, {}).setdefault(build, {})[job] = float(value)
    for key in keys:
        by = vals[key]
        for build in ("old", "new"):
            v = list(by.get(build, {}).values())
            if v:
                lo, hi = min(v), max(v)
                print(f"{key:<32} {build} {lo:g} {median(v):g} {hi:g} "
                      f"{hi / lo if lo > 0 else math.nan:.2f}")
        both = [by["new"][j] / by["old"][j] for j in by.get("new", {})
                if by.get("old", {}).get(j)]
        if both:
            print(f"{key:<32} new/old {median(both):.3f} "
                  f"({min(both):.3f}-{max(both):.3f})")
    return 0


def cmd_header(args):
    print(HEADER)
    return 0


COMMANDS = {"header": cmd_header, "check": cmd_check, "md": cmd_md, "apps": cmd_apps, "pick": cmd_pick, "ab": cmd_ab,
            "jobs": cmd_jobs}


def main(argv):
    if len(argv) < 2 or argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    return COMMANDS[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
