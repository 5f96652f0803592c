"""Endpoints in an asyncio loop: handlers run by the loop, calls awaited."""

import asyncio

import pytest
from conftest import PYPEER, needs_calls, needs_fd

import shmam

H_REQ, H_REP = 1, 2


def test_two_endpoints_in_one_loop(pair):
    """Server a and client b both served by one loop; the client's requests
    (16 in flight) are answered through a reply handler resolving futures."""
    a, b = pair
    a.set_handler(H_REQ, lambda tok, i, x, data=None: tok.reply(H_REP, i, x * x, data=data))
    waiting = {}

    @b.handler(H_REP)
    def done(tok, i, y, data=None):
        waiting.pop(i).set_result((y, bytes(data) if data is not None else None))

    async def one(i, sem):
        async with sem:
            fut = asyncio.get_running_loop().create_future()
            waiting[i] = fut
            b.request(0, H_REQ, i, i + 3, data=bytes([i % 256]) * (i % 3) * 5000)
            return await asyncio.wait_for(fut, 30)

    async def main():
        servers = [asyncio.create_task(a.serve()), asyncio.create_task(b.serve())]
        sem = asyncio.Semaphore(16)
        out = await asyncio.gather(*(one(i, sem) for i in range(300)))
        for t in servers:
            t.cancel()
        await asyncio.gather(*servers, return_exceptions=True)
        return out

    out = asyncio.run(main())
    assert out == [((i + 3) ** 2, bytes([i % 256]) * (i % 3) * 5000 or None) for i in range(300)]


def test_serve_raises_what_a_handler_raised(pair):
    a, b = pair
    a.set_handler(H_REQ, lambda tok, data=None: {}["missing"])

    async def main():
        b.request(0, H_REQ)
        await asyncio.wait_for(a.serve(), 30)

    with pytest.raises(KeyError):
        asyncio.run(main())


@needs_calls
def test_call_async_32_in_flight(names):
    # Server and client share this thread, so a send that waits for room in the
    # server's queue would wait for ever: give it room for all 32 bulk requests.
    with shmam.Endpoint(names(), bulk_blocks=64) as a, shmam.Endpoint(names()) as b:
        b.map(0, a.name)
        _call_async_32_in_flight(a, b)


def _call_async_32_in_flight(a, b):
    a.set_handler(H_REQ, lambda tok, i, data=None: tok.reply(0, i, 2 * i, data=data))

    async def main():
        server = asyncio.create_task(a.serve())
        out = await asyncio.gather(*(b.call_async(0, H_REQ, i, data=b"z" * i, timeout=30)
                                     for i in range(32)))
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        return out

    out = asyncio.run(main())
    assert out == [shmam.Reply((i, 2 * i), b"z" * i) for i in range(32)]


@needs_calls
def test_call_async_to_c_server_times_out(names, procs):
    srv = procs(PYPEER, "server", names())
    srv.expect("ready")

    async def main(ep):
        ok = await ep.call_async(0, 1, 3, timeout=30)
        with pytest.raises(TimeoutError):
            await ep.call_async(0, 5, 2000, timeout=0.2)
        return ok

    with shmam.Endpoint(names()) as ep:
        ep.map(0, srv.p.args[2])
        assert asyncio.run(main(ep)).args == (3,)


@needs_fd
def test_loop_watches_the_endpoint_fd(pair):
    a, b = pair
    got = []
    a.set_handler(H_REQ, lambda tok, x, data=None: got.append(x))

    async def main():
        server = asyncio.create_task(a.serve())
        await asyncio.sleep(0)
        assert a._driver.fd == a.fileno()  # a reader, not the polling task
        b.request(0, H_REQ, 9)
        while not got:
            await asyncio.sleep(0.01)
        server.cancel()

    asyncio.run(main())
    assert got == [9]


@needs_calls
@needs_fd
def test_serve_places_a_kept_call_reply(names):
    """A server under serve(), on its descriptor: a client (another thread)
    fills its own reply queue (8 packets) with 8 plain replies it does not
    take, then starts a call and waits until the server has replied to it:
    that reply had to be kept (the caller's queue was full).  Only then does
    the client take its replies; no message comes to make the server's
    descriptor readable, yet the call must get its reply before its deadline."""
    import threading

    from shmam._lib import ffi, lib

    server, client_name = names(), names()
    out, handled, full, replied = {}, [0], threading.Event(), threading.Event()

    def plain(tok, i, data=None):
        tok.reply(H_REP, i)
        handled[0] += 1
        if handled[0] == 8:
            full.set()

    def double(tok, x, data=None):
        tok.reply(0, 2 * x)
        replied.set()

    def client():
        with shmam.Endpoint(client_name, packets=8) as c:  # a reply queue of 8
            c.map(0, server)
            c.set_handler(H_REP, lambda tok, i, data=None: None)
            for i in range(8):
                c.request(0, H_REQ, i)
            assert full.wait(30)
            res, idp = ffi.new("struct am_result *"), ffi.new("am_call_t *")
            args = ffi.new("uint32_t[1]", [21])
            out["start"] = lib.am_call_start(c._ep, 0, 3, args, 1, ffi.NULL, 0, res, 10000, idp)
            assert replied.wait(30)  # kept by the server: our queue is full
            out["end"] = lib.am_call_wait(c._ep, idp[0], 20000)
            out["args"] = tuple(res.args[0:res.nargs])

    with shmam.Endpoint(server) as s:
        s.set_handler(H_REQ, plain)
        s.set_handler(3, double)

        async def main():
            serving = asyncio.create_task(s.serve())
            t = threading.Thread(target=client)
            t.start()
            while t.is_alive():
                await asyncio.sleep(0.01)
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)

        asyncio.run(main())
    assert out == {"start": 0, "end": 0, "args": (42,)}, out
