"""A job of shmamrun for test_job.py: each rank asks the next for its rank
squared, checks the answer, meets the others at a barrier and finalizes."""

import os

import shmam

ep = shmam.init()
me, n = shmam.rank(), shmam.nprocs()
answers = []
ep.set_handler(1, lambda tok, x, data=None: tok.reply(2, x * x, shmam.rank()))
ep.set_handler(2, lambda tok, y, who, data=None: answers.append((y, who)))
ep.request((me + 1) % n, 1, me + 10)
while not answers:
    ep.wait(1000)
shmam.barrier()
assert answers == [((me + 10) ** 2, (me + 1) % n)], answers
os.write(1, f"rank {me} of {n} ok\n".encode())  # one write: ranks share stdout
shmam.finalize()
