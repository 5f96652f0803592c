/*
 * zmq.c - ZeroMQ as an RPC user takes it: a ROUTER server, a DEALER client,
 * over ipc:// (a Unix socket under /tmp, named for the benchmark's pid and
 * unlinked at the end).  A message is two frames, the header and the data;
 * the ROUTER's first frame, the client's identity, goes back before them.
 * Both sides block in zmq_recv (libzmq's I/O thread and a poll inside).
 * Contexts are made after the fork, one per process: a ZeroMQ context does
 * not survive a fork.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "common/harness.h"
#include "rpc/rpc.h"

struct zq {
    char path[64], addr[80];
    void *ctx, *sock;
};

static struct zq zq;

static void setup(void *t)
{
    struct zq *z = t;
    snprintf(z->path, sizeof z->path, "/tmp/rpcbench-%d.ipc", (int)getpid());
    snprintf(z->addr, sizeof z->addr, "ipc://%s", z->path);
}

/* A reply the client waits RECV_LIMIT_MS for is lost: ZeroMQ does not say
 * that its peer died, so the client's recv must end on its own. */
#define RECV_LIMIT_MS 60000

static void open_as(struct zq *z, int type)
{
    int linger = 0, limit = type == ZMQ_ROUTER ? -1 : RECV_LIMIT_MS;
    if (!(z->ctx = zmq_ctx_new()) || !(z->sock = zmq_socket(z->ctx, type)) ||
        zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(z->sock, ZMQ_RCVTIMEO, &limit, sizeof limit) != 0 ||
        (type == ZMQ_ROUTER ? zmq_bind(z->sock, z->addr) : zmq_connect(z->sock, z->addr)))
        bm_fail("zmq_ipc: %s %s: %s", type == ZMQ_ROUTER ? "bind" : "connect", z->addr,
                zmq_strerror(zmq_errno()));
}

static void server_open(void *t)
{
    open_as(t, ZMQ_ROUTER);
}

static void client_open(void *t)
{
    open_as(t, ZMQ_DEALER);
}

/* One frame of at most cap bytes into buf; its length. */
static size_t frame_in(void *sock, void *buf, size_t cap)
{
    int k;
    while ((k = zmq_recv(sock, buf, cap, 0)) < 0 && zmq_errno() == EINTR)
        ;
    if (k < 0 || (size_t)k > cap)
        bm_fail("zmq_ipc: recv: %s", k < 0 ? zmq_strerror(zmq_errno()) : "frame too long");
    return (size_t)k;
}

static void frame_out(void *sock, const void *buf, size_t n, int more)
{
    while (zmq_send(sock, buf, n, more ? ZMQ_SNDMORE : 0) < 0)
        if (zmq_errno() != EINTR)
            bm_fail("zmq_ipc: send: %s", zmq_strerror(zmq_errno()));
}

static int more(void *sock)
{
    int m = 0;
    size_t sz = sizeof m;
    zmq_getsockopt(sock, ZMQ_RCVMORE, &m, &sz);
    return m;
}

static void serve(void *t)
{
    struct zq *z = t;
    char id[256], *buf = rpc_buffer();
    for (struct rpc_hdr h = {0, 0}; h.seq != RPC_QUIT;) {
        size_t idn = frame_in(z->sock, id, sizeof id);
        if (!more(z->sock) || frame_in(z->sock, &h, sizeof h) != sizeof h ||
            !more(z->sock) || frame_in(z->sock, buf, RPC_MAX) != h.len || more(z->sock))
            bm_fail("zmq_ipc: a request not of identity, header and data");
        frame_out(z->sock, id, idn, 1);
        frame_out(z->sock, &h, sizeof h, 1);
        frame_out(z->sock, buf, h.len, 0);
    }
}

static void send_request(void *t, const void *buf, size_t n, uint32_t seq)
{
    struct zq *z = t;
    struct rpc_hdr h = {(uint32_t)n, seq};
    frame_out(z->sock, &h, sizeof h, 1);
    frame_out(z->sock, buf, n, 0);
}

static void recv_reply(void *t, void *buf, size_t n, uint32_t seq)
{
    struct zq *z = t;
    struct rpc_hdr h;
    if (frame_in(z->sock, &h, sizeof h) != sizeof h || !more(z->sock))
        bm_fail("zmq_ipc: a reply without its header");
    rpc_check_reply(&h, n, seq, "zmq_ipc");
    if (frame_in(z->sock, buf, n) != n || more(z->sock))
        bm_fail("zmq_ipc: reply %u: not %zu bytes of data", seq, n);
}

static void drop(void *t, int server)
{
    struct zq *z = t;
    zmq_close(z->sock);
    zmq_ctx_term(z->ctx);
    if (!server)
        unlink(z->path);
}

static void reclaim(void *t)
{
    unlink(((struct zq *)t)->path);
}

const struct rpc_ops rpc_zmq = {.name = "zmq_ipc",
                                .alt = 1,
                                .t = &zq,
                                .setup = setup,
                                .server_open = server_open,
                                .client_open = client_open,
                                .serve = serve,
                                .send = send_request,
                                .recv = recv_reply,
                                .call = NULL,
                                .close = drop,
                                .reclaim = reclaim};
