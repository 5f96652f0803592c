"""shmam - shared-memory Active Messages for Python (Debian's /usr/bin/python3).

Pure Python over libshmam.so.1 through cffi in ABI mode (Debian python3-cffi):
nothing is compiled at install time.  See shmam-python(7) and README.md.

    import shmam
    with shmam.Endpoint("server") as ep:
        @ep.handler(1)
        def square(token, x, data=None):
            token.reply(2, x * x)
        while True:
            ep.wait()

    with shmam.Endpoint("client") as ep:
        ep.map(0, "server")
        print(ep.call(0, 1, 7).args)          # (49,)
"""

from ._endpoint import Endpoint, Token, anonymous_supported
from ._errors import (Cancelled, Error, Interrupted, MessageTooLong, NoSuchHandler,
                      PeerGone, Timeout, strerror)
from ._job import barrier, finalize, init, nprocs, rank
from ._lib import has, lib as _c
from ._lib import path as library_path
from ._loan import Loan
from ._msg import Reply

MAX_ARGS = _c.AM_MAX_ARGS  # shmam.h's, read from the library's cdef
MAX_BULK = _c.AM_MAX_BULK
MAX_MEDIUM = _c.AM_MAX_MEDIUM
MAX_HANDLERS = _c.AM_MAX_HANDLERS


def has_calls():
    """Does the loaded libshmam have the calls API (am_call and friends)?"""
    return has("am_call") and has("am_call_start")


def has_fd():
    """Does the loaded libshmam give endpoints a file descriptor (am_ep_fd)?"""
    return has("am_ep_fd")


__all__ = [
    "Endpoint", "Token", "Reply", "Loan", "Error", "PeerGone", "Timeout", "Interrupted",
    "NoSuchHandler", "MessageTooLong", "Cancelled", "strerror", "init", "rank",
    "nprocs", "barrier", "finalize", "has", "has_calls", "has_fd",
    "anonymous_supported", "library_path", "MAX_ARGS", "MAX_BULK", "MAX_HANDLERS",
]
