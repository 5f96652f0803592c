"""Services through a rendezvous socket (Endpoint.listen, Endpoint.connect,
Token.cred): a server thread, a client of the same process."""

import os
import threading

import shmam

H_WHO = 1


def serve(where, ready, stop, named=None):
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


def test_connect_call_and_cred():
    where = f"@shmam-pytest-{os.getpid()}"
    ready, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=serve, args=(where, ready, stop))
    t.start()
    try:
        assert ready.wait(30)
        c = shmam.Endpoint()
        c.connect(0, where)
        r = c.call(0, H_WHO, timeout=20)
        assert tuple(r.args) == (os.getuid(), os.getgid(), os.getpid())
        c.close()
    finally:
        stop.set()
        t.join(30)


def test_cred_none_by_name():
    where = f"@shmam-pytest-n{os.getpid()}"
    name = f"pyrdv{os.getpid()}"
    ready, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=serve, args=(where, ready, stop, name))
    t.start()
    try:
        assert ready.wait(30)
        c = shmam.Endpoint()
        c.map(0, name)
        r = c.call(0, H_WHO, timeout=20)
        assert tuple(r.args) == (0xFFFFFFFF,)
        c.close()
    finally:
        stop.set()
        t.join(30)
