/*
 * deliver.h - what both receivers' halves do with a message (deliver.c),
 * once they hold a private copy m of a packet from claimant `who`.
 * payload_long: the data of a packet that is not bulk (none, a block of heap
 * h, or bytes of our region); NULL or why it is bad.  run: check the rest,
 * run the handler (or hold the message during am_init), count it or report
 * why it is bad (why: the caller's verdict so far), and give back its heap
 * block, if it has one.  report_bad: count a corrupt packet, say so once.
 */
#ifndef SHMAM_DELIVER_H
#define SHMAM_DELIVER_H

#include <stddef.h>

#include "call.h"
#include "internal.h"
#include "loan.h"

struct am_payload {
    void *data;
    size_t len;
    int bulk;   /* data is a bulk block (counted as bulk) */
    int block;  /* data is a heap block of `heap`, to give back */
    int medium; /* data is the slot's payload area (a call's reply may be) */
    struct am_heap_view *heap;
};
const char *am__payload_long(am_ep_t *ep, struct am_heap_view *h, const struct am_packet *m,
                             unsigned who, struct am_payload *pl);
/* payload_medium: a medium message's data, payload area k of `areas` (the
 * slot's, layout.h), its length from the copy m; NULL or why it is bad. */
const char *am__payload_medium(unsigned char *areas, uint32_t k, const struct am_packet *m,
                               struct am_payload *pl);
void am__run(am_ep_t *ep, enum am_qid qid, const struct am_packet *m, unsigned who,
             const struct am_payload *pl, const char *why);
/* run_from: the same for a message whose sender is known: local peer index
 * `source` (a remote rank, net/), and whose data is not a heap block. */
void am__run_from(am_ep_t *ep, enum am_qid qid, const struct am_packet *m, unsigned source,
                  const struct am_payload *pl, const char *why);
/* After a drain that delivered n messages: copy the counters for tools (two
 * stores to the owner's own header line, not per message); returns n. */
int am__drained(am_ep_t *ep, int n);
void am__report_bad(am_ep_t *ep, const char *why);
/* Handlers running now on this thread, of any endpoint (declared in
 * threads.h): am_ep_create, which has no endpoint to ask (ep->in_handler),
 * refuses to run inside one.  Initial-exec: two plain increments per
 * message, even in libshmam.so.  am__tok_cur (threads.h): the innermost. */
/* Run handler h of ep for the message of tok (deliver.c, pending.c): the one
 * place handlers are called, so both counts of running handlers and the
 * thread's chain of handler frames hold.  A shared endpoint's runs with
 * drain_mu released (threads.c). */
void am__call_handler_shared(am_ep_t *ep, am_handler_t h, am_token_t *tok,
                             const uint32_t *args, int nargs, void *data, size_t len);
static inline void am__call_handler(am_ep_t *ep, am_handler_t h, am_token_t *tok,
                                    const uint32_t *args, int nargs, void *data, size_t len)
{
    if (__builtin_expect(ep->mt.shared, 0)) {
        am__call_handler_shared(ep, h, tok, args, nargs, data, len); /* threads.c */
        return;
    }
    ep->in_handler++;
    am__handlers_running++;
    tok->handle = am__tok_handle();
    tok->outer = am__tok_cur;
    am__tok_cur = tok;
    h((am_token_t *)tok->handle, args, nargs, data, len);
    am__tok_cur = tok->outer;
    am__handlers_running--;
    ep->in_handler--;
    if (__builtin_expect(tok->lent, 0))
        am__loan_unused(tok); /* a reply's loan not committed: given back */
    if (__builtin_expect(tok->call != 0, 0) && !tok->replied)
        am__call_unreplied(tok); /* every call ends: an empty reply */
}

#endif
