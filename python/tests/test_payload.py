"""A handler's payload view dies with the handler: nothing derived from it
and kept past the return (data[:16], memoryview(data), bytes(data)) reads
another message's bytes or crashes, after the next message or after close();
it raises ValueError or reads a private copy of its own message."""

import os

import pytest
from conftest import HERE, PYTHON

PROG = os.path.join(HERE, "payload_prog.py")


@pytest.mark.parametrize("size", [100, 8192, 200000])
def test_views_kept_past_the_handler(procs, names, size):
    """Bulk (100, 8192 bytes) and long (200000) payloads, in a process of its
    own so that a crash (SIGSEGV) fails the test rather than ending pytest."""
    p = procs(PYTHON, PROG, names(), size)
    status, out, err = p.finish(timeout=60)
    assert (status, out) == (0, "ok\n"), f"status {status}: {out}{err}"
