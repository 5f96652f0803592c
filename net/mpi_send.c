/*
 * mpi_send.c - the sender's half of active messages over MPI (mpi_net.h), top to
 * bottom: wait for room (a free slot in the ring of messages in flight; for
 * a synchronous one, the destination's previous synchronous one taken),
 * write the wire header and a payload of up to AM_MAX_BULK bytes into the
 * slot, MPI_Isend it (MPI_Issend every AM_NET_SYNC-th to one rank); for a
 * longer long message, copy its data into the queue's staging ring and send
 * it from there in the background (up to AM_NET_STAGE_MAX bytes), or send it
 * from the caller's buffer and wait until MPI is done with it, since the
 * caller may reuse the buffer on return.
 * Each queue has its own ring and synchronous messages (mpi_net.h, Room).
 *
 * Every wait is a backoff round as in the runtime's send.c: a request polls
 * the endpoint (handlers may run and reply, here too: the state below is
 * consistent whenever we poll, and every condition is looked at again after);
 * a reply, sent from a handler, drains only replies.  Slots are taken and
 * filled without polling in between, so a nested send never sees a half one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_net.h"
#include "send.h"
#include "spin.h"

/* Requests of the ring completed, oldest first: the slots they free. */
int am__mpi_tx_reap(struct am_txq *q)
{
    while (q->done < q->next) {
        int done = 0;
        struct am_tx *t = &q->tx[q->done % AM_NET_TX];
        int rc = MPI_Test(&t->req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || !done)
            return rc;
        if (t->stage_to)
            q->stage_head = t->stage_to;
        q->done++;
    }
    return MPI_SUCCESS;
}

/* One round of waiting, polling as a blocked send of queue qid may. */
static void backoff(am_ep_t *ep, enum am_qid qid, struct spin *sp)
{
    am__blocked_poll(ep, qid);
    am__mpi_tx_reap(&am_mpi_of(ep)->txq[qid]);
    spin_wait(sp);
}

/* Is the synchronous message that was ring number `slot` - 1 of q taken by
 * its receiver (0: there was none)? */
static int sync_done(struct am_txq *q, uint64_t slot)
{
    int done = 1;
    if (slot && slot - 1 >= q->done)
        MPI_Test(&q->tx[(slot - 1) % AM_NET_TX].req, &done, MPI_STATUS_IGNORE);
    return done;
}

/* Where len bytes would go in q's staging ring, if they fit now. */
static int stage_fits(const struct am_txq *q, size_t len, uint64_t *at)
{
    uint64_t pos = (q->stage_tail + 63) & ~(uint64_t)63; /* a wire header's alignment */
    if (pos % AM_NET_STAGE_BYTES + len > AM_NET_STAGE_BYTES)
        pos += AM_NET_STAGE_BYTES - pos % AM_NET_STAGE_BYTES; /* wrap */
    *at = pos;
    return pos + len - q->stage_head <= AM_NET_STAGE_BYTES;
}

/* Have queue q `slots` free slots and room for `stage` bytes (after
 * reaping)?  *at: where the staged bytes go. */
static int space(struct am_txq *q, unsigned slots, size_t stage, uint64_t *at)
{
    for (int reaped = 0;; reaped = 1) {
        if (q->next - q->done + slots <= AM_NET_TX && (!stage || stage_fits(q, stage, at)))
            return 1;
        if (reaped)
            return 0;
        am__mpi_tx_reap(q);
    }
}

/* Wait until queue qid has `slots` free slots and `stage` bytes of staging
 * room and, if the next message to dest there is to be synchronous, its
 * previous one has been taken.  Returns whether it is. */
static int room(am_ep_t *ep, unsigned dest, enum am_qid qid, unsigned slots, size_t stage,
                uint64_t *at)
{
    struct am_mpi *n = am_mpi_of(ep);
    struct am_txq *q = &n->txq[qid];
    struct spin sp = SPIN_INIT;
    unsigned rounds = 0;
    for (;; rounds++) {
        int sync = n->sent[qid][dest] % AM_NET_SYNC == AM_NET_SYNC - 1;
        if (space(q, slots, stage, at) && (!sync || sync_done(q, n->sync[qid][dest]))) {
            n->backoffs += rounds;
            return sync;
        }
        backoff(ep, qid, &sp);
    }
}

