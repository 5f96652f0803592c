/*
 * threads.h - an endpoint used by several threads of its process (threads.c,
 * evfd.c, kept.c).  Included by internal.h: struct am_mt is part of every
 * endpoint.
 *
 * Two modes.  An endpoint starts owned: only the thread that created it may
 * call on it (a call from another thread is -EPERM), and nothing below costs
 * the owner more than one compare of a thread mark per call.  am_ep_share (the
 * owner, outside handlers) makes it shared for good: then any thread of the
 * process may send, poll, wait and reply, and three process-local mutexes
 * guard the endpoint's private state:
 *
 *   peers_mu   peers[], peers_n, peer_holds, drops, sources[] (the peer
 *              table: looked up by sends, changed by polls that learn senders)
 *   drain_mu   the receiver's private state: heads, stuck claims, channel
 *              ends, pending messages, counters (every poll path); released
 *              while a handler runs, so W threads run W handlers at once
 *   peer->tx_mu[qid]  one peer's queue: a sender's claim hints, prefetch state,
 *              and its per-sender channel's producer end (SPSC: one producer
 *              at a time), held for the whole send, backoff included
 *
 * Processes.  Ownership is the process and the thread: a fork() child is
 * neither the owner nor one of the threads of a shared endpoint, though its
 * thread mark (am__self) and its copy of every am_ep_t equal its parent's.
 * A pthread_atfork child handler (threads.c, registered at the first
 * create) makes each endpoint the process had nobody's in the child's copy:
 * owner NULL, not shared.  Every owner check then fails there (-EPERM:
 * am__ep_thread, and the owner-only calls' `owner != am__self()`), at no
 * cost to the parent's calls, and the child's exit touches nothing of the
 * parent's (glibc empties a child's robust list: no lifeline dies with it).
 * The handler also ends the child's handler frames (am__tok_cur): a token
 * of the parent's handler is -EINVAL in the child.
 *
 * Lifelines.  A lifeline belongs to the thread that takes it and looks dead
 * once that thread exits (lifeline.h).  The owner keeps the endpoint's own;
 * the ones a shared endpoint takes in its peers' sender tables (mapping a
 * peer, learning a sender, on whichever thread) are taken and let go on a
 * keeper thread the endpoint starts at am_ep_share and stops at destroy.
 * The peers it mapped before am_ep_share hold the owner's lifelines: when
 * another thread drops one, it is only put on the owner's list
 * (owner_drops) and closed by the owner (at its next map, remap or destroy):
 * a robust mutex unlocked by another thread stays on its holder's robust
 * list, and glibc's next unlock there writes into the unmapped segment.
 *
 * Lock order: tx_mu, then drain_mu, then peers_mu, then calls_mu; peers_mu
 * is held only for table work that never blocks, drain_mu never across a
 * handler or a wait, calls_mu only around the calls' records and the list
 * of call replies kept (call.c), never across a poll or a send.  A
 * thread holding drain_mu sends only a call's reply, which never waits:
 * it only tries tx_mu (send.c).
 * A request send holding tx_mu[REQUEST] may run a request handler (its
 * backoff polls) that replies, taking tx_mu[REPLY]; a reply send polls only
 * the reply queue, whose handlers never send: no cycle.
 *
 * Handler frames.  Each thread keeps the chain of the handlers it is running
 * now (am__tok_cur, the innermost token; token->outer the next): a token is
 * good only inside its handler's frame on its own thread, and "inside a
 * handler of ep" is a walk of that chain (in shared mode; an owned endpoint
 * keeps its counter ep->in_handler).  A handler gets its token's handle, a
 * number no other handler run of the process gets (am__tok_handle), and the
 * calls that take a token find it by that number in the chain
 * (am__tok_find): one used after its handler returned is -EINVAL even when
 * the live token of the same stack depth is at the address it had.
 */
#ifndef SHMAM_THREADS_H
#define SHMAM_THREADS_H

#include <atomic_ops.h>
#include <errno.h>
#include <pthread.h>

#include "shmam.h"

struct am_kept;

