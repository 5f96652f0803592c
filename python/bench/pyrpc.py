#!/usr/bin/python3
"""pyrpc.py - Python request/reply through shmam beside what Python users pick
instead: multiprocessing.connection over a Pipe and over a Unix-socket Listener,
and pyzmq (Debian python3-zmq) DEALER/ROUTER over ipc://.

    /usr/bin/python3 python/bench/pyrpc.py [--rounds R] [--iters N]
        [--inflight-calls M] [--warmup W] [--bind] [--header]

For each transport an echo server process (Python, started by fork before any
measurement) and this process as the client, 8 bytes each way: shmam a short
message with two 32-bit arguments and its reply (impl `shmam`, through a reply
handler and ep.wait; impl `shmam_call`, ep.call / ep.call_async, where the
library has the calls API), the others 8-byte messages.  Two figures per
transport: the round trip (one in flight, N per round) and the throughput with
32 in flight (M per round: shmam's requests refilled as replies come, calls
with asyncio, the others sending 32 before reading).  Rounds interleave the
transports, ABBA (the order reversed in odd rounds); a figure is the median of
the rounds' means with the lowest and highest round as its spread, and the
`*_vs_*` rows are per-round quotients of shmam's figure over another's
(bench/README.md's estimator).  --bind puts the client on CPU 0 and every
server on CPU 1.  Prints rows of the common schema (scripts/report/rows.py):

    pyrpc,IMPL,SHM,2,PINNED,ITERS,rtt,US,us,LO-HI
    pyrpc,IMPL,SHM,2,PINNED,ITERS,inflight32,K,kcalls_per_s,LO-HI
    pyrpc,shmam,SHM,2,PINNED,ITERS,rtt_vs_mp_pipe,X,x,LO-HI   (and so on)

Exit status 1, saying why on stderr, if any reply is wrong.
"""

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection as mpc
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import shmam  # noqa: E402

H_ECHO, H_REPLY, H_STOP = 1, 2, 3
WINDOW = 32
MSG = b"12345678"


def pin(cpu, on):
    if on and os.cpu_count() > 1:
        os.sched_setaffinity(0, {cpu})


# ---- servers (child processes) ----------------------------------------------
def shmam_server(name, bind, ready):
    pin(1, bind)
    stop = []
    with shmam.Endpoint(name) as ep:
        ep.set_handler(H_ECHO, lambda tok, a, b, data=None: tok.reply(H_REPLY, a, b))
        ep.set_handler(H_STOP, lambda tok, data=None: stop.append(1))
        ready.send_bytes(b"ready")
        while not stop:
            ep.wait(-1)


def echo_conn(c):
    while True:
        b = c.recv_bytes()
        if not b:
            return
        c.send_bytes(b)


def pipe_server(conn, bind):
    pin(1, bind)
    echo_conn(conn)


def unix_server(listener, bind):
    pin(1, bind)
    with listener.accept() as c:
        echo_conn(c)


def zmq_server(addr, bind, ready):
    import zmq

    pin(1, bind)
    ctx = zmq.Context()
    s = ctx.socket(zmq.ROUTER)
    s.bind(addr)
    ready.send_bytes(b"ready")
    while True:
        m = s.recv_multipart()
        if m[1] == b"":
            break
        s.send_multipart(m)
    s.close(0)
    ctx.term()


# ---- clients: each returns (rtt in us over n, kcalls/s over m) ---------------
class Bad(Exception):
    pass


class ShmamClient:
    """Requests and replies through a reply handler."""

    name = "shmam"

    def __init__(self, ep):
        self.ep = ep
        self.got = 0
        self.bad = 0
        ep.set_handler(H_REPLY, self.on_reply)

    def on_reply(self, tok, a, b, data=None):
        self.got += 1
        self.bad += b != a ^ 0x5A5A

    def rtt(self, n):
        ep, t = self.ep, time.perf_counter()
        for i in range(n):
            ep.request(0, H_ECHO, i, i ^ 0x5A5A)
            while self.got <= i:
                ep.wait(-1)
        dt = time.perf_counter() - t
        self.check(n)
        return dt / n * 1e6

    def inflight(self, m):
        ep, t = self.ep, time.perf_counter()
        sent = 0
        while self.got < m:
            while sent < m and sent - self.got < WINDOW:
                ep.request(0, H_ECHO, sent, sent ^ 0x5A5A)
                sent += 1
            ep.wait(-1)
        dt = time.perf_counter() - t
        self.check(m)
        return m / dt / 1e3

    def check(self, n):
        if self.got != n or self.bad:
            raise Bad(f"shmam: {self.got} replies of {n}, {self.bad} wrong")
        self.got = 0


class ShmamCall:
    """ep.call one at a time; ep.call_async 32 at a time in asyncio."""

    name = "shmam_call"

    def __init__(self, ep):
        self.ep = ep

    def rtt(self, n):
        ep, t = self.ep, time.perf_counter()
        for i in range(n):
            r = ep.call(0, H_ECHO, i, i ^ 0x5A5A, timeout=30)
            if r.args != (i, i ^ 0x5A5A):
                raise Bad(f"shmam_call: reply {r}")
        return (time.perf_counter() - t) / n * 1e6

    def inflight(self, m):
        async def worker(k):
            for i in range(k, m, WINDOW):
                r = await self.ep.call_async(0, H_ECHO, i, i ^ 0x5A5A, timeout=30)
                if r.args != (i, i ^ 0x5A5A):
                    raise Bad(f"shmam_call: reply {r}")

        async def all_():
            await asyncio.gather(*(worker(k) for k in range(WINDOW)))

        t = time.perf_counter()
        asyncio.run(all_())
        return m / (time.perf_counter() - t) / 1e3


