"""Endpoints in an asyncio loop: handlers run by the loop, calls awaited."""

import asyncio

import pytest
from conftest import PYPEER, needs_calls, needs_fd

import shmam

H_REQ, H_REP = 1, 2


@pytest.fixture
def pair(names):
    with shmam.Endpoint(names()) as a, shmam.Endpoint(names()) as b:
        b.map(0, a.name)
        yield a, b


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
