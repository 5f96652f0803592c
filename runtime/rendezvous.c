/*
 * rendezvous.c - services for other users and other containers: a Unix
 * socket the server listens on, descriptors passed by the kernel, and the
 * caller's identity as the kernel tells it (docs/services.md).
 *
 * Who may write what.  A caller of another user must not see the server's
 * segment, whose queues every sender writes: it could garble other callers'
 * messages or the server's state.  So a listener makes for each caller a
 * door: an anonymous endpoint (a sealed memfd, segment.h) of one sender
 * entry, owned by the server's thread, whose queues carry that caller's
 * requests only.  The caller gets the door's memfd over the socket
 * (SCM_RIGHTS) and maps it as any peer; the server gets the caller's own
 * anonymous segment the same way, and sends its replies there.  Everything
 * a caller can write is memory that carries its own messages (its segment,
 * its door); what the server reads from either is validated as it is from
 * any peer (view.c, mpsc_poll.c, chan_poll.c), a door maps only its
 * caller's descriptor (am__rdv_open: a name written into the door's sender
 * entry reaches no other caller's segment), and both memfds are sealed
 * against a change of size (a truncation would fault the mapper).  Nothing
 * goes through /dev/shm, System V or /proc, so a caller in other mount, IPC
 * and PID namespaces that reaches the socket is served.
 *
 * Identity.  At accept the server reads SO_PEERCRED (uid, gid, pid as its
 * own PID namespace sees it) and, if allow_gids is set, SO_PEERGROUPS.  A
 * caller of the server's uid, or one named in allow_uids / allow_gids, is
 * let in; any other gets an answer of -EACCES and no descriptor, before the
 * server reads anything of it.  The credentials are kept here, per door,
 * and am_token_cred answers from them only: nothing in shared memory
 * (a sender entry's pid, a header's owner_pid) is ever consulted.
 *
 * The protocol (SOCK_SEQPACKET).  At accept the server answers (struct
 * answer): 0, let in, or a negative code and the socket's close; nothing
 * of the caller's is read, and nothing of its passed, before that.  The
 * caller then sends struct hello (magic, layout version, its address) with
 * its memfd; the server answers 0, the door's address and memfd, or a
 * negative code and nothing.  The socket then stays open for the caller's
 * life: its close (the kernel closes it when the caller dies) ends the
 * door, as does the door's sender entry letting go (the caller's endpoint
 * destroyed).  A dead server's door is seen dead by its lifeline (-EPIPE).
 *
 * Serving without a user thread.  The listener's doors are polled by the
 * endpoint's own am_poll (poll.c calls am__rdv_poll; each door runs the
 * endpoint's handlers), and am_wait sleeps on the endpoint's futex word and
 * every door's at once (futex_waitv, the Dekker pattern of wait.c per
 * door).  Accepting, reading hellos and ending doors happen on the owner's
 * thread too, in am__rdv_poll, when a small internal thread, which only
 * poll(2)s the sockets, knocks: it sets `knock` and wakes the endpoint
 * (its futex word, and am_ep_fd's descriptor), then waits for the owner to
 * have served.  Nothing of that is done inside a handler or while a wait is
 * armed (the doors' set is fixed between arm and disarm).
 *
 * Lifetimes.  An abstract socket ("@name") leaves nothing however the
 * server ends; a path socket is removed at am_ep_destroy, and one left by a
 * killed server is replaced at the next listen once a connect shows nobody
 * listens.  Memfds go with the last process holding them.
 *
 * Limits.  At most AM_RDV_MAX callers at once (futex_waitv's 128 words, the
 * endpoint's own first); an endpoint that listens is not shared
 * (am_ep_share: -ENOTSUP), and am_ep_fd's descriptor is made readable by
 * callers arriving and leaving, and by a door's messages through a second
 * thread (door_watch), started with the descriptor.  A door is anonymous
 * but has a request heap (AM_SEG_DOOR), so its caller's long requests fit.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "endpoint.h"
#include "internal.h"
#include "options.h"
#include "polling.h"
#include "rendezvous.h"
#include "waiting.h"

#define AM_RDV_MAX 127       /* callers per listener: futex_waitv's 128, less one */
#define AM_RDV_HELLO_MS 5000 /* a caller's hello is awaited this long */
#define AM_RDV_ANSWER_MS 10000
#define AM_RDV_SERVE_EVERY 4096 /* polls between serves nobody knocked for */
#define RDV_MAGIC 0x616d7264u   /* "amrd" */

#if !defined(AO_HAVE_int_fetch_and_add1) || !defined(AO_HAVE_int_load_acquire)
#error "rendezvous waits need AO_int_fetch_and_add1 and AO_int_load_acquire"
#endif

enum rdv_kind { RDV_LISTEN, RDV_DOOR, RDV_CLIENT };

