#!/usr/bin/env python3
"""report.py - report.md, its sections one by one, and the plots' data, from
all.csv and paper.toml: the one program that writes report.md.

    report.py ALL_CSV PAPER_TOML table1|table2|locks|delivery
    report.py ALL_CSV PAPER_TOML oneway     bandwidth one way, 64 B .. 4 MB
    report.py ALL_CSV PAPER_TOML floors     flood and copy at 8 KB beside their floors
    report.py ALL_CSV PAPER_TOML heap       the shared heap against Boost.Interprocess
    report.py ALL_CSV PAPER_TOML spsc       the SPSC rings against Boost.Lockfree and ck
    report.py ALL_CSV PAPER_TOML channels   per-sender channels or shared queues
    report.py ALL_CSV PAPER_TOML clumps     clusters of SMPs: the hybrid transport
    report.py ALL_CSV PAPER_TOML rpc        calls against sockets, a pipe, ZeroMQ, rings
    report.py ALL_CSV PAPER_TOML targets    shmam's targets, judged
    report.py ALL_CSV PAPER_TOML findings   the paper's conclusions, judged
    report.py ALL_CSV PAPER_TOML consistency    the figures' own relations, judged
    report.py ALL_CSV PAPER_TOML bench-check    all of them; exit 1 if one fails
                                                or has no numbers (make bench-check)
    report.py ALL_CSV PAPER_TOML plotdata DIR   logp.dat stress.dat bw.dat oneway.dat locks.dat rpc.dat,
                                                loggp_*.dat and the LogGOPSim files
                                                DIR/loggp/*.txt (loggp.py)
    report.py ALL_CSV PAPER_TOML report DIR     DIR/report.md, every section, the one
                                                writer of it (run.txt, failures.txt,
                                                plots and apps.sh's tables from DIR)
    report.py writers                           the stress test's writer counts

Every figure is printed with its spread (lowest–highest round) and every row
names its method.  The claim algorithms and per-sender queue kinds are those
that ran (rtt's rows, in the order the benchmark printed them, which is
am_claim_names' then am_queue_names'); which names are queue kinds the
launcher says ($SHMAMRUN --list-queues, default build/bin/shmamrun; report.sh
sets it), and which claim algorithms take no lock too ($SHMAMRUN
--list-claims: NAME<TAB>locked or lock-free); nothing here lists them.  Which
the paper had, paper.toml's tables say (the others get a dash in the paper's
tables).  Verdicts come from verdict.py alone; rows and medians from rows.py.
"""

import os
import subprocess
import sys
import tomllib

import locks as lockreport
import loggp
import rows as schema
from verdict import FAILS, HOLDS, MISSING, NOISE, Engine, Figure, Rows, fmt

DASH = "–"
WRITERS = (1, 3, 7)
SHARED = "mpsc"  # the queue kind of the claim algorithms: many-to-one, shared


def ask_launcher(option):
    """What `$SHMAMRUN option` prints (one of the launcher's lists); "", said
    on stderr, if it cannot be asked."""
    run = os.environ.get("SHMAMRUN", "build/bin/shmamrun")
    try:
        return subprocess.run([run, option], capture_output=True, text=True, check=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        print(f"report.py: cannot ask {run} {option} ({e})", file=sys.stderr)
        return ""


def queue_kinds():
    """The per-sender queue kinds the launcher knows (`shmamrun --list-queues`,
    the one list, less the shared queues)."""
    return [k for k in ask_launcher("--list-queues").split() if k != SHARED]


def lock_free_claims(text):
    """The claim algorithms of `shmamrun --list-claims`'s output text (lines
    NAME<TAB>locked or NAME<TAB>lock-free) that no lock decides."""
    return [f[0] for f in (l.split("\t") for l in text.splitlines())
            if len(f) == 2 and f[1] == "lock-free"]


def cell(f, scale=1.0):
    """A figure as "value <sub>lo–hi</sub>", or a dash."""
    if f is None:
        return DASH
    f = f.scaled(scale)
    if f.lo == f.hi:
        return fmt(f.value)
    return f"{fmt(f.value)} <sub>{fmt(f.lo)}–{fmt(f.hi)}</sub>"


def size_name(z):
    """64 B, 8 KB, 4 MB."""
    for unit, b in (("MB", 1 << 20), ("KB", 1 << 10)):
        if z >= b and z % b == 0:
            return f"{z // b} {unit}"
    return f"{z} B"


def table(head, rows):
    """Markdown; numbers right-aligned, a last column of text ("method" or
    unnamed) left-aligned."""
    last = "---|" if head[-1] in ("method", "") else "---:|"
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + last]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def tally(outs):
    """ "k of n checks hold, ...: " when there are several."""
    if len(outs) < 2:
        return ""
    res = [o.result for o in outs]
    parts = [f"{res.count(r)} {w}" for r, w in (("holds", "hold"), ("fails", "fail"),
                                                  ("noise", "within noise"),
                                                  ("missing", "not measured")) if res.count(r)]
    return f"of {len(outs)} checks, " + ", ".join(parts) + ": "


