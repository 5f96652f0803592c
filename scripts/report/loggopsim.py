"""loggopsim.py - a LogGOPSim-compatible model of a GOAL schedule, and the
simulator's command line, for the LogGP section's checker (loggp.py).

Written from the semantics of Hoefler, Schneider and Lumsdaine, "LogGOPSim:
simulating large-scale applications in the LogGOPS model" (HPDC 2010), as the
simulator implements them (spcl/LogGOPSim; nothing of it is copied here):

- Every host has a CPU, free again at `nexto`, and a NIC with a send gap and
  a receive gap, free again at `nextgs` and `nextgr`.  Times are integers in
  the one unit of the parameters (LogGOPSim's clock is an unsigned integer).
- A send of s bytes starts once its dependencies are done and the CPU and the
  send gap are free (at t): the CPU is busy until t + o + (s-1) O, the NIC
  until t + g + (s-1) G, and the message reaches its destination at t + o + L
  (its first byte: G is charged at the receiver).  A message of at most S
  bytes is eager: the send is done at once.  Above S (rendezvous) it is done
  when the receiver matches it, and the sender's CPU and NIC are then busy
  until at least that time.
- A message that arrives at t is taken in once the receiver's CPU and receive
  gap are free: the CPU is busy for o + max((s-1) O, (s-1) G), the receive
  gap for g + (s-1) G; it completes a posted receive that matches it (source
  and tag), or waits among the unexpected ones.
- A receive, once its dependencies are done, completes at once on an
  unexpected message that matches, or is posted.  A calc of t is t of CPU.
- An operation whose dependencies are done starts when its host is free:
  a send at max(nexto, nextgs), a receive or calc at nexto.
- The run's time is the latest `nexto` of any host.

So one ping-pong of s bytes each way takes 2 L + 4 o + 2 (s-1) max(G, O)
(o at both ends of each message, L between; g does not show).

GOAL (the simulator's schedule language, which its txt2bin compiles):

    num_ranks 2
    rank 0 {
    l1: send 1b to 1 tag 0
    l2: recv 1b from 1 tag 0
    l2 requires l1
    }

`python3 loggopsim.py FILE.goal -L .. -o .. -g .. -G .. -O .. -S ..` prints
the model's time of FILE.goal (the checker's own command, same options).
"""

import heapq
import re
import sys

OPTIONS = ("L", "o", "g", "G", "O", "S")  # LogGOPSim's integer options


