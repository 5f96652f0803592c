/*
 * mpi_send.c - the sender's half of active messages over MPI (mpi_net.h), top to
 * bottom: wait for room (a free slot in the ring of messages in flight; for
 * a synchronous one, the destination's previous synchronous one taken),
 * write the wire header and a payload of up to AM_MAX_BULK bytes into the
 * slot, MPI_Isend it (MPI_Issend every AM_NET_SYNC-th to one rank); for a
 * longer long message, send its data from the caller's buffer and wait until
 * MPI is done with it, since the caller may reuse the buffer on return.
 * Each queue has its own ring and synchronous messages (mpi_net.h, Room).
 *
 * Every wait is a backoff round as in the runtime's send.c: a request polls
 * the endpoint (handlers may run and reply, here too: the state below is
 * consistent whenever we poll, and every condition is looked at again after);
 * a reply, sent from a handler, drains only replies.  Slots are taken and
 * filled without polling in between, so a nested send never sees a half one.
 */
#include <errno.h>
#include <string.h>

#include "mpi_net.h"
#include "spin.h"

/* Requests of the ring completed, oldest first: the slots they free. */
int am__mpi_tx_reap(struct am_txq *q)
{
    while (q->done < q->next) {
        int done = 0;
        int rc = MPI_Test(&q->tx[q->done % AM_NET_TX].req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || !done)
            return rc;
        q->done++;
    }
    return MPI_SUCCESS;
}

/* One round of waiting, polling as a blocked send of queue qid may. */
static void backoff(am_ep_t *ep, enum am_qid qid, struct spin *sp)
{
    if (qid == AM_REQUEST)
        am__poll(ep);
    else
        am__drain(ep, AM_REPLY);
    am__net_poll(ep, qid == AM_REPLY);
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

/* Has queue q a free slot (after reaping)? */
static int slot_free(struct am_txq *q)
{
    if (q->next - q->done == AM_NET_TX)
        am__mpi_tx_reap(q);
    return q->next - q->done < AM_NET_TX;
}

/* Wait until a slot of queue qid is free and, if the next message to dest
 * there is to be synchronous, its previous one has been taken.  Returns
 * whether it is. */
static int room(am_ep_t *ep, unsigned dest, enum am_qid qid)
{
    struct am_mpi *n = am_mpi_of(ep);
    struct am_txq *q = &n->txq[qid];
    struct spin sp = SPIN_INIT;
    unsigned rounds = 0;
    for (;; rounds++) {
        int sync = n->sent[qid][dest] % AM_NET_SYNC == AM_NET_SYNC - 1;
        if (slot_free(q) && (!sync || sync_done(q, n->sync[qid][dest]))) {
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
    if (m->len > AM_MAX_BULK)
        return sizeof *w; /* the data follows apart */
    if (m->len)
        memcpy((unsigned char *)(w + 1), m->data, m->len);
    return sizeof *w + m->len;
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

int am__mpi_send(am_ep_t *ep, unsigned dest, enum am_qid qid, const struct am_msg *m)
{
    struct am_mpi *n = am_mpi_of(ep);
    int rc = am__check_msg(m, m->kind == AM_LONG ? n->long_max[dest] : 0);
    if (rc < 0)
        return rc;
    int sync = room(ep, dest, qid);
    struct am_txq *q = &n->txq[qid];
    uint64_t slot = q->next;
    struct am_tx *t = &q->tx[slot % AM_NET_TX];
    size_t bytes = wire_fill((struct am_wire *)t->buf, m);
    rc = (sync ? MPI_Issend : MPI_Isend)(t->buf, (int)bytes, MPI_BYTE, (int)dest,
                                         AM_TAG_MSG + qid, n->comm, &t->req);
    if (rc != MPI_SUCCESS)
        return -EIO;
    q->next = slot + 1;
    n->sent[qid][dest]++;
    if (sync)
        n->sync[qid][dest] = slot + 1;
    if (m->kind != AM_SHORT && m->len > AM_MAX_BULK)
        return send_data(ep, dest, qid, m);
    return 0;
}