class Report:
    def __init__(self, csv_path, paper_path):
        self.rows = Rows(csv_path)
        with open(paper_path, "rb") as f:
            self.paper = tomllib.load(f)
        known = self.rows.impls.get("rtt", []) or self.rows.impls.get("logp", [])
        kinds = queue_kinds()
        self.algs = [a for a in known if a != "raw" and a not in kinds]
        self.kinds = [a for a in known if a in kinds]  # per-sender kinds that ran
        self.cols = self.algs + self.kinds  # Tables 1 and 2: claims, then channels
        self.lock_free = lock_free_claims(ask_launcher("--list-claims"))
        self.engine = Engine(self.rows, self.algs, self.kinds, self.paper["table1"]["algs"],
                             self.lock_free)

    def get(self, *a, **k):
        return self.rows.get(*a, **k)

    # ---- Table 1 ----
    def table1(self):
        A = self.cols
        mp = lambda m: self.get("mpi_pingpong", "mpich", m)
        lines = []

        def row(label, bench, metric, mpich=None, method="", scale=1.0):
            cells = [cell(self.get(bench, a, metric), scale) for a in A]
            lines.append([label] + cells + [cell(mpich, scale) if mpich else DASH, method])

        row("Latency L = RTT/2 − o<sub>s</sub> − o<sub>r</sub>", "logp", "L",
            method="logp, o<sub>r</sub> by poll timing")
        row("Latency L, Culler's sweep", "logp", "L_sweep", method="logp, o<sub>r</sub> by the sweep")
        row("Send overhead o<sub>s</sub>", "logp", "os", method="logp, bursts of 8, clock cost taken off")
        row("Receive overhead o<sub>r</sub>, poll timing", "logp", "or",
            method="logp: a poll that ran one message − an empty poll (rank 1)")
        row("Receive overhead o<sub>r</sub>, Culler's sweep", "logp", "or_sweep",
            method="logp: send, delay Δ, poll; slope-1 intercept − o<sub>s</sub>")
        row("Gap g, request + reply", "logp", "g", mp("g_reply_4B"),
            "stream, each request answered; MPICH the same with 4-byte messages")
        row("Gap g, one way", "logp", "g_oneway", mp("g_oneway_4B"),
            "stream of one-way messages; MPICH a flood of 4-byte MPI_Isend")
        lines.append(["*g one way, slowest / fastest round*"]
                     + [self.spread_cell(self.get("logp", a, "g_oneway")) for a in A]
                     + [DASH, "logp, highest round over lowest: about 2 when a round fell into "
                        "lockstep (bench/README.md, two regimes; across jobs: scripts/streams.sh)"])
        row("**Round trip**, one-word request", "rtt", "am_rtt", mp("rtt_4B"),
            "rtt; MPICH 4-byte ping-pong (separate job)")
        row("Round trip in logp's run", "logp", "rtt", method="logp, same job as o<sub>s</sub>, o<sub>r</sub>")
        raw = self.get("rtt", "raw", "raw_rtt")
        lines.append(["Raw cache-line ping-pong"] + [cell(raw)] + [DASH] * len(A[1:]) + [DASH,
                     "rtt, interleaved with every algorithm's rounds"])
        row("*RTT / raw ping-pong*", "rtt", "am_vs_raw", method="rtt, per-round ratio (in-run)")
        row("*RTT / lockfree's*", "rtt", "am_rtt_vs_lockfree", method="rtt, per-round ratio (in-run)")
        rtt4 = mp("rtt_4B")
        lines.append(["*RTT / MPICH's 4-byte RTT*"]
                     + [cell(self.ratio(self.get("rtt", a, "am_rtt"), rtt4)) for a in A]
                     + [DASH, "separate jobs: medians' quotient, spread from the extremes"])
        row("Peak bulk bandwidth, request/reply, MB/s", "logp", "bulk_peak_MBps",
            mp("bw_8192_MBps"),
            "logp 8 KB request/reply stream (each message answered); MPICH 8 KB windows, "
            "one ack each (one way: see Bandwidth, one way)")
        row("Memory copy rate, MB/s", "logp", "memcpy_mem_MBps",
            method="8 KB memcpy chunks through 64 MB buffers (out of cache), rank 0")
        row("memcpy of 8 KB in L1, MB/s", "logp", "memcpy_MBps_8192",
            method="private 8 KB buffers, warm")
        row("memcpy of 8 KB just written by the other core, MB/s", "logp", "copy_fresh_MBps_8192",
            method="a bulk reply's block, copied by its handler")
        row("*Bulk request/reply / memory copy rate*", "logp", "bulk_vs_memcpy",
            method="logp, per-round ratio (the paper: about 0.8)")
        head = ["µs"] + A + ["MPICH", "method"]
        return table(head, lines) + self.columns_note() + "\n\n" + self.paper_table1()

    def columns_note(self):
        """Which columns are claim algorithms the paper did not have, and which
        per-sender channel kinds, if any ran."""
        out = ""
        new = [a for a in self.algs if a not in self.paper["table1"]["algs"]]
        if new:
            out += ("\n\nColumn" + ("s " if len(new) > 1 else " ")
                    + ", ".join(f"{a} ({'lock-free' if a in self.lock_free else 'a lock'})"
                                for a in new)
                    + (": claim algorithms" if len(new) > 1 else ": a claim algorithm")
                    + " the paper did not have (`shmamrun --list-claims`; no paper value).")
        if self.kinds:
            out += ("\n\nColumns " + ", ".join(self.kinds) + ": per-sender channels (queue "
                    "kinds of the runtime, no claim algorithm; defaults 64 packets and 4 bulk "
                    "blocks per channel), in the same job as the claim algorithms' shared queues.")
        return out

    def spread_cell(self, f):
        """A figure's highest round over its lowest, or a dash."""
        return DASH if f is None or f.lo <= 0 else fmt(f.hi / f.lo)

    def ratio(self, a, b):
        if a is None or b is None or b.value == 0 or b.lo <= 0:
            return None
        return Figure(a.value / b.value, a.lo / b.hi, a.hi / b.lo)

    def paper_table(self, t, keys, head):
        """A table of the paper's (paper.toml's table1 or table2): one column per
        claim algorithm that ran, in the measured tables' order, then any of the
        paper's that did not; a dash where the paper has no value (an algorithm
        it did not have), said under the table."""
        cols = self.algs + [a for a in t["algs"] if a not in self.algs]
        rows = []
        for key, label in keys:
            paper = dict(zip(t["algs"], t[key]))
            rows.append([label] + [str(paper[a]) if a in paper else DASH for a in cols] + [""])
        new = [a for a in cols if a not in t["algs"]]
        note = (f"\n\n{DASH}: not in the paper ({', '.join(new)})." if new else "")
        return table([head] + cols + [""], rows) + note

    def paper_table1(self):
        names = {"L": "L", "os": "o<sub>s</sub>", "or": "o<sub>r</sub>", "g": "g", "rtt": "RTT"}
        return ("The paper's Table 1 (Sun Enterprise 5000, 167 MHz UltraSPARC), µs:\n\n"
                + self.paper_table(self.paper["table1"], names.items(), "µs"))

    # ---- one-way bandwidth ----
    ONEWAY = (("bulk", "bw_copy"), ("long", "long_copy"), ("long_at", "longat_copy"))

    def oneway_sizes(self):
        """The sizes bw or mpi_bw measured, ascending."""
        out = set()
        for k in self.rows.by_key:
            for bench, pre in (("bw", "raw_copy_MBps_"), ("mpi_bw", "mpi_bw_MBps_")):
                if k[0] == bench and k[3].startswith(pre) and k[3][len(pre):].isdigit():
                    out.add(int(k[3][len(pre):]))
        return sorted(out)

    def oneway(self):
        """MB/s of the copy streams, the floor and MPICH per size; then the
        ratios: in-run to the floor, across jobs to MPICH."""
        sizes = self.oneway_sizes()
        if not sizes:
            return "(no rows: bw and mpi_bw did not run)"
        alg = "lockfree"
        bw = lambda m, z: self.get("bw", alg, f"{m}_MBps_{z}")
        mpi = lambda z: self.get("mpi_bw", "mpich", f"mpi_bw_MBps_{z}")
        lines, ratios = [], []
        for z in sizes:
            lines.append([size_name(z)] + [cell(bw(m, z)) for _, m in self.ONEWAY]
                         + [cell(mpi(z)), cell(self.get("bw", "raw", f"raw_copy_MBps_{z}")), ""])
            ratios.append([size_name(z)]
                          + [cell(self.get("bw", alg, f"{m.replace('bw_', '')}_vs_raw_{z}"))
                             for _, m in self.ONEWAY]
                          + [cell(self.ratio(bw(m, z), mpi(z))) for _, m in self.ONEWAY] + [""])
        head = (["MB/s"] + [f"shmam {k}" for k, _ in self.ONEWAY]
                + ["MPICH osu_bw, window 64", "raw floor", ""])
        rhead = (["ratio"] + [f"{k} / floor (in-run)" for k, _ in self.ONEWAY]
                 + [f"{k} / MPICH (separate jobs)" for k, _ in self.ONEWAY] + [""])
        return table(head, lines) + "\n\n" + table(rhead, ratios)

    def floors(self):
        """Bulk flood and copy at 8 KB beside their floors, with the in-run ratios."""
        lines = []
        for mode, what in (("flood", "flood: the handler does not touch the data"),
                           ("copy", "copy: the handler copies the data out")):
            lines.append([what, cell(self.get("bw", "lockfree", f"bw_{mode}_MBps_8192")),
                          cell(self.get("bw", "raw", f"raw_{mode}_MBps_8192")),
                          cell(self.get("bw", "lockfree", f"{mode}_vs_raw_8192")), ""])
        return table(["8 KB, one way", "shmam bulk, MB/s", "raw floor, MB/s",
                      "bulk / floor (in-run)", ""], lines)

    # ---- Table 2 ----
    def table2(self):
        A = self.cols
        lines, stalls = [], []
        for w in WRITERS:
            p = w + 1
            cells = []
            for a in A + ["unbound"]:
                f = (self.get("stress_unbound", "lockfree", "s_per_1e6", p) if a == "unbound"
                     else self.get("stress", a, "s_per_1e6", p))
                cells.append(cell(f))
                if f and f.hi > 2 * f.value:
                    stalls.append(f"{a} at {w} writer{'s' if w > 1 else ''}: slowest run "
                                  f"{fmt(f.hi)} s against a median of {fmt(f.value)} s")
            m = self.get("mpi_stress", "mpich", "s_per_1e6", p)
            mu = self.get("mpi_stress_unbound", "mpich", "s_per_1e6", p)
            lines.append([f"{w} writer{'s' if w > 1 else ''}"] + cells[:-1] + [cell(m), cells[-1],
                                                                                cell(mu)])
        for w in WRITERS:
            lines.append([f"*/ lockfree, {w} w. (in-run)*"]
                         + [cell(self.get("stress", a, "s_per_1e6_vs_lockfree", w + 1)) for a in A]
                         + [DASH, DASH, DASH])
        for w in WRITERS:
            lines.append([f"*messages per poll, {w} w.*"]
                         + [cell(self.get("stress", a, "msgs_per_poll", w + 1)) for a in A]
                         + [DASH, cell(self.get("stress_unbound", "lockfree", "msgs_per_poll", w + 1)),
                            DASH])
        head = ["s per 10⁶ integers"] + A + ["MPICH, pinned, yielding", "lockfree, unbound",
                                            "MPICH, unbound (spins)"]
        out = table(head, lines) + self.columns_note()
        if stalls:
            out += ("\n\nRuns slower than twice their median (a stall or a convoy in one "
                    "run): " + "; ".join(stalls) + ".")
        keys = [(str(w), f"{w} writer{'s' if w > 1 else ''}") for w in WRITERS]
        return (out + "\n\nThe paper's Table 2 (10⁶ integers, one process per processor), "
                "seconds:\n\n" + self.paper_table(self.paper["table2"], keys, "seconds"))

    # ---- locks and delivery ----
    def locks(self):
        return lockreport.section(self, cell, table)  # scripts/report/locks.py

    def heap(self):
        """heapbench: alloc+free throughput of shmam's heap and Boost.Interprocess's
        per process count, the in-run ratio, and what each leaves reserved per
        byte live."""
        procs = sorted({k[2] for k in self.rows.by_key
                        if k[0] == "heapbench" and k[3] == "heap_ops_per_s"})
        lines = []
        for p in procs:
            g = lambda impl, m: self.get("heapbench", impl, m, p)
            lines.append([str(p), cell(g("shmam", "heap_ops_per_s"), 1e-6),
                          cell(g("boost", "heap_ops_per_s"), 1e-6),
                          cell(g("shmam", "shmam_vs_boost")),
                          cell(g("shmam", "frag_reserved_over_live")),
                          cell(g("boost", "frag_reserved_over_live"))])
        meta = self.get("heapbench", "shmam", "meta_KB", 0)
        return table(["processes", "shmam M ops/s", "Boost M ops/s", "shmam / Boost",
                      "shmam reserved / live", "Boost reserved / live"], lines) + (
            f"\n\nshmam's fixed metadata (superblock states, block headers, FIFOs): "
            f"{cell(meta)} KB of the segment, outside `reserved`." if meta else "")

    def spsc(self):
        """spscbench: the SPSC rings (spsc/) and the two baselines, streaming ns per
        8-byte item and round trip, with the in-run ratios to Boost."""
        impls = self.rows.impls.get("spscbench", [])
        lines = []
        for k in impls:
            g = lambda m: self.get("spscbench", k, m, 2)
            lines.append([k, cell(g("ns_per_item")),
                          "1" if k == "boost" else cell(g(f"{k}_vs_boost")),
                          cell(g("rtt_ns")),
                          "1" if k == "boost" else cell(g(f"{k}_rtt_vs_boost"))])
        return table(["ring", "ns / item", "/ Boost", "round trip, ns", "/ Boost"], lines)

    # ---- RPC (bench/rpcbench) ----
    RPC_TESTS = (("rtt_8B", "8-byte round trip, µs", 1.0),
                 ("tput_32", "32 in flight, 10³ calls/s", 1e-3),
                 ("echo_4KB", "4 KB echo, µs", 1.0),
                 ("echo_64KB", "64 KB echo, µs", 1.0))
    RPC_RATIOS = (("call", "rtt_vs_unix_stream", "blocking call / Unix stream socket, 8-byte round trip"),
                  ("call", "echo_4KB_vs_unix_stream", "blocking call / Unix stream socket, 4 KB echo"),
                  ("call", "echo_64KB_vs_unix_stream", "blocking call / Unix stream socket, 64 KB echo"),
                  ("call", "tput_vs_best_alt", "blocking calls / the fastest alternative, 32 in flight"),
                  ("call_poll", "tput_vs_best_alt", "polling calls / the fastest alternative, 32 in flight"),
                  ("call", "rtt_vs_eventfd_ring", "blocking call / eventfd-ring floor, 8-byte round trip"),
                  ("call_poll", "rtt_vs_spin_ring", "polling call / spin-ring floor, 8-byte round trip"),
                  ("call", "tput_vs_spin_ring", "blocking calls / spin-ring floor, 32 in flight"),
                  ("call_poll", "tput_vs_spin_ring", "polling calls / spin-ring floor, 32 in flight"),
                  ("call", "rtt_vs_call_poll", "blocking call / polling call, 8-byte round trip"))

    def rpc(self):
        """rpcbench: every transport's four figures, the in-run ratios, and
        the RPC targets judged."""
        impls = self.rows.impls.get("rpcbench", [])
        if not impls:
            return "(not measured)"
        lines = [[i] + [cell(self.get("rpcbench", i, m), k) for m, _, k in self.RPC_TESTS]
                 for i in impls]
        ratios = [[text, cell(self.get("rpcbench", i, m))] for i, m, text in self.RPC_RATIOS]
        targets = [t for t in self.paper["target"] if t.get("section") == "rpc"]
        return (table(["transport"] + [t for _, t, _ in self.RPC_TESTS], lines) + "\n\n"
                + "In-run ratios (per-round quotients):\n\n" + table(["ratio", ""], ratios)
                + "\n\nThe targets (also under Targets):\n\n"
                + "\n".join(self.target_line(t) for t in targets))

    # ---- services for other users (bench/rdvbench) ----
    def rdv(self):
        """rdvbench: a call by name beside one through the socket (the door
        an other-user caller uses), their in-run ratios, and the connects."""
        if not self.rows.impls.get("rdvbench"):
            return "(not measured)"
        g = lambda i, m: self.get("rdvbench", i, m)
        lines = [[i, cell(g(i, "rtt_8B")), cell(g(i, "tput_32"), 1e-3)]
                 for i in ("by_name", "by_socket")]
        lines.append(["by_socket / by_name", cell(g("by_socket", "rtt_vs_by_name")),
                      cell(g("by_socket", "tput_vs_by_name"))])
        conn = [[i, cell(g(i, "connect_us"))] for i in ("connect", "unix_connect")]
        return (table(["caller", "8-byte round trip, µs", "32 in flight, 10³ calls/s"], lines)
                + "\n\n" + table(["connect", "µs"], conn))

    # ---- Python (python/bench/pyrpc.py) ----
    def python(self):
        """pyrpc: each transport's round trip and 32-in-flight rate, and shmam's
        in-run ratios to the others."""
        impls = self.rows.impls.get("pyrpc", [])
        others = [i for i in impls if not i.startswith("shmam")]
        lines = []
        for i in impls:
            g = lambda m: self.get("pyrpc", i, m)
            ratios = [cell(g(f"rtt_vs_{o}")) if i.startswith("shmam") else DASH for o in others]
            lines.append([i, cell(g("rtt")), cell(g("inflight32"))] + ratios)
        if not lines:
            return "(not measured)"
        return table(["transport", "round trip, µs", "32 in flight, 10³ calls/s"]
                     + [f"round trip / {o}" for o in others], lines)

    # ---- per-sender channels or shared queues ----
    VS_LOCKFREE = (("RTT", "rtt", "am_rtt_vs_lockfree", None, "<"),
                   ("g (request + reply)", "logp", "g_vs_lockfree", None, "<"),
                   ("o<sub>s</sub>", "logp", "os_vs_lockfree", None, "<"),
                   ("bulk peak (8 KB)", "logp", "bulk_peak_MBps_vs_lockfree", None, ">"),
                   ("stress 1 writer", "stress", "s_per_1e6_vs_lockfree", 2, "<"),
                   ("stress 3 writers", "stress", "s_per_1e6_vs_lockfree", 4, "<"),
                   ("stress 7 writers", "stress", "s_per_1e6_vs_lockfree", 8, "<"))
    POLLS = (("poll_one", "A poll that ran one message (one sender active, a message per 2 µs), ns"),
             ("poll_idle", "An idle poll (nobody has sent lately), ns"),
             ("poll_recent", "An empty poll right after every sender sent one message, ns"))

    def numbered(self, bench, prefix):
        """The numbers N of bench's metrics PREFIX<N>, ascending."""
        return sorted({int(k[3][len(prefix):]) for k in self.rows.by_key
                       if k[0] == bench and k[3].startswith(prefix) and k[3][len(prefix):].isdigit()})

    def judged(self, a, op, x=1, b=None):
        """One check through the verdict engine: its Outcome."""
        return self.engine.judge_one({"a": a, "op": op, "x": x, "b": b})

    def channels(self):
        """Per-sender channel kinds against the shared queues: in-run ratios of
        Tables 1 and 2, pollcost's polls and memory, the paper's section-5
        claims judged, and what follows from them."""
        pk = self.rows.impls.get("pollcost", [])
        if not self.kinds and not pk:
            return "(no rows: no per-sender queue kind ran)"
        out = [self.chan_ratios()]
        for metric, title in self.POLLS:
            out.append(f"{title}, against the senders registered (`pollcost`):\n\n"
                       + self.chan_polls(pk, metric))
        out.append("An idle poll of an endpoint with a table of T senders (max_senders), none "
                   "registered, ns (`pollcost`: what the table itself costs an idle poll):\n\n"
                   + self.chan_polls(pk, "poll_idle_table", "table"))
        out.append("Bytes of a fresh endpoint's segment (defaults, `pollcost`), MiB, against "
                   "the table of senders (max_senders):\n\n" + self.chan_memory(pk))
        claims = [c for c in self.paper["claim"] if c["section"] == "5"]
        out.append("The paper's remarks on separate queues (section 5), judged:\n\n"
                   + "\n".join(self.claim_line(c) for c in claims))
        out.append("**When each wins, in this run** (every comparison through the verdict "
                   "engine: decided only when the spreads do not overlap):\n\n" + self.chan_when())
        return "\n\n".join(out)

    def chan_ratios(self):
        lines = []
        for k in self.kinds:
            lines.append([k] + [cell(self.get(bench, k, m, p)) for _, bench, m, p, _ in self.VS_LOCKFREE]
                         + [""])
        return ("Each per-sender kind over lockfree (the shared queues' lock-free claim), "
                "per-round quotients in the jobs of Tables 1 and 2 (below 1: the channel "
                "is faster; for bulk bandwidth above 1):\n\n"
                + table(["/ lockfree"] + [t for t, *_ in self.VS_LOCKFREE] + [""], lines))

    def chan_polls(self, kinds, metric, what="senders"):
        lines = []
        for n in self.numbered("pollcost", f"{metric}_ns_"):
            lines.append([str(n)] + [cell(self.get("pollcost", k, f"{metric}_ns_{n}")) for k in kinds]
                         + [""])
        return table([what] + kinds + [""], lines)

    def chan_memory(self, kinds):
        sizes = self.numbered("pollcost", "seg_bytes_")
        mib = lambda k, n: self.get("pollcost", k, f"seg_bytes_{n}")
        lines = [[str(n)] + [cell(mib(k, n), 1 / 2**20) for k in kinds] + [""] for n in sizes]
        if len(sizes) > 1:
            lo, hi = sizes[0], sizes[-1]
            per = []
            for k in kinds:
                a, b = mib(k, lo), mib(k, hi)
                per.append(DASH if a is None or b is None else fmt((b.value - a.value) / (hi - lo) / 1024))
            lines.append([f"*KiB per sender, {lo} → {hi}*"] + per + [""])
        return table(["senders"] + kinds + [""], lines)

    def chan_when(self):
        """Bullets: where the channels win, where the shared queues do, from
        the engine's outcomes of single comparisons; then the two together."""
        one, o_win, o_lose = self.chan_when_messages("One to one (two processes, two CPUs)",
                                                     self.VS_LOCKFREE[:5])
        many, m_win, m_lose = self.chan_when_messages(
            "Many to one (3 and 7 writers: more processes than CPUs)", self.VS_LOCKFREE[5:])
        polls, poll_hold = self.chan_when_polls()
        mem, mem_hold = self.chan_when_memory()
        say = lambda l: "; ".join(l) if l else "nowhere in this run"
        per_kind = lambda a, b: [f"{k} ({', '.join(a.get(k, []) + b.get(k, []))})"
                                 for k in self.kinds if a.get(k) or b.get(k)]
        lose = [f"message times against {k}" for k in per_kind(o_lose, m_lose)]
        so = (f"**So**, in this run per-sender channels beat the shared queue in: "
              f"{say(per_kind(o_win, m_win))}. The paper's shared queues hold for: "
              + say(mem_hold + poll_hold + lose) + ".")
        return "\n".join(f"- {b}" for b in (one, many, polls, mem, so) if b)

    def chan_when_messages(self, label, measures):
        """Per kind, the measures on which it beats lockfree, loses, ties; the
        bullet, and the wins and losses per kind."""
        lines, wins, losses = [], {}, {}
        for k in self.kinds:
            by = {HOLDS: [], FAILS: [], NOISE: []}
            for title, bench, m, p, op in measures:
                ref = f"{bench}/{k}{'@' + str(p) if p else ''}/{m}"
                o = self.judged(ref, op)
                if o.result in by:
                    by[o.result].append(f"{title} {fmt(self.rows.ref(ref).value)}×")
            if not any(by.values()):
                continue
            lines.append(f"  - {k}: better in {', '.join(by[HOLDS]) or 'none'}; worse in "
                         f"{', '.join(by[FAILS]) or 'none'}; within noise: {', '.join(by[NOISE]) or 'none'}")
            wins[k], losses[k] = by[HOLDS], by[FAILS]
        if not lines:
            return "", {}, {}
        return (f"**{label}**, each kind over lockfree (in-run):\n" + "\n".join(lines),
                wins, losses)

    def chan_when_polls(self):
        """Polls at the most senders against one sender and against mpsc; the
        bullet and where the shared queues hold."""
        ns = self.numbered("pollcost", "poll_recent_ns_")
        if not ns or not self.kinds:
            return "", []
        n, hold = ns[-1], []
        g = lambda k, m: self.get("pollcost", k, m)
        flat = [k for k in self.kinds if self.judged(f"pollcost/{k}/poll_idle_vs_1_{n}", ">", 2).result == FAILS]
        grow = [k for k in self.kinds if self.judged(f"pollcost/{k}/poll_recent_vs_1_{n}", ">", 2).result == HOLDS]
        recent = ", ".join(f"{k} {cell(g(k, f'poll_recent_ns_{n}'))} ns ({cell(g(k, f'poll_recent_vs_mpsc_{n}'))}× mpsc's)"
                           for k in self.kinds)
        one = ", ".join(f"{k} {cell(g(k, f'poll_one_vs_mpsc_{ns[0]}'))}×" for k in self.kinds)
        if grow:
            hold.append(f"polling once many senders have been active ({', '.join(grow)}: an empty poll "
                        f"at least twice as dear with {n} senders as with one)")
        slower = [k for k in self.kinds
                  if self.judged(f"pollcost/{k}/poll_one_vs_mpsc_{ns[0]}", ">", 1).result == HOLDS]
        if slower:
            hold.append(f"receiving one message ({', '.join(slower)}: a poll that runs it dearer than mpsc's)")
        text = (f"**Polling**: an idle poll with {n} registered senders costs less than twice its cost with "
                f"one for {', '.join(flat) or 'no kind'} (the summary bits: nobody active, nothing looked at; "
                f"mpsc {cell(g(SHARED, f'poll_idle_ns_{n}'))} ns). An empty poll right after all {n} sent: "
                f"{recent}, mpsc {cell(g(SHARED, f'poll_recent_ns_{n}'))} ns; each channel active in the last "
                f"64 polls is looked at. A poll that runs one message, over mpsc's with {ns[0]} sender: {one}.")
        tables = self.numbered("pollcost", "poll_idle_table_ns_")
        if tables:
            t = tables[-1]
            big = [k for k in self.kinds
                   if self.judged(f"pollcost/{k}/poll_idle_table_vs_mpsc_{t}", ">", 2).result == HOLDS]
            text += (f" An idle poll with a table of {t} senders: "
                     + ", ".join(f"{k} {cell(g(k, f'poll_idle_table_ns_{t}'))} ns "
                                 f"({cell(g(k, f'poll_idle_table_vs_mpsc_{t}'))}× mpsc's)" for k in self.kinds)
                     + f", mpsc {cell(g(SHARED, f'poll_idle_table_ns_{t}'))} ns.")
            if big:
                hold.append(f"idle polling of large tables ({', '.join(big)}: at least twice mpsc's "
                            f"with {t} senders' room)")
        return text, hold

    def chan_when_memory(self):
        """From how many senders up every channel kind's segment outweighs
        mpsc's; the bullet and where the shared queues hold."""
        sizes = self.numbered("pollcost", "seg_bytes_")
        if not sizes or not self.kinds:
            return "", []
        heavier = [n for n in sizes
                   if all(self.judged(f"pollcost/{k}/seg_bytes_{n}", ">", 1,
                                      f"pollcost/{SHARED}/seg_bytes_{n}").result == HOLDS for k in self.kinds)]
        top = sizes[-1]
        xs = []
        for k in self.kinds:
            r = self.ratio(self.get("pollcost", k, f"seg_bytes_{top}"), self.get("pollcost", SHARED, f"seg_bytes_{top}"))
            xs += [f"{k} {fmt(r.value)}×"] if r else []
        if not heavier or any(n not in heavier for n in sizes if n >= heavier[0]):
            return "**Memory**: no table size from which every channel kind is larger.", []
        lighter = [n for n in sizes if n < heavier[0]]
        text = (f"**Memory**: every channel kind's endpoint is larger than the shared queues' from "
                f"{heavier[0]} senders up ({top}: {', '.join(xs)} mpsc's)"
                + (f"; smaller with {' or '.join(map(str, lighter))}." if lighter else "."))
        return text, [f"memory from {heavier[0]} senders up"]

    def delivery(self):
        lines = []
        for a in self.algs:
            s = self.get("demo_many", a, "short_msgs_per_s")
            b = self.get("demo_many", a, "bulk_MBps")
            if s or b:
                lines.append([a, cell(s), cell(b), ""])
        return table(["algorithm", "short msgs/s", "bulk MB/s (8 KB)", ""], lines)

    # ---- clusters of SMPs ----
    CLUMPS_PATHS = (("intra", "within the node, the job's endpoint (hybrid), rank 0 ↔ 1"),
                    ("plain", "within the node, named endpoints (shared memory alone), 0 ↔ 1"),
                    ("cross", "across nodes, the job's endpoint (MPI underneath), 0 ↔ 2"),
                    ("mpi", "across nodes, MPI's own calls, 0 ↔ 2"))
    CLUMPS_RATIOS = (("intra", "plain"), ("cross", "mpi"))
    # shmam's streams: the prefix of their kinds (bw_<prefix><path>_MBps_<n>,
    # bw_<prefix><a>_vs_<b>_<n>) and what they are; the first is judged
    CLUMPS_STREAMS = (
        ("longat_", "One-copy streams, MB/s: shmam's `am_request_long_at` into the "
         "receiver's region, whose handler checks the data in place, against MPI's "
         "osu_bw receiving into the application's buffers: one copy for the application "
         "on both sides, like with like (the target is judged on these); ratios per "
         "round (in-run)"),
        ("", "For information, the copy streams: `bw`'s (bulk to 8 KB, long above), "
         "whose handler copies every message out into the application's buffers, one "
         "copy more than osu_bw's receives; the same MPI streams; ratios per round "
         "(in-run)"))
    APP_RUNS = (("fft", "3-D FFT"), ("con_comm", "CON/comm"), ("con_comp", "CON/comp"),
                ("sample", "SAMPLE"), ("sample_batched", "SAMPLE/batched"))
    HYBRID = ("hybrid_1node", "hybrid_2nodes")

    def clumps(self):
        """The hybrid transport: round trip and bandwidth per path (clumps,
        in-run ratios), the applications on one node and on two (apps.sh's
        hybrid runs beside shmamrun's lockfree and MPICH), and the targets."""
        impls = [i for i in self.rows.impls.get("clumps", []) if i != "mpich"]
        out = []
        if impls:
            out += [self.clumps_rtt(impls[0]), self.clumps_bw(impls[0])]
        else:
            out.append("(no rows: clumps did not run)")
        out.append(self.clumps_apps())
        targets = [t for t in self.paper["target"] if t.get("section") == "clumps"]
        out.append("The targets (also under Targets):\n\n"
                   + "\n".join(self.target_line(t) for t in targets))
        return "\n\n".join(out)

    def clumps_get(self, impl, path, metric):
        return self.get("clumps", "mpich" if path == "mpi" else impl, metric)

    def clumps_rtt(self, impl):
        lines = []
        for path, what in self.CLUMPS_PATHS:
            r = [cell(self.get("clumps", impl, f"rtt_{a}_vs_{b}")) if a == path else DASH
                 for a, b in self.CLUMPS_RATIOS]
            lines.append([what, cell(self.clumps_get(impl, path, f"rtt_{path}"))] + r + [""])
        return ("Round trip of a one-word request (MPI: a 4-byte ping-pong), µs; "
                "ratios per round (in-run):\n\n"
                + table(["round trip", "µs", "/ shared memory alone", "/ MPI's own", ""], lines))

    def clumps_bw(self, impl):
        """The one-copy streams (judged) and the copy streams (for information),
        each with MPI's osu_bw, per size; then the copy streams against the
        target's bound, as information."""
        sizes = self.numbered("clumps", "bw_mpi_MBps_")
        if not sizes:
            return "(no bandwidth rows)"
        head = ["MB/s", "hybrid, within", "shared memory alone", "hybrid, across",
                "MPI's own", "within / alone", "across / MPI", ""]
        out = []
        for pre, title in self.CLUMPS_STREAMS:
            kind = lambda p: p if p == "mpi" else pre + p
            lines = [[size_name(z)]
                     + [cell(self.clumps_get(impl, p, f"bw_{kind(p)}_MBps_{z}"))
                        for p, _ in self.CLUMPS_PATHS]
                     + [cell(self.get("clumps", impl, f"bw_{pre}{a}_vs_{b}_{z}"))
                        for a, b in self.CLUMPS_RATIOS] + [""] for z in sizes]
            out.append(f"{title}:\n\n" + table(head, lines))
        by = {HOLDS: [], FAILS: [], NOISE: []}
        for z in sizes:
            o = self.judged(f"clumps/{impl}/bw_cross_vs_mpi_{z}", ">", 0.9)
            if o.result in by:
                by[o.result].append(size_name(z))
        say = lambda l: ", ".join(l) or "none"
        out.append("The copy streams across nodes against the target's bound, for "
                   "information (not judged as the target): at least 0.9 × MPI's at "
                   f"{say(by[HOLDS])}; below at {say(by[FAILS])}; within noise at "
                   f"{say(by[NOISE])}.")
        return "\n\n".join(out)

    def clumps_apps(self):
        """The applications: shmamrun's lockfree (Table 4), the hybrid runtime
        on one node and on two, MPICH; quotients across jobs; judged."""
        runs = [(r, t) for r, t in self.APP_RUNS
                if any(self.get("apps", i, r) for i in self.HYBRID)]
        if not runs:
            return "Applications: (no hybrid runs: apps/hyb_* not built or not run)"
        procs = sorted({k[2] for k in self.rows.by_key
                        if k[0] == "apps" and k[1] in self.HYBRID})
        p = procs[-1] if procs else 0
        g = lambda impl, r: self.get("apps", impl, r)
        lines, verdicts = [], {HOLDS: [], FAILS: [], NOISE: []}
        for r, title in runs:
            lines.append([title, cell(g("lockfree", r)), cell(g("hybrid_1node", r)),
                          cell(g("hybrid_2nodes", r)), cell(g("mpich", r)),
                          cell(self.ratio(g("hybrid_1node", r), g("lockfree", r))),
                          cell(self.ratio(g("hybrid_2nodes", r), g("mpich", r))), ""])
            o = self.judged(f"apps/hybrid_2nodes/{r}", "<", 1, f"apps/mpich/{r}")
            if o.result in verdicts:
                verdicts[o.result].append(title)
        mpi = g("mpich", runs[0][0])
        mpi_head = "MPICH" + ("" if mpi is None else " (pinned)" if mpi.pinned else " (unbound)")
        say = lambda l: ", ".join(l) or "none"
        return (f"The applications at P = {p} (`scripts/apps.sh`, the runs of Table 4, "
                "implementations interleaved ABBA), seconds: shmamrun's lockfree, the hybrid "
                f"runtime as one node of {p} (`SHMAM_NODE_SIZE={p}`) and as two virtual nodes "
                f"of {p // 2} (messages between the halves through MPI), ranks pinned as "
                "shmamrun's; MPICH's own port. Quotients of medians across jobs, spread "
                "from the extremes:\n\n"
                + table(["seconds", "shmamrun lockfree", "hybrid, 1 node",
                         "hybrid, 2 nodes", mpi_head, "1 node / shmamrun",
                         "2 nodes / MPICH", ""], lines)
                + f"\n\nThe hybrid runtime on two nodes against MPICH (verdict engine, "
                f"separate jobs): faster in {say(verdicts[HOLDS])}; slower in "
                f"{say(verdicts[FAILS])}; within noise in {say(verdicts[NOISE])}.")

    # ---- judged sections ----
    def target_line(self, t):
        """A target, judged: met, missed, within noise or not measured."""
        v, outs = self.engine.judge(t)
        res = [o.result for o in outs]
        word = ("not measured" if v == "no numbers" else "missed" if "fails" in res
                else "met" if v.startswith("agrees") else "within noise")
        return (f"- **{word}** — {t['title']}: " + tally(outs)
                + "; ".join(o.text + f" ({o.result})" for o in outs))

    def targets(self):
        return "\n".join(self.target_line(t) for t in self.paper["target"])

    def consistency_lines(self):
        """(line, outcomes) per consistency check of paper.toml, judged."""
        for c in self.paper.get("consistency", []):
            v, outs = self.engine.judge(c)
            line = (f"- **{c['title']}** *{v}.* " + tally(outs)
                    + "; ".join(f"{o.text} ({o.result})" for o in outs) + ".")
            yield (line + (f" ({c['note']})" if c.get("note") else "")), outs

    def consistency(self):
        """The consistency checks this run measured (the others are counted)."""
        out, left = [], 0
        for line, outs in self.consistency_lines():
            if all(o.result == MISSING for o in outs):
                left += 1
            else:
                out.append(line)
        if left:
            out.append(f"({left} not measured in this run; `make bench-check` runs them all.)")
        return "\n".join(out)

    def bench_check(self):
        """Every consistency check, and whether each failed or had no numbers."""
        out, bad = [], 0
        for line, outs in self.consistency_lines():
            out.append(line)
            bad += any(o.result in (FAILS, MISSING) for o in outs)
        out.append(f"bench-check: {bad} of {len(out)} relations failed or not measured")
        return "\n".join(out), bad

    def findings(self):
        out, section = [], None
        heads = {"4.1": "LogP microbenchmarks (paper 4.1)", "4.2": "Stress test (paper 4.2)",
                 "4.3": "Applications (paper 4.3)"}
        for c in self.paper["claim"]:
            if c["section"] == "5":
                continue  # separate queues: the section on channels judges them
            if c["section"] != section:
                section = c["section"]
                out.append(f"### {heads.get(section, section)}\n")
            out.append(self.claim_line(c) + "\n")
        return "\n".join(out)

    def claim_line(self, c):
        """A claim of the paper, judged: title, verdict, the paper's words, ours."""
        v, outs = self.engine.judge(c)
        here = tally(outs) + "; ".join(f"{o.text} ({o.result})" for o in outs)
        s = f"- **{c['title']}** *{v}.* The paper: {c['paper']} Here: {here}."
        if c.get("note"):
            s += f" ({c['note']})"
        if c.get("machine"):
            s += " *Not testable as the paper ran it on this machine: it needs one process per processor.*"
        return s

    # ---- plot data ----
    def plotdata(self, d):
        A = self.cols
        v = lambda f: "-" if f is None else repr(f.value)
        mp = lambda m: self.get("mpi_pingpong", "mpich", m)
        with open(f"{d}/logp.dat", "w") as f:
            f.write("param " + " ".join(A) + " MPICH\n")
            for name, m, mpi in (("L", "L", None), ("o_s", "os", None), ("o_r", "or", None),
                                 ("g", "g", "g_reply_4B"), ("RTT", "rtt", "rtt_4B")):
                f.write(name + " " + " ".join(v(self.get("logp", a, m)) for a in A)
                        + " " + (v(mp(mpi)) if mpi else "-") + "\n")
        with open(f"{d}/stress.dat", "w") as f:
            f.write("writers " + " ".join(A) + " MPICH\n")
            for w in WRITERS:
                f.write(f"{w} " + " ".join(v(self.get("stress", a, "s_per_1e6", w + 1)) for a in A)
                        + " " + v(self.get("mpi_stress", "mpich", "s_per_1e6", w + 1)) + "\n")
        sizes = sorted({int(k[3][7:]) for k in self.rows.by_key
                        if k[0] == "logp" and k[3].startswith("bulk_t_") and k[3][7:].isdigit()})
        with open(f"{d}/bw.dat", "w") as f:
            f.write("bytes " + " ".join(A) + " MPICH memcpy\n")
            for z in sizes:
                bw = []
                for a in A:
                    t = self.get("logp", a, f"bulk_t_{z}")
                    bw.append("-" if t is None or t.value <= 0 else repr(z / t.value))
                f.write(f"{z} " + " ".join(bw) + " " + v(mp(f"bw_{z}_MBps")) + " "
                        + v(self.get("logp", A[0] if A else "", "memcpy_mem_MBps")) + "\n")
        with open(f"{d}/oneway.dat", "w") as f:
            f.write("bytes " + " ".join(f'"shmam {k}"' for k, _ in self.ONEWAY)
                    + ' "MPICH osu_bw, window 64" "raw copy floor"\n')
            for z in self.oneway_sizes():
                f.write(f"{z} " + " ".join(v(self.get("bw", "lockfree", f"{m}_MBps_{z}"))
                                           for _, m in self.ONEWAY)
                        + " " + v(self.get("mpi_bw", "mpich", f"mpi_bw_MBps_{z}"))
                        + " " + v(self.get("bw", "raw", f"raw_copy_MBps_{z}")) + "\n")
        impls = [i for i in self.rows.impls.get("lockbench", [])
                 if lockreport.threads_of(i)[1] == 1]  # the plot: one thread per process
        impls = [i for i in impls if i.startswith("shmam:")] + [i for i in impls if not i.startswith("shmam:")]
        procs = sorted({k[2] for k in self.rows.by_key if k[0] == "lockbench"})
        lockreport.plotdata(self, d)
        with open(f"{d}/locks.dat", "w") as f:
            f.write("procs " + " ".join(impls) + "\n")
            for p in procs:
                f.write(f"{p} " + " ".join(
                    "-" if (x := self.get("lockbench", i, "acq_per_s", p)) is None else repr(x.value / 1e6)
                    for i in impls) + "\n")
        with open(f"{d}/rpc.dat", "w") as f:  # rpc.gp: one line per transport
            f.write("transport " + " ".join(m for m, _, _ in self.RPC_TESTS) + "\n")
            for i in self.rows.impls.get("rpcbench", []):
                f.write(i + " " + " ".join(v(self.get("rpcbench", i, m)) for m, _, _ in self.RPC_TESTS)
                        + "\n")
        loggp.plotdata(self.rows, d)
        loggp.write_params(self.rows, d, os.path.basename(os.path.normpath(d)))