struct am_rdv {
    enum rdv_kind kind;
};

struct hello {
    uint32_t magic, version;
    char addr[AM_ADDR_MAX];
};

struct answer {
    uint32_t magic;
    int32_t status;
    char addr[AM_ADDR_MAX];
};

/* One caller of a listener: pending (no door yet) until its hello. */
struct rdv_conn {
    struct am_rdv base; /* RDV_DOOR, the door's rdv */
    int sock;
    am_ep_t *door; /* NULL while pending */
    int cfd;       /* the caller's memfd; -1 until the hello */
    char caddr[AM_ADDR_MAX];
    struct am_cred cred; /* the kernel's, at accept */
    int64_t since;       /* accepted at (ns) */
    unsigned seq;        /* armed: the door's wake_seq as read */
    int armed;
    int fd_held; /* its `sleeping` raised for am_ep_fd's door watcher */
};

struct rdv_listen {
    struct am_rdv base;
    am_ep_t *ep;
    int lfd, efd; /* the socket; the thread's stop/refresh eventfd */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "" abstract */
    dev_t dev;
    ino_t ino;
    uid_t *uids;
    gid_t *gids;
    unsigned n_uids, n_gids, max;
    struct rdv_conn *conns[AM_RDV_MAX];
    unsigned n;
    pthread_mutex_t mu; /* conns' sockets, for the thread */
    pthread_t thr;
    int thr_on;
    volatile AO_t knock, stop;
    unsigned tick;
    int busy, armed;
    /* am_ep_fd's door watcher (fd_start): its thread, and a futex word
     * bumped when the doors change or it must stop. */
    pthread_t dthr;
    int dthr_on;
    volatile unsigned dgen;
};

/* A door a client was given: kept so that the index can be mapped (and
 * re-mapped: -EPIPE once the server is gone). */
struct rdv_link {
    unsigned index;
    int sock, fd;
    char addr[AM_ADDR_MAX];
};

struct rdv_client {
    struct am_rdv base;
    pthread_mutex_t mu; /* a shared endpoint opens peers on its keeper */
    struct rdv_link *links;
    unsigned n;
};

#define CONTAINER(p, type) ((type *)(void *)((char *)(p)-offsetof(type, base)))

/* "@name" (abstract) or a path, as a socket address.  -EINVAL if too long
 * or empty. */
static int sock_addr(const char *where, struct sockaddr_un *sa, socklen_t *len)
{
    size_t n = where ? strlen(where) : 0;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (n < 2 && (n == 0 || where[0] == '@'))
        return -EINVAL;
    if (n >= sizeof sa->sun_path)
        return -EINVAL;
    if (where[0] == '@') {
        memcpy(sa->sun_path + 1, where + 1, n - 1); /* sun_path[0] = 0: abstract */
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        memcpy(sa->sun_path, where, n);
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    }
    return 0;
}

/* Map a memfd another process passed us: a regular file, sealed against
 * any change of size (so no truncation can fault us), not empty.  Whose it
 * is does not matter: the kernel said who passed it. */
static int map_memfd(int fd, struct am_segment *s)
{
    struct stat st;
    int need = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode) || seals < 0 || (seals & need) != need || st.st_size <= 0)
        return -EPROTO;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -errno;
    *s = (struct am_segment){
        .base = p, .size = (size_t)st.st_size, .backend = AM_SHM_POSIX, .fd = -1};
    return 0;
}

/* Send one message with at most one descriptor (fd < 0: none). */
static int send_msg(int sock, const void *buf, size_t len, int fd)
{
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {(void *)buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        m.msg_control = u.b;
        m.msg_controllen = sizeof u.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EPROTO;
}

/* Receive one message of exactly len bytes and the descriptors it carries:
 * the first into *fd (-1 if none), every other closed.  -EAGAIN if none
 * waits, -EPIPE if the peer closed, -EPROTO if it is malformed. */
static int recv_msg(int sock, void *buf, size_t len, int *fd)
{
    union {
        char b[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {buf, len};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
    *fd = -1;
    ssize_t n = recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -EPIPE;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            if (*fd < 0)
                *fd = f;
            else
                close(f);
        }
    }
    if (n == 0)
        return -EPIPE;
    if ((size_t)n != len || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return -EPROTO;
    }
    return 0;
}

/* ---------------------------------------------------------------- server */

/* May this caller in?  The kernel's word: SO_PEERCRED, SO_PEERGROUPS. */
static int allowed(const struct rdv_listen *l, int sock, struct am_cred *cred)
{
    struct ucred uc;
    socklen_t n = sizeof uc;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &uc, &n) != 0 || n != sizeof uc)
        return 0;
    *cred = (struct am_cred){uc.uid, uc.gid, uc.pid};
    if (uc.uid == geteuid())
        return 1;
    for (unsigned i = 0; i < l->n_uids; i++)
        if (l->uids[i] == uc.uid)
            return 1;
    gid_t groups[256];
    socklen_t gl = sizeof groups;
    int k = 0;
    if (l->n_gids && getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
        k = (int)(gl / sizeof groups[0]);
    for (unsigned i = 0; i < l->n_gids; i++) {
        if (l->gids[i] == uc.gid)
            return 1;
        for (int g = 0; g < k; g++)
            if (groups[g] == l->gids[i])
                return 1;
    }
    return 0;
}

