"""A call's limits, as Python shows them: the reply cap (max_reply) named by
the exception a longer reply raises, and call_async waiting for reply room in
the event loop, never on it."""

import asyncio
import os
import signal

import pytest
from conftest import PYPEER, needs_calls

import shmam
from shmam import _aio

H_ECHO = 1
LOOP_STEP_BOUND_S = 1.0  # generous: the wrong code blocks for a call's whole wait (5 s)


@pytest.fixture
def c_server(names, procs):
    """A prog_pypeer server (echo), its process, and its name."""
    srv = procs(PYPEER, "server", names())
    srv.expect("ready")
    return srv, srv.p.args[2]


@needs_calls
def test_reply_over_the_cap_names_it(names, c_server):
    """A 60 KB reply to a call of the default cap raises MessageTooLong that
    says the reply cap was hit (16384, max_reply) and how to raise it; with
    max_reply raised, the same call returns it."""
    _, server = c_server
    data = os.urandom(60000)
    with shmam.Endpoint(names()) as ep:
        ep.map(0, server)
        with pytest.raises(shmam.MessageTooLong) as e:
            ep.call(0, H_ECHO, 1, data=data, timeout=30)
        text = str(e.value)
        assert "reply cap" in text and "max_reply=16384" in text, text
        assert e.value.reply_cap == 16384
        assert ep.call(0, H_ECHO, 1, data=data, timeout=30, max_reply=65536).data == data

        async def later():
            return await ep.call_async(0, H_ECHO, 2, data=data, timeout=30)

        with pytest.raises(shmam.MessageTooLong, match="max_reply=16384"):
            asyncio.run(later())


def _calls_beside_a_ticker(ep, n, **kw):
    """n call_async to index 0 (5 s deadlines) while a ticker measures the
    loop's steps: (the longest step in seconds, the calls' ends)."""

    async def main():
        loop = asyncio.get_running_loop()
        worst, going = [0.0], [True]

        async def ticker():
            while going[0]:
                t = loop.time()
                await asyncio.sleep(0.01)
                worst[0] = max(worst[0], loop.time() - t)

        tick = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)
        calls = [ep.call_async(0, H_ECHO, i, timeout=5, **kw) for i in range(n)]
        ends = await asyncio.gather(*calls, return_exceptions=True)
        going[0] = False
        await tick
        return worst[0], ends

    return asyncio.run(main())


@needs_calls
def test_call_async_waits_for_room_in_the_loop(names, c_server):
    """With the server stopped (SIGSTOP) and the client's reply room taken by
    the calls sent to it, further calls wait for room; meanwhile no step of
    the loop takes longer than LOOP_STEP_BOUND_S (a ticker measures), and each
    call ends at its own deadline."""
    srv, server = c_server
    os.kill(srv.pid, signal.SIGSTOP)
    waits = _aio.try_waits
    # long_max 4096: a reply heap of a few dozen rooms (32 today) for 100 calls.
    with shmam.Endpoint(names(), long_max=4096) as ep:
        ep.map(0, server)
        worst, ends = _calls_beside_a_ticker(ep, 100)
    os.kill(srv.pid, signal.SIGCONT)
    assert _aio.try_waits > waits, "no call waited for room: the test proved nothing"
    assert all(isinstance(e, shmam.Timeout) for e in ends), ends
    assert worst < LOOP_STEP_BOUND_S, f"a loop step took {worst:.3f} s"


@needs_calls
def test_call_async_waits_for_a_full_queue_in_the_loop(names, c_server):
    """With the server stopped (SIGSTOP), calls that take no reply room
    (max_reply=0) fill its request queue (128 packets); the calls after them
    find no room in it and wait in the loop (am_call_try), not on it: no step
    of the loop takes longer than LOOP_STEP_BOUND_S, and each call ends at its
    own deadline."""
    srv, server = c_server
    os.kill(srv.pid, signal.SIGSTOP)
    waits = _aio.try_waits
    # 512 packets: records for more calls than the server's queue holds.
    with shmam.Endpoint(names(), packets=512) as ep:
        ep.map(0, server)
        worst, ends = _calls_beside_a_ticker(ep, 200, max_reply=0)
    os.kill(srv.pid, signal.SIGCONT)
    assert _aio.try_waits > waits, "no call waited for the queue: the test proved nothing"
    assert all(isinstance(e, shmam.Timeout) for e in ends), ends
    assert worst < LOOP_STEP_BOUND_S, f"a loop step took {worst:.3f} s"
