"""Views of a handler's payload kept past its return, for test_payload.py:
payload_prog.py NAME SIZE.  A handler keeps data itself, data[:16], data[16:],
memoryview(data) and bytes(data) of a message of SIZE bytes; then come 40
messages of other bytes of the same size (more than the queue's blocks or
heap hold: their memory is reused), then both endpoints close.  After each
step every kept view must raise ValueError or read the first message's bytes
(never a later one's; and reading must not crash the process: the test sees
a death by signal).  Prints "ok"."""

import sys

import shmam

name, size = sys.argv[1], int(sys.argv[2])


def pattern(seed):
    return bytes((i * 7 + seed) & 0xFF for i in range(size))


first = pattern(1)
kept = {}


def keep(tok, data=None):
    if not kept:
        kept.update(whole=data, head=data[:16], tail=data[16:], view=memoryview(data),
                    copy=bytes(data))


def check(when):
    want = {"whole": first, "head": first[:16], "tail": first[16:], "view": first,
            "copy": first}
    for k, v in kept.items():
        try:
            got = bytes(v)
        except ValueError:
            assert k not in ("copy",), f"{when}: {k} raised ValueError"
            continue
        assert got == want[k], f"{when}: kept {k} does not read the first message's bytes"


a = shmam.Endpoint(name)
b = shmam.Endpoint()
b.map(0, name)
a.set_handler(1, keep)
b.request(0, 1, data=first)
assert a.wait(5000) == 1
check("after the handler")
for i in range(40):  # more than the queue's bulk blocks, or its heap holds
    b.request(0, 1, data=pattern(2 + i))
    assert a.wait(5000) == 1
    check(f"after message {i + 2}")
b.close()
a.close()
check("after close")
print("ok", flush=True)
