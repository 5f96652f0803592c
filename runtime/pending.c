/*
 * pending.c - messages held back while am_init runs.
 *
 * am_init ends with a barrier, and polling for it may already receive messages
 * from ranks that left the barrier first and sent right away, before this
 * process had a chance to register its handlers.  Such messages are copied out
 * of the queue (their packet and bulk block are freed as usual) and run, in
 * arrival order, by the first am_poll after am_init returns.  Because nothing
 * else is delivered in between, one sender's messages keep their order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deliver.h"
#include "internal.h"
#include "pending.h"

struct am_pending {
    struct am_pending *next;
    am_token_t tok;
    uint16_t handler;
    uint8_t nargs;
    uint32_t args[AM_MAX_ARGS];
    size_t len;
    int bulk;
    unsigned char data[];
};

/* Keep a copy of a validated message for later; returns 0 or -ENOMEM. */
int am__pending_hold(am_ep_t *ep, const am_token_t *tok, const struct am_packet *m,
                     const void *data, size_t len)
{
    struct am_pending *p = malloc(sizeof *p + len);
    if (!p)
        return -ENOMEM;
    *p = (struct am_pending){.tok = *tok,
                             .handler = m->handler,
                             .nargs = m->nargs,
                             .len = len,
                             .bulk = data != NULL};
    memcpy(p->args, m->args, sizeof p->args);
    if (len)
        memcpy(p->data, data, len);
    *(ep->pending ? &ep->pending_last->next : &ep->pending) = p;
    ep->pending_last = p;
    return 0;
}

/* Run every held message whose handler is now registered (others are dropped
 * as bad); returns how many ran. */
int am__pending_run(am_ep_t *ep)
{
    int n = 0;
    while (ep->pending) {
        struct am_pending *p = ep->pending;
        ep->pending = p->next;
        am_handler_t h = ep->handlers[p->handler];
        if (h) {
            am__call_handler(ep, h, &p->tok, p->args, p->nargs, p->bulk ? p->data : NULL,
                             p->len);
            n++;
        } else if (p->tok.call)
            am__call_error(&p->tok, -ENOENT);
        else
            am__report_bad(ep, "no such handler");
        free(p);
    }
    return n;
}

/* Drop whatever is still held (the endpoint is going away). */
void am__pending_free(am_ep_t *ep)
{
    while (ep->pending) {
        struct am_pending *p = ep->pending;
        ep->pending = p->next;
        free(p);
    }
}
