"""test_verdict.py - the verdict engine's rules (make check runs it):
    python3 -m unittest discover -s scripts/report -p 'test_*.py'
"""

import os
import tempfile
import tomllib
import unittest

from report import lock_free_claims
from verdict import (FAILS, HOLDS, MISSING, NOISE, Engine, Figure, Outcome, Rows, compare,
                     verdict)

# What `shmamrun --list-claims` prints (runtime/options.c's claim table).
LIST_CLAIMS = ("lockfree\tlock-free\ntas\tlocked\nttas\tlocked\nticket\tlocked\n"
               "anderson\tlocked\nmutex\tlocked\nonecas\tlock-free\n")
LOCK_FREE = lock_free_claims(LIST_CLAIMS)

HERE = os.path.dirname(os.path.abspath(__file__))


def fig(v, lo, hi):
    return Figure(v, lo, hi)


class Compare(unittest.TestCase):
    def test_overlapping_spreads_are_noise_even_if_medians_differ(self):
        # o_s +4 %: 0.104 against 0.100, spreads overlapping
        self.assertEqual(compare(fig(0.104, 0.099, 0.11), "<", fig(0.100, 0.095, 0.105)), NOISE)
        self.assertEqual(compare(fig(0.104, 0.099, 0.11), ">", fig(0.100, 0.095, 0.105)), NOISE)

    def test_disjoint_spreads_decide(self):
        a, b = fig(1.0, 0.9, 1.1), fig(2.0, 1.8, 2.2)
        self.assertEqual(compare(a, "<", b), HOLDS)
        self.assertEqual(compare(a, ">", b), FAILS)
        self.assertEqual(compare(b, ">", a), HOLDS)

    def test_between(self):
        lo, hi = Figure(0.9, 0.9, 0.9), Figure(1.1, 1.1, 1.1)
        self.assertEqual(compare(fig(1.0, 0.95, 1.05), "between", (lo, hi)), HOLDS)
        self.assertEqual(compare(fig(1.5, 1.3, 1.6), "between", (lo, hi)), FAILS)
        self.assertEqual(compare(fig(1.05, 0.95, 1.2), "between", (lo, hi)), NOISE)


class Verdicts(unittest.TestCase):
    def o(self, *rs):
        return [Outcome("", r) for r in rs]

    def test_rules(self):
        self.assertEqual(verdict(self.o(HOLDS, HOLDS)), "agrees")
        self.assertEqual(verdict(self.o(FAILS, FAILS)), "differs")
        self.assertEqual(verdict(self.o(HOLDS, FAILS)), "partly")
        self.assertEqual(verdict(self.o(NOISE, NOISE)), "within noise")
        self.assertEqual(verdict(self.o(MISSING)), "no numbers")
        self.assertTrue(verdict(self.o(HOLDS, MISSING)).startswith("agrees (some"))
        self.assertEqual(verdict(self.o(NOISE, HOLDS), any_=True), "agrees")
        self.assertEqual(verdict(self.o(NOISE, FAILS), any_=True), "within noise")


ROWS = """bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
rtt,lockfree,posix,2,1,10,am_rtt,0.70,us,0.68-0.72
rtt,tas,posix,2,1,10,am_rtt,0.71,us,0.69-0.90
rtt,tas,posix,2,1,10,am_rtt_vs_lockfree,1.01,ratio,0.97-1.30
rtt,bqueue,posix,2,1,10,am_rtt_vs_lockfree,0.9,ratio,0.85-0.95
logp,lockfree,posix,2,1,10,L,-0.02,us,-0.05--0.01
stress,lockfree,posix,2,1,10,s_per_1e6,0.2,s,0.19-0.21
stress,lockfree,posix,8,1,10,s_per_1e6,0.1,s,0.09-0.11
bw,lockfree,posix,2,1,10,copy_vs_raw_64,0.5,ratio,0.4-0.6
bw,lockfree,posix,2,1,10,copy_vs_raw_8192,0.95,ratio,0.92-0.97
bw,lockfree,posix,2,1,10,bw_copy_MBps_64,300,MB/s,280-320
mpi_bw,mpich,-,2,1,10,mpi_bw_MBps_64,240,MB/s,230-250
"""


