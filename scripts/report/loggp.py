#!/usr/bin/python3
"""loggp.py - the LogGP section of the report: fits, protocol switches,
netgauge-layout files, the LogGOPSim export and its check, and the plots'
data, from the rows of bench/loggp (shmam, one impl per claim algorithm or
queue kind) and bench/mpi/loggp (MPICH).  report.py calls it; nothing here
writes report.md.

Per size s the rows give, in µs (bench/README.md, "loggp"): rtt_s
(PRTT(1,0,s), a reply of s bytes as netgauge's), rtt0_s (a 0-byte reply),
prttn_s, prttd_s (PRTT(n,0,s), PRTT(n,d,s)), g_s, os_s (each send timed, the
receiver waiting), os_prtt_s (netgauge's o_s), or_s (netgauge's
wait-then-receive) and or_poll_s (timed polls, the second method).  From
them, per impl:

  L      netgauge's: PRTT(1,0,1)/2 (its PRTT at the first size, 1 B)
  L_fit  intercept of the least-squares line through (rtt(s) - 2 o_s(s) -
         2 o_r(s)) / 2 over the sizes up to the first configured limit (the
         latency not spent in either overhead, each way), ± standard error
  G      slope of the least-squares line through g(s) over every size >= 1
         (ns per byte), with its standard error; per protocol the same over
         each one's configured range (netgauge's g, G, lsqu per size)
  O      slope of o_s(s) the same way (LogGOPS's overhead per byte)
  S      the switches: where a line no longer fits rtt(s) (switches())

and the LogGOPSim export (loggopsim_params): integer options in one unit,
one o = (o_s(1) + o_r(1)) / 2, L = PRTT(1,0,1)/2 - 2 o, checked by the
LogGOPSim-compatible model of loggopsim.py on a GOAL ping-pong.

`loggp.py check ROWS.csv` prints, per impl, "check IMPL RATIO MODEL_US
MEASURED_US COMMAND..." (the model's 1-byte round trip over the measured
one, and the LogGOPSim command line), for tests/check_loggp.c.
"""

import math
import os
import sys
from dataclasses import dataclass, field

import loggopsim

# One protocol per configured range: (name, the limit row that ends it).
KINDS_SHMAM = (("bulk", "limit_bulk"), ("long", "limit_long"), ("long_at", None))
KINDS_MPI = (("eager", "limit_eager"), ("rendezvous", None))
# The per-size metrics of both programs (common/loggp.h's lg_fig_name).
METRICS = ("rtt", "rtt0", "prttn", "prttd", "g", "os", "os_prtt", "or", "or_poll")


@dataclass
class Fit:
    a: float  # intercept
    b: float  # slope
    se_a: float
    se_b: float
    rms: float  # root-mean-square residual (weighted as fitted)
    n: int
    lsqu: float = 0.0  # netgauge's lsquares: sqrt(rss / (n - 2)), 0 for two points


def lsq(xs, ys, ws=None):
    """The least-squares line y = a + b x through the points, weights ws (1
    each if None); None for fewer than two distinct x.  Standard errors from
    the residuals (0 when the points are on the line or only two)."""
    n = len(xs)
    ws = ws or [1.0] * n
    sw = sum(ws)
    if n < 2 or sw <= 0:
        return None
    mx = sum(w * x for w, x in zip(ws, xs)) / sw
    my = sum(w * y for w, y in zip(ws, ys)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
    if sxx <= 0:
        return None
    b = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys)) / sxx
    a = my - b * mx
    rss = sum(w * (y - a - b * x) ** 2 for w, x, y in zip(ws, xs, ys))
    s2 = rss / (n - 2) if n > 2 else 0.0
    se_b = math.sqrt(s2 / sxx)
    se_a = math.sqrt(s2 * (1 / sw + mx * mx / sxx))
    return Fit(a, b, se_a, se_b, math.sqrt(rss / sw), n, math.sqrt(s2))


def _rel_rss(xs, ys):
    """The relative residual sum of squares of one line through the points
    (weights 1/y^2: every size counts by its relative error)."""
    f = lsq(xs, ys, [1 / (y * y) for y in ys])
    if f is None:
        return 0.0
    return sum(((y - f.a - f.b * x) / y) ** 2 for x, y in zip(xs, ys))


