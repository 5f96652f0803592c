"""verdict.py - the report's rows and its one verdict engine.

Rows come from all.csv, read by rows.py (the one owner of the schema of
bench/README.md).  A figure is a row's value with its spread, the lowest and
highest round (empty spread: one measurement, lowest = highest = value).

A check (paper.toml explains the form) compares a figure with a bound, a
number or a number times another figure.  Verdicts never come from comparing
two medians: a check holds when the figure's whole spread lies on the claimed
side of the bound's whole spread, fails when it lies wholly on the other
side, and is "noise" otherwise.
"""

from dataclasses import dataclass

import rows as schema

HOLDS, FAILS, NOISE, MISSING = "holds", "fails", "noise", "missing"


@dataclass
class Figure:
    value: float
    lo: float
    hi: float
    unit: str = ""
    iters: int = 0
    pinned: int = 0

    def scaled(self, x):
        lo, hi = sorted((self.lo * x, self.hi * x))
        return Figure(self.value * x, lo, hi, self.unit)


class Rows:
    """Every row of all.csv, looked up by bench, impl, procs and metric."""

    def __init__(self, path):
        self.by_key = {}  # (bench, impl, procs, metric) -> Figure
        self.any_procs = {}  # (bench, impl, metric) -> Figure (the last row)
        self.impls = {}  # bench -> impls in order of appearance
        for r in schema.read_file(path):  # malformed lines left out
            fig = Figure(r.value, r.lo, r.hi, r.unit, r.iters, r.pinned)
            self.by_key[(r.bench, r.impl, r.procs, r.metric)] = fig
            self.any_procs[(r.bench, r.impl, r.metric)] = fig
            self.impls.setdefault(r.bench, [])
            if r.impl not in self.impls[r.bench]:
                self.impls[r.bench].append(r.impl)

    def get(self, bench, impl, metric, procs=None):
        if procs is None:
            return self.any_procs.get((bench, impl, metric))
        return self.by_key.get((bench, impl, procs, metric))

    def ref(self, text):
        """A figure named "BENCH/IMPL/METRIC" or "BENCH/IMPL@PROCS/METRIC"."""
        bench, impl, metric = text.split("/")
        procs = None
        if "@" in impl:
            impl, p = impl.split("@")
            procs = int(p)
        return self.get(bench, impl, metric, procs)


def compare(a, op, bound):
    """HOLDS, FAILS or NOISE for figure `a` against bound (a Figure or a pair
    of Figures for "between")."""
    if op == "<":
        return HOLDS if a.hi < bound.lo else FAILS if a.lo >= bound.hi else NOISE
    if op == ">":
        return HOLDS if a.lo > bound.hi else FAILS if a.hi <= bound.lo else NOISE
    low, high = bound
    if a.lo >= low.hi and a.hi <= high.lo:
        return HOLDS
    if a.hi < low.lo or a.lo > high.hi:
        return FAILS
    return NOISE


@dataclass
class Outcome:
    text: str  # "a < bound", with the figures
    result: str  # HOLDS, FAILS, NOISE or MISSING


def fmt(x):
    a = abs(x)
    return f"{x:.0f}" if a >= 100 else f"{x:.1f}" if a >= 10 else f"{x:.2f}" if a >= 0.995 else f"{x:.3f}"


def fmt_fig(f):
    if f.lo == f.hi:
        return fmt(f.value)
    return f"{fmt(f.value)} ({fmt(f.lo)}–{fmt(f.hi)})"


class Engine:
    """Expands and judges the checks of paper.toml against the rows."""

    def __init__(self, rows, algs, kinds=(), paper_algs=None, lock_free=()):
        self.rows = rows
        self.algs = algs  # every claim algorithm that ran, in the one table's order
        # the paper's algorithms that ran (paper_algs: paper.toml's table1; all if not given)
        paper = [a for a in algs if paper_algs is None or a in paper_algs]
        # lock_free: the claim algorithms no lock decides (the launcher says
        # which: shmamrun --list-claims); the sets "locks" and "five" follow
        locks = [a for a in algs if a not in lock_free]
        self.sets = {
            "algs": algs,
            "paper": paper,
            "locks": locks,
            # the paper's algorithms but the mutex and lockfree (the reference of
            # the ratios these are judged by): its locks but the mutex
            "five": [a for a in locks if a in paper and a != "mutex"],
            "kinds": list(kinds),  # the per-sender queue kinds that ran
            "impls": list(algs) + list(kinds),  # both: every implementation that ran
        }
        self.runs = [r for r in ("fft", "con_comm", "con_comp", "sample")
                     if any(rows.get("apps", i, r) for i in rows.impls.get("apps", []))]

    def expand(self, check):
        """The check once per value of its each/at/run/size placeholders."""
        names = check.get("each")
        # an empty set leaves {alg} in place: its figures are "not measured"
        names = (self.sets.get(names, names) if isinstance(names, str) else names) or [None]
        procs = [w + 1 for w in check.get("at", [])] or [None]
        runs = (self.runs or [None]) if check.get("run") == "all" else [None]
        sizes = check.get("size", []) or [None]
        for n in names:
            for p in procs:
                for r in runs:
                    for z in sizes:
                        def sub(s):
                            if s is None:
                                return None
                            s = s.replace("{alg}", n) if n else s
                            s = s.replace("{procs}", str(p)) if p else s
                            s = s.replace("{size}", str(z)) if z else s
                            return s.replace("{run}", r) if r else s
                        yield dict(check, a=sub(check["a"]), b=sub(check.get("b")))

    def judge_one(self, c):
        a = self.rows.ref(c["a"])
        b = self.rows.ref(c["b"]) if c.get("b") else Figure(1, 1, 1)
        x = c.get("x", 1)
        op = c["op"]
        label = c["a"] + (f" vs {c['b']}" if c.get("b") else "")
        if a is None or b is None:
            return Outcome(f"{label}: not measured", MISSING)
        if op == "between":
            bound = (b.scaled(x[0]), b.scaled(x[1]))
            btext = f"[{fmt_fig(bound[0])}, {fmt_fig(bound[1])}]"
        else:
            bound = b.scaled(x)
            btext = fmt_fig(bound)
        res = compare(a, op, bound)
        sign = {"<": "<", ">": ">", "between": "in"}[op]
        text = f"{short(c['a'])} {fmt_fig(a)} {sign} {btext}"
        if c.get("b"):
            xs = f"{x[0]}–{x[1]}" if op == "between" else f"{x}"
            text += f" (= {xs} × {short(c['b'])})"
        return Outcome(text, res)

    def judge(self, item):
        """(verdict, outcomes) for a claim or target."""
        outs = [self.judge_one(c) for check in item["checks"] for c in self.expand(check)]
        return verdict(outs, item.get("any", False)), outs


def short(ref):
    return ref.replace("/", " ").replace("_vs_lockfree", "/lockfree")


def verdict(outs, any_=False):
    """agrees / partly / differs / within noise / no numbers, from the decided
    checks; checks without numbers are left out (and said so)."""
    res = [o.result for o in outs if o.result != MISSING]
    gap = " (some figures not measured)" if len(res) < len(outs) else ""
    if not res:
        return "no numbers"
    held, failed = res.count(HOLDS), res.count(FAILS)
    if any_:
        v = "agrees" if held else "differs" if failed == len(res) else "within noise"
    elif held == len(res):
        v = "agrees"
    elif held and failed:
        v = "partly"
    elif held:
        v = "partly (the rest within noise)"
    elif failed == len(res):
        v = "differs"
    elif failed:
        v = "differs where decided (the rest within noise)"
    else:
        v = "within noise"
    return v + gap
