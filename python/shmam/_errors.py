"""_errors.py - the C library's negative errno codes as Python exceptions.

Every exception the package raises for a C error is a shmam.Error (an OSError:
.errno is the positive code, .strerror am_strerror's text); the common ones are
also the builtin exception Python code already catches for them.
"""

import errno as _errno

from ._lib import ffi, lib


class Error(OSError):
    """A libshmam call failed: errno is the (positive) code, strerror its text."""


class PeerGone(Error, BrokenPipeError):
    """-EPIPE: the peer closed its endpoint or its process died."""


class Timeout(Error, TimeoutError):
    """-ETIMEDOUT: a call's deadline passed (the call is cancelled)."""


class Interrupted(Error, InterruptedError):
    """-EINTR: a signal arrived.  ep.call and ep.wait do not raise it: they let
    the signal's Python handler run and go on unless it raises."""


class NoSuchHandler(Error, LookupError):
    """-ENOENT from a call: the server has no handler of that id."""


class MessageTooLong(Error):
    """-EMSGSIZE: the request, or the reply to a call, is longer than allowed."""


class Cancelled(Error):
    """-ECANCELED: the call was cancelled."""


_BY_CODE = {
    _errno.EPIPE: PeerGone,
    _errno.ETIMEDOUT: Timeout,
    _errno.EINTR: Interrupted,
    _errno.EMSGSIZE: MessageTooLong,
    _errno.ECANCELED: Cancelled,
}


def strerror(rc):
    """am_strerror's text for rc (0 or negative)."""
    return ffi.string(lib.am_strerror(rc)).decode(errors="replace")


def error(rc, what="", call=False):
    """The exception for a negative return code rc of the C function `what`;
    call: rc came from a call, where -ENOENT means "no such handler"."""
    cls = NoSuchHandler if call and rc == -_errno.ENOENT else _BY_CODE.get(-rc, Error)
    text = strerror(rc)
    e = cls(-rc, f"{what}: {text}" if what else text)
    return e


def check(rc, what="", call=False):
    """rc if it is not negative; raise its exception otherwise."""
    if rc < 0:
        raise error(rc, what, call)
    return rc
