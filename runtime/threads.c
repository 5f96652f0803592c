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
#include <signal.h>
#include <stdlib.h>

#include "rendezvous.h"
#include "call.h"
#include "deliver.h"
#include "internal.h"

static void keeper_stop(am_ep_t *ep);

/* The process's endpoints, from am__mt_init to am__mt_fini, for the fork
 * child handler.  live_mu is held across fork() (the prepare handler takes
 * it), so the child finds the list whole. */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static am_ep_t *live;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&live_mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&live_mu);
}

/* In the child, on its one thread: every endpoint of the parent becomes
 * nobody's (threads.h, Processes), in the child's copy only, and no
 * handler of the parent's runs here. */
static void fork_child(void)
{
    for (am_ep_t *ep = live; ep; ep = ep->mt.live_next) {
        ep->mt.owner = NULL;
        ep->mt.shared = 0;
    }
    live = NULL;
    am__tok_cur = NULL;
    pthread_mutex_unlock(&live_mu);
}

static void fork_register(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void live_add(am_ep_t *ep)
{
    pthread_once(&fork_once, fork_register);
    pthread_mutex_lock(&live_mu);
    ep->mt.live_prev = NULL;
    ep->mt.live_next = live;
    if (live)
        live->mt.live_prev = ep;
    live = ep;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(am_ep_t *ep)
{
    pthread_mutex_lock(&live_mu);
    *(ep->mt.live_prev ? &ep->mt.live_prev->mt.live_next : &live) = ep->mt.live_next;
    if (ep->mt.live_next)
        ep->mt.live_next->mt.live_prev = ep->mt.live_prev;
    pthread_mutex_unlock(&live_mu);
}

int am__mt_init(am_ep_t *ep)
{
    ep->mt.owner = am__self();
    if (pthread_mutex_init(&ep->mt.peers_mu, NULL) != 0)
        return -ENOMEM;
    if (pthread_mutex_init(&ep->mt.drain_mu, NULL) != 0) {
        pthread_mutex_destroy(&ep->mt.peers_mu);
        return -ENOMEM;
    }
    if (pthread_mutex_init(&ep->mt.calls_mu, NULL) != 0) {
        pthread_mutex_destroy(&ep->mt.drain_mu);
        pthread_mutex_destroy(&ep->mt.peers_mu);
        return -ENOMEM;
    }
    live_add(ep);
    return 0;
}

void am__mt_fini(am_ep_t *ep)
{
    live_remove(ep);
    keeper_stop(ep); /* after am__peers_close: it let go of their lifelines */
    am__kept_release_all(ep);
    am__fd_close(ep);
    pthread_mutex_destroy(&ep->mt.calls_mu);
    pthread_mutex_destroy(&ep->mt.drain_mu);
    pthread_mutex_destroy(&ep->mt.peers_mu);
}

/* The keeper: a thread that runs one request at a time for the others. */
struct am_keeper {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*fn)(void *); /* the request posted, NULL while none */
    void *arg;
    unsigned long posted, done; /* requests so far */
    int stop;
};

static void *keeper_main(void *arg)
{
    struct am_keeper *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->fn && !k->stop)
            pthread_cond_wait(&k->cv, &k->mu);
        if (!k->fn)
            break;
        void (*fn)(void *) = k->fn;
        pthread_mutex_unlock(&k->mu);
        fn(k->arg);
        pthread_mutex_lock(&k->mu);
        k->fn = NULL;
        k->done++;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* Start ep's keeper, with every signal blocked (it runs none of the user's
 * handlers).  0 or -errno. */
static int keeper_start(am_ep_t *ep)
{
    struct am_keeper *k = calloc(1, sizeof *k);
    sigset_t all, old;
    if (!k)
        return -ENOMEM;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = pthread_create(&k->thread, NULL, keeper_main, k);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        free(k);
        return -r;
    }
    ep->mt.keeper = k;
    return 0;
}

static void keeper_stop(am_ep_t *ep)
{
    struct am_keeper *k = ep->mt.keeper;
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
    ep->mt.keeper = NULL;
}

void am__keeper_run(am_ep_t *ep, void (*fn)(void *), void *arg)
{
    struct am_keeper *k = ep->mt.keeper;
    pthread_mutex_lock(&k->mu);
    while (k->fn) /* another thread's request first */
        pthread_cond_wait(&k->cv, &k->mu);
    k->fn = fn;
    k->arg = arg;
    unsigned long mine = ++k->posted;
    pthread_cond_broadcast(&k->cv);
    while (k->done < mine)
        pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
}

int am_ep_share(am_ep_t *ep)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return ep->mt.shared ? 0 : -EPERM;
    if (ep->in_handler)
        return -EDEADLK;
    if (ep->net || am__rdv_listening(ep))
        return -ENOTSUP; /* the MPI transport's state, a listener's: one thread's */
    if (ep->mt.shared)
        return 0;
    int rc = am__calls_init(ep); /* made now: other threads find it there */
    if (rc == 0)
        rc = keeper_start(ep);
    if (rc < 0)
        return rc;
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
    tok->handle = am__tok_handle();
    tok->outer = am__tok_cur;
    am__tok_cur = tok;
    pthread_mutex_unlock(&ep->mt.drain_mu);
    h((am_token_t *)tok->handle, args, nargs, data, len);
    if (__builtin_expect(tok->lent, 0))
        am__loan_unused(tok); /* a reply's loan not committed: given back */
    if (__builtin_expect(tok->call != 0, 0) && !tok->replied)
        am__call_unreplied(tok); /* every call ends: an empty reply */
    pthread_mutex_lock(&ep->mt.drain_mu);
    am__tok_cur = tok->outer;
    am__handlers_running--;
}

/* Handle blocks handed out so far (threads.h, am__tok_handle). */
static volatile AO_t tok_blocks;

uint64_t am__tok_block(void)
{
    return ((uint64_t)AO_fetch_and_add1(&tok_blocks) + 1) << 32 | 1;
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
