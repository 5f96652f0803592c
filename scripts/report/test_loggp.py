"""test_loggp.py - the LogGP fits and the protocol-switch detection, on
synthetic data with known L, G and S (make check runs it with the other
scripts/report tests)."""

import math
import unittest

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


class Params(unittest.TestCase):
    def impl(self):
        L, G, o_s, o_r = 0.2, 0.0003, 0.25, 0.3  # µs, µs per byte
        v = {m: {} for m in ("rtt", "g", "os", "os_prtt", "or")}
        for s in SIZES:
            os_, or_ = o_s + s * 0.0001, o_r + s * 0.0002
            v["os"][s], v["or"][s], v["os_prtt"][s] = os_, or_, os_
            # rtt: the message's overheads and L, then the short reply's
            v["rtt"][s] = os_ + or_ + L + s * 0.00005 + o_s + o_r + L
            v["g"][s] = 0.5 + s * G if s <= BULK else 0.9 + s * 2 * G
        return loggp.Impl("lockfree", SIZES, v, [("bulk", BULK), ("long", LONG),
                                                  ("long_at", None)])

    def test_L_G_O_and_G_per_kind_recovered(self):
        q = loggp.params(self.impl())
        self.assertAlmostEqual(q["L"].a, 0.2)
        self.assertAlmostEqual(q["L"].b, 0.000025)
        self.assertAlmostEqual(q["O"].b, 0.0001)
        self.assertAlmostEqual(q["O"].a, 0.25)
        kinds = {k: f for k, _, _, f in q["kinds"]}
        self.assertAlmostEqual(kinds["bulk"].b, 0.0003)
        self.assertAlmostEqual(kinds["long"].b, 0.0006)
        self.assertAlmostEqual(kinds["long_at"].b, 0.0006)
        self.assertEqual(q["configured"], [BULK, LONG])

    def test_param_file_has_every_key(self):
        p = self.impl()
        text = loggp.param_file(p, loggp.params(p), "a test")
        keys = {l.split("=")[0] for l in text.splitlines() if "=" in l and not l.startswith("#")}
        self.assertEqual(keys, {"L", "o", "g", "G", "O", "S"})
        self.assertIn("L=200.0", text)
        self.assertIn("O=0.10000", text)


if __name__ == "__main__":
    unittest.main()
