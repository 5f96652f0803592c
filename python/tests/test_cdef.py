"""The package's cffi declarations are include/shmam.h's: the same struct
layouts and the same signatures, checked by the C compiler against the header,
and the generated module is what the header makes now (not a stale copy)."""

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

import shmam
from shmam import _lib
from shmam._lib import ffi, lib

HEADER = os.path.join(ROOT, "include", "shmam.h")
CC = os.environ.get("CC", "cc")


def compile_and_run(tmp_path, source):
    """Build source against the header with CC; its stdout (or the compiler's
    complaint as the failure)."""
    c, exe = tmp_path / "t.c", tmp_path / "t"
    c.write_text(source)
    r = subprocess.run([CC, "-std=c11", "-Werror", "-I", os.path.dirname(HEADER), str(c), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, "the C compiler refuses the package's declarations:\n" + r.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def structs():
    """Every struct the cdef declares with its fields."""
    return [s for s in ffi.list_types()[1] if ffi.typeof("struct " + s).fields is not None]


def test_struct_layouts_match_the_header(tmp_path):
    """sizeof and every field's offsetof, as the compiler sees the header."""
    lines, want = [], []
    for s in structs():
        t = "struct " + s
        lines.append(f'printf("{t} %zu\\n", sizeof({t}));')
        want.append(f"{t} {ffi.sizeof(t)}")
        for name, _ in ffi.typeof(t).fields:
            lines.append(f'printf("{t}.{name} %zu\\n", offsetof({t}, {name}));')
            want.append(f"{t}.{name} {ffi.offsetof(t, name)}")
    assert "am_ep_opts" in structs() and "am_result" in structs()
    src = "#include <stddef.h>\n#include <stdio.h>\n#include <shmam.h>\nint main(void)\n{\n"
    got = compile_and_run(tmp_path, src + "\n".join(lines) + "\nreturn 0;\n}\n").split("\n")
    assert got[:-1] == want


def test_signatures_match_the_header(tmp_path):
    """Every declaration the cdef was made of (but the struct bodies, whose
    layouts the test above compares), declared again after the header: the
    compiler refuses any that differs (a parameter, a qualifier, a constant)."""
    decls = re.sub(r"^(struct|enum) \w+\n\{.*?^\};\n", "", _lib.CDEF, flags=re.M | re.S)
    assert "am_call_start" in decls and "am_poll" in decls
    enums = []  # every enumerator's value, as the cdef has it, held to the header's
    for name in re.findall(r"^enum (\w+)\n\{", _lib.CDEF, flags=re.M):
        for v, k in ffi.typeof("enum " + name).elements.items():
            enums.append(f'_Static_assert({k} == {v}, "{k}: the cdef says {v}");')
    assert enums, "the cdef declares the header's enums"
    compile_and_run(tmp_path, "#include <shmam.h>\n" + decls + "\n".join(enums) +
                    "\nint main(void) { return 0; }\n")


def test_generated_from_the_header_as_it_is():
    """The loaded declarations are what python/gencdef.py makes of the header now."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    try:
        import gencdef
    finally:
        sys.path.pop(0)
    from shmam import _cdef
    assert _cdef.CDEF in gencdef.generate(HEADER), "python/shmam/_cdef.py is stale: make it"
    assert ffi.sizeof("struct am_ep_opts") > 0 and shmam.MAX_BULK == lib.AM_MAX_BULK


@pytest.mark.parametrize("field", [f for f, _ in ffi.typeof("struct am_ep_opts").fields])
def test_every_option_is_settable(names, field):
    """Endpoint(**{field: ...}) takes every field of struct am_ep_opts."""
    value = {"claim": "lockfree", "shm": "posix", "queue": "mpsc", "packets": 64,
             "bulk_blocks": 16, "max_senders": 64, "abandon_ms": 100, "long_max": 1 << 20,
             "send_timeout_ms": 500}.get(field, 0)
    with shmam.Endpoint(names(), **{field: value}) as ep:
        assert ep.name


def test_generation_takes_what_the_header_may_gain(tmp_path):
    """Declarations a header may gain go through gencdef into a cdef cffi
    takes: a GCC attribute, a static inline function and a static assertion
    (left out), an enum, a struct, system types (uid_t, pid_t, off_t)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    try:
        import gencdef
    finally:
        sys.path.pop(0)
    with open(HEADER) as f:
        text = f.read()
    gained = """
#include <sys/types.h>
#define AM_GAINED 0x10u
int am_gained_remap(am_ep_t *ep, unsigned index) __attribute__((warn_unused_result));
static inline int am_gained_ok(int rc) { return rc >= 0; }
enum am_gained { AM_GAINED_A = 1, AM_GAINED_B = 2 };
struct am_gained_cred { uint64_t token; uid_t uid; pid_t pid; };
int am_gained_cred(const am_token_t *tok, struct am_gained_cred *out, off_t at);
_Static_assert(sizeof(int) == 4, "int");
"""
    end = text.rindex("#ifdef __cplusplus")
    h = tmp_path / "shmam.h"
    h.write_text(text[:end] + gained + text[end:])
    ns = {}
    exec(gencdef.generate(str(h)), ns)
    from cffi import FFI

    f = FFI()
    f.cdef(ns["CDEF"])
    assert "am_gained_ok" not in ns["CDEF"] and "_Static_assert" not in ns["CDEF"]
    assert f.sizeof("struct am_gained_cred") == 16 and f.sizeof("uid_t") == 4
    assert "am_gained_remap(am_ep_t *ep, unsigned index);" in ns["CDEF"]
