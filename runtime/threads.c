/*
 * threads.c - an endpoint shared by the threads of its process (threads.h
 * states the modes, the locks and their order): sharing it, running a
 * handler with the drain lock released, the handler frames of a thread, and
 * the count of calls in progress that makes destroy refuse (-EBUSY).
 *
 * Several threads serving one endpoint.  Every poll path runs under drain_mu
 * (poll.c), which a thread releases only to run a handler (below) and takes
 * again after it: taking the next message (advancing a head, copying its
 * packet) is one thread's at a time, so each message is taken once and, per
 * sender, in the order sent; handlers of different messages run at once, on
 * as many threads as poll.  What a handler still uses after its message was
 * taken stays reserved until it returns: a shared queue's slot and bulk
 * block are freed after it (in any order: a claim needs the slot at the
 * tail freed for its lap, so a slot freed early waits for the tail;
 * mpsc_send.c), a heap block likewise; a per-sender channel's bulk blocks
 * are given back by count, in order, so one channel serves one thread at a
 * time (chan_poll.c's busy mark).
 */
#include <errno.h>
#include <pthread.h>

#include "deliver.h"
#include "internal.h"

int am__mt_init(am_ep_t *ep)
{
    ep->mt.owner = am__self();
    if (pthread_mutex_init(&ep->mt.peers_mu, NULL) != 0)
        return -ENOMEM;
    if (pthread_mutex_init(&ep->mt.drain_mu, NULL) != 0) {
        pthread_mutex_destroy(&ep->mt.peers_mu);
        return -ENOMEM;
    }
    return 0;
}

void am__mt_fini(am_ep_t *ep)
{
    am__kept_release_all(ep);
    am__fd_close(ep);
    pthread_mutex_destroy(&ep->mt.drain_mu);
    pthread_mutex_destroy(&ep->mt.peers_mu);
}

int am_ep_share(am_ep_t *ep)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return ep->mt.shared ? 0 : -EPERM;
    if (ep->in_handler)
        return -EDEADLK;
    if (ep->net)
        return -ENOTSUP; /* the MPI transport's state is one thread's */
    /* Other threads start calling after this returns (the user's own
     * synchronization, e.g. pthread_create, orders this store first). */
    ep->mt.shared = 1;
    return 0;
}

int am__in_handler_shared(const am_ep_t *ep)
{
    for (const am_token_t *t = am__tok_cur; t; t = t->outer)
        if (t->ep == ep)
            return 1;
    return 0;
}

void am__call_handler_shared(am_ep_t *ep, am_handler_t h, am_token_t *tok,
                             const uint32_t *args, int nargs, void *data, size_t len)
{
    am__handlers_running++;
    tok->outer = am__tok_cur;
    am__tok_cur = tok;
    pthread_mutex_unlock(&ep->mt.drain_mu);
    h(tok, args, nargs, data, len);
    pthread_mutex_lock(&ep->mt.drain_mu);
    am__tok_cur = tok->outer;
    am__handlers_running--;
}

/* Calls in progress on a shared endpoint, for destroy's -EBUSY. */
void am__mt_enter(am_ep_t *ep)
{
    AO_fetch_and_add1(&ep->mt.inside);
}

void am__mt_leave(am_ep_t *ep)
{
    AO_fetch_and_sub1(&ep->mt.inside);
}
