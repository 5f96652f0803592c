"""Endpoints, handlers, requests and replies, within one process."""

import errno
import gc
import time

import pytest
import shmam
from conftest import pattern
from shmam._lib import ffi

H_REQ, H_REP = 1, 2


def test_request_reply_every_kind(pair):
    a, b = pair
    got, replies = [], []

    @a.handler(H_REQ)
    def echo(tok, *args, data=None):
        got.append((args, None if data is None else bytes(data)))
        tok.reply(H_REP, *args, data=b"" if data is None else data)

    @b.handler(H_REP)
    def back(tok, *args, data=None):
        replies.append((args, None if data is None else bytes(data)))

    sent = [((), b""), ((1, 2, 3, 4, 5, 6, 7, 0xFFFFFFFF), b""), ((9,), pattern(1)),
            ((10,), pattern(8192)), ((11,), pattern(8193)), ((12,), pattern(300000))]
    for args, data in sent:
        b.request(0, H_REQ, *args, data=data)
    assert a.poll() == len(sent)
    assert b.poll() == len(sent)
    want = [(args, data or None) for args, data in sent]
    assert got == want
    assert replies == want


def test_long_payload_is_a_view_released_after_the_handler(pair):
    a, b = pair
    n = 200000
    data = pattern(n, 3)
    seen = {}

    @a.handler(H_REQ)
    def h(tok, data=None):
        seen["view"] = data
        seen["readonly"] = data.readonly
        seen["len"] = len(data)
        seen["ends"] = (data[0], data[n - 1])
        seen["equal"] = bytes(data) == pattern(n, 3)
        seen["slice"] = bytes(data[1000:1010])
        with pytest.raises(IndexError):
            data[n]
        seen["copy"] = bytes(data)

    b.request(0, H_REQ, data=data)
    assert a.poll() == 1
    assert seen["readonly"] and seen["len"] == n and seen["equal"]
    assert seen["ends"] == (data[0], data[n - 1])
    assert seen["slice"] == data[1000:1010]
    with pytest.raises(ValueError):
        seen["view"][0]
    with pytest.raises(ValueError):
        bytes(seen["view"])
    assert seen["copy"] == data  # the documented copy outlives the handler


def test_export_kept_past_the_handler_is_an_error(pair):
    a, b = pair
    kept = []
    a.set_handler(H_REQ, lambda tok, data=None: kept.append(ffi.from_buffer(data)))
    b.request(0, H_REQ, data=b"x" * 100)
    with pytest.raises(shmam.Error) as e:
        a.poll()
    assert e.value.errno == errno.EBUSY


def test_handler_exception_raised_from_poll_then_goes_on(pair):
    a, b = pair
    ok = []

    @a.handler(H_REQ)
    def h(tok, x, data=None):
        if x == 1:
            raise ValueError("boom")
        ok.append(x)

    b.request(0, H_REQ, 1)
    with pytest.raises(ValueError, match="boom"):
        a.poll()
    b.request(0, H_REQ, 2)
    assert a.poll() == 1 and ok == [2]
    assert a.handler_errors == 1


def test_handler_exception_raised_from_wait(pair):
    a, b = pair
    a.set_handler(H_REQ, lambda tok, data=None: 1 / 0)
    b.request(0, H_REQ)
    with pytest.raises(ZeroDivisionError):
        a.wait(5000)


def test_token_dies_with_its_handler(pair):
    a, b = pair
    kept = []
    a.set_handler(H_REQ, lambda tok, data=None: kept.append(tok))
    b.request(0, H_REQ)
    a.poll()
    with pytest.raises(shmam.Error) as e:
        kept[0].reply(H_REP)
    assert e.value.errno == errno.EINVAL


def test_second_reply_is_an_error(pair):
    a, b = pair
    a.set_handler(H_REQ, lambda tok, data=None: (tok.reply(H_REP), tok.reply(H_REP)))
    b.set_handler(H_REP, lambda tok, data=None: None)
    b.request(0, H_REQ)
    with pytest.raises(shmam.Error) as e:
        a.poll()
    assert e.value.errno == errno.EALREADY


def test_callbacks_outlive_their_python_references(pair):
    a, b = pair
    got = []
    a.set_handler(H_REQ, lambda tok, x, data=None: got.append(x))  # no other reference
    gc.collect()
    b.request(0, H_REQ, 5)
    a.poll()
    a.set_handler(H_REQ, lambda tok, x, data=None: got.append(-x))  # replaced
    gc.collect()
    b.request(0, H_REQ, 6)
    a.poll()
    assert got == [5, -6]


def test_errors_map_to_exceptions(pair, names):
    a, b = pair
    with pytest.raises(shmam.MessageTooLong):
        b.request(0, H_REQ, *range(9))
    with pytest.raises(shmam.MessageTooLong):
        b.request(0, H_REQ, data=bytes(a.long_max + 1))
    with pytest.raises(OverflowError):
        b.request(0, H_REQ, 2**32)
    with pytest.raises(shmam.Error) as e:
        b.map(1, names())  # no such endpoint
    assert e.value.errno == errno.ENOENT and isinstance(e.value, OSError)
    assert shmam.strerror(-errno.ENOENT) in e.value.strerror
    with pytest.raises(shmam.Error) as e:
        shmam.Endpoint(a.name)
    assert e.value.errno == errno.EEXIST
    with pytest.raises(TypeError):
        shmam.Endpoint(names(), colour="red")


def test_options_reach_the_endpoint(names):
    with shmam.Endpoint(names(), claim="ticket", packets=64, long_max=65536) as ep:
        assert ep.claim == "ticket"
        assert ep.long_max == 65536


def test_closed_endpoint(names):
    ep = shmam.Endpoint(names())
    ep.close()
    ep.close()
    assert ep.closed
    with pytest.raises(shmam.Error):
        ep.poll()


def test_wait_times_out(pair):
    a, _ = pair
    t = time.monotonic()
    assert a.wait(100) == 0
    assert time.monotonic() - t >= 0.09


def test_peer_closed_is_peergone(pair):
    a, b = pair
    a.close()
    with pytest.raises(shmam.PeerGone) as e:
        b.request(0, H_REQ)
    assert isinstance(e.value, BrokenPipeError) and e.value.errno == errno.EPIPE


@pytest.mark.skipif(not shmam.anonymous_supported(), reason="this libshmam makes no anonymous endpoints")
def test_anonymous_client(pair):
    a, _ = pair
    with shmam.Endpoint() as c:
        assert c.name.startswith("@")
        c.map(0, a.name)
        a.set_handler(H_REQ, lambda tok, x, data=None: tok.reply(H_REP, x + 1))
        got = []
        c.set_handler(H_REP, lambda tok, x, data=None: got.append(x))
        c.request(0, H_REQ, 41)
        a.wait(5000)
        c.wait(5000)
        assert got == [42]
