/*
 * kept.c - reply handles kept past their handler (am_token_keep,
 * am_reply_kept), so that any thread of the process may answer a request
 * later, at most once.
 *
 * A handle holds a copy of the request's token and the serial of the peer
 * it came from (peers.c gives each peer a serial unique in its endpoint):
 * the reply goes to that peer only, never to a new one that took its index
 * after the caller died (-EPIPE).  Keeping marks the token replied, so the
 * handler's own reply is -EALREADY and nothing answers for it on return.
 *
 * Life of a handle.  LIVE from am_token_keep, on its endpoint's list
 * (peers_mu); the first am_reply_kept swaps it to USED (a CAS: two threads
 * racing, one sends and the other gets -EALREADY), takes it off the list and
 * puts it on the spare queue; a handle still LIVE at am_ep_destroy becomes
 * DEAD there.  A spare is reused only once AM_KEPT_SPARES more have been
 * released after it, so a second use soon after the first (or after its
 * endpoint went) finds USED or DEAD and fails (-EALREADY, -EINVAL) instead of
 * touching freed memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"
#include "peers.h"
#include "send.h"

#define AM_KEPT_SPARES 256 /* released handles kept before one is reused */

enum { KEPT_LIVE = 0x6b657074u, KEPT_USED = 0x75736564u, KEPT_DEAD = 0x64656164u };

struct am_kept {
    volatile AO_t state;
    am_token_t tok; /* the request's, with outer NULL */
    unsigned long serial;
    struct am_kept *next, *prev; /* on tok.ep's list while LIVE; spares: next */
};

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct am_kept *spare_head, *spare_tail;
static unsigned spares;

static struct am_kept *kept_alloc(void)
{
    struct am_kept *k = NULL;
    pthread_mutex_lock(&spare_lock);
    if (spares > AM_KEPT_SPARES) {
        k = spare_head;
        spare_head = k->next;
        spares--;
    }
    pthread_mutex_unlock(&spare_lock);
    return k ? k : malloc(sizeof *k);
}

/* Put k (no longer on an endpoint's list, state USED or DEAD) on the spares. */
static void kept_spare(struct am_kept *k)
{
    k->next = NULL;
    pthread_mutex_lock(&spare_lock);
    *(spare_head ? &spare_tail->next : &spare_head) = k;
    spare_tail = k;
    spares++;
    pthread_mutex_unlock(&spare_lock);
}

/* Take k off its endpoint's list (under peers_mu). */
static void unlink_kept(am_ep_t *ep, struct am_kept *k)
{
    *(k->prev ? &k->prev->next : &ep->mt.kept) = k->next;
    if (k->next)
        k->next->prev = k->prev;
}

int am_token_keep(am_token_t *handle, am_kept_t **out)
{
    am_token_t *tok = am__tok_find(handle);
    if (!tok || !out)
        return -EINVAL;
    if (tok->qid != AM_REQUEST)
        return -EDEADLK;
    if (tok->replied)
        return -EALREADY;
    struct am_kept *k = kept_alloc();
    if (!k)
        return -ENOMEM;
    am_ep_t *ep = tok->ep;
    k->tok = *tok;
    k->tok.outer = NULL;
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    struct am_peer *p = am__peer(ep, tok->source);
    k->serial = tok->serial ? tok->serial /* its sender's at delivery */
                : p         ? p->serial
                            : ~0ul; /* no peer: a reply finds none (-EPIPE) */
    k->prev = NULL;
    k->next = ep->mt.kept;
    if (k->next)
        k->next->prev = k;
    ep->mt.kept = k;
    AO_store(&k->state, KEPT_LIVE);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    tok->replied = 1;
    *out = k;
    return 0;
}

/* The message a kept reply sends: data and len choose the kind. */
static struct am_msg kept_msg(unsigned handler, const void *data, size_t len,
                              const uint32_t *args, int nargs)
{
    enum am_kind kind = len == 0 ? AM_SHORT : len <= AM_MAX_BULK ? AM_BULK : AM_LONG;
    return (struct am_msg){.kind = kind,
                           .handler = handler,
                           .args = args,
                           .nargs = nargs,
                           .data = len ? data : NULL,
                           .len = len};
}

int am_reply_kept(am_kept_t *k, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs)
{
    AO_t st = k ? AO_load(&k->state) : 0;
    if (st == KEPT_USED)
        return -EALREADY;
    if (st != KEPT_LIVE || handler >= AM_MAX_HANDLERS || (len && !data))
        return -EINVAL;
    am_ep_t *ep = k->tok.ep;
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (am__tok_cur && am__tok_cur->qid == AM_REPLY)
        return -EDEADLK; /* reply handlers do not send */
    struct am_msg m = kept_msg(handler, data, len, args, nargs);
    if ((rc = am__check_msg(&m, AM_MAX_LONG)) < 0)
        return rc;
    if (!AO_compare_and_swap_full(&k->state, KEPT_LIVE, KEPT_USED))
        return -EALREADY;
    rc = am__reply_kept(&k->tok, k->serial, &m);
    if (rc == -EMSGSIZE) { /* longer than the caller takes: still usable */
        AO_store(&k->state, KEPT_LIVE);
        return rc;
    }
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    unlink_kept(ep, k);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    kept_spare(k);
    return rc;
}

void am__kept_release_all(am_ep_t *ep)
{
    while (ep->mt.kept) {
        struct am_kept *k = ep->mt.kept;
        ep->mt.kept = k->next;
        AO_store(&k->state, KEPT_DEAD);
        kept_spare(k);
    }
}
