"""Services through a rendezvous socket (Endpoint.listen, Endpoint.connect,
Token.cred): a server thread, a client of the same process."""

import contextlib
import os
import threading

import shmam

H_WHO = 1


def serve(where, ready, stop, named):
    ep = shmam.Endpoint(named)

    @ep.handler(H_WHO)
    def who(tok, *args, data=None):
        c = tok.cred
        tok.reply(0, *(c if c is not None else (0xFFFFFFFF,)))

    ep.listen(where)
    ready.set()
    while not stop.is_set():
        ep.wait(20)
    ep.close()


@contextlib.contextmanager
def server(where, named=None):
    """A server thread listening at where, until the block ends."""
    ready, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=serve, args=(where, ready, stop, named))
    t.start()
    try:
        assert ready.wait(30)
        yield
    finally:
        stop.set()
        t.join(30)


def test_connect_call_and_cred():
    where = f"@shmam-pytest-{os.getpid()}"
    with server(where):
        c = shmam.Endpoint()
        c.connect(0, where)
        r = c.call(0, H_WHO, timeout=20)
        assert tuple(r.args) == (os.getuid(), os.getgid(), os.getpid())
        c.close()


def test_cred_none_by_name():
    name = f"pyrdv{os.getpid()}"
    with server(f"@shmam-pytest-n{os.getpid()}", name):
        c = shmam.Endpoint()
        c.map(0, name)
        r = c.call(0, H_WHO, timeout=20)
        assert tuple(r.args) == (0xFFFFFFFF,)
        c.close()
