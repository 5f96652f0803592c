"""locks.py - the report's Locks section and its plots' data, from
lockbench's rows (bench/lockbench.c; read through verdict.Rows, which
rows.py parses): per process count, every lock at each thread count per
process: its throughput, its in-run
ratio to ck's lock of the same algorithm, fairness (min/max, Jain's index),
acquire latency p50/p99/p99.9, the critical section's p99 and the time
from a holder's SIGKILL to the next acquisition (or "never", for locks that
do not recover); the targets of paper.toml whose section is "locks",
judged; the data of locks_queue.gp (shmam's MCS and CLH beside ck's); and
the section of the locks inside real programs (scripts/locks_programs.py's
rows: lockprog and robust).  report.py calls it; it
writes nothing but what it is asked for.
"""

import re

BENCH = "lockbench"
QUEUE = ("shmam:mcs", "ck:mcs", "shmam:clh", "ck:clh")  # locks_queue.gp's lines
NEVER = "never"


def procs_of(rows):
    return sorted({k[2] for k in rows.by_key if k[0] == BENCH})


def recovery(r, impl, p, cell):
    """The recovery cell: ms, "never" (recovers 0), or a dash."""
    if p < 2:
        return "–"
    rec = r.get(BENCH, impl, "recovers", p)
    if rec is not None and rec.value == 0:
        return NEVER
    t = r.get(BENCH, impl, "recovery_s", p)
    return cell(t, 1e3)


def threads_of(impl):
    """(the lock, its threads per process) of a lockbench impl: "LOCK/tN"
    names N threads, a bare LOCK one."""
    m = re.fullmatch(r"(.*)/t(\d+)", impl)
    return (m.group(1), int(m.group(2))) if m else (impl, 1)


def table_at(r, p, cell, table):
    """The table of every lock with p processes, each lock's thread counts
    together, fewest first."""
    lines = []
    impls = r.rows.impls.get(BENCH, [])
    order = list(dict.fromkeys(threads_of(i)[0] for i in impls))
    for impl in sorted(impls, key=lambda i: (order.index(threads_of(i)[0]), threads_of(i)[1])):
        g = lambda m: r.get(BENCH, impl, m, p)
        if g("acq_per_s") is None:
            continue
        lock, threads = threads_of(impl)
        lines.append([lock, str(threads), cell(g("acq_per_s"), 1e-6), cell(g("acq_vs_ck")),
                      cell(g("fairness_min_over_max")), cell(g("fairness_jain")),
                      cell(g("latency_p50"), 1e-3), cell(g("latency_p99"), 1e-3),
                      cell(g("latency_p999"), 1e-3), cell(g("cs_p99"), 1e-3),
                      recovery(r, impl, p, cell), ""])
    head = ["lock", "threads", "M acq/s", "/ ck's (in-run)", "min/max", "Jain", "p50 µs", "p99 µs",
            "p99.9 µs", "CS p99 µs", "recovery ms", ""]
    return table(head, lines)


def section(r, cell, table):
    """The tables per process count and the targets of section "locks"."""
    procs = procs_of(r.rows)
    if not procs:
        return "(no rows: the lock benchmark did not run)"
    out = [f"**{p} process{'es' if p > 1 else ''}**\n\n" + table_at(r, p, cell, table)
           for p in procs]
    targets = [t for t in r.paper.get("target", []) if t.get("section") == "locks"]
    if targets:
        out.append("The targets (also under Targets):\n\n"
                   + "\n".join(r.target_line(t) for t in targets))
    return "\n\n".join(out)


def text(args):
    """The section's opening: what was run and how to read it."""
    return ("P processes pinned round robin, each running *threads* threads, take each "
            "lock in a loop around a short "
            "critical section (`lockbench " + args + "`), every lock once per round in "
            "ABBA order; M acq/s is all threads' acquisitions per second. */ ck's* is "
            "the per-round quotient of a shmam lock's throughput and Concurrency Kit's "
            "lock of the same algorithm (ticket, anderson, mcs, clh) in the same round. "
            "Fairness: the fewest acquisitions of one thread over the most (1 even, 0 "
            "one starved) and Jain's index over every thread of every process (1 even, "
            "1/(P threads) one got everything). "
            "Latency: the time of each `lock()` call, the clock's cost taken off; *CS "
            "p99*: the 99th percentile of the critical section, from `lock()`'s return "
            "to `unlock()`'s (the work inside and the release). "
            "Recovery (one thread per process): one process holds the lock and is "
            "SIGKILLed while the others "
            "wait; the time to the first waiter's acquisition (*never*: ck's and the "
            "plain pthread mutex's waiters wait for a dead holder for ever). Waiting: "
            "`shmam:` locks spin with backoff, then yield (the library's default); "
            "`ck:` locks only spin; the mutexes park in the kernel after a short spin. "
            "With 4 and 8 processes on 2 CPUs, FIFO locks that spin convoy: each "
            "hand-off to a descheduled waiter waits for the scheduler.")


