"""A fork child owns none of its parent's endpoints: it cannot use them
(EPERM, before any C call), and neither its exit nor its close() changes
anything of the parent's, whose endpoint still serves a client after."""

import os

import pytest
from conftest import HERE, PYTHON

import shmam

PROG = os.path.join(HERE, "fork_prog.py")


def run(procs, names, mode):
    p = procs(PYTHON, PROG, names(), mode)
    status, out, err = p.finish(timeout=60)
    assert status == 0, f"fork_prog {mode}: status {status}\n{out}{err}"
    return out.split("\n")


@pytest.mark.parametrize("mode", ["exit", "close"])
def test_fork_child_leaves_parent_endpoint(procs, names, mode):
    """The child exits (or closes its copy, then exits); the parent's name
    still exists and its endpoint answers a new client."""
    assert run(procs, names, mode)[:2] == ["child 0", "served 49"]


def test_fork_child_methods_refused(procs, names):
    """Every method the child tries on the parent's endpoint raises EPERM."""
    assert run(procs, names, "use")[:2] == ["child 0", "served 49"]


def test_close_by_another_pid_calls_no_c(names):
    """Where the at-fork hook did not run (a fork Python was not told of), the
    pid recorded at creation still says the endpoint is not ours: close()
    drops the handle and calls no C, the name stays live."""
    name = names()
    ep = shmam.Endpoint(name)
    ptr, ep._pid = ep._ep, -1  # what a child that missed the hook would see
    ep.close()
    assert ep.closed and shmam._lib.lib.am_ep_probe(name.encode()) == 1
    ep._ep, ep._pid = ptr, os.getpid()
    ep.close()


def test_exit_hook_skips_other_pids(names):
    """The exit hook closes only what this process made: an endpoint whose
    recorded pid is another's (a fork parent's, the hook not run) stays."""
    name = names()
    ep = shmam.Endpoint(name)
    ep._pid = -1
    shmam._endpoint._close_all()
    assert not ep.closed and shmam._lib.lib.am_ep_probe(name.encode()) == 1
    ep._pid = os.getpid()
    ep.close()
