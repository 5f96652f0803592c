"""A server that forks, for test_fork.py: fork_prog.py NAME MODE.  The child
(MODE exit: it only exits; close: it closes its copy first; use: it tries the
parent's endpoint's methods, each must raise EPERM) ends through the
interpreter's normal exit, at-exit hooks and all.  Then the parent, its
endpoint untouched, answers a client of its own and prints "served"."""

import errno
import os
import sys

import shmam

name, mode = sys.argv[1], sys.argv[2]
ep = shmam.Endpoint(name)
ep.set_handler(1, lambda tok, x, data=None: tok.reply(2, x * x))


def child():
    """What the child does before its normal exit; its exit status."""
    if mode == "close":
        ep.close()
    if mode == "use":
        tries = [ep.poll, lambda: ep.wait(0), lambda: ep.name, lambda: ep.map(0, name),
                 lambda: ep.request(0, 1, 2), lambda: ep.set_handler(3, None),
                 lambda: ep.call(0, 1, 2), ep.fileno]
        for i, t in enumerate(tries):
            try:
                t()
                return 10 + i  # it worked: the child used the parent's endpoint
            except shmam.Error as e:
                if e.errno != errno.EPERM:
                    return 30 + i
        ep.close()
    return 0


pid = os.fork()
if pid == 0:
    sys.exit(child())  # the interpreter's normal exit: atexit hooks run
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status), flush=True)
assert shmam._lib.lib.am_ep_probe(name.encode()) == 1, "the parent's name has gone"
got = []
with shmam.Endpoint() as client:
    client.set_handler(2, lambda tok, y, data=None: got.append(y))
    client.map(0, name)
    client.request(0, 1, 7)
    while not ep.wait(200):
        pass
    while not got:
        client.wait(200)
print("served", got[0], flush=True)
ep.close()