/* An endpoint's thread state (struct am_ep's `mt`). */
struct am_mt {
    const void *owner; /* am__self() of the creating thread; NULL in a fork
                        * child's copy (nobody's) */
    int shared;        /* am_ep_share: any thread may call */
    struct am_ep *live_prev, *live_next; /* the process's endpoints (threads.c) */
    struct am_peer *owner_drops;         /* dropped off the owner's thread, holding the
                                          * owner's lifeline: its to close (peers_mu) */
    pthread_mutex_t peers_mu, drain_mu;
    pthread_mutex_t calls_mu;  /* ep->calls and ep->owed (call.c) */
    volatile AO_t inside;      /* shared: threads inside a send, poll or wait */
    volatile AO_t wake_gen;    /* am_ep_wake calls so far */
    volatile AO_t wake_seen;   /* wake_gen as the last wait it ended saw it (wait.c) */
    unsigned long peer_serial; /* the last serial given to a peer (peers_mu) */
    struct am_kept *kept;      /* kept reply handles not yet used (peers_mu) */
    /* am_ep_fd (evfd.c): the pipe's read and write ends, each fd + 1, 0
     * while there is none (set once, under peers_mu; read by any thread). */
    volatile AO_t fd_rd, fd_wr;
    volatile AO_t relay;      /* its relay thread (evfd.c's struct am_relay *),
                               * release-stored before fd_rd */
    struct am_keeper *keeper; /* shared: the thread holding peers' lifelines */
};

/* This thread's mark: the address of a thread-local variable, distinct per
 * live thread, one instruction to get (initial-exec TLS, deliver.h's). */
extern _Thread_local unsigned am__handlers_running
    __attribute__((tls_model("initial-exec")));
static inline const void *am__self(void)
{
    return &am__handlers_running;
}

/* The innermost handler's token on this thread (NULL outside handlers). */
struct am_token;
extern _Thread_local struct am_token *am__tok_cur
    __attribute__((tls_model("initial-exec")));

/* A handler's handle: what it gets as its am_token_t *, never its token's
 * address (the next handler at the same stack depth has the same one: a
 * stale pointer would name the live token).  A number unique in the process
 * for its life, never 0: each thread takes blocks of 2^32 from one counter
 * (am__tok_block) and numbers its handlers' runs within its block. */
extern _Thread_local uint64_t am__tok_next __attribute__((tls_model("initial-exec")));
uint64_t am__tok_block(void);
static inline uintptr_t am__tok_handle(void)
{
    uint64_t h = am__tok_next;
    if (__builtin_expect((uint32_t)h == 0, 0))
        h = am__tok_block();
    am__tok_next = h + 1;
    return (uintptr_t)h;
}
_Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t), "a handle is a 64-bit number");

/* May this thread call on ep?  0, or -EPERM (another thread's, not shared;
 * or a fork child's copy: owner NULL, not shared).  The caller has checked
 * am__ep_ok. */
static inline int am__ep_thread(const struct am_mt *mt)
{
    return __builtin_expect(mt->owner == am__self() || mt->shared, 1) ? 0 : -EPERM;
}

/* Locks taken only in shared mode. */
static inline void am__mt_lock(const struct am_mt *mt, pthread_mutex_t *mu)
{
    if (mt->shared)
        pthread_mutex_lock(mu);
}
static inline void am__mt_unlock(const struct am_mt *mt, pthread_mutex_t *mu)
{
    if (mt->shared)
        pthread_mutex_unlock(mu);
}

/* threads.c.  init/fini: at create and destroy.  in_handler: is this thread
 * inside a handler of ep (shared mode's test).  call_handler_shared: run a
 * handler with drain_mu released (deliver.h's am__call_handler, shared
 * mode).  enter/leave: count a shared-mode call (destroy refuses while any). */
int am__mt_init(am_ep_t *ep);
void am__mt_fini(am_ep_t *ep);
int am__in_handler_shared(const am_ep_t *ep);
/* keeper_run: run fn(arg) on ep's keeper thread and wait for it (a shared
 * endpoint's peers are opened and closed there: a lifeline belongs to the
 * thread that takes it, and the keeper lives as long as the endpoint,
 * whichever thread serves or exits meanwhile). */
void am__keeper_run(am_ep_t *ep, void (*fn)(void *), void *arg);
void am__mt_enter(am_ep_t *ep);
void am__mt_leave(am_ep_t *ep);

/* evfd.c.  fd_poll: am_poll once ep has a descriptor: disarm, poll, and if
 * nothing came drain the pipe, arm and poll once more.  kick: am_ep_wake's
 * byte.  close: at destroy.  signal: a sender that found peer's owner armed
 * writes one byte to its pipe (opened once per peer).  peer_close: at peer
 * close. */
struct am_peer;
int am__fd_poll(am_ep_t *ep, int (*poll)(am_ep_t *));
void am__fd_kick(am_ep_t *ep);
void am__fd_close(am_ep_t *ep);
void am__fd_signal(struct am_peer *peer);
void am__fd_peer_close(struct am_peer *peer);

/* kept.c.  release_all: at destroy, every kept handle not yet used. */
void am__kept_release_all(am_ep_t *ep);

#endif