def parse_int_option(text):
    """An integer option's value as the simulator's option parser (gengetopt)
    takes it: the whole argument is one integer (strtol, base 10, 16 with
    0x, 8 with 0), else ValueError ("invalid numeric value")."""
    t = text.strip()
    if t != text or not re.fullmatch(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", t):
        raise ValueError(f"invalid numeric value: {text!r}")
    return int(t, 0)


def parse_command(argv):
    """The options of a LogGOPSim command line (argv without the program):
    {"f": file, "L": int, ...}; ValueError for anything the simulator's parser
    would refuse (an unknown option, a missing or non-integer value)."""
    out, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if not re.fullmatch(r"-[fLogGOS]", a) or i + 1 >= len(argv):
            raise ValueError(f"bad option {a!r}")
        k, v = a[1], argv[i + 1]
        out[k] = v if k == "f" else parse_int_option(v)
        i += 2
    return out


def pingpong(size, trips):
    """A GOAL schedule: `trips` round trips of `size` bytes between ranks 0
    and 1, each message after the one before it."""
    r0, r1 = [], []
    for i in range(trips):
        a, b = 2 * i + 1, 2 * i + 2
        r0.append(f"l{a}: send {size}b to 1 tag {i}")
        r0.append(f"l{b}: recv {size}b from 1 tag {i}")
        r0.append(f"l{b} requires l{a}")
        r1.append(f"l{a}: recv {size}b from 0 tag {i}")
        r1.append(f"l{b}: send {size}b to 0 tag {i}")
        r1.append(f"l{b} requires l{a}")
        if i:
            r0.append(f"l{a} requires l{a - 1}")
            r1.append(f"l{a} requires l{a - 1}")
    return ("num_ranks 2\n\nrank 0 {\n" + "\n".join(r0) + "\n}\n\nrank 1 {\n"
            + "\n".join(r1) + "\n}\n")


def parse_goal(text):
    """A GOAL schedule: a list (per rank) of {label: op}, an op a dict with
    kind (send, recv, calc), size, peer, tag, and needs (labels)."""
    ranks, cur = None, None
    for raw in text.splitlines():
        line = raw.split("//")[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"num_ranks\s+(\d+)", line)
        if m:
            ranks = [None] * int(m.group(1))
            continue
        m = re.fullmatch(r"rank\s+(\d+)\s*\{", line)
        if m:
            cur = ranks[int(m.group(1))] = {}
            continue
        if line == "}":
            cur = None
            continue
        m = re.fullmatch(r"(\w+):\s*(send|recv)\s+(\d+)b?\s+(to|from)\s+(\d+)\s+tag\s+(\d+)", line)
        if m:
            cur[m.group(1)] = {"kind": m.group(2), "size": int(m.group(3)),
                               "peer": int(m.group(5)), "tag": int(m.group(6)), "needs": []}
            continue
        m = re.fullmatch(r"(\w+):\s*calc\s+(\d+)", line)
        if m:
            cur[m.group(1)] = {"kind": "calc", "size": int(m.group(2)), "needs": []}
            continue
        m = re.fullmatch(r"(\w+)\s+requires\s+(\w+)", line)
        if m:
            cur[m.group(1)]["needs"].append(m.group(2))
            continue
        raise ValueError(f"GOAL: cannot read {raw!r}")
    if ranks is None or any(r is None for r in ranks):
        raise ValueError("GOAL: num_ranks and every rank's block are needed")
    return ranks


def simulate(ranks, L, o, g, G, O, S):
    """The model's time of schedule `ranks` (parse_goal) with the LogGOPS
    parameters (integers, one unit): the latest time a host's CPU is busy.
    ValueError for a negative parameter (the simulator's clock is unsigned)
    or a schedule that does not finish (a receive that nothing matches)."""
    if min(L, o, g, G, O, S) < 0:
        raise ValueError("negative LogGOPS parameter")
    p = len(ranks)
    nexto, nextgs, nextgr = [0] * p, [0] * p, [0] * p
    left = [{k: len(op["needs"]) for k, op in r.items()} for r in ranks]
    users = [{} for _ in ranks]  # label -> labels that need it
    for h, r in enumerate(ranks):
        for k, op in r.items():
            for n in op["needs"]:
                users[h].setdefault(n, []).append(k)
    posted = [[] for _ in ranks]  # (src, tag, label)
    unexpected = [[] for _ in ranks]  # (src, tag, size, sender's label)
    aq, seq, done = [], [0], [0]

    def push(t, what):
        seq[0] += 1
        heapq.heappush(aq, (t, seq[0], what))

    def start(h, k):
        kind = ranks[h][k]["kind"]
        push(max(nexto[h], nextgs[h]) if kind == "send" else nexto[h], ("op", h, k))

    def finish(h, k):
        done[0] += 1
        for u in users[h].get(k, []):
            left[h][u] -= 1
            if left[h][u] == 0:
                start(h, u)

    for h, r in enumerate(ranks):
        for k in r:
            if left[h][k] == 0:
                start(h, k)
    while aq:
        t, _, what = heapq.heappop(aq)
        if what[0] == "op":
            _, h, k = what
            op = ranks[h][k]
            s1 = max(op["size"] - 1, 0)
            if op["kind"] == "calc":
                if nexto[h] > t:
                    push(nexto[h], what)
                    continue
                nexto[h] = t + op["size"]
                finish(h, k)
            elif op["kind"] == "send":
                if max(nexto[h], nextgs[h]) > t:
                    push(max(nexto[h], nextgs[h]), what)
                    continue
                nexto[h] = t + o + s1 * O
                nextgs[h] = t + g + s1 * G
                push(t + o + L, ("msg", op["peer"], h, op["tag"], op["size"], k))
                if op["size"] <= S:
                    finish(h, k)
            else:  # recv
                hit = next((u for u in unexpected[h] if u[0] == op["peer"] and u[1] == op["tag"]),
                           None)
                if hit is None:
                    posted[h].append((op["peer"], op["tag"], k))
                    continue
                unexpected[h].remove(hit)
                if hit[2] > S:
                    rendezvous_done(hit[0], hit[3], t, nexto, nextgs, finish)
                finish(h, k)
        else:  # a message arrives
            _, h, src, tag, size, sk = what
            s1 = max(size - 1, 0)
            if max(nexto[h], nextgr[h]) > t:
                push(max(nexto[h], nextgr[h]), what)
                continue
            nexto[h] = t + o + max(s1 * O, s1 * G)
            nextgr[h] = t + g + s1 * G
            hit = next((r for r in posted[h] if r[0] == src and r[1] == tag), None)
            if hit is None:
                unexpected[h].append((src, tag, size, sk))
                continue
            posted[h].remove(hit)
            if size > S:
                rendezvous_done(src, sk, t, nexto, nextgs, finish)
            finish(h, hit[2])
    if done[0] != sum(len(r) for r in ranks):
        raise ValueError("GOAL schedule did not finish (unmatched operations)")
    return max(nexto)


def rendezvous_done(h, k, t, nexto, nextgs, finish):
    """A rendezvous send (host h, label k) matched at t: the sender is busy
    until at least t, then its send is done."""
    nexto[h], nextgs[h] = max(nexto[h], t), max(nextgs[h], t)
    finish(h, k)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    opts = parse_command(argv[2:])
    with open(argv[1]) as f:
        ranks = parse_goal(f.read())
    print(simulate(ranks, *(opts.get(k, 0) for k in OPTIONS)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
