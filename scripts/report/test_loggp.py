"""test_loggp.py - the LogGP fits and the protocol-switch detection, on
synthetic data with known L, G and S (make check runs it with the other
scripts/report tests)."""

import math
import unittest

import loggopsim
import loggp

SIZES = [0] + [1 << i for i in range(23)] + [8193, 1048577]
SIZES = sorted(set(SIZES))
BULK, LONG = 8192, 1 << 20


def piecewise(s):
    """rtt (µs) of three protocols: bulk, long (a heap block: +1.5 µs, a
    second copy), long_at (one copy less, a region write: +20 µs)."""
    if s <= BULK:
        return 0.8 + s * 0.0004
    if s <= LONG:
        return 2.3 + s * 0.0006
    return 22.3 + s * 0.0003


class Fit(unittest.TestCase):
    def test_exact_line(self):
        f = loggp.lsq([0, 1, 2, 10], [3.0, 3.5, 4.0, 8.0])
        self.assertAlmostEqual(f.a, 3.0)
        self.assertAlmostEqual(f.b, 0.5)
        self.assertAlmostEqual(f.se_b, 0.0)
        self.assertAlmostEqual(f.rms, 0.0)

    def test_standard_error_of_a_noisy_line(self):
        # residuals +-1 alternating around y = 1 + 2x: slope 2, se known
        xs = [0, 1, 2, 3]
        ys = [1 + 2 * x + (1 if i % 2 else -1) for i, x in enumerate(xs)]
        f = loggp.lsq(xs, ys)
        sxx = sum((x - 1.5) ** 2 for x in xs)
        rss = sum((y - f.a - f.b * x) ** 2 for x, y in zip(xs, ys))
        self.assertAlmostEqual(f.se_b, math.sqrt(rss / 2 / sxx))
        self.assertGreater(f.se_b, 0)

    def test_too_few_points(self):
        self.assertIsNone(loggp.lsq([5], [1.0]))
        self.assertIsNone(loggp.lsq([5, 5], [1.0, 2.0]))


class Switches(unittest.TestCase):
    def test_both_switches_found_at_the_limits(self):
        xs = [s for s in SIZES if s >= 1]
        self.assertEqual(loggp.switches(xs, [piecewise(s) for s in xs]), [BULK, LONG])

    def test_one_line_has_no_switch_even_with_noise(self):
        xs = [s for s in SIZES if s >= 1]
        ys = [(1 + 0.0005 * s) * (1.02 if i % 2 else 0.98) for i, s in enumerate(xs)]
        self.assertEqual(loggp.switches(xs, ys), [])

    def test_a_slope_change_alone_is_found(self):
        xs = [1 << i for i in range(0, 23)]
        ys = [1 + 0.001 * s if s <= 65536 else 1 + 0.001 * 65536 + 0.004 * (s - 65536)
              for s in xs]
        self.assertEqual(loggp.switches(xs, ys), [65536])

    def test_match_takes_the_size_below_a_limit_not_measured(self):
        self.assertTrue(loggp.match([8192], 8192, SIZES))
        self.assertTrue(loggp.match([4096], 5000, [1024, 4096, 8192]))
        self.assertFalse(loggp.match([1024], 8192, SIZES))


def synthetic(name, L, o_s, o_r, G, O, g0, limits, sizes=SIZES):
    """An Impl whose figures follow LogGP exactly (µs; both ways s bytes)."""
    v = {m: {} for m in loggp.METRICS}
    for s in sizes:
        os_, or_ = o_s + s * O, o_r + s * O * 2
        v["os"][s], v["or"][s], v["or_poll"][s] = os_, or_, or_ / 2
        v["rtt"][s] = 2 * (os_ + or_ + L + s * 0.00005)
        v["rtt0"][s] = v["rtt"][s] / 2 + os_ + or_
        v["g"][s] = g0 + s * G
        v["prttn"][s] = v["rtt"][s] + 7 * v["g"][s]
        v["prttd"][s] = v["rtt"][s] + 7 * (v["rtt"][s] + os_)
        v["os_prtt"][s] = os_
    return loggp.Impl(name, sizes, v, limits)


SHM_LIMITS = [("bulk", BULK), ("long", LONG), ("long_at", None)]


class Params(unittest.TestCase):
    def impl(self):
        return synthetic("lockfree", 0.2, 0.25, 0.3, 0.0003, 0.0001, 0.5, SHM_LIMITS)

    def test_L_netgauge_and_L_fit_O_recovered(self):
        q = loggp.params(self.impl())
        self.assertAlmostEqual(q["L"], (2 * (0.25 + 0.0001 + 0.3 + 0.0002 + 0.2 + 0.00005)) / 2)
        self.assertAlmostEqual(q["L_fit"].a, 0.2)
        self.assertAlmostEqual(q["L_fit"].b, 0.00005)
        self.assertAlmostEqual(q["O"].b, 0.0001)
        self.assertAlmostEqual(q["G"].b, 0.0003)
        self.assertEqual(q["configured"], [BULK, LONG])

    def test_param_file_is_netgauges_layout(self):
        p = self.impl()
        text = loggp.param_file(p, loggp.params(p), "a test")
        rows = [l.split() for l in text.splitlines() if not l.startswith("#")]
        self.assertEqual([int(r[0]) for r in rows], SIZES)
        for r in rows:  # size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,d,s) L o_s o_r g G lsqu
            self.assertEqual(len(r), 11)
            self.assertEqual(r[1], "8")
            s = int(r[0])
            self.assertAlmostEqual(float(r[2]), p.v["rtt"][s], places=5)
            self.assertAlmostEqual(float(r[5]), loggp.params(p)["L"], places=5)
        self.assertIn("# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G "
                      "lsqu(g,G)", text)
        self.assertIn("LogGOPSim -f lockfree.bin -L ", text)


