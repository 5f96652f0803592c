"""Endpoint.request_batch: one am_request_batch for many requests."""

import errno

import pytest
import shmam
from conftest import pattern

H1, H2 = 1, 2


def _recorder(ep, got):
    for h in (H1, H2):
        ep.set_handler(h, lambda tok, *args, data=None, h=h: got.append(
            (h, args, b"" if data is None else bytes(data))))


def test_batch_arrives_in_order_intact(pair):
    a, b = pair
    got = []
    _recorder(a, got)
    sent = [(H1, (), b""), (H2, (1, 2, 3, 4, 5, 6, 7, 0xFFFFFFFF), b""),
            (H1, [9], pattern(1, 1)), (H2, (10, 11), pattern(448, 2)),
            (H1, (12,), pattern(449, 3)), (H2, (), pattern(8192, 4)),
            (H1, (13,), bytearray(pattern(100, 5))), (H2, (14,), memoryview(pattern(3000, 6))),
            (H1, (15,), b"")]
    assert b.request_batch(0, iter(sent)) == len(sent)
    assert a.poll() == len(sent)
    assert got == [(h, tuple(args), bytes(data)) for h, args, data in sent]


def test_batch_many_messages_count_and_order(pair):
    a, b = pair
    got = []
    _recorder(a, got)
    sent = [(H1 + i % 2, (i,), pattern(i % 500, i)) for i in range(40)]
    assert b.request_batch(0, sent) == 40
    while len(got) < 40 and a.poll():
        pass
    assert got == [(h, args, data) for h, args, data in sent]


@pytest.mark.parametrize("bad", [(H1, (), pattern(8193)), (H1, tuple(range(9)), b"x")])
def test_bad_message_sends_none(pair, bad):
    a, b = pair
    got = []
    _recorder(a, got)
    msgs = [(H1, (1,), b"first"), (H2, (), pattern(600)), bad, (H1, (2,), b"last")]
    with pytest.raises(shmam.MessageTooLong) as e:
        b.request_batch(0, msgs)
    assert e.value.errno == errno.EMSGSIZE
    assert a.poll() == 0
    assert got == []
    assert b.request_batch(0, [(H1, (3,), b"after")]) == 1  # the endpoint goes on
    assert a.poll() == 1 and got == [(H1, (3,), b"after")]


def test_bad_handler_sends_none(pair):
    a, b = pair
    got = []
    _recorder(a, got)
    with pytest.raises(shmam.Error) as e:
        b.request_batch(0, [(H1, (), b"ok"), (256, (), b"")])
    assert e.value.errno == errno.EINVAL
    assert a.poll() == 0 and got == []


def test_empty_batch_raises(pair):
    a, b = pair
    with pytest.raises(shmam.Error) as e:
        b.request_batch(0, [])
    assert e.value.errno == errno.EINVAL
    assert a.poll() == 0


def test_batch_to_closed_peer_is_peergone(pair):
    a, b = pair
    a.close()
    with pytest.raises(shmam.PeerGone):
        b.request_batch(0, [(H1, (), b"x")])