def segments(xs, ys, tol=0.03, max_k=4, least=3):
    """The cut of sorted points into lines: the fewest segments (of at least
    `least` points each, at most max_k) whose relative rms residual is at
    most tol, or at most twice the least any cut reaches (noise that no
    number of lines removes is no switch).  A list of (first, last) index
    pairs."""
    n = len(xs)
    if n < 2 * least or any(y <= 0 for y in ys):
        return [(0, n - 1)] if n else []
    cost = {(i, j): _rel_rss(xs[i:j + 1], ys[i:j + 1])
            for i in range(n) for j in range(i + least - 1, n)}
    # best[k][j]: (rss, cuts) of the first j + 1 points in k + 1 segments
    best = [{j: (cost[0, j], [(0, j)]) for j in range(least - 1, n)}]
    for k in range(1, max_k):
        row = {}
        for j in range((k + 1) * least - 1, n):
            cands = [(best[k - 1][i][0] + cost[i + 1, j], best[k - 1][i][1] + [(i + 1, j)])
                     for i in range(k * least - 1, j - least + 1) if i in best[k - 1]]
            if cands:
                row[j] = min(cands, key=lambda c: c[0])
        best.append(row)
    err = [math.sqrt(b[n - 1][0] / n) if n - 1 in b else math.inf for b in best]
    bound = max(tol, 2 * min(err))
    k = next(k for k, e in enumerate(err) if e <= bound)
    return best[k][n - 1][1]


def switches(xs, ys, **kw):
    """The sizes at which the cost changes line: the last size of every
    segment but the last (S of LogGOPSim: a message of more than S bytes goes
    by the next protocol)."""
    return [xs[j] for _, j in segments(xs, ys, **kw)[:-1]]


def match(detected, limit, sizes):
    """Is a detected switch at the configured limit: the limit itself, or
    (when the limit is not one of the sizes) the largest size below it?"""
    below = [s for s in sizes if s <= limit]
    return bool(below) and below[-1] in detected


@dataclass
class Impl:
    """One impl's per-size figures (µs) and configured limits (bytes)."""
    name: str
    sizes: list
    v: dict  # metric -> {size: value}
    limits: list  # (kind, limit or None), in order
    extra: dict = field(default_factory=dict)

    def series(self, m, lo=0, hi=math.inf):
        pts = [(s, self.v[m][s]) for s in self.sizes if lo <= s <= hi and s in self.v.get(m, {})]
        return [p[0] for p in pts], [p[1] for p in pts]

    def kind_ranges(self):
        """(kind, first size, last size) of each protocol above 0 bytes."""
        out, lo = [], 1
        for kind, lim in self.limits:
            out.append((kind, lo, lim if lim is not None else math.inf))
            lo = (lim or 0) + 1
        return out


def from_rows(rows, bench, impl, kinds):
    """The Impl of bench/impl from verdict.Rows, None if it has no sizes."""
    v, sizes = {}, set()
    for (b, i, _, m), f in rows.by_key.items():
        if b != bench or i != impl:
            continue
        head, _, tail = m.rpartition("_")
        if head in METRICS and tail.isdigit():
            v.setdefault(head, {})[int(tail)] = f.value
            sizes.add(int(tail))
    if not sizes:
        return None
    limits = []
    for kind, row in kinds:
        f = rows.get(bench, impl, row) if row else None
        if row and f is None:
            continue
        limits.append((kind, int(f.value) if f else None))
    if len(limits) == 1:  # no limit known: one range, every size
        limits = [("all sizes", None)]
    return Impl(impl, sorted(sizes), v, limits)