static void answer(int sock, int status, const char *addr, int fd)
{
    struct answer a = {RDV_MAGIC, status, {0}};
    if (addr)
        snprintf(a.addr, sizeof a.addr, "%s", addr);
    send_msg(sock, &a, sizeof a, fd);
}

/* Tell the thread the set of sockets changed (or to stop). */
static void refresh(struct rdv_listen *l)
{
    uint64_t one = 1;
    if (l->dthr_on) {
        AO_int_fetch_and_add1(&l->dgen);
        syscall(SYS_futex, &l->dgen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
    if (write(l->efd, &one, sizeof one) < 0) {
        /* full counter: the thread has a refresh to read anyway */
    }
}

static void conn_free(struct rdv_conn *c)
{
    if (c->door) {
        c->door->rdv = NULL; /* its close hook: nothing of ours */
        am_ep_destroy(c->door);
    }
    close(c->sock);
    if (c->cfd >= 0)
        close(c->cfd);
    free(c);
}

/* Remove conns[i] (under mu: the thread reads the sockets). */
static void conn_drop(struct rdv_listen *l, unsigned i)
{
    struct rdv_conn *c = l->conns[i];
    pthread_mutex_lock(&l->mu);
    l->conns[i] = l->conns[--l->n];
    pthread_mutex_unlock(&l->mu);
    conn_free(c);
}

/* The door of a caller whose hello came: 0, or the code to answer. */
static int door_open(struct rdv_listen *l, struct rdv_conn *c)
{
    am_ep_t *ep = l->ep;
    struct am_ep_opts o = {.claim = am_claim_names[ep->own.claim],
                           .shm = "posix",
                           .packets = ep->own.hdr->packets,
                           .bulk_blocks = ep->own.hdr->bulk_blocks,
                           .max_senders = 1,
                           .abandon_ms = ep->abandon_ms,
                           .long_max = ep->own.long_max,
                           .queue = am_queue_names[ep->own.queue],
                           .send_timeout_ms = ep->send_timeout_ms};
    am_ep_t *door;
    int rc = am__ep_create_door(&o, &door);
    if (rc < 0)
        return rc == -ENOSPC || rc == -ENOMEM ? rc : -EPROTO;
    door->rdv = &c->base;
    pthread_mutex_lock(&l->mu); /* the threads read door and fd_held under it */
    c->door = door;
    if (l->dthr_on) {
        AO_int_fetch_and_add1(&c->door->own.shared->sleeping); /* fd_start */
        c->fd_held = 1;
    }
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* A pending caller's hello, if it came: the door made and sent.  1 if the
 * conn is done with (refused, malformed, closed, too slow), else 0. */
static int hello(struct rdv_listen *l, struct rdv_conn *c)
{
    struct hello h;
    int fd, rc = recv_msg(c->sock, &h, sizeof h, &fd);
    if (rc == -EAGAIN)
        return am__now_ns() - c->since > (int64_t)AM_RDV_HELLO_MS * 1000000;
    if (rc == 0 && (h.magic != RDV_MAGIC || h.version != AM_LAYOUT_VERSION || fd < 0 ||
                    memchr(h.addr, 0, sizeof h.addr) == NULL || !am__addr_valid(h.addr)))
        rc = -EPROTO;
    if (rc == 0) {
        struct am_segment probe;
        rc = map_memfd(fd, &probe); /* sealed, sized: checked once, here */
        if (rc == 0)
            munmap(probe.base, probe.size);
    }
    if (rc == 0) {
        c->cfd = fd;
        fd = -1;
        memcpy(c->caddr, h.addr, sizeof c->caddr);
        rc = door_open(l, c);
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        if (rc != -EPIPE)
            answer(c->sock, rc, NULL, -1);
        return 1;
    }
    answer(c->sock, 0, c->door->name, c->door->own.seg.fd);
    return 0;
}

/* Has a door's caller gone: its socket closed, or its sender entry let go
 * after it was taken (its endpoint destroyed, though a fork child may hold
 * the socket)?  pf: the socket's poll result. */
static int door_gone(const struct rdv_conn *c, short revents)
{
    if (revents & (POLLHUP | POLLERR | POLLRDHUP))
        return 1;
    const struct am_sender *s = am__sender(&c->door->own, 0);
    unsigned st = AM_SENDER_ST(AO_load(&s->state));
    return st == AM_SENDER_CLOSED || (st == AM_SENDER_READY && am__lifeline_gone(&s->life));
}

static void accept_all(struct rdv_listen *l)
{
    for (;;) {
        int s = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (s < 0)
            return; /* EAGAIN, or a caller that left before we took it */
        struct am_cred cred = {0, 0, 0};
        if (!allowed(l, s, &cred)) {
            answer(s, -EACCES, NULL, -1);
            close(s);
            continue;
        }
        struct rdv_conn *c = l->n < l->max ? calloc(1, sizeof *c) : NULL;
        if (!c) {
            answer(s, l->n < l->max ? -ENOMEM : -EUSERS, NULL, -1);
            close(s);
            continue;
        }
        *c = (struct rdv_conn){
            .base = {RDV_DOOR}, .sock = s, .cfd = -1, .cred = cred, .since = am__now_ns()};
        answer(s, 0, NULL, -1); /* let in: now the caller says hello */
        pthread_mutex_lock(&l->mu);
        l->conns[l->n++] = c;
        pthread_mutex_unlock(&l->mu);
    }
}

/* Callers arriving, saying hello, or gone; on the owner's thread, outside
 * handlers and armed waits. */
static void serve(struct rdv_listen *l)
{
    AO_store(&l->knock, 0);
    struct pollfd pf[AM_RDV_MAX];
    for (unsigned i = 0; i < l->n; i++)
        pf[i] = (struct pollfd){l->conns[i]->sock, POLLIN | POLLRDHUP, 0};
    if (l->n && poll(pf, l->n, 0) < 0)
        return;
    for (unsigned i = l->n; i-- > 0;) { /* from the end: conn_drop moves the last */
        struct rdv_conn *c = l->conns[i];
        int done = c->door ? door_gone(c, pf[i].revents) : hello(l, c);
        if (done)
            conn_drop(l, i);
    }
    accept_all(l); /* after the departures: their rooms are free */
    refresh(l);
}

/* am_ep_fd's descriptor and the doors.  Senders to a door signal nobody's
 * descriptor (the door has none), so once the listener has one, every
 * door's `sleeping` is kept raised: each send to a door then bumps its
 * wake_seq and futex-wakes (send.c, am__wake_sleepers), and this thread,
 * futex_waitv-ing on them all, does for the listener what a sender does
 * for an armed endpoint: it clears AM_SLEEP_ARMED and, if it did, writes
 * the descriptor's byte (evfd.c).  It reads the words before it signals,
 * so a send after its signal ends its next wait at once.  The cost: a
 * futex wake per message to a door, in this mode only. */
static void *door_watch(void *arg)
{
    struct rdv_listen *l = arg;
    struct futex_waitv w[AM_RDV_MAX + 1];
    struct am_seg_shared *h = l->ep->own.shared;
    for (int woke = 0;; woke = 1) {
        unsigned n = 0;
        w[n++] = (struct futex_waitv){.val = AO_int_load_acquire(&l->dgen),
                                      .uaddr = (uintptr_t)&l->dgen,
                                      .flags = FUTEX_32};
        pthread_mutex_lock(&l->mu); /* conns leave under it, before their doors go */
        for (unsigned i = 0; i < l->n; i++)
            if (l->conns[i]->fd_held) {
                volatile unsigned *seq = &l->conns[i]->door->own.shared->wake_seq;
                w[n++] = (struct futex_waitv){.val = AO_int_load_acquire(seq),
                                              .uaddr = (uintptr_t)seq,
                                              .flags = FUTEX_32};
            }
        pthread_mutex_unlock(&l->mu);
        if (AO_load(&l->stop))
            return NULL;
        AO_nop_full(); /* the words read before the look at the arming */
        for (unsigned s = AO_int_load(&h->sleeping); woke && (s & AM_SLEEP_ARMED);
             s = AO_int_load(&h->sleeping))
            if (AO_int_compare_and_swap_full(&h->sleeping, s, s & ~AM_SLEEP_ARMED)) {
                am__fd_kick(l->ep);
                break;
            }
        syscall(SYS_futex_waitv, w, n, 0, NULL, CLOCK_MONOTONIC);
    }
}

/* The listener has a descriptor now: raise every door's `sleeping` and
 * start the door watcher. */
static void fd_start(struct rdv_listen *l)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    l->dthr_on = pthread_create(&l->dthr, NULL, door_watch, l) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&l->mu);
    for (unsigned i = 0; l->dthr_on && i < l->n; i++)
        if (l->conns[i]->door && !l->conns[i]->fd_held) {
            AO_int_fetch_and_add1(&l->conns[i]->door->own.shared->sleeping);
            l->conns[i]->fd_held = 1;
        }
    pthread_mutex_unlock(&l->mu);
    if (l->dthr_on)
        refresh(l);
}

int am__rdv_poll(am_ep_t *ep)
{
    if (ep->rdv->kind != RDV_LISTEN)
        return 0;
    struct rdv_listen *l = CONTAINER(ep->rdv, struct rdv_listen);
    if (l->busy)
        return 0; /* a door's handler's send, backing off, polls us */
    l->busy = 1;
    if (__builtin_expect(!l->dthr_on, 1) && AO_load(&ep->mt.fd_rd))
        fd_start(l);
    int n = 0;
    for (unsigned i = 0; i < l->n; i++) {
        am_ep_t *d = l->conns[i]->door;
        if (!d)
            continue;
        memcpy(d->handlers, ep->handlers, AM_MAX_HANDLERS * sizeof ep->handlers[0]);
        n += am__poll(d);
    }
    if (!l->armed && !am__handlers_running &&
        (AO_load(&l->knock) || ++l->tick % AM_RDV_SERVE_EVERY == 0))
        serve(l);
    l->busy = 0;
    return n;
}

void am__rdv_arm(am_ep_t *ep)
{
    if (ep->rdv->kind != RDV_LISTEN)
        return;
    struct rdv_listen *l = CONTAINER(ep->rdv, struct rdv_listen);
    l->armed = 1;
    for (unsigned i = 0; i < l->n; i++) {
        struct rdv_conn *c = l->conns[i];
        if (!c->door)
            continue;
        struct am_seg_shared *s = c->door->own.shared;
        c->seq = AO_int_load_acquire(&s->wake_seq); /* before the store below */
        AO_int_fetch_and_add1(&s->sleeping);        /* wait.c's fence follows */
        c->armed = 1;
    }
}

void am__rdv_disarm(am_ep_t *ep)
{
    if (ep->rdv->kind != RDV_LISTEN)
        return;
    struct rdv_listen *l = CONTAINER(ep->rdv, struct rdv_listen);
    for (unsigned i = 0; i < l->n; i++)
        if (l->conns[i]->armed) {
            AO_int_fetch_and_add(&l->conns[i]->door->own.shared->sleeping, (unsigned)-1);
            l->conns[i]->armed = 0;
        }
    l->armed = 0;
}

/* Sleep until wake_seq of ep or of any armed door moves, `ms` pass, or a
 * signal handler runs (-EINTR). */
int am__rdv_sleep(am_ep_t *ep, unsigned seq, int64_t ms)
{
    struct futex_waitv w[AM_RDV_MAX + 1];
    unsigned n = 0;
    w[n++] = (struct futex_waitv){
        .val = seq, .uaddr = (uintptr_t)&ep->own.shared->wake_seq, .flags = FUTEX_32};
    if (ep->rdv->kind == RDV_LISTEN) {
        struct rdv_listen *l = CONTAINER(ep->rdv, struct rdv_listen);
        if (AO_load(&l->knock))
            return 0; /* callers to serve: the poll after this sleep does */
        for (unsigned i = 0; i < l->n; i++)
            if (l->conns[i]->armed)
                w[n++] = (struct futex_waitv){
                    .val = l->conns[i]->seq,
                    .uaddr = (uintptr_t)&l->conns[i]->door->own.shared->wake_seq,
                    .flags = FUTEX_32};
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000)
        ts.tv_sec++, ts.tv_nsec -= 1000000000;
    long rc = syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC);
    return rc < 0 && errno == EINTR ? -EINTR : 0;
}

