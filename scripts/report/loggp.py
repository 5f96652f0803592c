"""loggp.py - the LogGP section of the report: fits, protocol switches,
LogGOPSim parameter files and the plots' data, from the rows of bench/loggp
(shmam, one impl per claim algorithm or queue kind) and bench/mpi/loggp
(MPICH).  report.py calls it; nothing here writes report.md.

Per size s the rows give rtt_s (PRTT(1,0,s)), g_s, os_s, os_prtt_s and or_s
in µs (bench/README.md, "loggp").  From them, per impl:

  L      intercept of the least-squares line through L(s) = (rtt(s) - o_s(s)
         - o_r(s) - o_s(0) - o_r(0)) / 2 over the sizes up to the first
         configured limit (the latency not spent in either overhead; the
         reply is a short message), with its standard error
  G      slope of the least-squares line through g(s) over every size >= 1
         (ns per byte), with its standard error; G per kind the same over
         each protocol's configured range
  O      slope of o_s(s) the same way (LogGOPS's overhead per byte)
  S      the switches: where a line no longer fits rtt(s) (switches())

Every fit is ordinary least squares; its error is the standard error of the
coefficient and the root-mean-square residual.
"""

import math
import os
from dataclasses import dataclass, field

# One protocol per configured range: (name, the limit row that ends it).
KINDS_SHMAM = (("bulk", "limit_bulk"), ("long", "limit_long"), ("long_at", None))
KINDS_MPI = (("eager", "limit_eager"), ("rendezvous", None))


@dataclass
class Fit:
    a: float  # intercept
    b: float  # slope
    se_a: float
    se_b: float
    rms: float  # root-mean-square residual (weighted as fitted)
    n: int


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
    return Fit(a, b, se_a, se_b, math.sqrt(rss / sw), n)


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
        if head in ("rtt", "g", "os", "os_prtt", "or") and tail.isdigit():
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
    if o0 is not None and r0 is not None:
        xs, ls = [], []
        for s in p.sizes:
            if s <= lim0 and all(s in p.v.get(m, {}) for m in ("rtt", "os", "or")):
                xs.append(s)
                ls.append((p.v["rtt"][s] - p.v["os"][s] - p.v["or"][s] - o0 - r0) / 2)
        out["L"] = lsq(xs, ls)
    out["G"] = lsq(*p.series("g", 1))
    out["O"] = lsq(*p.series("os", 1))
    out["o"], out["o_r"], out["g"] = o0, r0, p.v.get("g", {}).get(0)
    out["kinds"] = [(k, lo, hi, lsq(*p.series("g", lo, hi))) for k, lo, hi in p.kind_ranges()]
    out["configured"] = [l for _, l in p.limits if l is not None]
    return out


def ns(x, prec=0):
    return "–" if x is None else f"{x * 1e3:.{prec}f}"


def param_file(p, q, source):
    """A LogGOPSim-style parameter file for Impl p with params q: KEY=VALUE
    in ns (G and O in ns per byte), the per-kind fits and the per-size data
    as comments."""
    sw, conf = q["switches"], q["configured"]
    # S: the last configured limit (where data goes straight to the receiver's
    # memory: long_at, or MPI's rendezvous), else the last switch detected
    s = max(conf) if conf else (max(sw) if sw else 0)
    L, G, O = q.get("L"), q["G"], q["O"]
    lines = [f"# LogGOPSim parameters of {p.name}, from {source}",
             "# times in ns; G and O in ns per byte; L, G and O by least squares "
             "(value +- standard error)",
             f"L={ns(L.a if L else None, 1)}", f"o={ns(q['o'], 1)}", f"g={ns(q['g'], 1)}",
             f"G={ns(G.b if G else None, 5)}", f"O={ns(O.b if O else None, 5)}", f"S={s}",
             f"# L +- {ns(L.se_a if L else None, 1)}, G +- {ns(G.se_b if G else None, 5)}, "
             f"O +- {ns(O.se_b if O else None, 5)}; o_r={ns(q['o_r'], 1)}",
             f"# LogGOPSim -L {ns(L.a if L else None)} -o {ns(q['o'])} -g {ns(q['g'])} "
             f"-G {ns(G.b if G else None, 5)} -O {ns(O.b if O else None, 5)} -S {s}",
             "# switches detected (bytes): " + (" ".join(map(str, sw)) or "none")
             + "; configured: " + (" ".join(map(str, q["configured"])) or "none")]
    for k, lo, hi, f in q["kinds"]:
        lines.append(f"# G of {k} ({lo} .. {hi if hi != math.inf else 'max'} B): "
                     + (f"{ns(f.b, 5)} +- {ns(f.se_b, 5)} ns/B, g0 {ns(f.a, 1)} ns"
                        if f else "too few sizes"))
    lines.append("# size rtt_us g_us os_us os_prtt_us or_us")
    for z in p.sizes:
        lines.append(f"{z} " + " ".join(
            f"{p.v[m][z]:.4f}" if z in p.v.get(m, {}) else "-"
            for m in ("rtt", "g", "os", "os_prtt", "or")))
    return "\n".join(lines) + "\n"


