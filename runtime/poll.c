/*
 * poll.c - the front door of receiving, shared by every transport: the poll
 * calls, which drain both queues of our endpoint (mpsc_poll.c for a shared
 * queue, chan_poll.c for per-sender channels), run messages held during
 * am_init, ask the transport between nodes (net.h) on its schedule, and now
 * and then run the owner's repairs.  send.c is the sending front door.
 */
#include <errno.h>
#include <pthread.h>

#include "call.h"
#include "internal.h"
#include "mpsc.h"
#include "net.h"
#include "peers.h"
#include "pending.h"
#include "polling.h"
#include "rendezvous.h"

#define AM_IDLE_CHORES 16  /* idle polls between looks at requests for repair */
#define AM_TAIL_CHECK 1024 /* idle polls between checks of the shared tails */

static int drain(am_ep_t *ep, enum am_qid qid)
{
    return ep->chans ? am__chan_drain(ep, qid) : am__mpsc_drain(ep, qid);
}

/* The owner's repairs, every AM_IDLE_CHORES idle polls (poll_all counts),
 * and with the tail checks, letting go of departed clients (peers.c); the
 * messages they delivered (channels' chores may: chan_poll.c). */
static int idle_chores(am_ep_t *ep)
{
    int due = ep->idle_polls % AM_TAIL_CHECK == 0;
    if (due)
        am__peers_prune(ep);
    return ep->chans ? am__chan_chores(ep, due) : am__mpsc_chores(ep, due);
}

/* The transport between nodes (net.h), on its schedule: after a remote
 * message, every poll for AM_NET_HOT polls; then the interval doubles per
 * empty ask up to AM_NET_EVERY_MAX.  A cross-node ping-pong so stays hot and
 * an intra-node one pays one ask per AM_NET_EVERY_MAX polls.  Also from
 * backoffs (send.c) and am__net_wait. */
int am__net_poll(am_ep_t *ep, int replies_only)
{
    int n = ep->net->ops->progress(ep, replies_only);
    ep->net_tick = 0;
    if (n > 0)
        ep->net_hot = AM_NET_HOT, ep->net_every = 1;
    else if (ep->net_hot)
        ep->net_hot--;
    else if (ep->net_every < AM_NET_EVERY_MAX)
        ep->net_every *= 2;
    return n;
}

/* Both queues, and messages held during am_init; for the owner, outside
 * handlers. */
static inline int poll_all(am_ep_t *ep)
{
    int held = ep->pending && !ep->holding ? am__pending_run(ep) : 0;
    int n = held + drain(ep, AM_REPLY) + drain(ep, AM_REQUEST);
    if (__builtin_expect(ep->net != NULL, 0) && ++ep->net_tick >= ep->net_every)
        n += am__net_poll(ep, 0);
    if (__builtin_expect(ep->mt.shared || ep->owed != NULL, 0))
        am__call_retry(ep, 0); /* call replies that found no room (call.c;
                                * shared: the list is calls_mu's to read) */
    if (__builtin_expect(ep->rdv != NULL, 0))
        n += am__rdv_poll(ep); /* a listener's doors and callers */
    if (n == 0 && ++ep->idle_polls % AM_IDLE_CHORES == 0)
        n = idle_chores(ep);
    else if (n && ep->chans && AO_load(&ep->own.shared->recycle))
        n += am__chan_chores(ep, 0); /* a registrant waits: a busy owner answers */
    return n;
}

/* The internal poll calls: a shared endpoint's under its drain lock, which
 * its handlers run without (threads.c). */
int am__drain(am_ep_t *ep, enum am_qid qid)
{
    if (__builtin_expect(!ep->mt.shared, 1))
        return drain(ep, qid);
    pthread_mutex_lock(&ep->mt.drain_mu);
    int n = drain(ep, qid);
    pthread_mutex_unlock(&ep->mt.drain_mu);
    return n;
}

int am__poll(am_ep_t *ep)
{
    if (__builtin_expect(!ep->mt.shared, 1))
        return poll_all(ep);
    pthread_mutex_lock(&ep->mt.drain_mu);
    int n = poll_all(ep);
    pthread_mutex_unlock(&ep->mt.drain_mu);
    return n;
}

int am_poll(am_ep_t *ep)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (am__in_handler(ep))
        return -EDEADLK;
    if (__builtin_expect(!ep->mt.shared && !AO_load(&ep->mt.fd_rd), 1))
        return poll_all(ep);
    am__mt_enter(ep);
    int n = AO_load(&ep->mt.fd_rd) ? am__fd_poll(ep, am__poll) : am__poll(ep);
    am__mt_leave(ep);
    return n;
}
