"""_lib.py - the C library through cffi in ABI mode (no compiler at install time).

The declarations below are include/shmam.h's, written out for ffi.cdef; those of
the calls API (am_call_*, struct am_result), the file descriptor (am_ep_fd) and
anything newer than the library being loaded may be missing from it: has(name)
says whether the loaded library exports a symbol, and the package raises
NotImplementedError for a feature whose symbol is missing.

Which library: $SHMAM_LIBRARY if set (a path), else the build tree's
build/lib/libshmam.so.1 next to this package (python/shmam -> ../../build), else
the one `make install` recorded in _installed.py, else the dynamic loader's
search for libshmam.so.1.
"""

import os

from cffi import FFI

ffi = FFI()
ffi.cdef(
    """
#define AM_MAX_ARGS 8
#define AM_MAX_BULK 8192
#define AM_MAX_HANDLERS 256
#define AM_MAX_NAME 40

typedef struct am_ep am_ep_t;
typedef struct am_token am_token_t;
typedef void (*am_handler_t)(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                             size_t len);
struct am_ep_opts {
    const char *claim;
    const char *shm;
    unsigned packets, bulk_blocks, max_senders;
    unsigned abandon_ms;
    unsigned long_max;
    const char *queue;
};
int am_ep_create(const char *name, const struct am_ep_opts *opts, am_ep_t **ep);
int am_ep_destroy(am_ep_t *ep);
int am_ep_map(am_ep_t *ep, unsigned index, const char *peer_name);
int am_set_handler(am_ep_t *ep, unsigned id, am_handler_t fn);
int am_ep_probe(const char *name);
int am_request(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args, int nargs);
int am_request_bulk(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs);
int am_reply(am_token_t *tok, unsigned handler, const uint32_t *args, int nargs);
int am_reply_bulk(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs);
int am_request_long(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs);
int am_reply_long(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs);
unsigned am_token_source(const am_token_t *tok);
int am_poll(am_ep_t *ep);
int am_wait(am_ep_t *ep, int timeout_ms);
const char *am_strerror(int err);
const char *am_err_name(int err);
const char *am_ep_name(const am_ep_t *ep);
const char *am_ep_claim(const am_ep_t *ep);
const char *am_ep_queue(const am_ep_t *ep);
unsigned long am_ep_bad_packets(const am_ep_t *ep);
unsigned long am_ep_abandoned(const am_ep_t *ep);
size_t am_ep_long_max(const am_ep_t *ep);
int am_init(int *argc, char ***argv, am_ep_t **ep);
int am_rank(void);
int am_nprocs(void);
int am_barrier(am_ep_t *ep);
int am_finalize(am_ep_t *ep);

/* The calls API (issue 26): present in newer libraries only. */
typedef uint64_t am_call_t;
struct am_result {
    void *data;
    size_t cap;
    size_t len;
    uint32_t args[AM_MAX_ARGS];
    int nargs;
};
int am_call(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args, int nargs,
            const void *data, size_t len, struct am_result *res, int timeout_ms);
int am_call_start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                  int nargs, const void *data, size_t len, struct am_result *res,
                  int timeout_ms, am_call_t *id);
int am_call_test(am_ep_t *ep, am_call_t id);
int am_call_wait(am_ep_t *ep, am_call_t id, int timeout_ms);
int am_call_cancel(am_ep_t *ep, am_call_t id);
unsigned long am_ep_late_replies(const am_ep_t *ep);

/* The endpoint's file descriptor (issue 27): newer libraries only. */
int am_ep_fd(am_ep_t *ep);
int am_ep_wake(am_ep_t *ep);
"""
)

_HERE = os.path.dirname(os.path.abspath(__file__))
SONAME = "libshmam.so.1"


def _candidates():
    env = os.environ.get("SHMAM_LIBRARY")
    if env:
        yield env
        return
    tree = os.path.join(_HERE, "..", "..", "build", "lib", SONAME)
    if os.path.exists(tree):
        yield os.path.normpath(tree)
    try:
        from ._installed import LIBDIR  # written by make install
    except ImportError:
        LIBDIR = None
    if LIBDIR and os.path.exists(os.path.join(LIBDIR, SONAME)):
        yield os.path.join(LIBDIR, SONAME)
    yield SONAME


def _load():
    errors = []
    for path in _candidates():
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("shmam: cannot load " + SONAME + ": " + "; ".join(errors))


lib, path = _load()
_has = {}


def has(name):
    """Does the loaded library export the symbol name?"""
    if name not in _has:
        try:
            getattr(lib, name)
            _has[name] = True
        except AttributeError:
            _has[name] = False
    return _has[name]


def need(*names):
    """Raise NotImplementedError unless the library exports every name."""
    for n in names:
        if not has(n):
            raise NotImplementedError(f"{n} is not in {path}: this libshmam is too old for it")
