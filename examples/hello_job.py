"""hello_job.py - hello_job.c in Python: rank 0 asks rank 1 to square 7.
Run it as: shmamrun -n 2 /usr/bin/python3 examples/hello_job.py"""
import shmam

ep = shmam.init()  # rank r's endpoint, every rank mapped at its index
done = False


@ep.handler(0)
def square(token, x, data=None):
    token.reply(1, x * x)


@ep.handler(1)
def answer(token, x, data=None):
    global done
    print("rank %d: 7 squared is %d" % (shmam.rank(), x), flush=True)
    done = True


if shmam.rank() == 0:
    ep.request(1 % shmam.nprocs(), 0, 7)
    while not done:
        ep.wait()
shmam.finalize()
