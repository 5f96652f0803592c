"""_aio.py - an endpoint in an asyncio loop: await ep.call_async(...), await ep.serve().

A driver per endpoint (and loop) makes progress: it polls the endpoint, which
runs its handlers in the loop's thread, and tests the calls in flight.  It runs
when the loop says the endpoint's file descriptor is readable (am_ep_fd, issue
27, where the library has it), else as a task that polls while there is work
(calls in flight, or serve() awaited): every loop iteration while messages come,
then sleeping up to IDLE_MAX_S between polls once IDLE_SPINS polls found none.
That interim task costs latency (up to IDLE_MAX_S after a quiet spell), never
correctness.

Handler exceptions go to the serve() awaiting (it raises them), else to one call
in flight, else to the loop's exception handler.

No C call call_async makes on the loop's thread waits: it starts a call with
am_call_try, which never waits, and waits in the loop while that finds no room
(see TRY_NAP_S).  What may still wait in C: a handler's plain reply to a full
queue (the endpoint's send_timeout_ms bounds it); with a library older than
am_call_try, a call's start (am_call_start, up to the call's deadline).
"""

import asyncio
import errno

from . import _lib
from ._errors import Error, error
from ._lib import ffi, lib
from ._msg import _bytes_of, _call_error, _fill, _reply, _timeout_ms

IDLE_SPINS = 200  # polls that found nothing before the task starts to sleep
IDLE_MAX_S = 0.002  # the longest sleep between polls of the task
# call_async starts its call with am_call_try: -EAGAIN when a call record,
# reply room or room in the destination's queue is not free now.  Then the
# call waits in the loop, polling (replies end calls and free room) and
# trying again between TRY_NAP_S sleeps, until it starts or its deadline
# passes.
TRY_NAP_S = (0.0005, 0.02)  # the first and the longest sleep between tries
try_waits = 0  # calls that found no room at once and waited in the loop (for tests)


class _Driver:
    def __init__(self, ep, loop):
        self.ep, self.loop = ep, loop
        self.calls = {}  # call id -> (future, struct am_result *, buffer)
        self.serving = set()  # the futures of serve() calls awaiting
        self.task = None
        self.fd = None
        if _lib.has("am_ep_fd"):
            fd = lib.am_ep_fd(ep._p())
            if fd >= 0:
                loop.add_reader(fd, self.pump)
                self.fd = fd

    def busy(self):
        return bool(self.calls or self.serving)

    def polled(self):
        """Work the task must poll for: all of it without a descriptor; with
        one, calls in flight (their deadlines and dead servers make the
        descriptor readable by no message)."""
        return self.busy() if self.fd is None else bool(self.calls)

    def kick(self):
        """Make sure something will pump while there is work."""
        if self.task is None and self.polled():
            self.task = self.loop.create_task(self._run())
        if self.fd is not None:
            self.loop.call_soon(self.pump)  # what came before the reader was armed

    def pump(self, test_calls=True):
        """Poll once and finish the calls that ended; True if anything happened."""
        ep = self.ep
        if ep._ep is None:
            return False
        n = lib.am_poll(ep._ep)
        exc = ep._take_exc()
        if exc is not None:
            self._deliver(exc)
        if n < 0:
            self._fail_all(error(n, "am_poll"))
            return False
        done = 0
        if self.calls and (n or test_calls):
            for cid in list(self.calls):
                rc = lib.am_call_test(ep._ep, cid)
                if rc != -errno.EINPROGRESS:
                    self._finish(cid, rc)
                    done += 1
        return bool(n or done)

    def _finish(self, cid, rc):
        fut, res, buf = self.calls.pop(cid)
        if not fut.done():
            fut.set_result(_reply(res)) if rc == 0 else fut.set_exception(
                _call_error(self.ep, rc, "call_async", res, 0))
        self.ep._pool_back(res, buf)

    def _deliver(self, exc):
        for fut in self.serving:
            if not fut.done():
                fut.set_exception(exc)
                return
        for fut, _, _ in self.calls.values():
            if not fut.done():
                fut.set_exception(exc)
                return
        self.loop.call_exception_handler(
            {"message": "shmam handler raised", "exception": exc})

    def _fail_all(self, exc):
        for fut in list(self.serving) + [c[0] for c in self.calls.values()]:
            if not fut.done():
                fut.set_exception(exc)

    async def _run(self):
        idle = 0
        try:
            while self.polled():
                # Test calls every time only once asleep: a poll that ran nothing
                # cannot have finished a call but by its deadline or a death.
                if self.pump(test_calls=idle >= IDLE_SPINS):
                    idle = 0
                    await asyncio.sleep(0)
                else:
                    idle += 1
                    over = idle - IDLE_SPINS
                    await asyncio.sleep(0 if over < 0 else min(IDLE_MAX_S, 0.00005 * (over + 1)))
        finally:
            self.task = None

    def detach(self):
        """The endpoint closes: stop pumping, cancel its calls."""
        if self.fd is not None:
            self.loop.remove_reader(self.fd)
            self.fd = None
        if self.task is not None:
            self.task.cancel()
        for cid in list(self.calls):
            lib.am_call_cancel(self.ep._ep, cid)
            self._finish(cid, -errno.ECANCELED)
        self._fail_all(Error(errno.ECANCELED, "endpoint closed"))
        self.ep._driver = None