def params(p):
    """LogGP(OS) parameters of Impl p: a dict of Fits and figures (µs)."""
    out = {}
    xs, ys = p.series("rtt", 1)
    out["switches"] = switches(xs, ys)
    # L's fit ends at the first limit: configured, else detected, else 8 KB
    lim0 = next((l for _, l in p.limits if l is not None),
                out["switches"][0] if out["switches"] else 8192)
    o0, r0 = p.v.get("os", {}).get(0), p.v.get("or", {}).get(0)
    xs, ls = [], []
    for s in p.sizes:
        if s <= lim0 and all(s in p.v.get(m, {}) for m in ("rtt", "os", "or")):
            xs.append(s)
            ls.append((p.v["rtt"][s] - 2 * p.v["os"][s] - 2 * p.v["or"][s]) / 2)
    out["L_fit"] = lsq(xs, ls)
    one = first_size(p)
    out["L"] = p.v["rtt"][one] / 2 if one is not None else None
    out["G"] = lsq(*p.series("g", 1))
    out["O"] = lsq(*p.series("os", 1))
    out["o"], out["o_r"], out["g"] = o0, r0, p.v.get("g", {}).get(0)
    out["one"] = one
    out["kinds"] = [(k, lo, hi, lsq(*p.series("g", lo, hi))) for k, lo, hi in p.kind_ranges()]
    out["configured"] = [l for _, l in p.limits if l is not None]
    return out


def first_size(p):
    """netgauge's first size: 1 B if measured with a round trip, else the
    smallest above 0; None if there is none."""
    got = [z for z in p.sizes if z >= 1 and z in p.v.get("rtt", {})]
    return got[0] if got else None


def ns(x, prec=0):
    return "–" if x is None else f"{x * 1e3:.{prec}f}"


TRIPS = 10  # round trips of the GOAL ping-pong


def eager_limit(p, q):
    """LogGOPSim's S (bytes) and how it was chosen: the last configured limit
    (shmam: long_max, above which long_at writes the receiver's memory; MPICH:
    the eager limit UCX_RNDV_THRESH set), else the last switch found, else
    (no switch found: every size measured went eagerly) the largest size."""
    if q["configured"]:
        return max(q["configured"]), "the configured limit"
    if q["switches"]:
        return max(q["switches"]), "the last switch found in RTT(s) (eager up to it)"
    return max(p.sizes), "no switch found: the largest size measured"


def loggopsim_params(p, q):
    """The LogGOPSim export of Impl p with params q: a dict with the integer
    options (L o g G O S), their unit, the notes (clamps, choices), the
    command line, the GOAL ping-pong and the model's round trip against the
    measured one.  None without a 1-byte round trip, o_s and o_r.

    o = (o_s(1) + o_r(1)) / 2 (LogGOPSim has one o, paid at both ends of a
    message: 2 o = o_s + o_r), L = PRTT(1,0,1)/2 - 2 o (so that the model's
    round trip 2 L + 4 o is the measured one); g = g(1); G, O the slopes.
    A negative value is said and clamped to 0; when L would be negative
    (over shared memory the overheads overlap the transfer: the receiver's
    wait-then-receive includes the cache misses that carry the message) L is
    0 and o = PRTT(1,0,1)/4, which keeps the round trip.  Unit: ps when
    G < 1 ns/B (else G and O vanish when rounded), else ns."""
    one = q.get("one")
    if one is None or any(one not in p.v.get(m, {}) for m in ("rtt", "os", "or")):
        return None
    rtt, os_, or_ = p.v["rtt"][one], p.v["os"][one], p.v["or"][one]  # µs
    notes = []
    G = q["G"].b if q["G"] else 0.0
    O = q["O"].b if q["O"] else 0.0
    g = p.v.get("g", {}).get(one, 0.0)
    o = (os_ + or_) / 2
    L = rtt / 2 - 2 * o
    if L < 0:
        notes.append(f"L = PRTT(1,0,{one})/2 − (o_s + o_r) = {L * 1e3:.1f} ns < 0: L clamped "
                     f"to 0 and o = PRTT(1,0,{one})/4 (o_s + o_r = {(os_ + or_) * 1e3:.1f} ns "
                     f"exceeds RTT/2 = {rtt * 1e3 / 2:.1f} ns: the overheads overlap the "
                     "transfer)")
        L, o = 0.0, rtt / 4
    for name, v in (("g", g), ("G", G), ("O", O)):
        if v < 0:
            notes.append(f"{name} = {v * 1e3:.4g} ns{'/B' if name != 'g' else ''} < 0 by its "
                         "fit: clamped to 0")
    g, G, O = max(g, 0.0), max(G, 0.0), max(O, 0.0)
    S, why = eager_limit(p, q)
    notes.append(f"S = {S} B: {why}")
    unit, scale = ("ps", 1e6) if G * 1e3 < 1 else ("ns", 1e3)
    ints = {"L": round(L * scale), "o": round(o * scale), "g": round(g * scale),
            "G": round(G * scale), "O": round(O * scale), "S": int(S)}
    goal = loggopsim.pingpong(1, TRIPS)
    argv = ["-f", f"{p.name}.bin"] + [x for k in loggopsim.OPTIONS
                                      for x in (f"-{k}", str(ints[k]))]
    back = loggopsim.parse_command(argv)  # the line as the simulator's parser reads it
    model = loggopsim.simulate(loggopsim.parse_goal(goal),
                               *(back[k] for k in loggopsim.OPTIONS)) / TRIPS / scale
    # the model's round trip is of 1-byte messages: compare with PRTT(1,0,1)
    return {"ints": ints, "unit": unit, "notes": notes, "argv": argv, "goal": goal,
            "model": model, "measured": rtt, "ratio": model / rtt if rtt > 0 else math.nan,
            "o_rule": "o = (o_s + o_r)/2", "one": one}