def plotdata(r, d):
    """locks_queue.dat: per process count, throughput (M acq/s) then p99
    latency (µs) of each lock of QUEUE ("-" where missing)."""
    v = lambda f, x: "-" if f is None else repr(f.value * x)
    with open(f"{d}/locks_queue.dat", "w") as f:
        f.write("procs " + " ".join(QUEUE) + " " + " ".join(f"{q}_p99" for q in QUEUE) + "\n")
        for p in procs_of(r.rows):
            f.write(f"{p} " + " ".join(v(r.get(BENCH, q, "acq_per_s", p), 1e-6) for q in QUEUE)
                    + " " + " ".join(v(r.get(BENCH, q, "latency_p99", p), 1e-3) for q in QUEUE)
                    + "\n")


# ---- locks inside real programs (scripts/locks_programs.py) ----
PROG_BENCH = "lockprog"
ROBUST = "robust"


def programs_of(rows):
    """The programs of lockprog's impls PROGRAM/LOCK, in order."""
    seen = []
    for impl in rows.impls.get(PROG_BENCH, []):
        p = impl.rsplit("/", 1)[0]
        if p not in seen:
            seen.append(p)
    return seen


def programs_section(r, cell, table):
    """Per program, every lock's throughput inside it, its in-run ratio to
    glibc's mutex and what the preload counted; then the robust program."""
    progs = programs_of(r.rows)
    if not progs:
        return "(no rows: the programs did not run)"
    out = []
    for prog in progs:
        lines, threads = [], None
        for impl in r.rows.impls[PROG_BENCH]:
            if impl.rsplit("/", 1)[0] != prog:
                continue
            g = lambda m: r.get(PROG_BENCH, impl, m)
            f = g("ops_per_s")
            if f is None:
                continue
            threads = next(k[2] for k in r.rows.by_key
                           if k[0] == PROG_BENCH and k[1] == impl)
            lines.append([impl.rsplit("/", 1)[1], cell(f, 1e-3), cell(g("vs_glibc")),
                          cell(g("ops")), cell(g("acquisitions")), cell(g("contended")), ""])
        head = ["lock", "k ops/s", "/ glibc (in-run)", "ops per run", "acquisitions per run",
                "contended", ""]
        out.append(f"**{prog}**, {threads} threads\n\n" + table(head, lines))
    lines = []
    for impl in r.rows.impls.get(ROBUST, []):
        g = lambda m: r.get(ROBUST, impl, m)
        lines.append([impl, cell(g("recovery_s"), 1e3), cell(g("recovered")),
                      cell(g("acq_per_s"), 1e-6), ""])
    if lines:
        out.append("**robust** (processes sharing a robust process-shared mutex, its holder "
                   "SIGKILLed)\n\n"
                   + table(["run", "recovery ms", "recovered", "M acq/s after", ""], lines))
    return "\n\n".join(out)


def programs_text(args):
    """The opening of the real programs' section."""
    return ("Unmodified Debian programs that are lock-bound when threaded, their pthread "
            "mutexes replaced by each lock of `am_lock_table` through `libshmam-locks.so` "
            "(`LD_PRELOAD`, `SHMAM_LOCK=NAME`, man/shmam-locks.7; `scripts/locks_programs.py "
            + args + "`): `sysbench mutex --mutex-num=1` (its threads take one mutex in a "
            "loop; k ops/s is acquisitions per second of sysbench's own time) and `stress-ng "
            "--mutex 1` (threads of one worker lock one mutex, drop their priority and yield "
            "holding it, unlock; its bogo ops per second). Per round and lock, ABBA: the program bare (glibc's mutex), "
            "under the lock twice, bare again; */ glibc* is the median of the rounds' "
            "quotients of the lock's mean rate over the bare runs' (spread: lowest–highest "
            "round). *acquisitions per run*: what `SHMAM_LOCK_STATS=1` counted over every "
            "mutex in one more run (glibc's: the preload counting with `SHMAM_LOCK=glibc`), "
            "beside the program's own count of operations: they match, so the program is "
            "lock-bound; *contended*: the share that waited. stress-ng's worker leaves by "
            "`_exit`, so the preload's statistics, written at exit, are never printed there "
            "(a dash). **robust** (bench/robust.c): 4 processes share a robust "
            "process-shared pthread mutex; its holder is SIGKILLed inside the critical "
            "section, a waiter gets `EOWNERDEAD`, calls `pthread_mutex_consistent` and all go "
            "on; recovery is the time from just before the kill to that return, median over "
            "the trials. Under the preload (`preload/NAME`) the robust mutex is lock NAME, "
            "its dead holder passed over by its lifeline, and the same recovery is "
            "expected under every lock.")
