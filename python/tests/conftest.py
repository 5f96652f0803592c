"""conftest.py - what the Python package's tests share.

Run from the repository: `make check-python` (part of make check), or
`SHMAM_BUILD=build PYTHONPATH=python /usr/bin/python3 -m pytest python/tests`.
The package loads $SHMAM_LIBRARY, else build/lib/libshmam.so.1 of this tree;
the C programs come from $SHMAM_BUILD (default: build).  Endpoint names are
"py<pid>-<n>", so a test looks only at names it made.
"""

import itertools
import os
import select
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import shmam  # noqa: E402

BUILD = os.environ.get("SHMAM_BUILD", os.path.join(ROOT, "build"))
PYPEER = os.path.join(BUILD, "tests", "prog_pypeer")
SHMAMRUN = os.path.join(BUILD, "bin", "shmamrun")
PYTHON = "/usr/bin/python3"  # Debian's, whatever comes first in PATH

needs_calls = pytest.mark.skipif(not shmam.has_calls(), reason="this libshmam has no calls API (am_call, am_call_start)")
needs_fd = pytest.mark.skipif(not shmam.has_fd(), reason="this libshmam has no endpoint descriptor (am_ep_fd)")

_seq = itertools.count()


def env():
    """The environment for child processes: this package importable."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    return e


@pytest.fixture
def names():
    """A maker of unique endpoint names; at the end, each name whose owner is
    gone (a killed process's) is reclaimed, and none may be left."""
    made = []

    def make():
        n = f"py{os.getpid()}-{next(_seq)}"
        made.append(n)
        return n

    yield make
    for n in made:
        if shmam._lib.lib.am_ep_probe(n.encode()) == 0:  # owner gone: reclaim it
            shmam.Endpoint(n).close()
    left = [n for n in made if shmam._lib.lib.am_ep_probe(n.encode()) != -2]
    assert not left, f"endpoints left behind: {left}"


@pytest.fixture
def pair(names):
    """(server, client) endpoints, client mapping server at index 0."""
    with shmam.Endpoint(names()) as a, shmam.Endpoint(names()) as b:
        b.map(0, a.name)
        yield a, b


def pattern(n, seed=0):
    """n bytes that differ with the seed."""
    return bytes((i * 7 + seed) & 0xFF for i in range(n))


class Proc:
    """A child process whose stdout lines are read with a deadline."""

    def __init__(self, argv, **kw):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env(), **kw)
        self.buf = b""

    @property
    def pid(self):
        return self.p.pid

    def line(self, timeout=30):
        """The next line of stdout (without its newline); fails after timeout."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            assert left > 0, f"no line from {self.p.args} in {timeout} s"
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 4096)
                assert chunk, f"{self.p.args} ended: {self.p.stderr.read().decode()}"
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def expect(self, text, timeout=30):
        got = self.line(timeout)
        assert got == text, f"{self.p.args}: {got!r}, not {text!r}"

    def kill(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
        self.p.wait()

    def finish(self, timeout=60):
        """Wait for the exit: (status, rest of stdout, stderr)."""
        out, err = self.p.communicate(timeout=timeout)
        return self.p.returncode, (self.buf + out).decode(), err.decode()


@pytest.fixture
def procs():
    """Start child processes; every one still running at the end is killed."""
    started = []

    def start(*argv, **kw):
        p = Proc([str(a) for a in argv], **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()
        for f in (p.p.stdout, p.p.stderr):
            f.close()