/* The listener's thread: poll(2) the socket and the callers' sockets; on
 * any event knock, wake the owner, and wait for it to serve (a refresh). */
static void *watch(void *arg)
{
    struct rdv_listen *l = arg;
    struct pollfd pf[AM_RDV_MAX + 2];
    for (;;) {
        unsigned n = 0, pending = 0;
        pf[n++] = (struct pollfd){l->efd, POLLIN, 0};
        pf[n++] = (struct pollfd){l->lfd, POLLIN, 0};
        pthread_mutex_lock(&l->mu);
        for (unsigned i = 0; i < l->n; i++) {
            pending += l->conns[i]->door == NULL;
            pf[n++] = (struct pollfd){l->conns[i]->sock,
                                      (short)(l->conns[i]->door ? POLLRDHUP : POLLIN), 0};
        }
        pthread_mutex_unlock(&l->mu);
        int r = poll(pf, n, pending ? 1000 : -1);
        if (AO_load(&l->stop))
            return NULL;
        if (r < 0)
            continue;
        if (pf[0].revents) {
            uint64_t v;
            if (read(l->efd, &v, sizeof v) < 0) {
                /* EAGAIN: another read took it */
            }
            continue;
        }
        AO_store(&l->knock, 1);
        am__wake(l->ep->own.shared);
        am__fd_kick(l->ep);
        struct pollfd e = {l->efd, POLLIN, 0};
        poll(&e, 1, 100); /* the owner's refresh, or look again */
    }
}

