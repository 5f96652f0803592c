"""test_locks.py - the report's lock section (locks.py) reads the threads
per process from lockbench's impl names (make check runs it with the other
scripts/report tests)."""

import os
import tempfile
import unittest

import locks
from verdict import Rows

ROWS = """lockbench,shmam:hapax,-,2,1,100,acq_per_s,2000000,1/s,1900000-2100000
lockbench,shmam:hapax/t2,-,2,1,90,acq_per_s,1000000,1/s,900000-1100000
lockbench,ck:mcs,-,2,1,80,acq_per_s,3000000,1/s,2900000-3100000
lockbench,shmam:hapax/park/cs4/p16/l2/t4,-,2,1,70,acq_per_s,500000,1/s,400000-600000
"""


class Section:
    """What locks.table_at asks of the report: its rows and get()."""

    def __init__(self, rows):
        self.rows = rows

    def get(self, bench, impl, metric, procs=None):
        return self.rows.get(bench, impl, metric, procs)


def cell(f, scale=1):
    return "-" if f is None else f"{f.value * scale:g}"


class Threads(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".csv")
        with os.fdopen(fd, "w") as f:
            f.write(ROWS)
        self.r = Section(Rows(self.path))

    def tearDown(self):
        os.unlink(self.path)

    def test_impl_names_its_threads(self):
        self.assertEqual(locks.threads_of("shmam:mcs"), ("shmam:mcs", 1))
        self.assertEqual(locks.threads_of("shmam:mcs/t2"), ("shmam:mcs", 2))
        self.assertEqual(locks.threads_of("shmam:mcs/park/cs4/p16/l2/t4"),
                         ("shmam:mcs/park/cs4/p16/l2", 4))

    def test_the_table_has_a_threads_column_each_lock_together(self):
        head, lines = locks.table_at(self.r, 2, cell, lambda h, l: (h, l))
        self.assertEqual(head[:3], ["lock", "threads", "M acq/s"])
        self.assertEqual([(l[0], l[1], l[2]) for l in lines],
                         [("shmam:hapax", "1", "2"), ("shmam:hapax", "2", "1"),
                          ("ck:mcs", "1", "3"), ("shmam:hapax/park/cs4/p16/l2", "4", "0.5")])


if __name__ == "__main__":
    unittest.main()
