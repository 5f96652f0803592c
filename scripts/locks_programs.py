#!/usr/bin/python3
"""locks_programs.py - shmam's locks inside unmodified Debian programs that
are lock-bound when threaded, against glibc's mutex; and a multi-process
program whose robust process-shared mutex loses its holder to SIGKILL.

    scripts/locks_programs.py [--build B] [--scale tiny|quick|paper]
        [--rounds R] [--threads N] [--locks NAME,...] [--header]

Rows on stdout in the common schema (bench/README.md), what the programs
said (their statistics lines among it) on stderr.  Exit status 1 if a run
failed or printed no figure (said on stderr as "locks_programs: FAILED
..."; the other runs still go on), 2 for a bad command line.

The locks: every name `lockbench --list-locks` prints (am_lock_table; none
is typed here), or those of --locks, each loaded into the program with
LD_PRELOAD=B/lib/libshmam-locks.so SHMAM_LOCK=NAME (man/shmam-locks.7).
The baseline, impl PROGRAM/glibc, is the program as it is, no preload.

The programs (PROGRAMS below), N threads (default: the CPUs) on one mutex:
  sysbench:mutex    `sysbench mutex --mutex-num=1`: each thread takes and
                    releases the one mutex a fixed number of times around a
                    short empty loop; figure: its acquisitions over sysbench's
                    "total time"
  stress-ng:mutex   `stress-ng --mutex 1 --mutex-procs N --mutex-ops K`: N
                    threads of one worker raise their (SCHED_FIFO) priority,
                    lock one mutex, drop the priority and sched_yield holding
                    it, unlock; figure: its "bogo ops/s (real time)"
Method (ABBA with glibc): per round, for each lock (in reverse order in odd
rounds), the program runs bare, under the lock twice, and bare again; the
round's ratio is the lock's mean rate over the two bare runs' mean rate.
Rows per program and implementation (iters: the runs of all rounds):
  lockprog,PROG/IMPL,-,N,0,RUNS,ops_per_s,V,1/s,LO-HI  median of the rounds'
      mean rates, lowest-highest round
  lockprog,PROG/LOCK,-,N,0,RUNS,vs_glibc,V,ratio,LO-HI  median of the
      rounds' in-run ratios, lowest-highest round
  lockprog,PROG/IMPL,-,N,0,1,ops,V,1,   the program's own count per run
  lockprog,PROG/IMPL,-,N,0,1,acquisitions,V,1,   from one more run with
      SHMAM_LOCK_STATS=1 (glibc: SHMAM_LOCK=glibc, the preload counting
      glibc's mutex): the acquisitions of every mutex in the process, which
      shows the program is lock-bound; and contended,V,ratio, the share of
      them that waited.  stress-ng's threads run in a forked worker that
      leaves by _exit, so its statistics are never printed: no such rows
      (its ops are its lock cycles).
Then bench/robust (its own rows, bench robust) bare and under the preload
with every lock: the preload makes its robust process-shared mutex that
lock, the dead holder passed over by its lifeline (preload.c), and each
must recover as glibc's does.
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
import rows as schema  # noqa: E402  the row format's one owner, and the median

BENCH = "lockprog"
TIMEOUT_S = 120  # one run; a hung program is a failure, not a hung report

# scale: (rounds, sysbench acquisitions per run, stress-ng ops per run,
#         robust's trials)
SCALES = {"tiny": (1, 20000, 2000, 1), "quick": (3, 400000, 60000, 5),
          "paper": (5, 4000000, 400000, 11)}


def sysbench_mutex(threads, n):
    per = max(1, n // threads)
    argv = ["sysbench", "mutex", f"--threads={threads}", "--mutex-num=1",
            f"--mutex-locks={per}", "--mutex-loops=20", "run"]

    def rate(text):
        m = re.search(r"total time:\s+([0-9.]+)s", text)
        return (threads * per, threads * per / float(m.group(1))) if m and float(m.group(1)) > 0 \
            else None
    return argv, rate, threads


def stress_ng_mutex(threads, n):
    threads = max(2, threads)  # stress-ng's least --mutex-procs
    argv = ["stress-ng", "--mutex", "1", "--mutex-procs", str(threads),
            "--mutex-ops", str(n), "--metrics-brief"]

    def rate(text):
        # "stress-ng: metrc: [pid] mutex OPS REAL USR SYS OPS/S(real) OPS/S(cpu)"
        m = re.search(r"metrc: \[\d+\] mutex\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)",
                      text)
        return (int(m.group(1)), float(m.group(2))) if m and float(m.group(2)) > 0 else None
    return argv, rate, threads


# name, the maker of (argv, parser of its output, threads), the index of its size in SCALES, whether
# its threads' process prints the preload's statistics (stress-ng's worker
# leaves by _exit, so atexit never runs in it)
PROGRAMS = (("sysbench:mutex", sysbench_mutex, 1, True),
            ("stress-ng:mutex", stress_ng_mutex, 2, False))
STATS = re.compile(r"^shmam-locks: lock \S+ wait \S+ mutex .*: acquisitions (\d+) contended (\d+)")

failed = False


def fail(what):
    global failed
    failed = True
    print(f"locks_programs: FAILED: {what}", file=sys.stderr)


def run(argv, env, apart=False):
    """argv's exit status and its stdout and stderr together (apart: its
    stdout alone); its stderr (or both) goes to ours too, for the log.  A
    program that is missing or still runs after TIMEOUT_S: status -1."""
    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE if apart else subprocess.STDOUT,
                           text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"locks_programs: {argv[0]}: {e}", file=sys.stderr)
        return -1, ""
    sys.stderr.write(p.stderr if apart else p.stdout)
    return p.returncode, p.stdout


def env_for(preload, lock, stats=False):
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "SHMAM_LOCK", "SHMAM_LOCK_STATS"):
        env.pop(k, None)
    if lock is not None:
        env.update(LD_PRELOAD=preload, SHMAM_LOCK=lock)
    if stats:
        env["SHMAM_LOCK_STATS"] = "1"
    return env


def once(prog, argv, parse, preload, lock):
    """One timed run: (ops, rate) or None after saying why."""
    rc, text = run(argv, env_for(preload, lock))
    got = parse(text) if rc == 0 else None
    if got is None:
        fail(f"{prog} under {lock or 'glibc'}: exit status {rc}, or no figure printed")
    return got


def stat(v):
    """(median, lo, hi) of the list v."""
    return schema.median(v), min(v), max(v)


def row(impl, procs, iters, metric, s, unit, prec):
    v, lo, hi = s
    print(f"{BENCH},{impl},-,{procs},0,{iters},{metric},{v:.{prec}f},{unit},"
          f"{lo:.{prec}f}-{hi:.{prec}f}")


def counted(argv, preload, lock):
    """(acquisitions, contended) summed over every mutex of a run with
    SHMAM_LOCK_STATS=1, or None when the program printed no statistics."""
    rc, text = run(argv, env_for(preload, lock or "glibc", stats=True))
    lines = [STATS.match(l) for l in text.splitlines()]
    lines = [m for m in lines if m]
    if rc != 0:
        fail(f"{argv[0]} under {lock or 'glibc'} with statistics: exit status {rc}")
    if rc != 0 or not lines:
        return None
    return sum(int(m.group(1)) for m in lines), sum(int(m.group(2)) for m in lines)


def program(name, make, threads, n, rounds, locks, preload, stats):
    """Every lock of locks inside program `name`, ABBA with glibc."""
    argv, parse, procs = make(threads, n)  # procs: the threads it runs
    rates = {l: [] for l in locks}
    base = {l: [] for l in locks}  # glibc's runs beside lock l, per round
    ratio = {l: [] for l in locks}
    ops = {}
    for r in range(rounds):
        order = locks if r % 2 == 0 else locks[::-1]
        for l in order:
            got = [once(name, argv, parse, preload, x) for x in (None, l, l, None)]
            if None in got:
                continue
            for (o, _), who in zip(got, (None, l, l, None)):
                ops[who] = o
            b, m = (got[0][1] + got[3][1]) / 2, (got[1][1] + got[2][1]) / 2
            base[l].append(b)
            rates[l].append(m)
            ratio[l].append(m / b)
    glibc = [x for l in locks for x in base[l]]
    impls = [(None, glibc, len(glibc) * 2)] + [(l, rates[l], len(rates[l]) * 2) for l in locks]
    for l, v, runs in impls:
        impl = f"{name}/{l or 'glibc'}"
        if not v:
            continue
        row(impl, procs, runs, "ops_per_s", stat(v), "1/s", 0)
        if l is not None:
            row(impl, procs, runs, "vs_glibc", stat(ratio[l]), "ratio", 3)
        row(impl, procs, 1, "ops", (ops[l],) * 3, "1", 0)
        c = counted(argv, preload, l) if stats else None
        if c and c[0]:
            row(impl, procs, 1, "acquisitions", (c[0],) * 3, "1", 0)
            row(impl, procs, 1, "contended", (c[1] / c[0],) * 3, "ratio", 3)


def robust(build, trials, locks, preload):
    """bench/robust bare and under the preload with every lock."""
    prog = os.path.join(build, "bench", "robust")
    for l in [None] + locks:
        argv = [prog, "--procs", "4", "--trials", str(trials), "--impl",
                "glibc" if l is None else f"preload/{l}"]
        rc, text = run(argv, env_for(preload, l), apart=True)
        sys.stdout.write(text)
        if rc != 0:
            fail(f"robust under {l or 'glibc'}: exit status {rc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--scale", choices=SCALES, default="quick")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--locks")
    ap.add_argument("--header", action="store_true")
    a = ap.parse_args()
    rounds, trials = SCALES[a.scale][0], SCALES[a.scale][3]
    rounds = a.rounds or rounds
    preload = os.path.abspath(os.path.join(a.build, "lib", "libshmam-locks.so"))
    listed = subprocess.run([os.path.join(a.build, "bench", "lockbench"), "--list-locks"],
                            stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    locks = listed if a.locks is None else a.locks.split(",")
    if not locks or any(l not in listed for l in locks) or a.threads < 1 or rounds < 1:
        ap.error(f"--locks names locks of: {' '.join(listed)}; --threads, --rounds >= 1")
    if not os.path.exists(preload):
        ap.error(f"{preload} is not built")
    sys.stdout.reconfigure(line_buffering=True)
    if a.header:
        print(schema.HEADER)
    for name, make, k, stats in PROGRAMS:
        program(name, make, a.threads, SCALES[a.scale][k], rounds, locks, preload, stats)
    robust(a.build, trials, locks, preload)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