class AsyncMixin:
    """Endpoint's asyncio methods."""

    def _driver_for(self, loop):
        d = self._driver
        if d is None or d.loop is not loop:
            if d is not None:
                d.detach()
            d = self._driver = _Driver(self, loop)
        return d

    async def _start(self, d, start, deadline):
        """Start a call in the loop: start() is am_call_try's rc (or
        am_call_start's, on a library without it), retried while -EAGAIN
        (see TRY_NAP_S) until the deadline (loop time): then -ETIMEDOUT."""
        global try_waits
        nap, waited = TRY_NAP_S[0], False
        while (rc := start()) == -errno.EAGAIN:
            try_waits += not waited
            waited = True
            d.pump()  # replies that end calls, handler exceptions
            exc = self._take_exc()
            if exc is not None:
                d._deliver(exc)
            if deadline is not None and d.loop.time() >= deadline:
                return -errno.ETIMEDOUT
            await asyncio.sleep(nap)
            nap = min(2 * nap, TRY_NAP_S[1])
        return rc

    async def call_async(self, dest, handler, *args, data=b"", timeout=1.0, max_reply=None):
        """ep.call in an asyncio loop: await it; many may be in flight.  It
        never blocks the loop waiting for room (reply room, a full queue): it
        waits in the loop."""
        _lib.need("am_call_start", "am_call_test", "am_call_cancel")
        loop = asyncio.get_running_loop()
        d = self._driver_for(loop)
        deadline = None if timeout is None or timeout < 0 else loop.time() + timeout
        if max_reply is not None:
            res, buf = self._result(max_reply)
        else:
            res, buf = self._pool.pop() if self._pool else self._result()
        data_p, ln = _bytes_of(data)
        idp = ffi.new("am_call_t *")
        begin = lib.am_call_try if _lib.has("am_call_try") else lib.am_call_start

        def start():  # the args buffer is the endpoint's: filled at each try
            argv, n = _fill(self._req_args, args)
            left = -1 if deadline is None else max(0.0, deadline - loop.time())
            return begin(self._p(), dest, handler, argv, n, data_p, ln, res,
                         _timeout_ms(left), idp)

        try:
            rc = await self._start(d, start, deadline)
        except BaseException:
            self._pool_back(res, buf)
            raise
        if rc < 0:
            self._pool_back(res, buf)
            exc = self._take_exc()
            raise exc if exc is not None else _call_error(self, rc, "call_async", res, ln)
        cid = idp[0]
        fut = loop.create_future()
        d.calls[cid] = (fut, res, buf)
        d.kick()
        try:
            return await fut
        finally:
            if cid in d.calls:  # cancelled (or the task unwound): end the call now
                lib.am_call_cancel(self._ep, cid)
                d._finish(cid, -errno.ECANCELED)

    async def serve(self):
        """Run this endpoint's handlers in the running loop until cancelled;
        raises what a handler raised."""
        loop = asyncio.get_running_loop()
        d = self._driver_for(loop)
        fut = loop.create_future()
        d.serving.add(fut)
        d.kick()
        try:
            await fut
        finally:
            d.serving.discard(fut)
