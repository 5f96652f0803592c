"""Ctrl-C: a blocking wait or call ends on SIGINT as KeyboardInterrupt, wherever
the signal lands (before the wait, while the C library spins, while it
sleeps): ROUNDS SIGINTs at random instants, each ending its wait or call
within BOUND_S."""

import random
import signal
import time

from conftest import PYPEER, PYTHON, needs_calls

ROUNDS = 20
BOUND_S = 1.0  # generous: a wait's slice is 200 ms
LATEST_S = 0.3  # a SIGINT lands this long after "ready" at most

# Each round: print "ready N", block (a call to the server's SLEEP handler,
# which answers only after 60 s, or a wait with nothing to come) until the
# SIGINT, print "interrupted N".  The call takes little reply room (max_reply),
# so the calls cancelled before keep none that the next needs.  Python leaves
# SIGINT ignored when it starts so (a background job of a shell without job
# control, as make check may be): the waiter takes Ctrl-C's usual handler.
WAITER = """
import shmam, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
with shmam.Endpoint(sys.argv[1]) as ep:
    calls = len(sys.argv) > 3
    if calls:
        ep.map(0, sys.argv[3])
    for i in range(int(sys.argv[2])):
        try:
            print("ready", i, flush=True)  # inside the try: a SIGINT from now on is caught
            if calls:
                ep.call(0, 5, 60000, timeout=None, max_reply=64)
            else:
                ep.wait(-1)
            print("returned", i, flush=True)
        except KeyboardInterrupt:
            print("interrupted", i, flush=True)
"""


def rounds(p):
    """Send ROUNDS SIGINTs to p, each at a random instant after its "ready";
    each must be answered with "interrupted" within BOUND_S."""
    rng = random.Random()
    worst = 0.0
    for i in range(ROUNDS):
        p.expect(f"ready {i}")
        time.sleep(rng.uniform(0, LATEST_S))
        t0 = time.monotonic()
        p.p.send_signal(signal.SIGINT)
        p.expect(f"interrupted {i}", timeout=60)
        worst = max(worst, time.monotonic() - t0)
    assert worst < BOUND_S, f"a SIGINT took {worst:.2f} s to end its wait"
    assert p.finish()[0] == 0


def test_sigint_ends_a_blocking_wait(names, procs):
    rounds(procs(PYTHON, "-c", WAITER, names(), ROUNDS))


@needs_calls
def test_sigint_ends_a_blocking_call(names, procs):
    srv = procs(PYPEER, "server", names())
    srv.expect("ready")
    rounds(procs(PYTHON, "-c", WAITER, names(), ROUNDS, srv.p.args[2]))
