"""Python and C processes talking: servers and clients each side, killed peers,
calls that end by error or timeout."""

import errno
import os
import signal
import threading
import time

import pytest
from conftest import PYPEER, needs_calls

import shmam

H_ECHO, H_REPLY, H_HANG, H_SLEEP, H_STOP = 1, 2, 4, 5, 6


def echo(tok, *args, data=None):
    """The Python twin of prog_pypeer's ECHO: the same arguments and bytes."""
    tok.reply(H_REPLY, *args, data=b"" if data is None else data)


def serve_until(ep, procs_, timeout=60):
    """Serve ep until every process of procs_ has exited."""
    end = time.monotonic() + timeout
    while any(p.p.poll() is None for p in procs_):
        assert time.monotonic() < end, "clients did not finish"
        ep.wait(100)


def test_python_server_c_clients(names, procs):
    with shmam.Endpoint(names()) as ep:
        ep.set_handler(H_ECHO, echo)
        clients = [procs(PYPEER, "client", names(), ep.name, 90) for _ in range(2)]
        serve_until(ep, clients)
        for c in clients:
            rc, out, err = c.finish()
            assert rc == 0, err
            assert out.split("\n")[-2] == "ok 90"


@pytest.fixture
def c_server(names, procs):
    """A prog_pypeer server, and a Python client endpoint mapping it at 0."""
    srv = procs(PYPEER, "server", names())
    name = srv.p.args[2]
    srv.expect("ready")
    with shmam.Endpoint(names()) as ep:
        ep.map(0, name)
        yield srv, ep


def test_c_server_python_client(c_server):
    srv, ep = c_server
    got = []
    ep.set_handler(H_REPLY, lambda tok, *a, data=None: got.append((a, data and bytes(data))))
    sent = [((1, 2), b""), ((3,), b"abc"), ((4, 5, 6), bytes(range(256)) * 32),
            ((7,), os.urandom(100000))]
    for i, (args, data) in enumerate(sent):
        ep.request(0, H_ECHO, *args, data=data)
        while len(got) <= i:
            assert ep.wait(30000) > 0
    assert got == [(a, d or None) for a, d in sent]
    ep.request(0, H_STOP)
    assert srv.finish()[0] == 0


def test_client_killed_mid_request_server_goes_on(names, procs):
    """A C client is killed (SIGKILL) while the Python server handles its
    request: the reply says PeerGone, and the server serves the next client."""
    outcome = []
    with shmam.Endpoint(names()) as ep:
        victim = procs(PYPEER, "hang", names(), ep.name)

        @ep.handler(H_HANG)
        def slow(tok, data=None):
            victim.kill()  # dead and reaped while its request is being handled
            try:
                tok.reply(H_REPLY)
                outcome.append("replied")
            except shmam.PeerGone:
                outcome.append("PeerGone")

        ep.set_handler(H_ECHO, echo)
        victim.expect("ready")
        victim.expect("sent")
        while not outcome:
            ep.wait(1000)
        assert outcome == ["PeerGone"]
        after = procs(PYPEER, "client", names(), ep.name, 30)
        serve_until(ep, [after])
        rc, out, err = after.finish()
        assert rc == 0 and "ok 30" in out, err
        assert ep.handler_errors == 0


def test_server_killed_then_request_is_peergone(c_server):
    srv, ep = c_server
    ep.request(0, H_HANG)
    srv.kill()
    with pytest.raises(shmam.PeerGone):
        ep.request(0, H_ECHO, 1)


@needs_calls
def test_call_to_c_server(c_server):
    srv, ep = c_server
    data = os.urandom(50000)
    assert ep.call(0, H_ECHO, 7, 8, timeout=30) == shmam.Reply((7, 8), b"")
    assert ep.call(0, H_ECHO, 9, data=b"xyz", timeout=30) == ((9,), b"xyz")
    r = ep.call(0, H_ECHO, 10, data=data, timeout=30, max_reply=len(data))
    assert r.args == (10,) and r.data == data


@needs_calls
def test_server_killed_mid_call_is_peergone(c_server):
    srv, ep = c_server
    killer = threading.Timer(0.3, srv.kill)
    killer.start()
    try:
        with pytest.raises(shmam.PeerGone):
            ep.call(0, H_HANG, timeout=60)
    finally:
        killer.join()


@needs_calls
def test_call_timeout_then_next_call_works(c_server):
    srv, ep = c_server
    with pytest.raises(TimeoutError) as e:
        ep.call(0, H_SLEEP, 1500, timeout=0.2)
    assert isinstance(e.value, shmam.Timeout) and e.value.errno == errno.ETIMEDOUT
    # The late reply to the timed-out call is never given to this one.
    assert ep.call(0, H_ECHO, 5, timeout=30).args == (5,)
    assert ep.call(0, H_SLEEP, 0, 77, timeout=30).args == (0, 77)


@needs_calls
def test_call_to_missing_handler(c_server):
    _, ep = c_server
    with pytest.raises(shmam.NoSuchHandler) as e:
        ep.call(0, 77, timeout=30)
    assert e.value.errno == errno.ENOENT


@needs_calls
def test_python_client_killed_mid_call_server_goes_on(names, procs):
    """A Python client process killed (SIGKILL) while its call waits on the
    Python server's handler: the reply says PeerGone, the server goes on."""
    from conftest import PYTHON

    outcome = []
    with shmam.Endpoint(names()) as ep:
        code = ("import shmam,sys\n"
                "with shmam.Endpoint(sys.argv[1]) as c:\n"
                " c.map(0, sys.argv[2]); print('ready', flush=True)\n"
                " c.call(0, 4, timeout=None)\n")
        victim = procs(PYTHON, "-c", code, names(), ep.name)

        @ep.handler(H_HANG)
        def slow(tok, data=None):
            victim.kill()
            try:
                tok.reply(H_REPLY)
                outcome.append("replied")
            except shmam.PeerGone:
                outcome.append("PeerGone")

        ep.set_handler(H_ECHO, echo)
        victim.expect("ready")
        while not outcome:
            ep.wait(1000)
        assert outcome == ["PeerGone"]
        after = procs(PYPEER, "client", names(), ep.name, 30)
        serve_until(ep, [after])
        rc, out, err = after.finish()
        assert rc == 0 and "ok 30" in out, err


@needs_calls
@pytest.mark.skipif(not shmam.has("am_ep_remap"), reason="libshmam has no am_ep_remap")
def test_remap_reaches_a_restarted_server(names, procs):
    """A C server killed (SIGKILL) mid-run and started again under its name:
    the client's calls end PeerGone, every time, until remap(0) returns;
    then calls reach the new server.  Three restarts."""
    name = names()
    srv = procs(PYPEER, "server", name)
    srv.expect("ready")
    with shmam.Endpoint(names()) as ep:
        ep.map(0, name)
        for round_ in range(3):
            assert ep.call(0, H_ECHO, round_, timeout=30).args == (round_,)
            srv.kill()
            for _ in range(3):  # gone, and stays gone until remapped
                with pytest.raises(shmam.PeerGone):
                    ep.call(0, H_ECHO, 1, timeout=30)
            srv = procs(PYPEER, "server", name)
            srv.expect("ready")
            end = time.monotonic() + 30
            while True:
                try:
                    ep.remap(0)
                    break
                except (shmam.PeerGone, FileNotFoundError, shmam.Error) as e:
                    assert time.monotonic() < end, f"remap never succeeded: {e}"
                    time.sleep(0.01)
            assert ep.call(0, H_ECHO, 7, round_, timeout=30).args == (7, round_)
    srv.kill()
