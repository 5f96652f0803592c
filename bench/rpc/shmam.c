/*
 * shmam.c - shmam's calls as an RPC user takes them: a named server endpoint
 * whose one handler echoes a request's data in its reply (am_reply_bulk to
 * AM_MAX_BULK bytes, am_reply_long above), and an anonymous client endpoint
 * with the defaults.  Two transports over the same pair:
 *
 *   call       blocking: the server in am_wait, the client in am_call (a
 *              round trip) or am_call_start + am_call_wait (in flight)
 *   call_poll  polling: the server in am_poll, the client in am_call_start
 *              + am_call_test
 *
 * A call's one argument is its sequence number, which the reply carries
 * back; RPC_QUIT ends the server's loop.  Every call has a deadline of
 * CALL_DEADLINE_MS: a lost reply fails the run, it never hangs it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/am_harness.h"
#include "rpc/rpc.h"

#define H_ECHO 1
#define CALL_DEADLINE_MS 60000

/* A call in flight: its id and its reply's room. */
struct pending {
    am_call_t id;
    uint32_t seq;
    struct am_result res;
};

struct sh {
    char name[AM_MAX_NAME + 1];
    am_ep_t *ep;
    volatile int quit; /* the server's: the quit request ran */
    struct pending win[RPC_WINDOW + 1];
    unsigned head, tail; /* win[head % ..] the oldest, win[tail % ..] the next */
};

static struct sh sh;

/* Echoes the data with the sequence number (AM handler: on the server). */
static void echo_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    if (n != 1)
        bm_fail("call: a request with %d arguments", n);
    int rc = l <= AM_MAX_BULK ? am_reply_bulk(tok, 0, d, l, a, 1)
                              : am_reply_long(tok, 0, d, l, a, 1);
    bm_check(rc, "am_reply");
    if (a[0] == RPC_QUIT)
        sh.quit = 1;
}

static void setup(void *t)
{
    struct sh *s = t;
    if (!s->name[0])
        snprintf(s->name, sizeof s->name, "rpcbench-%d", (int)getpid());
}

static void server_open(void *t)
{
    struct sh *s = t;
    if (s->ep)
        return; /* call and call_poll share it */
    bm_check(am_ep_create(s->name, NULL, &s->ep), "server: am_ep_create");
    bm_check(am_set_handler(s->ep, H_ECHO, echo_h), "am_set_handler");
}

static void client_open(void *t)
{
    struct sh *s = t;
    if (s->ep)
        return;
    bm_check(am_ep_create(NULL, NULL, &s->ep), "client: am_ep_create (anonymous)");
    bm_check(am_ep_map(s->ep, 0, s->name), "client: am_ep_map");
}

static void serve_blocking(void *t)
{
    struct sh *s = t;
    for (s->quit = 0; !s->quit;) {
        int rc = am_wait(s->ep, -1);
        if (rc != -EINTR)
            bm_check(rc, "am_wait");
    }
}

static void serve_polling(void *t)
{
    struct sh *s = t;
    unsigned spins = 0;
    for (s->quit = 0; !s->quit;)
        if (bm_poll(s->ep) == 0)
            bm_relax(&spins, rpc_yield_after);
        else
            spins = 0;
}

/* Fails unless call p ended with rc 0 and the reply to its request of n bytes. */
static void check_call(const struct pending *p, int rc, size_t n)
{
    if (rc)
        bm_die("call", rc);
    if (p->res.len != n || p->res.nargs != 1 || p->res.args[0] != p->seq)
        bm_fail("call %u: reply of %zu bytes, %d args (%u)", p->seq, p->res.len,
                p->res.nargs, p->res.args[0]);
}

/* Starts call seq of n bytes from buf, its reply into out. */
static void start(struct sh *s, struct pending *p, const void *buf, void *out, size_t n,
                  uint32_t seq)
{
    p->seq = seq;
    p->res = (struct am_result){out, n, 0, {0}, 0};
    int rc = am_call_start(s->ep, 0, H_ECHO, &p->seq, 1, buf, n, &p->res, CALL_DEADLINE_MS,
                           &p->id);
    bm_check(rc, "am_call_start");
}