def command(x):
    return "LogGOPSim " + " ".join(x["argv"])


def kind_fit(q, s):
    """The fit of g(s) of the protocol range that holds size s (0: the first)."""
    for k, lo, hi, f in q["kinds"]:
        if lo <= max(s, 1) <= hi:
            return f
    return q["G"]


def param_file(p, q, source):
    """Impl p's file: netgauge's loggp layout (one line per size, µs) with
    the LogGOPSim export, L_fit and shmam's own figures as comments."""
    x = loggopsim_params(p, q)
    Lf, G, O = q.get("L_fit"), q["G"], q["O"]
    n = int(q.get("prtt_n") or 8)
    lines = [f"# LogGP of {p.name}, from {source}: netgauge's loggp layout (µs)",
             "# L is netgauge's, PRTT(1,0,1)/2; o_s netgauge's, (PRTT(n,d,s) - PRTT(1,0,s))/(n-1)"
             " - d with d = PRTT(1,0,s); o_r by wait-then-receive (netgauge's); g, G the"
             " least-squares line of (PRTT(n,0,s) - PRTT(1,0,s))/(n-1) over s's protocol range,"
             " lsqu its residual"]
    if x:
        lines += [f"# LogGOPSim (times in {x['unit']}, G and O in {x['unit']}/B; "
                  f"{x['o_rule']}, L = PRTT(1,0,1)/2 - 2 o): "
                  f"txt2bin -i {p.name}.goal -o {p.name}.bin && {command(x)}",
                  f"# its model's 1-byte round trip (loggopsim.py, {p.name}.goal): "
                  f"{x['model']:.4f} us against {x['measured']:.4f} measured "
                  f"({x['ratio']:.3f}x)"]
        lines += [f"# note: {t}" for t in x["notes"]]
    lines.append(f"# L_fit (intercept of (RTT(s) - 2 o_s(s) - 2 o_r(s))/2) = "
                 f"{ns(Lf.a if Lf else None, 1)} +- {ns(Lf.se_a if Lf else None, 1)} ns; "
                 f"G = {ns(G.b if G else None, 5)} +- {ns(G.se_b if G else None, 5)} ns/B; "
                 f"O = {ns(O.b if O else None, 5)} +- {ns(O.se_b if O else None, 5)} ns/B")
    lines.append("# switches detected (bytes): " + (" ".join(map(str, q["switches"])) or "none")
                 + "; configured: " + (" ".join(map(str, q["configured"])) or "none"))
    lines.append("# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)")
    v = p.v
    for z in p.sizes:
        f = kind_fit(q, z)
        cols = [v.get(m, {}).get(z) for m in ("rtt", "prttn", "prttd")]
        cols += [q.get("L"), v.get("os_prtt", {}).get(z), v.get("or", {}).get(z),
                 f.a if f else None, f.b if f else None, f.lsqu if f else None]
        lines.append(f"{z} {n} " + " ".join("-" if c is None else f"{c:.6f}" for c in cols))
    lines.append("# shmam's own per size (µs): size o_s(timed sends, receiver waiting) "
                 "o_r(timed polls, second method) PRTT(1,0,s) with a 0-byte reply")
    for z in p.sizes:
        lines.append("#  " + f"{z} " + " ".join(
            "-" if v.get(m, {}).get(z) is None else f"{v[m][z]:.4f}"
            for m in ("os", "or_poll", "rtt0")))
    return "\n".join(lines) + "\n"


