/*
 * mpi_recv.c - the receiver's half of active messages over MPI (mpi_net.h), top to
 * bottom: AM_NET_RX receives posted per queue from any source; progress
 * tests the oldest of each (one MPI_Testany over both: one turn of MPI's
 * progress engine), and for each message taken checks a private copy of its
 * header, takes a long message's data (MPI_Recv from the same sender: it sent
 * the data right after the header), runs the handler with a token whose
 * source is the sender's rank, and posts the receive again, now the newest.
 *
 * Re-entry: a request handler's reply may wait for room and so poll the
 * reply queue (send.c); a queue whose oldest receive is being handled is
 * marked busy and skipped by such a nested progress, so no receive is taken
 * twice.  Handlers of replies do not send.
 *
 * Closing (collective, from am_ep_destroy): every rank learns how many
 * messages each other rank sent it (MPI_Alltoall) and receives until it has
 * them all, dropping them unrun (they came after am_finalize's barrier, as
 * messages left in a shared queue at destroy are dropped), so that every
 * send completes; then the receives still posted are cancelled.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deliver.h"
#include "mpi_net.h"
#include "send.h"

static int post(struct am_mpi *n, enum am_qid qid, unsigned i)
{
    return MPI_Irecv(n->rx[qid].buf[i], (int)AM_RX_BYTES, MPI_BYTE, MPI_ANY_SOURCE,
                     AM_TAG_MSG + qid, n->comm, &n->rx[qid].req[i]);
}

int am__mpi_rx_post(struct am_mpi *n)
{
    for (int qid = 0; qid < 2; qid++)
        for (unsigned i = 0; i < AM_NET_RX; i++) {
            if (!(n->rx[qid].buf[i] = malloc(AM_RX_BYTES)))
                return -ENOMEM;
            if (post(n, (enum am_qid)qid, i) != MPI_SUCCESS)
                return -EIO;
        }
    return 0;
}

/* The header w of `count` bytes from rank src: NULL or why it is bad. */
static const char *check_wire(const am_ep_t *ep, const struct am_mpi *n,
                              const struct am_wire *w, int count, unsigned src)
{
    if (src >= n->pub.nranks || !n->remote[src])
        return "a message over MPI from a rank of our own node";
    if (count < AM_WIRE_ARGS || w->nargs > AM_MAX_ARGS || w->kind > AM_LONG_AT)
        return "a message over MPI with a bad header";
    size_t want = w->kind == AM_SHORT       ? AM_WIRE_ARGS + 4u * w->nargs
                  : w->len <= AM_NET_INLINE ? sizeof *w + w->len
                                            : sizeof *w;
    if ((size_t)count != want || (w->kind == AM_SHORT && w->len) ||
        (w->kind == AM_BULK && w->len > AM_MAX_BULK))
        return "a message over MPI whose length does not match its header";
    if (w->kind == AM_LONG && w->len > ep->own.long_max)
        return "a long message over MPI longer than long_max";
    if (w->kind == AM_LONG_AT && (!ep->region.base || w->off > ep->region_bytes ||
                                  w->len > ep->region_bytes - w->off))
        return "a long message over MPI outside the region";
    return NULL;
}

/* Room for a long message's data of len bytes: our buffer, grown. */
static void *data_buf(struct am_mpi *n, size_t len)
{
    if (len > n->data_cap) {
        void *p = realloc(n->data, len);
        if (!p)
            return NULL;
        n->data = p;
        n->data_cap = len;
    }
    return n->data;
}

/* The data that follows a long header from src, into dst (NULL: our buffer,
 * dropped after).  A header of AM_LONG or AM_LONG_AT longer than AM_NET_INLINE
 * always has it, even a bad one: the sender sent it.  0 or why it is bad. */
