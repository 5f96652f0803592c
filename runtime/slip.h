/*
 * slip.h - temporal slipping of a receiver behind a one-way stream (slip.c):
 * the detector's state per queue, kept in the endpoint's private memory, and
 * the calls with which a queue's drain (mpsc_poll.c, chan_poll.c) asks it.
 */
#ifndef SHMAM_SLIP_H
#define SHMAM_SLIP_H

#include <atomic_ops.h>

struct am_ep;

/* One of our queues' stream, as its drains have seen it. */
struct am_slip {
    unsigned gap;        /* empty drains since the last productive one */
    unsigned streak;     /* productive drains in a row, each within AM_SLIP_GAP
                          * empty ones of the last */
    AO_t sends;          /* ep->sends after the last productive drain */
    unsigned long waits; /* waits so far, for tests */
};

/* A drain of queue qid has delivered messages and then found the queue
 * empty, `round` waits into the drain.  Is it amid a one-way stream?  Then
 * wait, touching no shared line, and return 1: the drain looks once more.
 * Else 0 at once. */
int am__slip_wait(struct am_ep *ep, int qid, unsigned round);

/* A drain of queue qid is over, having delivered n messages; `wasted`: its
 * last wait found nothing.  Update its stream's state. */
void am__slip_seen(struct am_ep *ep, int qid, int n, int wasted);

/* Drain queue qid by passes of `pass` (one transport's pass over it),
 * slipping behind a one-way stream: after a pass that delivered, look again
 * while am__slip_wait says the stream goes on.  Returns how many were
 * delivered.  Inline, so that each transport's pass is a direct call. */
static inline int am__slip_drain(struct am_ep *ep, int qid,
                                 int (*pass)(struct am_ep *, int qid))
{
    int n = pass(ep, qid), k = n;
    unsigned round = 0;
    while (k > 0 && am__slip_wait(ep, qid, round))
        round++, n += k = pass(ep, qid);
    am__slip_seen(ep, qid, n, round > 0 && k == 0);
    return n;
}

/* We sent a message (any peer, any queue): a stream we receive is not
 * one-way while we answer it. */
static inline void am__slip_sent(AO_t *sends)
{
    AO_store(sends, AO_load(sends) + 1); /* a hint; a lost update still changes it */
}

#endif
