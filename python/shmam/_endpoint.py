"""_endpoint.py - shmam.Endpoint: an endpoint, its handlers, requests and calls.

Contracts kept here (the C library's, include/shmam.h, plus Python's):
- An endpoint belongs to the process and the thread that created it; use it
  from that thread.  A fork child owns none of its parent's endpoints: every
  method raises Error(EPERM) before any C call (the at-fork hook marks them,
  in the child, as not ours), close() drops the child's copy only, and its
  exit changes nothing of the parent's (the exit hook compares the pid too).
- Handlers are Python callables fn(token, *args, data=None) run inside poll(),
  wait(), a call, or a send that waits for room.  An exception a handler raises
  never unwinds through C: the trampoline catches it, and the next return of
  one of those methods raises it (the first one; later ones before that return
  are dropped, and every one is counted in ep.handler_errors).
- data is None for a short message, else a read-only memoryview of a private
  copy of the payload (never of shared memory), valid only while the handler
  runs: the trampoline releases it when the handler returns, and any use of it
  after that raises ValueError.  A view derived from it (data[:16],
  memoryview(data)) kept past the return reads that message's bytes for ever:
  its copy is then never reused.  Keep bytes(data).  An export still held at
  return (ffi.from_buffer, numpy.frombuffer) is reported as an error (EBUSY).
- The cffi callback objects live as long as the endpoint (self._cbs), so C never
  calls a freed closure.
- Requests and replies take their arguments from two separate buffers: a
  handler's reply can run while a request of the same endpoint waits for room
  (a blocked send polls), and must not overwrite that request's arguments.
"""

import atexit
import errno
import math
import os
import threading
import time
import weakref
from . import _lib
from ._aio import AsyncMixin
from ._errors import Error, check, error
from ._lib import ffi, lib
from ._msg import Reply, _bytes_of, _call_error, _fill, _reply, _signals, _timeout_ms

SLICE_MS = 200  # a blocking wait's or call's slice: Python's signal handlers run between
_alloc = ffi.new_allocator(should_clear_after_alloc=False)
# Every field of struct am_ep_opts is an option: its pointers (char *) take
# strings, the rest ints.  From the generated declarations: a field the header
# gains is an option at once.
_OPTS = {name: f.type.kind == "pointer" for name, f in ffi.typeof("struct am_ep_opts").fields}


def _opts(options):
    """A struct am_ep_opts from keyword options, and the strings it points to."""
    o = ffi.new("struct am_ep_opts *")
    keep = []
    for k, v in options.items():
        if k not in _OPTS:
            raise TypeError(f"Endpoint: unknown option {k!r} (options: {', '.join(_OPTS)})")
        if _OPTS[k]:
            s = ffi.new("char[]", str(v).encode())
            keep.append(s)
            setattr(o, k, s)
        else:
            setattr(o, k, int(v))
    return o, keep


# The longest reply a call takes unless told (max_reply): 16 KiB.
REPLY_CAP = 16384

class Token:
    """Who sent the message a handler runs for, and how to answer it.  Valid only
    while that handler runs."""

    __slots__ = ("_t", "_ep")

    def __init__(self, ep, t):
        self._ep = ep
        self._t = t

    def _live(self):
        if self._t is None or self._ep._ep is None:  # returned, or in a fork child
            if self._ep._ep is None and self._ep._foreign():
                raise _not_ours()
            raise Error(errno.EINVAL, "token used after its handler returned")
        return self._t

    @property
    def source(self):
        """The sender's index at this endpoint."""
        return lib.am_token_source(self._live())

    @property
    def cred(self):
        """(uid, gid, pid) of the sender as the kernel told at its connect
        through a rendezvous socket (Endpoint.listen); None for a sender
        that mapped the endpoint by name (libraries with am_token_cred)."""
        _lib.need("am_token_cred")
        c = ffi.new("struct am_cred *")
        rc = lib.am_token_cred(self._live(), c)
        if rc == -errno.ENODATA:
            return None
        check(rc, "am_token_cred")
        return (c.uid, c.gid, c.pid)

    def reply(self, handler, *args, data=b""):
        """Reply once to the sender: short if data is empty, else bulk up to
        MAX_BULK bytes (up to MAX_MEDIUM of them in the queue's slot itself),
        else long.  For a call, the handler id is not used."""
        t = self._live()
        argv, n = _fill(self._ep._rep_args, args)
        buf, ln = _bytes_of(data)
        if ln == 0:
            rc = lib.am_reply(t, handler, argv, n)
        elif ln <= lib.AM_MAX_BULK:
            rc = lib.am_reply_bulk(t, handler, buf, ln, argv, n)
        else:
            rc = lib.am_reply_long(t, handler, buf, ln, argv, n)
        check(rc, "reply")