# ---- the report's section, its plots' data and the parameter files ----

BENCHES = (("loggp", KINDS_SHMAM), ("mpi_loggp", KINDS_MPI))
QUANTILES = ("p01", "p05", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999", "max")
Q_FRACTION = (0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 0.999, 1.0)
SELF_TOL = 0.10  # the self-check's stated error: a tenth of the wait spent
MODEL_TOL = 0.10  # the LogGOPSim model's round trip within a tenth of the measured one


def impls(rows):
    """(bench, Impl, params) of every impl that ran, shmam's then MPICH's."""
    out = []
    for bench, kinds in BENCHES:
        for i in rows.impls.get(bench, []):
            p = from_rows(rows, bench, i, kinds)
            if p:
                q = params(p)
                for k, m in (("prtt_n", "prtt_n"), ("dropped", "rounds_dropped"),
                             ("judged", "rounds_dropped"), ("or_late", "or_late")):
                    f = rows.get(bench, i, m)
                    q[k] = None if f is None else (f.iters if k == "judged" else f.value)
                out.append((bench, p, q))
    return out


def _f(x, prec=3):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{prec}f}"


def _pm(fit, coef, scale=1e3, prec=1):
    if fit is None:
        return "–"
    v, e = (fit.a, fit.se_a) if coef == "a" else (fit.b, fit.se_b)
    return f"{v * scale:.{prec}f} ± {e * scale:.{prec}f}"


def _switch_cell(q, sizes):
    if not q["configured"] and not q["switches"]:
        return "–"
    parts = []
    for lim in q["configured"]:
        parts.append(f"{lim}: " + ("found" if match(q["switches"], lim, sizes) else "not found"))
    other = [s for s in q["switches"]
             if not any(s == max([z for z in sizes if z <= l] or [-1]) for l in q["configured"])]
    if other:
        parts.append("also at " + ", ".join(map(str, other)))
    return "; ".join(parts)


def table(rows):
    """The LogGP table: a line per impl."""
    head = ["impl", "L (ns, netgauge's)", "L<sub>fit</sub> (ns)", "o<sub>s</sub>(1) (ns)",
            "o<sub>r</sub>(1) (ns)", "o<sub>r</sub>(1) by polls (ns)", "g(1) (ns)",
            "G (ps/B)", "G per kind (ps/B)", "O (ps/B)", "switches: configured (B)",
            "rounds left out"]
    out = []
    for bench, p, q in impls(rows):
        kinds = ", ".join(f"{k} {_pm(f, 'b', 1e6, 0)}" for k, _, _, f in q["kinds"])
        name = p.name if bench == "loggp" else f"MPICH ({p.name})"
        one = q.get("one")
        at = lambda m: p.v.get(m, {}).get(one) if one is not None else None
        drop = ("–" if q.get("dropped") is None
                else f"{q['dropped']:.0f} of {q['judged']}")
        out.append([name, ns(q.get("L")), _pm(q.get("L_fit"), "a"), ns(at("os")), ns(at("or")),
                    ns(at("or_poll")), ns(at("g")), _pm(q["G"], "b", 1e6, 0), kinds,
                    _pm(q["O"], "b", 1e6, 0), _switch_cell(q, p.sizes), drop])
    return _md(head, out)


def export_table(rows):
    """The LogGOPSim export and its check: a line per impl."""
    head = ["impl", "LogGOPSim command line", "unit", "model RTT (µs)", "measured RTT (µs)",
            "model / measured", "notes"]
    out, verdicts = [], []
    for bench, p, q in impls(rows):
        x = loggopsim_params(p, q)
        if x is None:
            continue
        ok = abs(x["ratio"] - 1) <= MODEL_TOL
        verdicts.append(ok)
        out.append([p.name if bench == "loggp" else f"MPICH ({p.name})", f"`{command(x)}`",
                    x["unit"], f"{x['model']:.4f}", f"{x['measured']:.4f}",
                    f"{x['ratio']:.3f}" + ("" if ok else " ✗"), "; ".join(x["notes"])])
    return _md(head, out), (sum(verdicts), len(verdicts))