# ---- the report's section, its plots' data and the parameter files ----

BENCHES = (("loggp", KINDS_SHMAM), ("mpi_loggp", KINDS_MPI))
QUANTILES = ("p01", "p05", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999", "max")
Q_FRACTION = (0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 0.999, 1.0)
SELF_TOL = 0.10  # the self-check's stated error: a tenth of the wait spent


def impls(rows):
    """(bench, Impl, params) of every impl that ran, shmam's then MPICH's."""
    out = []
    for bench, kinds in BENCHES:
        for i in rows.impls.get(bench, []):
            p = from_rows(rows, bench, i, kinds)
            if p:
                out.append((bench, p, params(p)))
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
    head = ["impl", "L (ns)", "o<sub>s</sub>(0) (ns)", "o<sub>r</sub>(0) (ns)", "g(0) (ns)",
            "G (ps/B)", "G per kind (ps/B)", "O (ps/B)", "switches: configured (B)"]
    out = []
    for bench, p, q in impls(rows):
        kinds = ", ".join(f"{k} {_pm(f, 'b', 1e6, 0)}" for k, _, _, f in q["kinds"])
        name = p.name if bench == "loggp" else f"MPICH ({p.name})"
        out.append([name, _pm(q.get("L"), "a"), ns(q["o"]), ns(q["o_r"]), ns(q["g"]),
                    _pm(q["G"], "b", 1e6, 0), kinds, _pm(q["O"], "b", 1e6, 0),
                    _switch_cell(q, p.sizes)])
    return _md(head, out)


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
    """out_dir/loggp/<impl>.txt (MPICH: mpich.txt) for every impl; the
    paths written."""
    d = os.path.join(out_dir, "loggp")
    written = []
    for bench, p, q in impls(rows):
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{p.name}.txt")
        with open(path, "w") as f:
            f.write(param_file(p, q, f"{bench} in {source}"))
        written.append(path)
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
    files = sorted(os.listdir(os.path.join(out, "loggp"))) if os.path.isdir(
        os.path.join(out, "loggp")) else []
    s = ["## LogGP: every message size\n",
         "Hoefler's PRTT method (netgauge's `loggp` pattern) at every size from 0 to 4 MB, "
         "each by the protocol the runtime uses for it (short, bulk to 8 KB, long through "
         "the destination's heap to `long_max`, one-copy `long_at` above), the receiver "
         "copying every message out: `loggp --algs all,channels "
         f"{a('LOGGP_ARGS')}` (every claim algorithm and per-sender kind in one job, "
         f"interleaved), MPICH by the same method (`mpi_loggp {a('MPI_LOGGP_ARGS')}`, "
         "`MPI_Send`/`MPI_Recv`). Per size: PRTT(1,0,s) (the round trip, a short reply), "
         "g(s) = (PRTT(8,0,s) − PRTT(1,0,s))/7, o<sub>s</sub>(s) each send timed alone "
         "in PRTT(8,d,s) with d = PRTT(1,0,s), o<sub>r</sub>(s) the receiver's poll that "
         "ran one message less an empty one (MPI: the `MPI_Recv` of a message already "
         "there). L: intercept of the least-squares line through (RTT(s) − o<sub>s</sub>(s) "
         "− o<sub>r</sub>(s) − o<sub>s</sub>(0) − o<sub>r</sub>(0))/2 up to the first "
         "limit; G: slope of g(s) over every size ≥ 1 B, and per protocol over its "
         "configured range; O: slope of o<sub>s</sub>(s); each ± its standard error. "
         "Switches: where one line (relative residuals) no longer fits RTT(s), against "
         "the configured limits (`AM_MAX_BULK`, the endpoint's `long_max`; MPICH's eager "
         "limit where MPI_T tells it). bench/README.md, \"loggp\", has the method and "
         "where it differs from netgauge's and GASNet's.\n",
         table(rows) + "\n",
         "Distributions from per-message timestamps (a clock read's cost taken off each), "
         "all rounds pooled; the spread of each quantile over the rounds is in the "
         "rows. µs.\n",
         distributions(rows) + "\n",
         _img(out, "loggp_sig.png", "Signature graph: overheads and gap against size "
              "and against the wait between sends")
         + _img(out, "loggp_cdf.png", "Round-trip distribution"),
         "LogGOPSim parameter files (L, o, g, G, O, S in ns; the per-size data and per "
         "protocol fits as comments): " + (", ".join(f"`loggp/{f}`" for f in files)
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
