"""Ctrl-C: a blocking wait or call returns on SIGINT as KeyboardInterrupt."""

import signal

from conftest import PYPEER, PYTHON, needs_calls

WAITER = """
import shmam, sys
with shmam.Endpoint(sys.argv[1]) as ep:
    if len(sys.argv) > 2:
        ep.map(0, sys.argv[2])
    try:
        print("ready", flush=True)  # inside the try: a SIGINT from now on is caught
        ep.call(0, 4, timeout=None) if len(sys.argv) > 2 else ep.wait(-1)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


def test_sigint_ends_a_blocking_wait(names, procs):
    p = procs(PYTHON, "-c", WAITER, names())
    p.expect("ready")
    p.p.send_signal(signal.SIGINT)
    p.expect("interrupted", timeout=60)
    assert p.finish()[0] == 0


@needs_calls
def test_sigint_ends_a_blocking_call(names, procs):
    srv = procs(PYPEER, "server", names())
    srv.expect("ready")
    p = procs(PYTHON, "-c", WAITER, names(), srv.p.args[2])
    p.expect("ready")
    p.p.send_signal(signal.SIGINT)
    p.expect("interrupted", timeout=60)
    assert p.finish()[0] == 0