def distributions(rows):
    """Quantiles of the round trip and of o_s, per impl, beside the median of
    round means."""
    head = ["impl", "size", "RTT mean (median of rounds)", "RTT p50", "p90", "p99", "p99.9",
            "max", "o<sub>s</sub> mean", "o<sub>s</sub> p50", "p99", "p99.9", "max"]
    out = []
    for bench, p, _ in impls(rows):
        g = lambda m: rows.get(bench, p.name, m)
        r50 = g("rtt_p50")
        if r50 is None:
            continue
        size = g("sig_size")
        z = int(size.value) if size else 0
        v = lambda m: _f(g(m).value) if g(m) else "–"
        out.append([p.name if bench == "loggp" else f"MPICH ({p.name})", f"{z} B",
                    _f(p.v.get("rtt", {}).get(z))] + [v(f"rtt_{q}") for q in
                                                      ("p50", "p90", "p99", "p999", "max")]
                   + [_f(p.v.get("os", {}).get(z))]
                   + [v(f"os_{q}") for q in ("p50", "p99", "p999", "max")])
    return _md(head, out)


def selfcheck(rows):
    """The self-check's table: per impl and size, how much o_s and o_r grew
    against the wait injected (its own clock reads' time spent beside it),
    and whether within SELF_TOL of the injected wait."""
    out, verdicts = [], []
    for impl in rows.impls.get("loggp_selfcheck", []):
        g = lambda m: rows.get("loggp_selfcheck", impl, m)
        sizes = sorted({int(k[3].rpartition("_")[2]) for k in rows.by_key
                        if k[0] == "loggp_selfcheck" and k[1] == impl
                        and k[3].rpartition("_")[2].isdigit()})
        asked = (g("send_injected"), g("recv_injected"))
        for z in sizes:
            cells = [impl, f"{z} B"]
            for grow, want, spent in ((g(f"os_grow_{z}"), asked[0], g(f"send_spent_{z}")),
                                      (g(f"or_grow_{z}"), asked[1], g(f"recv_spent_{z}"))):
                if grow is None or want is None or want.value <= 0:
                    cells += ["–", "–", "–"]
                    continue
                err = (grow.value - want.value) / want.value
                ok = abs(err) <= SELF_TOL
                verdicts.append(ok)
                cells += [f"{want.value:.0f} ({'–' if spent is None else f'{spent.value:.0f}'})",
                          f"{grow.value:.0f} <sub>{grow.lo:.0f}–{grow.hi:.0f}</sub>",
                          f"{100 * err:+.1f} %" + ("" if ok else " ✗")]
            rt = g(f"rtt_grow_{z}")
            both = asked[0].value + asked[1].value if all(asked) else None
            cells.append("–" if rt is None or both is None else f"{rt.value:.0f} of {both:.0f}")
            out.append(cells)
    if not out:
        return "(the self-check did not run)", None
    head = ["impl", "size", "send wait (spent), ns", "o<sub>s</sub> grew (ns)", "error",
            "handler wait (spent), ns", "o<sub>r</sub> grew (ns)", "error",
            "RTT grew (ns) of both waits"]
    return _md(head, out), (sum(verdicts), len(verdicts))


def _md(head, lines):
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2)
           + ("---|" if len(head) > 1 else "")]
    out += ["| " + " | ".join(l) + " |" for l in lines]
    return "\n".join(out)


def write_params(rows, out_dir, source):
    """out_dir/loggp/<impl>.txt (netgauge's layout, the LogGOPSim line) and
    <impl>.goal (its ping-pong) for every impl (MPICH: mpich.*); the paths
    written."""
    d = os.path.join(out_dir, "loggp")
    written = []
    for bench, p, q in impls(rows):
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{p.name}.txt")
        with open(path, "w") as f:
            f.write(param_file(p, q, f"{bench} in {source}"))
        written.append(path)
        x = loggopsim_params(p, q)
        if x:
            with open(os.path.join(d, f"{p.name}.goal"), "w") as f:
                f.write(x["goal"])
            written.append(os.path.join(d, f"{p.name}.goal"))
    return written