/* Bind the socket at `sa`; a path's stale socket (nobody accepts there) is
 * replaced.  0, -EEXIST, or -errno. */
static int bind_at(int fd, const struct sockaddr_un *sa, socklen_t len)
{
    if (bind(fd, (const struct sockaddr *)sa, len) == 0)
        return 0;
    if (errno != EADDRINUSE || sa->sun_path[0] == '\0')
        return errno == EADDRINUSE ? -EEXIST : -errno;
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int live = probe >= 0 && connect(probe, (const struct sockaddr *)sa, len) == 0;
    int refused = !live && errno == ECONNREFUSED;
    if (probe >= 0)
        close(probe);
    if (!refused)
        return -EEXIST;
    struct stat st;
    if (lstat(sa->sun_path, &st) != 0 || !S_ISSOCK(st.st_mode) || unlink(sa->sun_path) != 0)
        return -EEXIST;
    return bind(fd, (const struct sockaddr *)sa, len) == 0 ? 0 : -errno;
}

static void listen_free(struct rdv_listen *l)
{
    if (l->thr_on || l->dthr_on) {
        AO_store(&l->stop, 1);
        refresh(l);
    }
    if (l->thr_on)
        pthread_join(l->thr, NULL);
    if (l->dthr_on)
        pthread_join(l->dthr, NULL);
    while (l->n)
        conn_drop(l, l->n - 1);
    struct stat st;
    if (l->path[0] && lstat(l->path, &st) == 0 && st.st_dev == l->dev &&
        st.st_ino == l->ino)
        unlink(l->path); /* ours still, not a later listener's */
    if (l->lfd >= 0)
        close(l->lfd);
    if (l->efd >= 0)
        close(l->efd);
    pthread_mutex_destroy(&l->mu);
    free(l->uids);
    free(l->gids);
    free(l);
}

