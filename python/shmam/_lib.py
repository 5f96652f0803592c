"""_lib.py - the C library through cffi in ABI mode (no compiler at install time).

The declarations are include/shmam.h's, made from it at build time by
python/gencdef.py into _cdef.py (make; make install installs it): nothing is
declared by hand.  A library older than the header may lack some of them:
has(name) says whether the loaded library exports a symbol, and the package
raises NotImplementedError for a feature whose symbol is missing.

Which library: $SHMAM_LIBRARY if set (a path), else the build tree's
build/lib/libshmam.so.1 next to this package (python/shmam -> ../../build), else
the one `make install` recorded in _installed.py, else the dynamic loader's
search for libshmam.so.1.
"""

import os

from cffi import FFI

try:
    from ._cdef import CDEF
except ImportError as e:  # a source tree not built yet
    raise ImportError("shmam: no _cdef.py: run make (it makes it from include/shmam.h)") from e

ffi = FFI()
ffi.cdef(CDEF)

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
