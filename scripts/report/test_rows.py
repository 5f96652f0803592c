"""test_rows.py - the row schema's one parser and the one median (make check
runs it with the other scripts/report tests)."""

import unittest

import rows


class Parse(unittest.TestCase):
    def test_a_row_with_a_negative_spread(self):
        r = rows.parse_line("logp,lockfree,posix,2,1,20000,L,-0.030,us,-0.050--0.010\n")
        self.assertEqual((r.bench, r.impl, r.procs, r.pinned, r.iters, r.metric),
                         ("logp", "lockfree", 2, 1, 20000, "L"))
        self.assertEqual((r.value, r.lo, r.hi), (-0.03, -0.05, -0.01))

    def test_an_empty_spread_is_the_value(self):
        r = rows.parse_line("demo_many,tas,posix,4,1,1000,bulk_MBps,232.2,MB/s,")
        self.assertEqual((r.lo, r.hi, r.lo_text, r.hi_text), (232.2, 232.2, "232.2", "232.2"))

    def test_headers_comments_and_blanks_are_not_rows(self):
        for line in (rows.HEADER, "# bench,impl", "", "  \n"):
            self.assertIsNone(rows.parse_line(line))

    def test_malformed_lines(self):
        for line in ("rtt,raw,posix,2,1,10,raw_rtt,0.1,us",          # 9 fields
                     "rtt,raw,posix,2,x,10,raw_rtt,0.1,us,0.1-0.2",  # pinned
                     "rtt,raw,posix,2,1,10,raw_rtt,nan,us,",         # value
                     "rtt,raw,posix,2,1,10,raw_rtt,0.1,us,0.1~0.2",  # spread
                     "rtt,raw,posix,2,1,10,raw_rtt,0.1,,"):          # unit
            with self.assertRaises(rows.Malformed, msg=line):
                rows.parse_line(line)

    def test_read_keeps_the_good_and_names_the_bad(self):
        errors = []
        got = rows.read([rows.HEADER, "rtt,raw,posix,2,1,10,raw_rtt,0.1,us,", "bad"], errors)
        self.assertEqual(([r.metric for r in got], len(errors)), (["raw_rtt"], 1))


class Median(unittest.TestCase):
    def test_odd_and_even(self):
        self.assertEqual(rows.median([3, 1, 2]), 2)
        self.assertEqual(rows.median([4, 1, 3, 2]), 2.5)


class Apps(unittest.TestCase):
    def test_verified_runs_only_median_and_spread(self):
        lines = ["app,fft,64,lockfree,posix,8,1.5,verified,1",
                 "app,fft,64,lockfree,posix,8,1.2,verified,1",
                 "app,fft,64,lockfree,posix,8,9.9,FAILED,1",
                 "app,fft,64,lockfree,posix,8,1.9,verified,0",
                 "app,con,comm-x,tas,posix,8,2.0,verified,1"]
        self.assertEqual(list(rows.apps_rows(lines)),
                         ["apps,lockfree,posix,8,0,3,fft,1.5000,s,1.2000-1.9000",
                          "apps,tas,posix,8,1,1,con_comm,2.0000,s,2.0000-2.0000"])


if __name__ == "__main__":
    unittest.main()