static const char *take_data(am_ep_t *ep, enum am_qid qid, const struct am_wire *w,
                             unsigned src, void *dst)
{
    struct am_mpi *n = am_mpi_of(ep);
    MPI_Status st;
    int count = -1;
    if (!dst && !(dst = data_buf(n, w->len))) {
        fprintf(stderr, "shmam: no memory for a long message of %u bytes over MPI\n",
                w->len);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Recv(dst, (int)w->len, MPI_BYTE, (int)src, AM_TAG_DATA + qid, n->comm, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    return count == (int)w->len ? NULL : "a long message over MPI shorter than its header";
}

/* Handle the message that the oldest receive of queue qid took. */
static void handle(am_ep_t *ep, enum am_qid qid, const unsigned char *buf,
                   const MPI_Status *st)
{
    struct am_mpi *n = am_mpi_of(ep);
    struct am_wire w = {0};
    int count = 0;
    unsigned src = (unsigned)st->MPI_SOURCE;
    MPI_Get_count(st, MPI_BYTE, &count);
    memcpy(&w, buf, count < (int)sizeof w ? (size_t)count : sizeof w);
    if (src < n->pub.nranks)
        n->received[src]++;
    /* While closing a message is taken (its data too) and dropped unrun: as a
     * bad one, so that nothing of it is written into the region. */
    const char *why =
        n->closing ? "arrived while closing" : check_wire(ep, n, &w, count, src);
    int apart = (w.kind == AM_LONG || w.kind == AM_LONG_AT) && w.len > AM_NET_INLINE &&
                count == (int)sizeof w && src < n->pub.nranks;
    void *dst = NULL; /* the data: in our region, our buffer or the receive's */
    if (!why && w.kind == AM_LONG_AT)
        dst = (char *)ep->region.base + w.off;
    if (apart) {
        const char *bad = take_data(ep, qid, &w, src, dst);
        why = why ? why : bad;
        dst = dst ? dst : n->data;
    } else if (w.kind != AM_SHORT && dst && w.len)
        memcpy(dst, buf + sizeof w, w.len);
    else if (w.kind != AM_SHORT)
        dst = dst ? dst : (void *)(buf + sizeof w);
    if (n->closing)
        return;
    struct am_packet p = {.handler = w.handler, .nargs = w.nargs};
    memcpy(p.args, w.args, sizeof p.args);
    struct am_payload pl = {.data = dst, .len = w.len, .bulk = w.kind == AM_BULK};
    am__run_from(ep, qid, &p, src, &pl, why);
}

/* Take the oldest receive of queue qid if it is done; 1 if it was. */
static int take(am_ep_t *ep, enum am_qid qid, MPI_Request *req, const MPI_Status *st)
{
    struct am_mpi *n = am_mpi_of(ep);
    struct am_rx *rx = &n->rx[qid];
    unsigned i = rx->next;
    rx->req[i] = *req; /* MPI_REQUEST_NULL now */
    n->busy[qid] = 1;
    handle(ep, qid, rx->buf[i], st);
    n->busy[qid] = 0;
    post(n, qid, i);
    rx->next = (i + 1) % AM_NET_RX;
    return 1;
}

/* Runs what has arrived, at most 2 * AM_NET_RX messages per call. */
int am__mpi_progress(am_ep_t *ep, int replies_only)
{
    struct am_mpi *n = am_mpi_of(ep);
    int got = 0;
    while (got < 2 * AM_NET_RX) {
        enum am_qid q[2];
        MPI_Request r[2];
        int k = 0, idx, done = 0;
        MPI_Status st;
        for (int qid = AM_REPLY; qid >= (replies_only ? AM_REPLY : AM_REQUEST); qid--)
            if (!n->busy[qid]) {
                q[k] = (enum am_qid)qid;
                r[k++] = n->rx[qid].req[n->rx[qid].next];
            }
        if (k == 0 || MPI_Testany(k, r, &idx, &done, &st) != MPI_SUCCESS || !done ||
            idx == MPI_UNDEFINED)
            break;
        got += take(ep, q[idx], &r[idx], &st);
    }
    return got;
}

/* Are all messages sent to us received? */
static int all_in(const struct am_mpi *n, const uint64_t *expect)
{
    for (unsigned r = 0; r < n->pub.nranks; r++)
        if (n->received[r] < expect[r])
            return 0;
    return 1;
}

void am__mpi_drain(am_ep_t *ep)
{
    struct am_mpi *n = am_mpi_of(ep);
    unsigned p = n->pub.nranks;
    uint64_t *sent = calloc(2 * (size_t)p, sizeof *sent), *expect = sent + p;
    if (!sent)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (unsigned r = 0; r < p; r++)
        sent[r] = n->sent[AM_REQUEST][r] + n->sent[AM_REPLY][r];
    n->closing = 1;
    MPI_Alltoall(sent, 1, MPI_UINT64_T, expect, 1, MPI_UINT64_T, n->comm);
    am__hook(AM_HOOK_NET_CLOSING);
    while (!all_in(n, expect)) {
        if (am__mpi_progress(ep, 0) == 0)
            sched_yield();
        am__mpi_tx_reap(&n->txq[AM_REQUEST]);
        am__mpi_tx_reap(&n->txq[AM_REPLY]);
    }
    free(sent);
}

void am__mpi_rx_cancel(struct am_mpi *n)
{
    for (int qid = 0; qid < 2; qid++)
        for (unsigned i = 0; i < AM_NET_RX; i++) {
            if (n->rx[qid].req[i] != MPI_REQUEST_NULL) {
                MPI_Cancel(&n->rx[qid].req[i]);
                MPI_Wait(&n->rx[qid].req[i], MPI_STATUS_IGNORE);
            }
            free(n->rx[qid].buf[i]);
        }
}