class ConnClient:
    """multiprocessing.connection: send_bytes / recv_bytes."""

    def __init__(self, name, conn):
        self.name, self.c = name, conn

    def send(self, b):
        self.c.send_bytes(b)

    def recv(self):
        return self.c.recv_bytes()

    def rtt(self, n):
        t = time.perf_counter()
        for _ in range(n):
            self.send(MSG)
            if self.recv() != MSG:
                raise Bad(f"{self.name}: wrong reply")
        return (time.perf_counter() - t) / n * 1e6

    def inflight(self, m):
        t = time.perf_counter()
        for _ in range(min(WINDOW, m)):
            self.send(MSG)
        for i in range(m):
            if self.recv() != MSG:
                raise Bad(f"{self.name}: wrong reply")
            if i + WINDOW < m:
                self.send(MSG)
        return m / (time.perf_counter() - t) / 1e3

    def stop(self):
        self.send(b"")


class ZmqClient(ConnClient):
    def __init__(self, addr):
        import zmq

        self.ctx = zmq.Context()
        self.c = self.ctx.socket(zmq.DEALER)
        self.c.connect(addr)
        self.name = "zmq_ipc"

    def send(self, b):
        self.c.send(b)

    def recv(self):
        return self.c.recv()

    def stop(self):
        self.c.send(b"")
        self.c.close(0)
        self.ctx.term()


# ---- the run ------------------------------------------------------------------
def start(target, *args):
    p = multiprocessing.get_context("fork").Process(target=target, args=args, daemon=True)
    p.start()
    return p


def setup(args, tmp):
    """Start every server; the clients, in measuring order, and a stopper."""
    procs, clients = [], []
    # Named after the job prefix report.sh sets, so that its leak check sees them.
    name = f"{os.environ.get('SHMAM_JOB_PREFIX', '')}pyrpc{os.getpid()}"
    r, w = multiprocessing.Pipe(duplex=False)
    procs.append(start(shmam_server, name, args.bind, w))
    r.recv_bytes()
    a, b = multiprocessing.Pipe()
    procs.append(start(pipe_server, b, args.bind))
    listener = mpc.Listener(os.path.join(tmp, "sock"), family="AF_UNIX")
    procs.append(start(unix_server, listener, args.bind))
    zaddr = f"ipc://{os.path.join(tmp, 'zmq')}"
    procs.append(start(zmq_server, zaddr, args.bind, w))
    r.recv_bytes()
    pin(0, args.bind)
    ep = shmam.Endpoint(f"{name}c")
    ep.map(0, name)
    clients.append(ShmamClient(ep))
    if shmam.has_calls():
        clients.append(ShmamCall(ep))
    clients.append(ConnClient("mp_pipe", a))
    clients.append(ConnClient("mp_unix", mpc.Client(listener.address, family="AF_UNIX")))
    clients.append(ZmqClient(zaddr))

    def stop():
        for c in clients:
            if isinstance(c, ConnClient):
                c.stop()
        ep.request(0, H_STOP)
        ep.close()
        listener.close()
        for p in procs:
            p.join(10)

    return clients, stop


def spread(v):
    return f"{min(v):.4g}-{max(v):.4g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=3000, help="round trips per round")
    ap.add_argument("--inflight-calls", type=int, default=10000,
                    help="calls per round with 32 in flight")
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--bind", action="store_true")
    ap.add_argument("--header", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pyrpc") as tmp:
        clients, stop = setup(args, tmp)
        try:
            res = {c.name: {"rtt": [], "inflight32": []} for c in clients}
            for c in clients:
                c.rtt(args.warmup)
                c.inflight(args.warmup)
            for rnd in range(args.rounds):
                for c in clients if rnd % 2 == 0 else clients[::-1]:
                    res[c.name]["rtt"].append(c.rtt(args.iters))
                    res[c.name]["inflight32"].append(c.inflight(args.inflight_calls))
        except Bad as e:
            print(f"pyrpc: {e}", file=sys.stderr)
            return 1
        finally:
            stop()
    emit(res, args)
    return 0


def emit(res, args):
    shm = os.environ.get("SHMAM_SHM", "posix")
    pinned = int(args.bind and os.cpu_count() > 1)
    if args.header:
        print("bench,impl,shm,procs,pinned,iters,metric,value,unit,spread")
    iters = {"rtt": args.iters, "inflight32": args.inflight_calls}
    unit = {"rtt": "us", "inflight32": "kcalls_per_s"}
    for name, m in res.items():
        s = shm if name.startswith("shmam") else "-"
        for metric, v in m.items():
            print(f"pyrpc,{name},{s},2,{pinned},{iters[metric] * args.rounds},{metric},"
                  f"{statistics.median(v):.4g},{unit[metric]},{spread(v)}")
    for name in (n for n in res if n.startswith("shmam")):
        for other in (n for n in res if not n.startswith("shmam")):
            for metric in ("rtt", "inflight32"):
                q = [x / y for x, y in zip(res[name][metric], res[other][metric])]
                print(f"pyrpc,{name},{shm},2,{pinned},{iters[metric] * args.rounds},"
                      f"{metric}_vs_{other},{statistics.median(q):.4g},x,{spread(q)}")


if __name__ == "__main__":
    sys.exit(main())