class Engines(unittest.TestCase):
    def setUp(self):
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        f.write(ROWS)
        f.close()
        self.path = f.name
        self.rows = Rows(self.path)

    def tearDown(self):
        os.unlink(self.path)

    def test_negative_spread_parsed(self):
        l = self.rows.ref("logp/lockfree/L")
        self.assertEqual((l.lo, l.hi), (-0.05, -0.01))

    def test_procs_and_sets(self):
        e = Engine(self.rows, ["lockfree", "tas"], lock_free=LOCK_FREE)
        v, outs = e.judge({"checks": [{"a": "stress/lockfree@8/s_per_1e6", "op": "<",
                                       "b": "stress/lockfree@2/s_per_1e6"}]})
        self.assertEqual(v, "agrees")
        v, outs = e.judge({"checks": [{"a": "rtt/{alg}/am_rtt_vs_lockfree", "each": "locks",
                                       "op": "between", "x": [0.9, 1.1]}]})
        self.assertEqual((v, len(outs)), ("within noise", 1))
        v, _ = e.judge({"checks": [{"a": "logp/{alg}/L", "each": "algs", "op": "<", "x": 0}]})
        self.assertEqual(v, "agrees (some figures not measured)")

    def test_lock_free_claims_are_neither_locks_nor_the_papers(self):
        with open(os.path.join(HERE, "paper.toml"), "rb") as f:
            paper = tomllib.load(f)["table1"]["algs"]
        algs = ["lockfree", "tas", "ttas", "ticket", "anderson", "mutex", "onecas"]
        self.assertEqual(LOCK_FREE, ["lockfree", "onecas"])
        e = Engine(self.rows, algs, paper_algs=paper, lock_free=LOCK_FREE)
        self.assertEqual(e.sets["locks"], ["tas", "ttas", "ticket", "anderson", "mutex"])
        self.assertEqual(e.sets["five"], ["tas", "ttas", "ticket", "anderson"])
        self.assertEqual(e.sets["paper"], algs[:6])
        self.assertEqual(e.sets["algs"], algs)
        for a in LOCK_FREE:
            self.assertNotIn(a, e.sets["locks"] + e.sets["five"])
        # a paper claim over "five" judges the paper's locks only
        v, outs = e.judge({"checks": [{"a": "rtt/{alg}/am_rtt_vs_lockfree", "each": "five",
                                       "op": "<", "x": 2}]})
        self.assertEqual(len(outs), 4)
        self.assertFalse(any("onecas" in o.text for o in outs))

    def test_paper_tables_keep_the_papers_six(self):
        with open(os.path.join(HERE, "paper.toml"), "rb") as f:
            paper = tomllib.load(f)
        six = ["lockfree", "tas", "ttas", "ticket", "anderson", "mutex"]
        for name, keys in (("table1", ("L", "os", "or", "g", "rtt")), ("table2", ("1", "3", "7"))):
            t = paper[name]
            self.assertEqual(t["algs"], six, name)
            for k in keys:
                self.assertEqual(len(t[k]), 6, f"{name} {k}")

    def test_kinds_set(self):
        e = Engine(self.rows, ["lockfree", "tas"], ["bqueue"])
        v, outs = e.judge({"checks": [{"a": "rtt/{alg}/am_rtt_vs_lockfree", "each": "kinds",
                                       "op": "<", "x": 1}]})
        self.assertEqual((v, len(outs)), ("agrees", 1))
        # no kind ran: the check is kept, its figure not measured
        e = Engine(self.rows, ["lockfree", "tas"])
        v, outs = e.judge({"checks": [{"a": "rtt/{alg}/am_rtt_vs_lockfree", "each": "kinds",
                                       "op": "<", "x": 1}]})
        self.assertEqual((v, [o.result for o in outs]), ("no numbers", [MISSING]))

    def test_sizes(self):
        e = Engine(self.rows, ["lockfree"])
        v, outs = e.judge({"checks": [{"a": "bw/lockfree/copy_vs_raw_{size}", "size": [64, 8192],
                                       "op": ">", "x": 0.9}]})
        self.assertEqual([o.result for o in outs], [FAILS, HOLDS])
        self.assertEqual(v, "partly")
        v, outs = e.judge({"checks": [{"a": "bw/lockfree/bw_copy_MBps_{size}", "size": [64],
                                       "op": ">", "x": 1.2, "b": "mpi_bw/mpich/mpi_bw_MBps_{size}"}]})
        self.assertEqual((v, outs[0].result), ("within noise", NOISE))

    def test_paper_file_expands(self):
        with open(os.path.join(HERE, "paper.toml"), "rb") as f:
            paper = tomllib.load(f)
        e = Engine(self.rows, ["lockfree", "tas", "mutex"])
        for item in paper["claim"] + paper["target"]:
            v, outs = e.judge(item)
            self.assertTrue(outs, item["title"])


# logp and rtt --ladder rows of one implementation, for the consistency checks:
# g and g_oneway above their fractions of o_s, rtt and the sweep's intercept
# above 0.8 x (o_s + o_r), slope near 1, the ladder rising.
CONSISTENT = """bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
logp,lockfree,posix,2,1,10,os,0.100,us,0.095-0.105
logp,lockfree,posix,2,1,10,g,0.120,us,0.110-0.130
logp,lockfree,posix,2,1,10,g_oneway,0.070,us,0.060-0.080
logp,lockfree,posix,2,1,10,os_plus_or,0.200,us,0.190-0.210
logp,lockfree,posix,2,1,10,rtt,0.400,us,0.390-0.410
logp,lockfree,posix,2,1,10,os_plus_or_sweep,0.210,us,0.200-0.220
logp,lockfree,posix,2,1,10,sweep_slope,1.02,ratio,0.98-1.05
rtt,raw,posix,2,1,10,turn_ns_0,1.0,ns,0.9-1.1
rtt,raw,posix,2,1,10,turn_ns_64,30.0,ns,29.0-31.0
"""


class Consistency(unittest.TestCase):
    """paper.toml's [[consistency]] through report.py bench-check: what make
    bench-check gates on (and make check never does)."""

    def bench_check(self, text):
        import report
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(text)
        try:
            r = report.Report(f.name, os.path.join(HERE, "paper.toml"))
            r.kinds, r.engine = [], Engine(r.rows, ["lockfree"])  # no launcher asked
            return r.bench_check()
        finally:
            os.unlink(f.name)

    def test_consistent_figures_pass(self):
        text, bad = self.bench_check(CONSISTENT)
        self.assertEqual(bad, 0, text)

    def test_a_gap_below_the_send_overhead_fails(self):
        text, bad = self.bench_check(CONSISTENT.replace("g,0.120,us,0.110-0.130",
                                                        "g,0.050,us,0.040-0.060"))
        self.assertEqual(bad, 1, text)

    def test_a_missing_figure_fails(self):
        text, bad = self.bench_check("\n".join(l for l in CONSISTENT.split("\n")
                                               if "turn_ns_64" not in l))
        self.assertEqual(bad, 1, text)


if __name__ == "__main__":
    unittest.main()
