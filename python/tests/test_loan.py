"""Loans (Endpoint.lend): a request written straight into the peer's queue
through a writable memoryview, committed, cancelled, or ended with its block;
the view is released when the loan ends."""

import errno

import pytest
import shmam
from conftest import pattern

H_REQ = 1


@pytest.mark.parametrize("size,sent", [(1, 1), (100, 60), (8192, 8192), (20000, 19999)])
def test_lend_write_commit(pair, size, sent):
    """Bulk and heap loans, committed whole or shorter: the handler gets
    exactly the bytes written and the arguments."""
    a, b = pair
    got = []

    @a.handler(H_REQ)
    def h(tok, *args, data=None):
        got.append((args, bytes(data)))

    loan = b.lend(0, size)
    assert len(loan.view) == size and not loan.view.readonly
    loan.view[:sent] = pattern(sent, size)
    loan.commit(H_REQ, 5, 6, length=sent)
    assert a.poll() == 1
    assert got == [((5, 6), pattern(sent, size))]
    with pytest.raises(ValueError):
        loan.view[0] = 1  # released at commit


def test_cancel_and_context(pair):
    """A cancelled loan sends nothing; a block that ends with its loan open
    cancels it; the thread may lend again at once."""
    a, b = pair
    got = []
    a.set_handler(H_REQ, lambda tok, *args, data=None: got.append(bytes(data)))
    b.lend(0, 300).cancel()
    with b.lend(0, 300) as loan:
        loan.view[:3] = b"abc"
    with b.lend(0, 3) as loan:
        loan.view[:] = b"xyz"
        loan.commit(H_REQ)
    a.poll()
    assert got == [b"xyz"]


def test_misuse(pair):
    a, b = pair
    loan = b.lend(0, 10)
    with pytest.raises(shmam.Error) as e:
        b.lend(0, 10)  # one loan per thread
    assert e.value.errno == errno.EBUSY
    with pytest.raises(ValueError):
        loan.commit(H_REQ, length=11)
    loan.cancel()
    with pytest.raises(shmam.Error):
        loan.cancel()
    with pytest.raises(shmam.Error):
        b.lend(7, 10)  # no peer there