def plotdata(rows, d, pick="lockfree"):
    """loggp_size.dat (o_s, o_r, g of `pick` and MPICH against size),
    loggp_sig.dat (the signature sweep against the wait between sends) and
    loggp_cdf.dat (fraction, then every impl's round-trip quantile)."""
    got = {(b, p.name): p for b, p, _ in impls(rows)}
    shm = got.get(("loggp", pick)) or next((p for (b, _), p in got.items() if b == "loggp"),
                                           None)
    mpi = next((p for (b, _), p in got.items() if b == "mpi_loggp"), None)
    cols = [(n, p, m) for n, p in ((shm.name if shm else "", shm), ("MPICH", mpi)) if p
            for m in ("os", "or", "g")]
    sizes = sorted({s for _, p, _ in cols for s in p.sizes if s > 0})
    with open(f"{d}/loggp_size.dat", "w") as f:
        f.write("bytes " + " ".join(f'"{n} {m}"' for n, _, m in cols) + "\n")
        for z in sizes:
            f.write(f"{z} " + " ".join(
                repr(p.v[m][z]) if z in p.v.get(m, {}) and p.v[m][z] > 0 else "-"
                for _, p, m in cols) + "\n")
    with open(f"{d}/loggp_sig.dat", "w") as f:
        f.write('wait "per message" "o_s" "o_r"\n')
        for dl in (0, 250, 500, 1000, 2000, 4000):
            g = lambda m: rows.get("loggp", shm.name if shm else "", f"{m}_{dl}")
            if g("sig_wait") and g("sig_t"):
                f.write(f"{g('sig_wait').value} " + " ".join(
                    "-" if g(m) is None else repr(g(m).value)
                    for m in ("sig_t", "sig_os", "sig_or")) + "\n")
    names = [(b, n) for b, n in got if rows.get(b, n, "rtt_p50")]
    with open(f"{d}/loggp_cdf.dat", "w") as f:
        f.write("fraction " + " ".join(f'"{n if b == "loggp" else "MPICH"}"' for b, n in names)
                + "\n")
        for q, frac in zip(QUANTILES, Q_FRACTION):
            f.write(f"{frac} " + " ".join(
                "-" if rows.get(b, n, f"rtt_{q}") is None else repr(rows.get(b, n, f"rtt_{q}").value)
                for b, n in names) + "\n")
    return len(names)


def _img(out, name, text):
    p = os.path.join(out, name)
    return f"![{text}]({name})\n\n" if os.path.exists(p) and os.path.getsize(p) else ""