_open = weakref.WeakSet()  # endpoints to close at exit (the main thread's)


def _not_ours():
    return Error(errno.EPERM, "this endpoint is a fork parent's: a child may only close "
                 "its copy (close() leaves the parent's as it is)")


@atexit.register
def _close_all():
    main, pid = threading.main_thread().ident, os.getpid()
    for ep in list(_open):
        if ep._owner == main and ep._pid == pid:
            try:
                ep.close()
            except Exception:
                pass


def _forked():
    """In a fork child: its parent's endpoints are not its own.  Their handles
    go (every method raises EPERM, before any C call); the C state is left as
    it is, for the parent."""
    for ep in list(_open):
        ep._drop()
    _open.clear()


os.register_at_fork(after_in_child=_forked)


class Endpoint(AsyncMixin):
    """A shmam endpoint.  Endpoint("name", **options) creates a named one;
    Endpoint() an anonymous one (libraries with anonymous endpoints only).
    Options are struct am_ep_opts's fields, every one of them (shmam.h):
    claim, shm, queue (strings), packets, bulk_blocks, max_senders,
    abandon_ms, long_max, send_timeout_ms (ints)."""

    def __init__(self, name=None, **options):
        self._ep = None
        o, keep = _opts(options)
        pp = ffi.new("am_ep_t **")
        rc = lib.am_ep_create(name.encode() if name is not None else ffi.NULL, o, pp)
        del keep
        if rc == -errno.EINVAL and name is None and not anonymous_supported():
            raise NotImplementedError("anonymous endpoints: this libshmam is too old")
        check(rc, f"Endpoint({name!r})")
        self._setup(pp[0])

    @classmethod
    def _adopt(cls, ptr):
        """An Endpoint around an am_ep_t the library made (am_init)."""
        self = cls.__new__(cls)
        self._setup(ptr)
        return self

    def _setup(self, ptr):
        self._ep = ptr
        self._owner = threading.get_ident()
        self._pid = os.getpid()  # ownership is the process and the thread
        self._cbs = {}  # id -> cffi callback, alive while the endpoint is
        self._exc = None  # the first exception a handler raised, not yet raised
        self.handler_errors = 0  # handler exceptions caught (raised or dropped)
        self._req_args = ffi.new("uint32_t[8]")
        self._rep_args = ffi.new("uint32_t[8]")
        self._res = None  # a blocking call's struct am_result, made on first use
        self._pool = []  # (struct am_result *, buffer) free for async calls
        self._driver = None  # the asyncio driver (_aio.py)
        self._staging = []  # bytearrays free for handlers' payload copies
        _open.add(self)

    # -- life -------------------------------------------------------------
    def _p(self):
        if self._ep is None:
            raise _not_ours() if self._foreign() else Error(errno.EINVAL, "endpoint is closed")
        return self._ep

    def _foreign(self):
        """Is this a fork parent's endpoint, seen from the child?"""
        return self._pid != os.getpid()

    def _drop(self):
        """Forget the C endpoint without a call on it (a fork child's copy)."""
        self._ep = None
        self._driver = None  # the parent's loop's; the child's copy is not touched
        _open.discard(self)

    def close(self):
        """Destroy the endpoint (its segment goes; peers' sends get PeerGone).
        In a fork child, drop the child's copy only: the parent's stays."""
        self._end(lib.am_ep_destroy, "am_ep_destroy")

    def _end(self, destroy, what):
        """End the endpoint with destroy (am_ep_destroy, or am_finalize, whose
        barrier still runs handlers: the callbacks are dropped only after it)."""
        if self._ep is None:
            return
        if self._foreign():  # a fork child's copy: no C call at all
            self._drop()
            return
        if self._driver is not None:
            self._driver.detach()
        rc = destroy(self._ep)
        self._ep = None
        self._cbs.clear()
        _open.discard(self)
        self._after()
        check(rc, what)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return self._ep is None

    def __repr__(self):
        return f"<shmam.Endpoint {self.name!r}>" if self._ep else "<shmam.Endpoint closed>"

    # -- introspection ----------------------------------------------------
    @property
    def name(self):
        return ffi.string(lib.am_ep_name(self._p())).decode()

    @property
    def claim(self):
        return ffi.string(lib.am_ep_claim(self._p())).decode()

    @property
    def queue(self):
        return ffi.string(lib.am_ep_queue(self._p())).decode()

    @property
    def long_max(self):
        return lib.am_ep_long_max(self._p())

    @property
    def bad_packets(self):
        return lib.am_ep_bad_packets(self._p())

    @property
    def abandoned(self):
        return lib.am_ep_abandoned(self._p())

    @property
    def late_replies(self):
        _lib.need("am_ep_late_replies")
        return lib.am_ep_late_replies(self._p())

    def fileno(self):
        """The endpoint's file descriptor (libraries with am_ep_fd only)."""
        _lib.need("am_ep_fd")
        return check(lib.am_ep_fd(self._p()), "am_ep_fd")

    # -- peers and handlers -----------------------------------------------
    def map(self, index, name):
        """Map the endpoint called name at index (what request/call's dest names)."""
        check(lib.am_ep_map(self._p(), index, name.encode()), f"map {name!r}")

    def listen(self, where, allow_uids=(), allow_gids=(), mode=0, max_callers=0):
        """Serve callers of other users through the Unix socket where (a
        path, or "@name" in the abstract namespace): the owner's uid, and
        the uids and groups named, are let in; everyone else is refused at
        connect (libraries with am_ep_listen)."""
        _lib.need("am_ep_listen")
        o = ffi.new("struct am_listen_opts *")
        uids = ffi.new("uid_t[]", list(allow_uids) or [0])
        gids = ffi.new("gid_t[]", list(allow_gids) or [0])
        o.allow_uids, o.n_uids = uids, len(allow_uids)
        o.allow_gids, o.n_gids = gids, len(allow_gids)
        o.mode, o.max_callers = mode, max_callers
        check(lib.am_ep_listen(self._p(), where.encode(), o), f"listen {where!r}")

    def connect(self, index, where):
        """Map the server listening at the Unix socket where at index, through
        the socket (an anonymous endpoint; libraries with am_ep_connect)."""
        _lib.need("am_ep_connect")
        check(lib.am_ep_connect(self._p(), where.encode(), index), f"connect {where!r}")

    def remap(self, index):
        """Map index again by the name it has (a server that restarted):
        returns once a live endpoint has that name; raises PeerGone while the
        name is still its dead owner's, Error(ENOENT) while no endpoint has
        it, leaving the index as it was (libraries with am_ep_remap only).
        A client handles a call's PeerGone by remapping until this returns,
        then calling again."""
        _lib.need("am_ep_remap")
        check(lib.am_ep_remap(self._p(), index), f"remap {index}")

    def set_handler(self, id, fn):
        """Run fn(token, *args, data=...) for messages to handler id (0..255);
        fn None removes it."""
        p = self._p()
        if fn is None:
            check(lib.am_set_handler(p, id, ffi.NULL), "am_set_handler")
            self._cbs.pop(id, None)
            return
        cb = ffi.callback("am_handler_t", self._trampoline(fn))
        check(lib.am_set_handler(p, id, cb), "am_set_handler")
        self._cbs[id] = cb  # the old one (if any) can no longer be called

    def handler(self, id):
        """Decorator: @ep.handler(3) def f(token, *args, data=None): ..."""

        def deco(fn):
            self.set_handler(id, fn)
            return fn

        return deco

    def _trampoline(self, fn):
        unpack, NULL = ffi.unpack, ffi.NULL

        def run(t, argp, nargs, datap, length):
            tok = Token(self, t)
            view = copy = None
            try:
                args = unpack(argp, nargs) if nargs > 0 else ()
                if datap != NULL:
                    view, copy = self._stage(datap, length)
                fn(tok, *args, data=view)
            except BaseException as e:  # never unwinds through C
                self._caught(e)
            finally:
                tok._t = None
                if view is not None:
                    self._unstage(view, copy)

        return run

    def _stage(self, datap, length):
        """(read-only view, its bytearray): a private copy of the payload, in
        a staging buffer of this endpoint's.  Never a view of shared memory:
        a view derived from it (a slice, memoryview(data)) that outlives the
        handler reads this message's bytes, never the next's, and never
        memory that close() unmapped."""
        pool = self._staging
        copy = pool.pop() if pool else None
        if copy is None or len(copy) < length:
            copy = bytearray(max(length, 4096))
        whole = memoryview(copy)
        ffi.memmove(whole, datap, length)
        view = whole[:length].toreadonly()
        whole.release()
        return view, copy

    def _unstage(self, view, copy):
        """The handler returned: its view dies (later use: ValueError), and
        its staging buffer is reused only if no view derived from it is left
        (a bytearray with exports cannot grow: BufferError)."""
        try:
            view.release()
        except BufferError as e:
            err = Error(errno.EBUSY, "a handler kept an export of its data "
                        "view past its return (copy it with bytes(data))")
            err.__cause__ = e
            self._caught(err)
        try:
            copy.append(0)
        except BufferError:
            return  # a derived view outlives the handler: the copy is its own now
        copy.pop()
        self._staging.append(copy)

    def _caught(self, e):
        self.handler_errors += 1
        if self._exc is None:
            self._exc = e

    def _take_exc(self):
        e, self._exc = self._exc, None
        return e

    def _after(self):
        """Raise what a handler raised during the last C call, if anything."""
        if self._exc is not None:
            e, self._exc = self._exc, None
            raise e

    # -- delivery -----------------------------------------------------------
    def poll(self):
        """Run every message ready; return how many."""
        n = lib.am_poll(self._p())
        self._after()
        return check(n, "am_poll")

    def wait(self, timeout_ms=-1):
        """Sleep until at least one message has been handled (return how many)
        or timeout_ms passes (return 0); -1 or None: no limit.  A signal whose
        Python handler raises (SIGINT: KeyboardInterrupt) ends it."""
        p = self._p()
        forever = timeout_ms is None or timeout_ms < 0
        deadline = 0.0 if forever else time.monotonic() + timeout_ms / 1000
        # In slices even where am_wait returns -EINTR: a signal that lands during
        # its spin, before it sleeps, is not seen until the sleep ends.
        whole = False
        while True:
            left = -1 if forever else max(0, math.ceil((deadline - time.monotonic()) * 1000))
            ms = left if whole or (0 <= left < SLICE_MS) else SLICE_MS
            n = lib.am_wait(p, ms)
            self._after()
            if n > 0:
                return n
            if n != -errno.EINTR:
                check(n, "am_wait")
            _signals()  # PEP 475: a handler that raises ends the wait, else go on
            if not forever and time.monotonic() >= deadline:
                return 0

    # -- sending --------------------------------------------------------------
    def request(self, dest, handler, *args, data=b""):
        """Send a request to handler of the peer mapped at dest: short if data
        is empty, else bulk up to MAX_BULK bytes (up to MAX_MEDIUM of them in
        the queue's slot itself, no bulk block), else long (up to the peer's
        long_max).  Waits (running this endpoint's handlers) while the peer's
        queue is full."""
        p = self._p()
        argv, n = _fill(self._req_args, args)
        buf, ln = _bytes_of(data)
        if ln == 0:
            rc = lib.am_request(p, dest, handler, argv, n)
        elif ln <= lib.AM_MAX_BULK:
            rc = lib.am_request_bulk(p, dest, handler, buf, ln, argv, n)
        else:
            rc = lib.am_request_long(p, dest, handler, buf, ln, argv, n)
        self._after()
        check(rc, "request")

    def request_batch(self, dest, msgs):
        """Send msgs, an iterable of (handler, args, data) tuples (args a
        sequence of up to 8 ints, data bytes-like of up to MAX_BULK bytes,
        empty for a short message; no long messages), to the peer mapped at
        dest, in order, as request() would send them one by one but with one
        claim of the queue and one wake of the peer (am_request_batch).  Every
        message is checked before any is sent: a bad one raises and sends
        none; an empty msgs raises (EINVAL).  Waits (running this endpoint's
        handlers) while the peer's queue is full.  Returns how many were sent:
        all of them, or fewer when the peer died or send_timeout_ms passed
        after a prefix went (that prefix went, the rest did not); raises
        PeerGone or Timeout if none went."""
        p = self._p()
        msgs = list(msgs)
        n = len(msgs)
        out = ffi.new("struct am_out[]", max(n, 1))
        keep = []  # every args array and data buffer, alive during the call
        for i, (handler, args, data) in enumerate(msgs):
            argv, na = _fill(ffi.new("uint32_t[8]"), args)
            buf, ln = _bytes_of(data)
            keep.append((argv, buf))
            m = out[i]
            m.handler, m.args, m.nargs, m.data, m.len = handler, argv, na, buf, ln
        rc = lib.am_request_batch(p, dest, out, n)
        self._after()
        return check(rc, "am_request_batch")

    def lend(self, dest, nbytes):
        """A copy-free request: room for nbytes lent in the queue of the peer
        mapped at dest, as a Loan (its writable memoryview `view`, then
        commit(handler, *args, length=n) or cancel()).  Waits while the
        peer has no room, as request() does.  See shmam.Loan."""
        from ._loan import Loan
        return Loan(self, dest, nbytes)

    def _result(self, max_reply=None):
        """A struct am_result with a buffer for the reply's bytes.  Its cap is
        max_reply, else REPLY_CAP, at most this endpoint's long_max.  The cap
        is reserved in our reply heap while the call is out, so a large
        default would let only a few calls be in flight at once."""
        cap = min(REPLY_CAP if max_reply is None else max_reply, lib.am_ep_long_max(self._p()))
        buf = _alloc("char[]", max(cap, 1))
        res = ffi.new("struct am_result *")
        res.data, res.cap = buf, cap
        return res, buf

    def _pool_back(self, res, buf):
        """Keep a result of the default cap for the next async call."""
        if res.cap == min(REPLY_CAP, lib.am_ep_long_max(self._p())):
            self._pool.append((res, buf))

    def call(self, dest, handler, *args, data=b"", timeout=1.0, max_reply=None):
        """Call handler of the peer mapped at dest and return its Reply(args,
        data).  Raises PeerGone (the server died or closed), NoSuchHandler,
        MessageTooLong, TimeoutError (shmam.Timeout) after timeout seconds
        (None: no limit), or what a signal's Python handler raises
        (KeyboardInterrupt on Ctrl-C: seen within SLICE_MS wherever the
        signal lands, as for wait(); a handler that does not raise lets the
        call go on); every way out of it ends the call (a call left early is
        cancelled: its reply, if it comes, is dropped).  max_reply: the
        longest reply taken, the reply cap (default REPLY_CAP, 16 KiB; a
        longer one raises MessageTooLong naming the cap and how to raise it).  Sending it may wait for room (while the server's
        queue is full, or this endpoint's reply room is taken by calls in
        flight) until the call's deadline, without looking at signals."""
        _lib.need("am_call_start", "am_call_wait", "am_call_cancel")
        p = self._p()
        if max_reply is not None:
            res, keep = self._result(max_reply)  # keep: the buffer res.data points into
        else:
            if self._res is None:
                self._res = self._result()
            res, keep = self._res
        argv, n = _fill(self._req_args, args)
        buf, ln = _bytes_of(data)
        idp = ffi.new("am_call_t *")  # 0 until the call has started
        timeout_ms = _timeout_ms(timeout)
        try:  # from the start: a signal's exception may come as any C call returns
            rc = lib.am_call_start(p, dest, handler, argv, n, buf, ln, res, timeout_ms, idp)
            if rc == 0:
                rc = -errno.EINPROGRESS
            # In slices: am_call_wait returns -EINTR only for a signal that
            # lands while it sleeps, not while it spins first.
            while rc in (-errno.EINPROGRESS, -errno.EINTR):
                _signals()  # PEP 475: a handler that raises ends the call
                rc = lib.am_call_wait(p, idp[0], SLICE_MS)
        except BaseException:
            if idp[0]:
                lib.am_call_cancel(p, idp[0])  # -EINVAL if it had ended: no matter
            raise
        self._after()
        if rc < 0:
            raise _call_error(self, rc, "call", res, ln)
        return _reply(res)

    # -- jobs -------------------------------------------------------------------
    def barrier(self):
        """Wait until every rank of the job has arrived (jobs from shmam.init)."""
        rc = lib.am_barrier(self._p())
        self._after()
        check(rc, "am_barrier")


_anon = None


def anonymous_supported():
    """Does this libshmam make anonymous endpoints (am_ep_create(NULL, ...))?
    Found out once, by making one and destroying it."""
    global _anon
    if _anon is None:
        pp = ffi.new("am_ep_t **")
        rc = lib.am_ep_create(ffi.NULL, ffi.NULL, pp)
        _anon = rc == 0
        if rc == 0:
            lib.am_ep_destroy(pp[0])
    return _anon