/* Waits for call p's end: asleep (am_call_wait) or polling (am_call_test). */
static int finish(struct sh *s, struct pending *p, int polling)
{
    int rc;
    unsigned spins = 0;
    if (!polling)
        while ((rc = am_call_wait(s->ep, p->id, -1)) == -EINTR)
            ;
    else
        while ((rc = am_call_test(s->ep, p->id)) == -EINPROGRESS)
            bm_relax(&spins, rpc_yield_after);
    return rc;
}

static void send_request(void *t, const void *buf, size_t n, uint32_t seq)
{
    struct sh *s = t;
    static char room[RPC_WINDOW + 1][RPC_MAX]; /* the replies' */
    if (s->tail - s->head > RPC_WINDOW)
        bm_fail("call: more than %d in flight", RPC_WINDOW);
    unsigned i = s->tail++ % (RPC_WINDOW + 1);
    start(s, &s->win[i], buf, room[i], n, seq);
}

static void recv_reply(struct sh *s, void *buf, size_t n, uint32_t seq, int polling)
{
    if (s->head == s->tail)
        bm_fail("call: a reply awaited with none in flight");
    struct pending *p = &s->win[s->head++ % (RPC_WINDOW + 1)];
    if (p->seq != seq)
        bm_fail("call: reply %u awaited, %u is the oldest", seq, p->seq);
    check_call(p, finish(s, p, polling), n);
    memcpy(buf, p->res.data, n);
}

static void recv_blocking(void *t, void *buf, size_t n, uint32_t seq)
{
    recv_reply(t, buf, n, seq, 0);
}

static void recv_polling(void *t, void *buf, size_t n, uint32_t seq)
{
    recv_reply(t, buf, n, seq, 1);
}

/* A round trip: am_call. */
static void call_blocking(void *t, const void *req, void *rep, size_t n, uint32_t seq)
{
    struct sh *s = t;
    struct pending p = {0, seq, {rep, n, 0, {0}, 0}};
    check_call(&p, am_call(s->ep, 0, H_ECHO, &p.seq, 1, req, n, &p.res, CALL_DEADLINE_MS),
               n);
}

/* A round trip: am_call_start, then am_call_test until it ends. */
static void call_polling(void *t, const void *req, void *rep, size_t n, uint32_t seq)
{
    struct sh *s = t;
    struct pending p;
    start(s, &p, req, rep, n, seq);
    check_call(&p, finish(s, &p, 1), n);
}

static void drop(void *t, int server)
{
    struct sh *s = t;
    if (s->ep)
        am_ep_destroy(s->ep);
    s->ep = NULL;
    (void)server;
}

/* A name whose owner has gone is reclaimed by its next creator. */
static void reclaim(void *t)
{
    struct sh *s = t;
    am_ep_t *ep;
    if (am_ep_create(s->name, NULL, &ep) == 0)
        am_ep_destroy(ep);
}

const struct rpc_ops rpc_shmam_call = {.name = "call",
                                       .alt = 0,
                                       .t = &sh,
                                       .setup = setup,
                                       .server_open = server_open,
                                       .client_open = client_open,
                                       .serve = serve_blocking,
                                       .send = send_request,
                                       .recv = recv_blocking,
                                       .call = call_blocking,
                                       .close = drop,
                                       .reclaim = reclaim};
const struct rpc_ops rpc_shmam_poll = {.name = "call_poll",
                                       .alt = 0,
                                       .t = &sh,
                                       .setup = setup,
                                       .server_open = server_open,
                                       .client_open = client_open,
                                       .serve = serve_polling,
                                       .send = send_request,
                                       .recv = recv_polling,
                                       .call = call_polling,
                                       .close = drop,
                                       .reclaim = reclaim};