class Model(unittest.TestCase):
    """loggopsim.py's semantics, against LogGOPSim's published ones."""

    def test_pingpong_is_2L_plus_4o(self):
        r = loggopsim.parse_goal(loggopsim.pingpong(1, 10))
        self.assertEqual(loggopsim.simulate(r, 100, 50, 10, 1, 0, 65535), 10 * (200 + 200))

    def test_bytes_cost_max_G_O_at_the_receiver_each_way(self):
        r = loggopsim.parse_goal(loggopsim.pingpong(1001, 3))
        self.assertEqual(loggopsim.simulate(r, 100, 50, 10, 2, 1, 65535),
                         3 * (200 + 200 + 2 * 1000 * 2))

    def test_eager_sends_overlap_rendezvous_ones_wait(self):
        goal = ("num_ranks 2\nrank 0 {\nl1: send 100b to 1 tag 0\nl2: calc 1000\n"
                "l2 requires l1\n}\nrank 1 {\nl1: calc 5000\nl2: recv 100b from 0 tag 0\n"
                "l2 requires l1\n}\n")
        r = loggopsim.parse_goal(goal)
        # eager: rank 0's calc follows its o; rank 1 takes the message in at 5000
        self.assertEqual(loggopsim.simulate(r, 10, 5, 1, 0, 0, 1000), 5005)
        # rendezvous (S < 100): rank 0's calc waits until rank 1 took it in
        self.assertEqual(loggopsim.simulate(r, 10, 5, 1, 0, 0, 10), 6000)

    def test_negative_parameter_refused(self):
        r = loggopsim.parse_goal(loggopsim.pingpong(1, 1))
        with self.assertRaises(ValueError):
            loggopsim.simulate(r, -1, 5, 1, 0, 0, 10)


class Export(unittest.TestCase):
    def export(self, p):
        return loggp.loggopsim_params(p, loggp.params(p))

    def test_options_are_integers_the_parser_takes(self):
        for p in (synthetic("lockfree", 0.02, 0.08, 0.07, 0.00004, 0.00002, 0.11, SHM_LIMITS),
                  synthetic("mpich", 0.015, 0.09, 0.09, 0.00011, 0.00013, 0.12,
                            [("all sizes", None)])):
            x = self.export(p)
            opts = loggopsim.parse_command(x["argv"])
            self.assertEqual(set(opts), {"f", "L", "o", "g", "G", "O", "S"})
            for k in loggopsim.OPTIONS:
                self.assertIsInstance(opts[k], int, p.name)
                self.assertGreaterEqual(opts[k], 0, p.name)
            self.assertGreater(opts["S"], 0, p.name)
            self.assertGreater(opts["G"], 0, f"{p.name}: G vanished when rounded")
            self.assertEqual(x["unit"], "ps")

    def test_parser_refuses_what_the_old_line_wrote(self):
        for bad in (["-G", "0.26816"], ["-L", "694.0"], ["-S", ""], ["-o", " 1"], ["L=694"]):
            with self.assertRaises(ValueError, msg=bad):
                loggopsim.parse_command(bad)

    def test_model_round_trip_within_tolerance_shared_memory_and_mpich(self):
        # shared memory: o_s + o_r > RTT/2 (L would be negative): clamped, noted
        shm = synthetic("lockfree", -0.01, 0.08, 0.08, 0.00004, 0.00002, 0.11, SHM_LIMITS)
        mpi = synthetic("mpich", 0.015, 0.09, 0.09, 0.00011, 0.00013, 0.12, [("all sizes", None)])
        for p in (shm, mpi):
            x = self.export(p)
            self.assertLessEqual(abs(x["ratio"] - 1), loggp.MODEL_TOL, p.name)
        x = self.export(shm)
        self.assertEqual(x["ints"]["L"], 0)
        self.assertTrue(any("clamped" in n for n in x["notes"]))

    def test_negative_g_clamped_and_said(self):
        p = synthetic("lockfree", 0.02, 0.08, 0.07, 0.00004, 0.00002, -0.05, SHM_LIMITS)
        x = self.export(p)
        self.assertEqual(x["ints"]["g"], 0)
        self.assertTrue(any(n.startswith("g = ") for n in x["notes"]))

    def test_S_never_0_without_a_switch_or_limit(self):
        xs = [s for s in SIZES if s <= 65536]
        p = synthetic("mpich", 0.015, 0.09, 0.09, 0.00011, 0.00013, 0.12, [("all sizes", None)],
                      xs)
        self.assertEqual(self.export(p)["ints"]["S"], 65536)

    def test_ns_when_G_is_a_nanosecond_or_more(self):
        p = synthetic("slow", 0.5, 0.2, 0.2, 0.002, 0.001, 0.3, [("all sizes", None)])
        x = self.export(p)
        self.assertEqual(x["unit"], "ns")
        self.assertEqual(x["ints"]["G"], 2)


if __name__ == "__main__":
    unittest.main()
