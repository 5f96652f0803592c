/*
 * fds.c - the kernel's transports as an RPC user would take them: a Unix
 * domain socket pair (SOCK_STREAM, framed by a header; SOCK_SEQPACKET, one
 * message per request) and a pipe pair.  Both sides block in the kernel.
 *
 * A message is struct rpc_hdr then its data, written with one writev (as
 * many as it takes for a stream).  A stream's server reads the header, then
 * the data it announces; the client knows the reply's length and reads both
 * with one readv.  A seqpacket message is read whole with one recvmsg, and
 * its length must be what its header says.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/harness.h"
#include "rpc/rpc.h"

/* One transport's descriptors: the client's (write, read) and the server's. */
struct fds {
    int cw, cr, sw, sr;
    int packets; /* 1: one message per read (seqpacket) */
    const char *name;
};

static struct fds stream = {-1, -1, -1, -1, 0, "unix_stream"};
static struct fds seqpacket = {-1, -1, -1, -1, 1, "unix_seqpacket"};
static struct fds pipes = {-1, -1, -1, -1, 0, "pipe"};

/* Moves all of iov's bytes through fd (write: dir 1, else read), as many
 * calls as a stream takes; fails on an error or an end of file. */
static void move_all(int fd, struct iovec *iov, int cnt, int dir, const char *what)
{
    while (cnt > 0) {
        ssize_t k = dir ? writev(fd, iov, cnt) : readv(fd, iov, cnt);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            bm_fail("%s: %s: %s", what, dir ? "write" : "read",
                    k ? strerror(errno) : "end of file");
        for (; cnt > 0 && (size_t)k >= iov->iov_len; iov++, cnt--)
            k -= (ssize_t)iov->iov_len;
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
}

/* One message of n bytes with header h: one writev (more for a stream). */
static void put(const struct fds *f, int fd, struct rpc_hdr h, const void *buf)
{
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)buf, h.len}};
    move_all(fd, iov, h.len ? 2 : 1, 1, f->name);
}

/* A seqpacket message, whole, into *h and buf (cap bytes): its data's length
 * must be what its header says. */
static void get_packet(const struct fds *f, int fd, struct rpc_hdr *h, void *buf,
                       size_t cap)
{
    struct iovec iov[2] = {{h, sizeof *h}, {buf, cap}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t k;
    while ((k = recvmsg(fd, &m, 0)) < 0 && errno == EINTR)
        ;
    if (k < (ssize_t)sizeof *h || (size_t)k != sizeof *h + h->len ||
        (m.msg_flags & MSG_TRUNC))
        bm_fail("%s: a message of %zd bytes (%s)", f->name, k,
                k < 0 ? strerror(errno) : "not its header's length");
}

/* A request into *h and buf: a packet, or a stream's header then its data. */
static void get_request(const struct fds *f, struct rpc_hdr *h, void *buf)
{
    if (f->packets)
        return get_packet(f, f->sr, h, buf, RPC_MAX);
    struct iovec ih = {h, sizeof *h};
    move_all(f->sr, &ih, 1, 0, f->name);
    if (h->len > RPC_MAX)
        bm_fail("%s: a request of %u bytes", f->name, h->len);
    struct iovec id = {buf, h->len};
    move_all(f->sr, &id, h->len ? 1 : 0, 0, f->name);
}

static void serve(void *t)
{
    struct fds *f = t;
    char *buf = rpc_buffer();
    for (struct rpc_hdr h = {0, 0}; h.seq != RPC_QUIT;) {
        get_request(f, &h, buf);
        put(f, f->sw, h, buf);
    }
}

static void recv_reply(void *t, void *buf, size_t n, uint32_t seq)
{
    struct fds *f = t;
    struct rpc_hdr h;
    if (f->packets) {
        get_packet(f, f->cr, &h, buf, n);
        rpc_check_reply(&h, n, seq, f->name);
        return;
    }
    struct iovec iov[2] = {{&h, sizeof h}, {buf, n}};
    move_all(f->cr, iov, n ? 2 : 1, 0, f->name);
    rpc_check_reply(&h, n, seq, f->name);
}

static void socket_setup(struct fds *f, int type)
{
    int sv[2];
    if (socketpair(AF_UNIX, type, 0, sv) != 0)
        bm_fail("%s: socketpair: %s", f->name, strerror(errno));
    f->cw = f->cr = sv[0];
    f->sw = f->sr = sv[1];
}

static void pipe_setup(void *t)
{
    struct fds *f = t;
    int a[2], b[2];
    if (pipe(a) != 0 || pipe(b) != 0)
        bm_fail("pipe: %s", strerror(errno));
    f->cw = a[1], f->sr = a[0], f->sw = b[1], f->cr = b[0];
}

static void close_pair(int a, int b)
{
    close(a);
    if (b != a)
        close(b);
}

/* Each side closes the other's descriptors at open (so that a death is an
 * end of file), its own at the end. */
static void keep(struct fds *f, int server)
{
    close_pair(server ? f->cw : f->sw, server ? f->cr : f->sr);
}

static void drop(void *t, int server)
{
    struct fds *f = t;
    close_pair(server ? f->sw : f->cw, server ? f->sr : f->cr);
}

static void unix_stream_setup(void *t)
{
    socket_setup(t, SOCK_STREAM);
}

static void unix_seqpacket_setup(void *t)
{
    socket_setup(t, SOCK_SEQPACKET);
}

static void server_open(void *t)
{
    keep(t, 1);
}

static void client_open(void *t)
{
    keep(t, 0);
}

static void send_request(void *t, const void *buf, size_t n, uint32_t seq)
{
    struct fds *f = t;
    put(f, f->cw, (struct rpc_hdr){(uint32_t)n, seq}, buf);
}

const struct rpc_ops rpc_unix_stream = {.name = "unix_stream",
                                        .alt = 1,
                                        .t = &stream,
                                        .setup = unix_stream_setup,
                                        .server_open = server_open,
                                        .client_open = client_open,
                                        .serve = serve,
                                        .send = send_request,
                                        .recv = recv_reply,
                                        .call = NULL,
                                        .close = drop};
const struct rpc_ops rpc_unix_seqpacket = {.name = "unix_seqpacket",
                                           .alt = 1,
                                           .t = &seqpacket,
                                           .setup = unix_seqpacket_setup,
                                           .server_open = server_open,
                                           .client_open = client_open,
                                           .serve = serve,
                                           .send = send_request,
                                           .recv = recv_reply,
                                           .call = NULL,
                                           .close = drop};
const struct rpc_ops rpc_pipe = {.name = "pipe",
                                 .alt = 1,
                                 .t = &pipes,
                                 .setup = pipe_setup,
                                 .server_open = server_open,
                                 .client_open = client_open,
                                 .serve = serve,
                                 .send = send_request,
                                 .recv = recv_reply,
                                 .call = NULL,
                                 .close = drop};