/* The wire header of m in w; returns the bytes to send with it inline. */
static size_t wire_fill(struct am_wire *w, const struct am_msg *m)
{
    w->handler = (uint16_t)m->handler;
    w->nargs = (uint8_t)m->nargs;
    w->kind = (uint8_t)m->kind;
    w->len = (uint32_t)m->len;
    w->off = m->kind == AM_LONG_AT ? m->off : 0;
    memset(w->args, 0, sizeof w->args);
    if (m->nargs)
        memcpy(w->args, m->args, (size_t)m->nargs * sizeof *m->args);
    if (m->kind == AM_SHORT)
        return AM_WIRE_ARGS + (size_t)m->nargs * sizeof *m->args;
    if (m->len > AM_NET_INLINE)
        return sizeof *w; /* the data follows apart */
    if (m->len)
        memcpy((unsigned char *)(w + 1), m->data, m->len);
    return sizeof *w + m->len;
}

/* A long message's data, after its header, copied into the staging ring at
 * `at` and sent from there in the background. */
static int send_staged(struct am_mpi *n, unsigned dest, enum am_qid qid,
                       const struct am_msg *m, uint64_t at)
{
    struct am_txq *q = &n->txq[qid];
    struct am_tx *t = &q->tx[q->next % AM_NET_TX];
    unsigned char *p = q->stage + at % AM_NET_STAGE_BYTES;
    memcpy(p, m->data, m->len);
    if (MPI_Isend(p, (int)m->len, MPI_BYTE, (int)dest, AM_TAG_DATA + qid, n->comm,
                  &t->req) != MPI_SUCCESS)
        return -EIO;
    t->stage_to = q->stage_tail = at + m->len;
    q->next++;
    return 0;
}

/* A long message's data, after its header: sent from the caller's buffer,
 * waited for (polling) until MPI no longer needs it. */
static int send_data(am_ep_t *ep, unsigned dest, enum am_qid qid, const struct am_msg *m)
{
    struct am_mpi *n = am_mpi_of(ep);
    MPI_Request req;
    struct spin sp = SPIN_INIT;
    int done = 0;
    if (MPI_Isend(m->data, (int)m->len, MPI_BYTE, (int)dest, AM_TAG_DATA + qid, n->comm,
                  &req) != MPI_SUCCESS)
        return -EIO;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        backoff(ep, qid, &sp);
    return done ? 0 : -EIO;
}

/* How a message goes (mpi_net.h): its payload in the send slot, in the
 * staging ring with its header, staged apart, or apart from the caller's. */
enum shape { IN_SLOT, IN_STAGE, STAGED_APART, APART };

static enum shape shape_of(const struct am_msg *m)
{
    size_t len = m->kind == AM_SHORT ? 0 : m->len;
    return len <= AM_MAX_BULK        ? IN_SLOT
           : len <= AM_NET_INLINE    ? IN_STAGE
           : len <= AM_NET_STAGE_MAX ? STAGED_APART
                                     : APART;
}

int am__mpi_send(am_ep_t *ep, unsigned dest, enum am_qid qid, const struct am_msg *m)
{
    struct am_mpi *n = am_mpi_of(ep);
    int rc = am__check_msg(m, m->kind == AM_LONG ? n->long_max[dest] : 0);
    if (rc < 0)
        return rc;
    struct am_txq *q = &n->txq[qid];
    enum shape shape = shape_of(m);
    if ((shape == IN_STAGE || shape == STAGED_APART) && !q->stage &&
        !(q->stage = malloc(AM_NET_STAGE_BYTES)))
        return -ENOMEM;
    size_t stage = shape == IN_STAGE       ? sizeof(struct am_wire) + m->len
                   : shape == STAGED_APART ? m->len
                                           : 0;
    uint64_t at = 0;
    int sync = room(ep, dest, qid, 1 + (shape == STAGED_APART), stage, &at);
    uint64_t slot = q->next;
    struct am_tx *t = &q->tx[slot % AM_NET_TX];
    unsigned char *buf = t->buf;
    t->stage_to = 0;
    if (shape == IN_STAGE) {
        buf = q->stage + at % AM_NET_STAGE_BYTES;
        t->stage_to = q->stage_tail = at + stage;
    }
    size_t bytes = wire_fill((struct am_wire *)buf, m);
    rc = (sync ? MPI_Issend : MPI_Isend)(buf, (int)bytes, MPI_BYTE, (int)dest,
                                         AM_TAG_MSG + qid, n->comm, &t->req);
    if (rc != MPI_SUCCESS)
        return -EIO;
    q->next = slot + 1;
    n->sent[qid][dest]++;
    if (sync)
        n->sync[qid][dest] = slot + 1;
    am__hook(AM_HOOK_NET_SENT);
    if (shape == STAGED_APART)
        return send_staged(n, dest, qid, m, at); /* the header took no staging */
    return shape == APART ? send_data(ep, dest, qid, m) : 0;
}
