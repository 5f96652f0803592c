/*
 * evfd.c - a file descriptor per endpoint, for epoll, poll, select and the
 * event loops built on them (am_ep_fd).
 *
 * The descriptor is the read end of a non-blocking pipe the endpoint's owner
 * makes on the first am_ep_fd.  Senders are other processes, so the owner
 * publishes the write end in its header (page 0, which only it writes): the
 * write end's number in its process, and the pipe's inode, release-stored
 * number last.  A sender that must signal opens /proc/<owner pid>/fd/<n>
 * once (a pipe, unlike an eventfd, can be opened again that way), keeps it
 * only if it is a FIFO of that inode (a pid reused, or a number now naming
 * another file, is refused), caches it in its peer, and writes one byte.
 *
 * When a sender signals: the owner's am_poll, finding nothing, arms the
 * descriptor: it drains the pipe, sets AM_SLEEP_ARMED in the wake word
 * `sleeping` (layout.h), fences (full) and polls once more, the same
 * Dekker pattern as am_wait's (wait.c): a sender stores READY, fences,
 * loads `sleeping`; either the last poll sees its message or the sender sees
 * the arming.  The first sender to see it clears the bit (a CAS) and writes
 * one byte; others see it clear and make no system call.  The next am_poll
 * clears the bit first if it is still set, so senders make no system call
 * while the owner is awake and polling.
 *
 * The invariant: outside am_poll, the descriptor is armed, or the pipe holds
 * a byte.  It holds from the start (am_ep_fd writes one); a sender that
 * disarms writes one; an am_poll that disarms (the pipe then empty) and
 * handles messages writes one itself (rare: messages that raced the arming,
 * or a poll not prompted by the descriptor); only an empty am_poll drains
 * the pipe, and it arms.  Hence what holds: while a message waits and no
 * am_poll runs, the descriptor is readable (or becomes so as it arrives).
 * So an event loop may poll once per readiness or until am_poll returns 0.
 * It may be readable with nothing to handle (am_poll then returns 0 and
 * arms).  Each empty am_poll in this mode costs one read(2) (the drain).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "threads.h"

/* Make the pipe and publish its write end (under peers_mu if shared). */
static int fd_make(am_ep_t *ep)
{
    int fd[2];
    struct stat st;
    if (pipe2(fd, O_NONBLOCK | O_CLOEXEC) != 0)
        return -errno;
    if (fstat(fd[1], &st) != 0) {
        int rc = -errno;
        close(fd[0]);
        close(fd[1]);
        return rc;
    }
    struct am_seg_header *h = ep->own.hdr;
    if (write(fd[1], "", 1) != 1) { /* not armed: readable (see the header) */
        close(fd[0]);
        close(fd[1]);
        return -EIO;
    }
    h->wake_ino = st.st_ino;
    AO_store_release(&h->wake_fd, (AO_t)fd[1] + 1); /* pairs with open_peer's acquire */
    AO_store(&ep->mt.fd_wr, (AO_t)fd[1] + 1);
    AO_store_release(&ep->mt.fd_rd, (AO_t)fd[0] + 1); /* am_poll's arming from now on */
    return 0;
}

int am_ep_fd(am_ep_t *ep)
{
    int rc = am__ep_use(ep);
    if (rc < 0)
        return rc;
    if (ep->net)
        return -ENOTSUP; /* the MPI transport cannot write the pipe */
    am__mt_lock(&ep->mt, &ep->mt.peers_mu);
    if (!AO_load(&ep->mt.fd_rd))
        rc = fd_make(ep);
    am__mt_unlock(&ep->mt, &ep->mt.peers_mu);
    return rc < 0 ? rc : (int)AO_load(&ep->mt.fd_rd) - 1;
}

/* Read the pipe empty (it is non-blocking). */
static void drain_pipe(am_ep_t *ep)
{
    char buf[64];
    int fd = (int)AO_load(&ep->mt.fd_rd) - 1;
    while (read(fd, buf, sizeof buf) == (ssize_t)sizeof buf)
        ;
}

