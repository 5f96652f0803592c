"""_msg.py - what requests, replies and calls share: arguments and data into
C, a call's reply out of it, timeouts, and the check for pending signals."""

import errno
import math
from typing import NamedTuple

from ._errors import MessageTooLong, error
from ._lib import ffi, lib

AM_MAX_BULK = lib.AM_MAX_BULK

_nobuf = ffi.NULL


class Reply(NamedTuple):
    """What a call returns: the reply's arguments and its bytes."""

    args: tuple
    data: bytes


def _signals():
    """Let pending Python signal handlers run now: entering any Python function
    checks them, so a KeyboardInterrupt from SIGINT propagates from here."""


def _fill(buf, args):
    """Copy args (ints 0 .. 2**32-1) into the uint32_t[8] buf: (buf, count)."""
    n = len(args)
    if n > 8:
        raise error(-errno.EMSGSIZE, f"{n} arguments (at most 8)")
    for i in range(n):
        buf[i] = args[i]
    return buf, n


def _bytes_of(data):
    """(cdata pointer, length) of a bytes-like object; (NULL, 0) for empty/None."""
    if data is None:
        return _nobuf, 0
    b = ffi.from_buffer(data)
    n = len(b)
    return (b, n) if n else (_nobuf, 0)


def _timeout_ms(timeout):
    """Seconds (None: forever) as the C library's milliseconds (-1: forever)."""
    if timeout is None or timeout < 0:
        return -1
    return min(int(math.ceil(timeout * 1000)), 2**31 - 1)


def _call_error(ep, rc, what, res, sent):
    """The exception for a call's end rc: -EMSGSIZE says which limit it hit,
    the reply cap (res.cap, from max_reply) and how to raise it, or the
    server's long_max for a request of `sent` bytes that went as long."""
    if rc != -errno.EMSGSIZE:
        return error(rc, what, call=True)
    most = lib.am_ep_long_max(ep._p())
    text = (f"{what}: the reply is longer than the call's reply cap, max_reply={res.cap} "
            f"bytes (default 16384): pass a larger max_reply= (at most this endpoint's "
            f"long_max, {most} bytes; a larger one takes Endpoint(long_max=...))")
    if sent > AM_MAX_BULK:
        text += f"; or the request, {sent} bytes, is longer than the server's long_max"
    e = MessageTooLong(errno.EMSGSIZE, text)
    e.reply_cap = res.cap
    return e


def _reply(res):
    """A finished call's Reply, copied out of its struct am_result."""
    args = tuple(ffi.unpack(res.args, res.nargs)) if res.nargs > 0 else ()
    ln = res.len
    return Reply(args, ffi.unpack(ffi.cast("char *", res.data), ln) if ln else b"")