static int listen_lists(struct rdv_listen *l, const struct am_listen_opts *o)
{
    if (!o)
        return 0;
    if ((o->n_uids && !o->allow_uids) || (o->n_gids && !o->allow_gids) ||
        o->n_uids > 4096 || o->n_gids > 4096 || o->max_callers > AM_RDV_MAX ||
        (o->mode & ~0777u))
        return -EINVAL;
    l->uids = o->n_uids ? malloc(o->n_uids * sizeof *l->uids) : NULL;
    l->gids = o->n_gids ? malloc(o->n_gids * sizeof *l->gids) : NULL;
    if ((o->n_uids && !l->uids) || (o->n_gids && !l->gids))
        return -ENOMEM;
    if (o->n_uids)
        memcpy(l->uids, o->allow_uids, o->n_uids * sizeof *l->uids);
    if (o->n_gids)
        memcpy(l->gids, o->allow_gids, o->n_gids * sizeof *l->gids);
    l->n_uids = o->n_uids;
    l->n_gids = o->n_gids;
    l->max = o->max_callers ? o->max_callers : AM_RDV_MAX;
    return 0;
}

/* A list of uids (users) or gids (groups) from the environment variable
 * env: numbers or names, separated by commas.  0 (none, or the list in
 * *ids, malloc'd, *n long), -EINVAL (a name nobody has), -ENOMEM. */
static int env_ids(const char *env, int groups, unsigned **ids, unsigned *n)
{
    const char *e = getenv(env);
    *ids = NULL;
    *n = 0;
    if (!e || !*e)
        return 0;
    char *copy = strdup(e), *save = NULL;
    unsigned *v = calloc(strlen(e) / 2 + 1, sizeof *v);
    int rc = copy && v ? 0 : -ENOMEM;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && rc == 0;
         t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long x = strtoul(t, &end, 10);
        if (*t && !*end)
            v[(*n)++] = (unsigned)x;
        else if (groups && getgrnam(t))
            v[(*n)++] = getgrnam(t)->gr_gid;
        else if (!groups && getpwnam(t))
            v[(*n)++] = getpwnam(t)->pw_uid;
        else
            rc = -EINVAL;
    }
    free(copy);
    if (rc < 0 || *n == 0) {
        free(v);
        v = NULL;
        *n = 0;
    }
    *ids = v;
    return rc;
}

/* opts NULL: SHMAM_ALLOW_UIDS, SHMAM_ALLOW_GIDS. */
static int listen_env(struct rdv_listen *l)
{
    unsigned *u, *g, nu, ng;
    int rc = env_ids("SHMAM_ALLOW_UIDS", 0, &u, &nu);
    if (rc == 0 && (rc = env_ids("SHMAM_ALLOW_GIDS", 1, &g, &ng)) < 0)
        free(u);
    if (rc < 0)
        return rc;
    struct am_listen_opts o = {
        .allow_uids = u, .n_uids = nu, .allow_gids = g, .n_gids = ng};
    rc = listen_lists(l, &o);
    free(u);
    free(g);
    return rc;
}