# ---- report.md, whole ----

def run_info(out):
    """report.sh's record of the run, out/run.txt: KEY=VALUE lines (SCALE,
    ELAPSED, CLUMPS_BIND and each program's arguments, RTT_ARGS ...)."""
    info = {}
    try:
        with open(os.path.join(out, "run.txt")) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                info[k] = v
    except OSError:
        pass
    return info


def shell(cmd):
    """A command's stdout, "" if it cannot run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def machine(out):
    """The machine section's lines."""
    cpuinfo = read_text("/proc/cpuinfo")
    cpu = next((l.split(":", 1)[1].strip() for l in cpuinfo.splitlines()
                if l.startswith("model name")), "")
    vm = ("a virtual machine (hypervisor flag set), its CPUs shared with the host's other work"
          if " hypervisor" in cpuinfo else "bare metal, as far as /proc/cpuinfo tells")
    mv = shell(["mpichversion"])
    field = lambda k: next((l.split(":", 1)[1].strip() for l in mv.splitlines()
                            if l.startswith(k)), "")
    mpich, dev = field("MPICH Version"), field("MPICH Device")
    cc = (shell(["cc", "--version"]).splitlines() or [""])[0]
    uptime = read_text(os.path.join(out, "uptime.txt")).strip()
    load = uptime[uptime.find("load average"):] if "load average" in uptime else uptime
    n = os.cpu_count()
    u = os.uname()
    return "\n".join([
        f"- CPU: {cpu}, {n} CPUs online; {vm}",
        f"- Kernel: {u.sysname} {u.release} {u.machine}",
        f"- MPICH: {mpich or 'not found'}{', device ' + dev if dev else ''}; compiler: {cc}",
        f"- Load at the start: {load}",
        "- Pinning: shmam ranks with `shmamrun --bind` (rank r on CPU r mod "
        f"{n}); MPICH with `mpiexec -bind-to core`, its stress test with waits that yield "
        "(`--yield`: MPICH's own waits only spin, so bound ranks sharing a CPU starve "
        "each other; bench/README.md), and again unbound beside a lock-free run unbound; "
        "MPICH talks through UCX's shared memory (sysv, cma) within the node; applications "
        "as Table 4 says; lockbench pins its process i to CPU i "
        f"mod {n}. With more processes than CPUs (3 and 7 writers, 4 and 8 lock "
        "processes) several share a CPU. The `pinned` column of every row says whether "
        "its ranks were each bound to one CPU."])


