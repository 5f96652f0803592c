"""A Python program as a job of shmamrun."""

import os
import subprocess

from conftest import HERE, PYTHON, SHMAMRUN, env


def test_shmamrun_four_python_ranks():
    p = subprocess.run([SHMAMRUN, "-n", "4", "--timeout", "120", PYTHON,
                        os.path.join(HERE, "job_prog.py")],
                       capture_output=True, text=True, env=env(), timeout=180)
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.split("\n")[:-1]) == [f"rank {r} of 4 ok" for r in range(4)]


def test_init_outside_shmamrun_is_a_job_of_one():
    code = ("import shmam; ep = shmam.init(); "
            "print(shmam.rank(), shmam.nprocs()); shmam.barrier(); shmam.finalize()")
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env(),
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "0 1\n"