/* Set or clear AM_SLEEP_ARMED in the wake word; full barrier. */
static void set_armed(struct am_seg_shared *h, int on)
{
    for (;;) {
        unsigned s = AO_int_load(&h->sleeping);
        unsigned t = on ? s | AM_SLEEP_ARMED : s & ~AM_SLEEP_ARMED;
        if (s == t) {
            AO_nop_full();
            return;
        }
        if (AO_int_compare_and_swap_full(&h->sleeping, s, t))
            return;
    }
}

/* Clear AM_SLEEP_ARMED if it is still set: 1 if we did (no sender has
 * signalled since we armed: the pipe is empty), 0 if it was clear. */
static int disarm(struct am_seg_shared *h)
{
    for (;;) {
        unsigned s = AO_int_load(&h->sleeping);
        if (!(s & AM_SLEEP_ARMED))
            return 0;
        if (AO_int_compare_and_swap_full(&h->sleeping, s, s & ~AM_SLEEP_ARMED))
            return 1;
    }
}

static void kick_self(am_ep_t *ep)
{
    if (write((int)AO_load(&ep->mt.fd_wr) - 1, "", 1) < 0 && errno != EAGAIN)
        return; /* a full pipe is readable already */
}

int am__fd_poll(am_ep_t *ep, int (*poll)(am_ep_t *))
{
    struct am_seg_shared *h = ep->own.shared;
    int empty = disarm(h); /* awake: senders need not signal */
    int n = poll(ep);
    if (n) {
        if (empty)
            kick_self(ep); /* readable until an empty poll (the invariant) */
        return n;
    }
    drain_pipe(ep);
    set_armed(h, 1); /* pairs with the fence in send.c's wake_if_asleep */
    return poll(ep);
}

/* am_ep_wake's byte, if the endpoint has a descriptor. */
void am__fd_kick(am_ep_t *ep)
{
    AO_t wr = AO_load_acquire(&ep->mt.fd_rd) ? AO_load(&ep->mt.fd_wr) : 0;
    if (wr && write((int)wr - 1, "", 1) < 0 && errno != EAGAIN)
        return; /* a full pipe is readable already */
}

void am__fd_close(am_ep_t *ep)
{
    AO_t rd = AO_load(&ep->mt.fd_rd), wr = AO_load(&ep->mt.fd_wr);
    if (rd)
        close((int)rd - 1);
    if (wr)
        close((int)wr - 1);
    AO_store(&ep->mt.fd_rd, 0);
    AO_store(&ep->mt.fd_wr, 0);
}

/* Open the write end of peer's owner's pipe, as its header names it: the
 * descriptor, or -1 (none published, or not the pipe it says; reported once:
 * that owner's event loop would not hear from us). */
static int open_peer(struct am_peer *peer)
{
    static int said;
    const struct am_seg_header *h = peer->view->hdr;
    AO_t w = AO_load_acquire(&h->wake_fd); /* pairs with fd_make's release */
    uint64_t ino = h->wake_ino;
    char path[64];
    struct stat st;
    if (w == 0 || w - 1 > INT_MAX)
        return -1;
    snprintf(path, sizeof path, "/proc/%u/fd/%lu", (unsigned)h->owner_pid,
             (unsigned long)(w - 1));
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_ino != ino)) {
        close(fd);
        fd = -1;
    }
    if (fd < 0 && !said && (said = 1))
        fprintf(stderr, "shmam: cannot signal endpoint %.*s's descriptor (%s)\n",
                (int)AM_NAME_MAX, h->name, path);
    return fd;
}

/* Signal peer's owner's descriptor: one byte through the write end opened
 * once per peer (two threads opening at once: the loser closes its own). */
void am__fd_signal(struct am_peer *peer)
{
    AO_t c = AO_load(&peer->wake_fd);
    if (!c) {
        int fd = open_peer(peer);
        if (fd < 0)
            return;
        if (!AO_compare_and_swap_full(&peer->wake_fd, 0, (AO_t)fd + 1))
            close(fd);
        c = AO_load(&peer->wake_fd);
    }
    if (write((int)c - 1, "", 1) < 0 && errno != EAGAIN)
        return; /* a full pipe is readable already */
}

void am__fd_peer_close(struct am_peer *peer)
{
    AO_t c = AO_load(&peer->wake_fd);
    if (c)
        close((int)c - 1);
    AO_store(&peer->wake_fd, 0);
}