def img(out, name, text):
    """A markdown image if the plot was drawn."""
    p = os.path.join(out, name)
    return f"![{text}]({name})\n\n" if os.path.exists(p) and os.path.getsize(p) else ""


READING = """\
Every figure is the median over rounds of that round's mean, with the lowest
and highest round beside it in small type (`value lo–hi`); a round hit by a
preemption of this shared machine shows in the spread, not in the value. The
claim algorithms and per-sender channel kinds of one table are measured in one
job, an endpoint pair each, rounds interleaved in ABBA order, so ratios between
them (rows in italics,
"in-run") are per-round quotients of figures taken moments apart. MPICH runs in its own jobs with the same warm-up and rounds; a comparison
across jobs says so. A verdict counts a check only when the two spreads do not
overlap; otherwise it says "within noise"."""


def whole(r, out):
    """report.md: every section, the run's record (out/run.txt), failures
    (out/failures.txt), the plots and apps.sh's tables found in out."""
    i = run_info(out)
    a = lambda k, default="": i.get(k) or default
    elapsed = int(a("ELAPSED", "0"))
    scale = "the paper's scale" if a("SCALE") == "paper" else "quick scale"
    failed = read_text(os.path.join(out, "failures.txt")).splitlines()
    s = []
    p = s.append
    p(f"# shmam measurements, {os.path.basename(os.path.normpath(out))}\n")
    p(f"Run by `scripts/report.sh` at {scale} in {elapsed // 60} min {elapsed % 60} s "
      f"(rtt `{a('RTT_ARGS')}`; logp `{a('LOGP_ARGS')}`; mpi_pingpong `{a('PINGPONG_ARGS')}`; "
      f"bw and mpi_bw `{a('BW_ARGS')}`; stress `{a('STRESS_ARGS')}`, mpi_stress "
      f"`{a('MPI_STRESS_ARGS')}`; demo_many `{a('DEMO_ARGS')}`; lockbench `{a('LOCK_ARGS')}`; "
      f"locks_programs.py `{a('LOCKPROG_ARGS')}`; "
      f"heapbench `{a('HEAP_ARGS', '(defaults)')}`; spscbench `{a('SPSC_ARGS', '(defaults)')}`; "
      f"pollcost `{a('POLL_ARGS', '(defaults)')}`; loggp `{a('LOGGP_ARGS')}`, mpi_loggp "
      f"`{a('MPI_LOGGP_ARGS')}`; clumps `{a('CLUMPS_ARGS')}`; rpcbench `{a('RPC_ARGS')}`; applications "
      f"at SCALE={a('SCALE')}).")
    if failed:
        p("**Failures** (see `log.txt`):\n\n" + "\n".join(f"- {l}" for l in failed))
    else:
        p("Every benchmark ran and every count and check passed.")
    p("\n## How to read the figures\n\n" + READING + "\n")
    p("## Machine\n\n" + machine(out) + "\n")
    p("## Table 1: LogP parameters and round trip\n\n"
      "Microseconds (bandwidths MB/s), two processes pinned to two CPUs, no contention "
      "(`rtt` and `logp` with `--algs all,channels`: every claim algorithm and every "
      "per-sender channel kind in one job each; MPICH: `mpi_pingpong`). The last column "
      "names each row's method; MPICH's cell is the same work where one is given.\n\n"
      + r.table1() + "\n\n" + img(out, "logp.png", "LogP parameters per algorithm")
      + img(out, "bandwidth.png", "Bulk bandwidth of the request/reply stream against size")
      + "## Bandwidth, one way\n")
    p("Streams of n bytes from rank 0 to rank 1 in which the receiver copies every "
      "message out into its own buffers (what `MPI_Recv` does), 64 B to 4 MB "
      f"(`bw -a lockfree {a('BW_ARGS')}`, ranks pinned with `--bind`). shmam's streams are "
      "one way: the receiver answers every 16th message with a credit and the sender "
      "keeps at most 64 beyond the last one, no reply per message. *bulk*: "
      "`am_request_bulk` (to 8 KB); *long*: `am_request_long`, copied into a block of "
      "the receiver's shared heap; *long_at*: `am_request_long_at`, written straight "
      "into the receiver's region. The *raw floor*, measured in the same job between "
      "the same two processes, rounds interleaved: a ring of 16 slots in shared memory, "
      "the sender copies in and sets a flag, the receiver copies out and clears it. "
      "MPICH (`mpi_bw`, `-bind-to core`, a separate job) streams as osu_bw does: "
      "windows of 64 `MPI_Isend`, then a one-byte ack. Both programs move the same "
      "bytes per size from the same buffers (a ring of 64 per rank). Table 1's bulk "
      "figures are a different stream, every message answered (request/reply).\n\n"
      + r.oneway() + "\n\n" + img(out, "oneway.png", "Bandwidth one way against size")
      + "The honest bulk figures at 8 KB: a one-way flood in which the handler does "
      "not touch the data, and a stream in which it copies it out, each beside the "
      "raw floor of the same mode (the ring above; its receiver copies out or not).\n\n"
      + r.floors() + "\n")
    p("## Table 2: many-to-one stress test\n\n"
      "Seconds per 10⁶ integers (the paper's Table 2 sends 10⁶) for W writers sending "
      "to one reader, from runs of a fixed duration (`stress --algs all,channels "
      f"{a('STRESS_ARGS')}`: every algorithm and channel kind in one job, ranks pinned with "
      "`--bind`). MPICH (`mpi_stress`, separate jobs) under the same conditions: ranks "
      "pinned, waits that yield after spinning (`--yield`; MPICH's own waits only spin). "
      "The last two columns are the configuration MPICH users run, unbound and spinning, "
      "beside shmam's lock-free unbound. Messages per poll is how many integers one "
      "productive poll of the reader handled.\n\n"
      + r.table2() + "\n\n" + img(out, "stress.png", "Stress test time against writers")
      + "## Locks\n")
    p(lockreport.text(a('LOCK_ARGS')) + "\n\n" + r.locks() + "\n\n"
      + img(out, "locks.png", "Lock throughput against processes")
      + img(out, "locks_queue.png", "shmam's MCS and CLH beside ck's")
      + "## Locks inside real programs\n")
    p(lockreport.programs_text(a('LOCKPROG_ARGS')) + "\n\n"
      + lockreport.programs_section(r, cell, table) + "\n\n"
      + "## The shared heap of long messages\n")
    p("Allocation and free throughput of the lock-free heap (`heap/`, after XMalloc) "
      "against Boost.Interprocess's `managed_shared_memory` over a segment of the same "
      "size (`heapbench`): P pinned processes each keep a window of live blocks of "
      "mixed sizes and free and allocate in it; both heaps in every round, ABBA. Reserved "
      "/ live is what the heap has carved (superblocks, runs) per byte allocated at the "
      "end.\n\n" + r.heap() + "\n")
    p("## Single-producer/single-consumer rings\n\n"
      "The four rings of `spsc/` (Lamport; FastForward, also with temporal slipping; "
      "MCRingBuffer; B-Queue) beside Boost.Lockfree's `spsc_queue` and Concurrency Kit's "
      "`ck_ring` (`spscbench`): two pinned processes stream 8-byte items one way, and "
      "bounce one through a pair of rings; every ring in every round, ABBA. The runtime's "
      "per-sender channels are made of these rings (next section).\n\n" + r.spsc() + "\n")
    p("## Per-sender channels or shared queues\n\n"
      "Lumetta and Culler chose many-to-one queues, shared by every sender of an "
      "endpoint, for memory and polling cost; the systems they cite give each "
      "sender-receiver pair its own queue. shmam has both, as the queue kind of an "
      "endpoint: `mpsc` (the shared queues, with a claim algorithm) or a per-sender "
      "channel of one of the rings above (`lamport`, `fastforward`, `mcring`, "
      "`bqueue`), with a summary bit per channel that had messages lately, so that a "
      "poll looks at those only. Messages: the kinds' columns of Tables 1 and 2 (same "
      f"jobs as the claim algorithms). Polling and memory: `pollcost {a('POLL_ARGS')}`, a "
      "receiver per kind and number of registered senders, one job, every "
      "configuration in every round, ABBA; memory is the size of a fresh endpoint's "
      "segment with the default options.\n\n" + r.channels() + "\n")
    p("## Applications (Tables 3 and 4)\n")
    tables = [read_text(os.path.join(out, f"{t}.md")) for t in ("table3", "table4")]
    if any(tables):
        for t in tables:
            if t:
                p("\n".join("### " + l[2:] if l.startswith("# ") else l
                            for l in t.rstrip("\n").split("\n")) + "\n")
        p(img(out, "table4.png", "Application times per algorithm").rstrip("\n"))
        p("")
    else:
        p("(no tables: the applications did not run)\n")
    p("## Clusters of SMPs\n\n"
      "The hybrid runtime (libshmam-mpi) under `mpiexec`: ranks of one node talk "
      "through shared memory as under shmamrun, ranks of different nodes through MPI "
      "(one MPI message per active message). One machine here, so the nodes are "
      f"virtual (`SHMAM_NODE_SIZE`). `clumps {a('CLUMPS_ARGS')}`: three ranks in nodes of "
      f"two, `mpiexec -n 3 -bind-to {a('CLUMPS_BIND')}` (rank 0 on CPU 0, ranks 1 and 2 "
      "sharing CPU 1; the rank outside the measured pair sleeps); within the node "
      "rank 0 to rank 1 through the job's endpoint and, in the same processes, through "
      "named endpoints that have no MPI path (shared memory alone, as under "
      "shmamrun); across nodes rank 0 to rank 2 through the job's endpoint (MPI) and "
      "with MPI's own calls. All four in every round, ABBA; ratios in-run. "
      "Round trip: a one-word request and its reply, MPI a 4-byte ping-pong. "
      "Bandwidth against `mpi_bw`'s osu_bw windows (64 receives posted into the "
      "application's buffers: one copy), two shmam streams: the one-copy stream "
      "(`am_request_long_at` at every size into the receiver's region, the handler "
      "reading the data in place), like with like, on which the bandwidth target is "
      "judged; and, for information, `bw`'s copy stream (bulk to 8 KB, long above, "
      "the handler copying every message out: one copy more). A credit every 16 "
      "messages, at most 64 beyond it (one-copy at 4 MB: 16 region slots, a credit "
      "every 4).\n\n" + r.clumps() + "\n")
    p("## RPC\n\n"
      "shmam's calls beside what an RPC user would pick instead (`rpcbench "
      f"{a('RPC_ARGS', '(defaults)')}`, bench/README.md): one echo server process on one CPU, "
      "its client on the other, each transport in every round, ABBA. *call*: an anonymous "
      "client endpoint's `am_call` (in flight: `am_call_start` + `am_call_wait`) against a "
      "server in `am_wait`; *call_poll*: `am_call_start` + `am_call_test` against a server "
      "in `am_poll`; *unix_stream*, *unix_seqpacket*: a socket pair (a header and the data, "
      "one `writev`); *pipe*: a pipe pair; *zmq_ipc*: ZeroMQ DEALER/ROUTER over `ipc://`; "
      "*eventfd_ring*, the blocking floor: a shared ring per direction and an eventfd "
      "written per message; *spin_ring*, the polling floor: the same rings spun on. The "
      "alternatives for the throughput ratio are the sockets, the pipe and ZeroMQ, not "
      "the floors.\n\n" + r.rpc() + "\n\n" + img(out, "rpc.png", "RPC: round trip and echoes "
      "per transport") + "\n")
    p("### Services for other users\n\n"
      f"`rdvbench {a('RDV_ARGS', '(defaults)')}` (docs/services.md): one server, one client "
      "with two endpoints: *by_name* maps the server by name (the same-user path), "
      "*by_socket* connected through its rendezvous socket (`am_ep_connect`: a door of its "
      "own, the path of every other-user caller; the uid does not change it). *connect*: "
      "`am_ep_connect` of a fresh anonymous endpoint; *unix_connect*: a Unix socket's "
      "connect and the server's first byte.\n\n" + r.rdv() + "\n")
    p("## Python\n\n"
      "The `shmam` package (`python/`, Debian's `/usr/bin/python3` with `python3-cffi`) "
      "beside `multiprocessing.connection` over a `Pipe` (*mp_pipe*) and a Unix-socket "
      "`Listener` (*mp_unix*) and pyzmq DEALER/ROUTER over `ipc://` (*zmq_ipc*): a Python "
      f"echo server per transport, `python/bench/pyrpc.py --bind {a('PYRPC_ARGS')}` (client "
      "on CPU 0, servers on CPU 1), 8 bytes each way, rounds interleaved ABBA, ratios "
      "in-run. *shmam*: a request and its reply through a reply handler and `ep.wait`; "
      "*shmam_call*: `ep.call`, and `ep.call_async` 32 at a time under asyncio, where the "
      "library has the calls API.\n\n" + r.python() + "\n")
    p("## Delivery checks\n\n"
      "`demo_many`, 4 processes: 3 senders each send short requests, then 8 KB bulk "
      "requests, to rank 0, which checks every message's count, source, per-sender "
      "order and (bulk) checksum; the rates include making and checking the data "
      "(one run per algorithm, no spread).\n\n" + r.delivery() + "\n")
    p(loggp.section(r.rows, out, i))
    p("## Targets\n\n"
      "Judged from this run's numbers by `scripts/report/verdict.py` (the targets are in "
      "`scripts/report/paper.toml`): met when every check holds, missed when one fails, "
      "within noise otherwise; a check holds or fails only when the spreads do not "
      "overlap.\n\n" + r.targets() + "\n")
    p("## Consistency of the figures\n\n"
      "Relations any honest measurement keeps (LogP's; `[[consistency]]` in "
      "`scripts/report/paper.toml`), judged like the targets: a relation that fails "
      "here means a figure is not what it claims to be, or the run was disturbed.\n\n"
      + r.consistency() + "\n")
    regime = r.paper["machine"]["regime"].replace("\n", " ")
    p("## What the numbers say\n\n"
      "The paper measured a Sun Enterprise 5000 with eight 167 MHz UltraSPARC processors,\n"
      f"one process per processor. This run has {os.cpu_count()} CPUs of a shared virtual "
      "machine.\nAbsolute times differ from the paper's by 25 years of hardware; compare "
      "shapes and\nratios. Two processes on two pinned CPUs match the paper's uncontended "
      f"Table 1\nsetting. {regime}\n"
      "Waits here yield the CPU after spinning, which keeps the locks usable at all with\n"
      "more processes than CPUs. The paper's POSIX mutex (Solaris, 1998) entered the\n"
      "kernel; glibc's robust mutex takes and releases an uncontended lock in user space\n"
      "and calls the kernel (futex) only to sleep or wake a waiter.\n\n"
      "Each conclusion below is judged by its checks (`scripts/report/paper.toml`):\n"
      "*agrees* when every check holds, *differs* when they fail, *partly* for a mix,\n"
      "*within noise* when the spreads overlap.\n\n" + r.findings())
    p("## Files\n\n"
      "`all.csv` (every row), one CSV per benchmark, `*.dat` (the plots' data), "
      f"`log.txt` (what the programs said on stderr). Schema: `{schema.HEADER}` "
      "(bench/README.md).")
    return "\n".join(s) + "\n"


def main(argv):
    if argv[1:] == ["writers"]:
        print(" ".join(map(str, WRITERS)))
        return 0
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    r = Report(argv[1], argv[2])
    what = argv[3]
    if what == "plotdata":
        r.plotdata(argv[4])
    elif what == "report":
        with open(os.path.join(argv[4], "report.md"), "w") as f:
            f.write(whole(r, argv[4]))
    elif what == "bench-check":
        text, bad = r.bench_check()
        print(text)
        return 1 if bad else 0
    elif what in ("table1", "table2", "locks", "delivery", "targets", "findings", "oneway",
                  "floors", "heap", "spsc", "channels", "clumps", "consistency", "rpc", "rdv"):
        print(getattr(r, what)())
    else:
        print(f"report.py: unknown section {what}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