/* The socket bound, listening, its path's mode set. */
static int listen_socket(struct rdv_listen *l, const char *where, unsigned mode)
{
    struct sockaddr_un sa;
    socklen_t len;
    int rc = sock_addr(where, &sa, &len);
    if (rc < 0)
        return rc;
    l->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->lfd < 0)
        return -errno;
    if ((rc = bind_at(l->lfd, &sa, len)) < 0)
        return rc;
    if (sa.sun_path[0]) {
        struct stat st;
        memcpy(l->path, sa.sun_path, sizeof l->path);
        if (lstat(l->path, &st) != 0 || chmod(l->path, mode ? mode : 0666) != 0) {
            rc = -errno;
            unlink(l->path);
            l->path[0] = '\0';
            return rc;
        }
        l->dev = st.st_dev;
        l->ino = st.st_ino;
    }
    return listen(l->lfd, 64) == 0 ? 0 : -errno;
}

int am_ep_listen(am_ep_t *ep, const char *where, const struct am_listen_opts *opts)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM;
    if (am__in_handler(ep))
        return -EDEADLK;
    if (ep->mt.shared || ep->net)
        return -EINVAL;
    if (ep->rdv)
        return -EEXIST;
    struct rdv_listen *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    l->base.kind = RDV_LISTEN;
    l->ep = ep;
    l->lfd = l->efd = -1;
    l->max = AM_RDV_MAX;
    pthread_mutex_init(&l->mu, NULL);
    if (!where)
        where = getenv("SHMAM_LISTEN");
    int rc = opts ? listen_lists(l, opts) : listen_env(l);
    if (rc == 0)
        rc = listen_socket(l, where, opts ? opts->mode : 0);
    if (rc == 0 && (l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        rc = -errno;
    if (rc == 0) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the user's signals: not there */
        rc = -pthread_create(&l->thr, NULL, watch, l);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        l->thr_on = rc == 0;
    }
    if (rc < 0) {
        listen_free(l);
        return rc;
    }
    ep->rdv = &l->base;
    return 0;
}

/* ---------------------------------------------------------------- client */

static void link_close(struct rdv_link *k)
{
    close(k->sock);
    close(k->fd);
}

static struct rdv_client *client_of(am_ep_t *ep)
{
    if (ep->rdv)
        return ep->rdv->kind == RDV_CLIENT ? CONTAINER(ep->rdv, struct rdv_client) : NULL;
    struct rdv_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base.kind = RDV_CLIENT;
    pthread_mutex_init(&c->mu, NULL);
    ep->rdv = &c->base;
    return c;
}

/* Keep a door's link; forget links at index: the one of addr (drop 1), or
 * every other (drop 0). */
static int links_add(struct rdv_client *c, const struct rdv_link *k)
{
    pthread_mutex_lock(&c->mu);
    struct rdv_link *p = realloc(c->links, (c->n + 1) * sizeof *p);
    if (p) {
        c->links = p;
        c->links[c->n++] = *k;
    }
    pthread_mutex_unlock(&c->mu);
    return p ? 0 : -ENOMEM;
}

static void links_forget(struct rdv_client *c, unsigned index, const char *addr, int drop)
{
    pthread_mutex_lock(&c->mu);
    for (unsigned i = c->n; i-- > 0;)
        if (c->links[i].index == index && (strcmp(c->links[i].addr, addr) == 0) == drop) {
            link_close(&c->links[i]);
            c->links[i] = c->links[--c->n];
        }
    pthread_mutex_unlock(&c->mu);
}

/* The server's next answer, by `end` (ns): 0 and its descriptor (-1:
 * none), its code, or -ETIMEDOUT, -EPIPE, -EPROTO. */
