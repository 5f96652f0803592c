"""_job.py - jobs started by shmamrun: `shmamrun -n 4 /usr/bin/python3 prog.py`.

init() makes this rank's endpoint (every rank r mapped at index r) and meets the
other ranks at a barrier; run outside shmamrun it makes a job of one rank.
finalize() is a barrier, then the endpoint goes.
"""

from ._endpoint import Endpoint
from ._errors import check
from ._lib import ffi, lib

_job_ep = None


def init():
    """This rank's Endpoint (created once; later calls return the same one)."""
    global _job_ep
    if _job_ep is None or _job_ep.closed:
        pp = ffi.new("am_ep_t **")
        check(lib.am_init(ffi.NULL, ffi.NULL, pp), "am_init")
        _job_ep = Endpoint._adopt(pp[0])
    return _job_ep


def rank():
    """This process's rank (after init)."""
    return lib.am_rank()


def nprocs():
    """The job's number of ranks (after init)."""
    return lib.am_nprocs()


def barrier():
    """Wait until every rank has arrived (running handlers meanwhile)."""
    init().barrier()


def finalize():
    """A barrier, then the job's endpoint is destroyed."""
    global _job_ep
    ep, _job_ep = _job_ep, None
    if ep is None or ep.closed:
        return
    ep._end(lib.am_finalize, "am_finalize")
