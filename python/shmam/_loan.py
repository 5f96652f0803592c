"""_loan.py - shmam.Loan: a copy-free request (am_request_prepare / commit).

ep.lend(dest, nbytes) lends room for nbytes in the peer's queue (its next bulk
block up to MAX_BULK bytes, else a block of its heap) and returns a Loan whose
`view` is a writable memoryview of exactly that shared memory: write the
payload there, then loan.commit(handler, *args, length=n) sends the first n
bytes (all of them by default) to the handler, with no copy; or
loan.cancel() gives the room back.  As a context manager, a loan neither
committed nor cancelled when the block ends is cancelled.

The view is released at commit or cancel: any use of it afterwards raises
ValueError.  A slice or export taken of it (view[:16], numpy.frombuffer)
still points into the peer's queue after that; writing through it then
garbles other messages: never keep one past the commit.  One loan per
thread at a time (Error EBUSY for a second); the endpoint's other methods
may run meanwhile.
"""

import errno

from ._errors import error, check
from ._lib import ffi, lib
from ._msg import _fill


class Loan:
    """Room lent in a peer's queue; see the module's text."""

    def __init__(self, ep, dest, nbytes):
        p = ep._p()
        out = ffi.new("void **")
        rc = lib.am_request_prepare(p, dest, nbytes, out)
        ep._after()
        check(rc, "lend")
        self._ep, self._n, self._open = ep, nbytes, True
        self.view = memoryview(ffi.buffer(out[0], nbytes))

    def _end(self):
        if not self._open:
            raise error(-errno.EINVAL, "the loan has ended already")
        self._open = False
        self.view.release()

    def commit(self, handler, *args, length=None):
        """Send the first `length` bytes (default: all) to handler of the peer."""
        n = self._n if length is None else length
        if not 0 <= n <= self._n:
            raise ValueError(f"length {n} is outside the loan's {self._n} bytes")
        if not self._open:
            raise error(-errno.EINVAL, "the loan has ended already")
        argv, na = _fill(self._ep._req_args, args)
        rc = lib.am_request_commit(self._ep._p(), handler, n, argv, na)
        if rc not in (-errno.EINVAL, -errno.EMSGSIZE):  # these leave the loan out
            self._end()
        self._ep._after()
        check(rc, "commit")

    def cancel(self):
        """Give the room back; nothing is sent."""
        self._end()
        check(lib.am_request_cancel(self._ep._p()), "cancel")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._open:
            self.cancel()