static int await_answer(int s, struct answer *a, int *fd, int64_t end)
{
    struct pollfd pf = {s, POLLIN, 0};
    while (poll(&pf, 1, 100) == 0)
        if (am__now_ns() > end)
            return -ETIMEDOUT;
    int rc = recv_msg(s, a, sizeof *a, fd);
    if (rc == -EAGAIN || (rc == 0 && a->magic != RDV_MAGIC))
        rc = -EPROTO;
    if (rc == 0 && a->status < 0)
        rc = a->status == -EACCES || a->status == -EUSERS || a->status == -ENOMEM ||
                     a->status == -ENOSPC
                 ? a->status
                 : -EPROTO;
    if (rc < 0 && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* Connect; be let in (the server's first answer, before anything of ours
 * goes over); say hello with our segment; get the door: 0 and its link, or
 * an answer's code. */
static int handshake(am_ep_t *ep, const char *where, struct rdv_link *k)
{
    struct sockaddr_un sa;
    socklen_t len;
    int rc = sock_addr(where, &sa, &len);
    if (rc < 0)
        return rc;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (const struct sockaddr *)&sa, len) != 0) {
        rc = errno == ENOENT || errno == ECONNREFUSED ? -ENOENT
             : errno == EACCES || errno == EPERM      ? -EACCES
                                                      : -errno;
        close(s);
        return rc;
    }
    int64_t end = am__now_ns() + (int64_t)AM_RDV_ANSWER_MS * 1000000;
    struct answer a;
    int fd = -1;
    rc = await_answer(s, &a, &fd, end);
    if (rc == 0 && fd >= 0)
        rc = -EPROTO; /* a welcome carries nothing */
    if (rc == 0) {
        struct hello h = {RDV_MAGIC, AM_LAYOUT_VERSION, {0}};
        snprintf(h.addr, sizeof h.addr, "%s", ep->name);
        rc = send_msg(s, &h, sizeof h, ep->own.seg.fd);
        rc = rc == -ECONNRESET ? -EPIPE : rc;
    }
    if (fd >= 0)
        close(fd);
    fd = -1;
    if (rc == 0)
        rc = await_answer(s, &a, &fd, end);
    if (rc == 0 &&
        (fd < 0 || memchr(a.addr, 0, sizeof a.addr) == NULL || !am__addr_valid(a.addr)))
        rc = -EPROTO;
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        close(s);
        return rc;
    }
    *k = (struct rdv_link){.sock = s, .fd = fd};
    memcpy(k->addr, a.addr, sizeof k->addr);
    return 0;
}

int am_ep_connect(am_ep_t *ep, const char *where, unsigned index)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (am__in_handler(ep))
        return -EDEADLK;
    if (!ep->own.seg.anon || ep->own.seg.backend != AM_SHM_POSIX || ep->own.seg.fd < 0 ||
        index >= 65536u)
        return -EINVAL;
    if (ep->rdv && ep->rdv->kind != RDV_CLIENT)
        return -EINVAL;
    struct rdv_link k;
    if ((rc = handshake(ep, where, &k)) < 0)
        return rc;
    k.index = index;
    struct rdv_client *c = client_of(ep);
    rc = c ? links_add(c, &k) : -ENOMEM;
    if (rc < 0) {
        link_close(&k);
        return rc;
    }
    rc = am_ep_map(ep, index, k.addr);
    links_forget(c, index, k.addr, rc < 0); /* mapped: the index's older doors go */
    return rc;
}

/* ---------------------------------------------------------------- both */

int am__rdv_open(am_ep_t *ep, const char *name, struct am_segment *seg)
{
    int rc = 1;
    if (ep->rdv->kind == RDV_DOOR) {
        const struct rdv_conn *c = CONTAINER(ep->rdv, struct rdv_conn);
        /* the caller's own segment only, whatever name its entry shows */
        return strcmp(name, c->caddr) == 0 ? map_memfd(c->cfd, seg) : -EACCES;
    }
    if (ep->rdv->kind == RDV_CLIENT) {
        struct rdv_client *c = CONTAINER(ep->rdv, struct rdv_client);
        pthread_mutex_lock(&c->mu);
        for (unsigned i = 0; i < c->n && rc == 1; i++)
            if (strcmp(c->links[i].addr, name) == 0)
                rc = map_memfd(c->links[i].fd, seg);
        pthread_mutex_unlock(&c->mu);
    }
    return rc == 1 ? am__ep_open(ep->backend, name, seg) : rc;
}

void am__rdv_close(am_ep_t *ep)
{
    struct am_rdv *r = ep->rdv;
    if (!r)
        return;
    ep->rdv = NULL;
    if (r->kind == RDV_LISTEN)
        listen_free(CONTAINER(r, struct rdv_listen));
    else if (r->kind == RDV_CLIENT) {
        struct rdv_client *c = CONTAINER(r, struct rdv_client);
        for (unsigned i = 0; i < c->n; i++)
            link_close(&c->links[i]);
        free(c->links);
        pthread_mutex_destroy(&c->mu);
        free(c);
    }
}

int am__rdv_listening(const am_ep_t *ep)
{
    return ep->rdv && ep->rdv->kind == RDV_LISTEN;
}

int am_token_cred(const am_token_t *handle, struct am_cred *cred)
{
    const am_token_t *tok = am__tok_find(handle);
    if (!tok || !cred)
        return -EINVAL;
    const struct am_rdv *r = tok->ep->rdv;
    if (!r || r->kind != RDV_DOOR)
        return -ENODATA;
    *cred = CONTAINER(tok->ep->rdv, struct rdv_conn)->cred;
    return 0;
}