def section(rows, out, args):
    """The report's LogGP section (markdown), its heading included; args:
    report.sh's run record (LOGGP_ARGS, LOGGP_SELF_ARGS, MPI_LOGGP_ARGS)."""
    a = lambda k: args.get(k) or "(defaults)"
    check, tally = selfcheck(rows)
    etable, etally = export_table(rows)
    files = sorted(os.listdir(os.path.join(out, "loggp"))) if os.path.isdir(
        os.path.join(out, "loggp")) else []
    s = ["## LogGP: every message size\n",
         "Hoefler's PRTT method (netgauge's `loggp` pattern) at every size from 0 to 4 MB, "
         "each by the protocol the runtime uses for it (short, bulk to 8 KB, long through "
         "the destination's heap to `long_max`, one-copy `long_at` above), the receiver "
         "copying every message out: `loggp --algs all,channels "
         f"{a('LOGGP_ARGS')}` (every claim algorithm and per-sender kind in one job, "
         f"interleaved), MPICH by the same method (`mpi_loggp {a('MPI_LOGGP_ARGS')}`, "
         "`MPI_Send`/`MPI_Recv`). Per size, each PRTT the median of its bursts: PRTT(1,0,s) "
         "(the round trip, a reply of s bytes as netgauge's; a 0-byte reply is the labelled "
         "variant `rtt0`), g(s) = (PRTT(8,0,s) − PRTT(1,0,s))/7, netgauge's o<sub>s</sub>(s) "
         "= (PRTT(8,d,s) − PRTT(1,0,s))/7 − d with d = PRTT(1,0,s), and a second "
         "PRTT(8,d,s) in which the receiver makes no library call between messages: it "
         "waits (clock reads only, to the sender's schedule) and then times the receive of "
         "a message already there (o<sub>r</sub>, netgauge's wait-then-receive; shmam: "
         "the `am_poll` that runs it), while the sender times each send alone "
         "(o<sub>s</sub>, the median). The older estimate of o<sub>r</sub> (a spinning "
         "receiver's poll that ran one message less an empty one; MPI: the `MPI_Recv` "
         "after `MPI_Iprobe` saw the message) is the column \"by polls\". L is "
         "netgauge's, PRTT(1,0,1)/2; L<sub>fit</sub> the intercept of the least-squares "
         "line through (RTT(s) − 2 o<sub>s</sub>(s) − 2 o<sub>r</sub>(s))/2 up to the "
         "first limit; G: slope of g(s) over every size ≥ 1 B, and per protocol over its "
         "configured range; O: slope of o<sub>s</sub>(s); each ± its standard error. "
         "Switches: where one line (relative residuals) no longer fits RTT(s), against "
         "the configured limits (`AM_MAX_BULK`, the endpoint's `long_max`; MPICH's eager "
         "limit where `UCX_RNDV_THRESH` sets it). A round with a PRTT more than "
         "2× off the rounds' median at its size is left out (the benchmark says which in "
         "a comment); the last column counts them. bench/README.md, \"loggp\", has the "
         "method beside netgauge's and LogGOPSim's.\n",
         table(rows) + "\n",
         "Distributions from per-message timestamps (a clock read's cost taken off each), "
         "all rounds pooled; the spread of each quantile over the rounds is in the "
         "rows. µs.\n",
         distributions(rows) + "\n",
         _img(out, "loggp_sig.png", "Signature graph: overheads and gap against size "
              "and against the wait between sends")
         + _img(out, "loggp_cdf.png", "Round-trip distribution"),
         "**LogGOPSim.** The command line per impl (integer options only, one unit: ps "
         "when G < 1 ns/B), from the 1-byte figures: o = (o<sub>s</sub> + o<sub>r</sub>)/2 "
         "(LogGOPSim has one o, paid at both ends of a message), L = PRTT(1,0,1)/2 − 2 o, "
         "g = g(1), G and O the slopes, S the configured eager limit or else the last "
         "switch found; a negative value is said and clamped to 0 (L < 0: L = 0, "
         "o = PRTT(1,0,1)/4). Each impl's `loggp/<impl>.goal` is a ping-pong of "
         f"{TRIPS} round trips of 1 B (`txt2bin -i <impl>.goal -o <impl>.bin` makes the "
         "simulator's input); the report's own LogGOPSim-compatible model "
         "(`scripts/report/loggopsim.py`) runs it with the line's options, and its round "
         f"trip is checked against the measured PRTT(1,0,1) (within {100 * MODEL_TOL:.0f} %"
         + (f"; {etally[0]} of {etally[1]} within it" if etally[1] else "") + ").\n",
         etable + "\n",
         "netgauge-layout files (`size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,d,s) L o_s o_r g "
         "G lsqu`, µs, the LogGOPSim line and shmam's own figures as comments): "
         + (", ".join(f"`loggp/{f}`" for f in files if f.endswith(".txt"))
            or "none written") + ".\n",
         "**Self-check.** `loggp --selfcheck " + a("LOGGP_SELF_ARGS") + "`: at one or "
         "two sizes per protocol, each round measures the size with no injected wait and "
         "with a busy wait in every send (`--inject-send-ns`) and in the receiver's "
         "handler (`--inject-recv-ns`), in ABBA order; the growth of o<sub>s</sub> and "
         "o<sub>r</sub> (median of the per-round differences) against the wait injected "
         "(in brackets the mean time the waits took by their own clock reads, "
         "preemptions included). The stated error: within "
         f"{100 * SELF_TOL:.0f} % of the injected wait"
         + (f"; {tally[0]} of {tally[1]} recovered within it" if tally else "")
         + ". The round trip grows by both waits when no preemption hits its rounds.\n",
         check + "\n"]
    return "\n".join(s)


def main(argv):
    """loggp.py check ROWS.csv: the export's check per impl (module doc)."""
    if len(argv) != 3 or argv[1] != "check":
        print("usage: loggp.py check ROWS.csv", file=sys.stderr)
        return 2
    import verdict
    n = 0
    for bench, p, q in impls(verdict.Rows(argv[2])):
        x = loggopsim_params(p, q)
        if x:
            print(f"check {p.name} {x['ratio']:.4f} {x['model']:.4f} {x['measured']:.4f} "
                  f"{command(x)}")
            n += 1
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
