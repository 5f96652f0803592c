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
 * The relay.  A sender may be unable to open the pipe: it has no free
 * descriptor (RLIMIT_NOFILE), or the owner is not dumpable (setuid, or
 * prctl(PR_SET_DUMPABLE, 0)), so /proc refuses every sender.  Having cleared
 * the bit, it owes the byte all the same: it sets AM_SLEEP_RELAY and
 * futex-wakes `sleeping`, which needs no descriptor.  am_ep_fd starts one
 * thread in the owner's process, the relay, that futex-waits on `sleeping`
 * and, finding AM_SLEEP_RELAY, clears it and writes the byte itself.  The
 * futex word is a second mapping of its page that the relay keeps
 * (mremap), so destroy may unmap the segment before it stops the relay.
 *
 * The invariant: outside am_poll, the descriptor is armed, or the pipe holds
 * a byte, or AM_SLEEP_RELAY asks the relay for one.  It holds from the start
 * (am_ep_fd writes one); a sender that disarms writes one or asks the relay;
 * an am_poll that disarms (the pipe then empty) and handles messages writes
 * one itself (rare: messages that raced the arming, or a poll not prompted
 * by the descriptor); only an empty am_poll drains the pipe, and it arms.
 * Hence what holds: while a message waits and no am_poll runs, the
 * descriptor is readable (or becomes so as it arrives), whatever any
 * sender's descriptors or the owner's dumpable state.  It is a level: a loop
 * may poll once per readiness with level-triggered epoll, or until am_poll
 * returns 0 (the only way with EPOLLET: a poll that ran messages leaves the
 * byte there and the bit clear, so no new edge comes until an empty poll
 * arms).  It may be readable with nothing to handle (am_poll then returns 0
 * and arms).  Each empty am_poll in this mode costs one read(2) (the drain).
 *
 * Time.  What the endpoint's own waits do after a sleep (wait.c), an
 * event loop would never do: retry call replies kept because the caller's
 * queue was full (call.c), and end calls whose deadline passed or whose
 * server died (am__calls_check).  So the relay is a timer too: an empty
 * am_poll that arms while replies are kept or calls are outstanding sets
 * its due time (AM_OWED_SLICE_MS, or am__calls_slice: abandon_ms and the
 * next deadline), moving it only earlier (then AM_SLEEP_RETIME and a
 * futex wake); at the due time the relay marks it fired and writes a byte,
 * and the am_poll that readiness prompts retries the kept replies and, if
 * fired, checks the calls.  No call of an fd-driven loop stalls, and an
 * idle endpoint with neither has no timer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "call.h"
#include "internal.h"
#include "threads.h"
#include "waiting.h"

/* The relay thread of an endpoint with a descriptor (the file header). */
struct am_relay {
    pthread_t thread;
    pid_t pid;           /* the process that started it */
    am_ep_t *ep;         /* for its write end (mt.fd_wr) */
    unsigned *word;      /* `sleeping`, in the relay's own mapping */
    void *map;           /* that mapping: one page */
    volatile AO_t stop;  /* am__fd_close: end */
    volatile AO_t due;   /* ns on the monotonic clock; 0: no timer */
    volatile AO_t fired; /* the timer wrote its byte; am_poll takes it */
};

static void futex_wake(unsigned *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Set bits in *word (full barrier), then wake the relay waiting on it. */
static void relay_poke(unsigned *word, unsigned bits)
{
    unsigned s;
    do
        s = AO_int_load(word);
    while (!AO_int_compare_and_swap_full(word, s, s | bits));
    futex_wake(word);
}

/* One byte into our own pipe (a full pipe is readable already). */
static void kick_self(am_ep_t *ep)
{
    if (write((int)AO_load(&ep->mt.fd_wr) - 1, "", 1) < 0 && errno != EAGAIN)
        return;
}

/* Futex-wait on r->word while it holds s, until the due time if any. */
static void relay_sleep(struct am_relay *r, unsigned s, AO_t due, int64_t now)
{
    struct timespec ts, *tp = NULL;
    if (due) {
        int64_t left = (int64_t)due - now;
        ts = (struct timespec){left / 1000000000, left % 1000000000};
        tp = &ts;
    }
    syscall(SYS_futex, r->word, FUTEX_WAIT, s, tp, NULL, 0);
}

/* The relay's timer: if due has passed, take it (a CAS: the owner may move
 * it meanwhile), mark it fired and write the byte.  1 if it fired. */
static int relay_fire(struct am_relay *r, AO_t due, int64_t now)
{
    if (!due || now < (int64_t)due || !AO_compare_and_swap_full(&r->due, due, 0))
        return 0;
    AO_store_release(&r->fired, 1); /* pairs with take_fired's acquire */
    kick_self(r->ep);
    return 1;
}

/* The relay thread (the file header).  It reads the word, then the stop
 * flag and the due time, and futex-waits only while the word is unchanged:
 * whoever sets stop or moves due changes the word after (relay_poke), so
 * no request is missed. */
static void *relay_main(void *arg)
{
    struct am_relay *r = arg;
    for (;;) {
        unsigned s = AO_int_load(r->word), mine = s & (AM_SLEEP_RELAY | AM_SLEEP_RETIME);
        if (mine) {
            if (AO_int_compare_and_swap_full(r->word, s, s & ~mine) && (s & AM_SLEEP_RELAY))
                kick_self(r->ep); /* the byte a sender could not write */
            continue;
        }
        if (AO_load_acquire(&r->stop))
            return NULL;
        AO_t due = AO_load_acquire(&r->due);
        int64_t now = am__now_ns();
        if (!relay_fire(r, due, now))
            relay_sleep(r, s, due, now);
    }
}

/* Map the page of ep's `sleeping` a second time, for the relay. */
static int relay_map(struct am_relay *r, am_ep_t *ep)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t at = (uintptr_t)&ep->own.shared->sleeping, base = at & ~(page - 1);
    void *m = mremap((void *)base, 0, page, MREMAP_MAYMOVE);
    if (m == MAP_FAILED)
        return -errno;
    r->map = m;
    r->word = (unsigned *)((char *)m + (at - base));
    return 0;
}

/* Start ep's relay (its pipe's write end is set); all signals blocked in it,
 * so the program's handlers run on its own threads. */
static int relay_start(am_ep_t *ep)
{
    struct am_relay *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->ep = ep;
    r->pid = getpid();
    int rc = relay_map(r, ep);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (rc == 0)
        rc = -pthread_create(&r->thread, NULL, relay_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc < 0) {
        if (r->map)
            munmap(r->map, (size_t)sysconf(_SC_PAGESIZE));
        free(r);
        return rc;
    }
    AO_store_release(&ep->mt.relay, (AO_t)r);
    return 0;
}

/* ep's relay (NULL: no descriptor); the acquire pairs with relay_start's
 * release, for a thread of a shared endpoint that did not make it. */
static struct am_relay *relay_of(am_ep_t *ep)
{
    return (struct am_relay *)AO_load_acquire(&ep->mt.relay);
}

/* Stop and free ep's relay (a fork child's copy has no thread: only free). */
static void relay_stop(am_ep_t *ep)
{
    struct am_relay *r = relay_of(ep);
    if (!r)
        return;
    if (r->pid == getpid()) {
        AO_store_release(&r->stop, 1); /* before the poke: relay_main's order */
        relay_poke(r->word, AM_SLEEP_RETIME);
        pthread_join(r->thread, NULL);
    }
    munmap(r->map, (size_t)sysconf(_SC_PAGESIZE));
    free(r);
    AO_store(&ep->mt.relay, 0);
}

/* Close both ends of a pipe not made after all; rc. */
static int pipe_fail(int fd[2], int rc)
{
    close(fd[0]);
    close(fd[1]);
    return rc;
}

/* Make the pipe, start the relay and publish the write end (under peers_mu
 * if shared). */
static int fd_make(am_ep_t *ep)
{
    int fd[2];
    struct stat st;
    if (pipe2(fd, O_NONBLOCK | O_CLOEXEC) != 0)
        return -errno;
    if (fstat(fd[1], &st) != 0)
        return pipe_fail(fd, -errno);
    struct am_seg_header *h = ep->own.hdr;
    if (write(fd[1], "", 1) != 1) { /* not armed: readable (see the header) */
        return pipe_fail(fd, -EIO);
    }
    AO_store(&ep->mt.fd_wr, (AO_t)fd[1] + 1); /* the relay writes there */
    int rc = relay_start(ep);
    if (rc < 0) {
        AO_store(&ep->mt.fd_wr, 0);
        return pipe_fail(fd, rc);
    }
    h->wake_ino = st.st_ino;
    AO_store_release(&h->wake_fd, (AO_t)fd[1] + 1);   /* pairs with open_peer's acquire */
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

/* Did the relay's timer fire since we last looked?  (Takes it.) */
static int take_fired(struct am_relay *r)
{
    if (!AO_load_acquire(&r->fired))
        return 0;
    AO_store(&r->fired, 0);
    return 1;
}

/* What the endpoint's own waits do after each sleep (the file header,
 * Time): kept call replies, and, once the timer fired, the calls' check. */
static void timed_chores(am_ep_t *ep)
{
    if (take_fired(relay_of(ep)) && ep->calls)
        am__calls_check(ep);
    if (ep->owed)
        am__call_retry(ep, 1);
}

/* Arming: while replies are kept or calls outstanding, the relay's timer
 * is due when a wait would have woken (wait.c's slice); moved only earlier
 * (any thread of a shared endpoint may arm: a CAS). */
static void timer_arm(am_ep_t *ep)
{
    if (!ep->owed && !ep->calls)
        return;
    int64_t now = am__now_ns(), ms = ep->owed ? AM_OWED_SLICE_MS : INT64_MAX;
    ms = am__calls_slice(ep, now, ms);
    if (ms == INT64_MAX)
        return;
    struct am_relay *r = relay_of(ep);
    AO_t due = (AO_t)(now + ms * 1000000), old;
    do
        if ((old = AO_load(&r->due)) != 0 && old <= due)
            return;
    while (!AO_compare_and_swap_full(&r->due, old, due));
    relay_poke(r->word, AM_SLEEP_RETIME);
}

int am__fd_poll(am_ep_t *ep, int (*poll)(am_ep_t *))
{
    struct am_seg_shared *h = ep->own.shared;
    int empty = disarm(h); /* awake: senders need not signal */
    timed_chores(ep);
    int n = poll(ep);
    if (n) {
        if (empty)
            kick_self(ep); /* readable until an empty poll (the invariant) */
        return n;
    }
    drain_pipe(ep);
    set_armed(h, 1); /* pairs with the fence in send.c's wake_if_asleep */
    n = poll(ep);
    timer_arm(ep);
    return n;
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
    relay_stop(ep); /* before the write end closes: it writes there */
    AO_t rd = AO_load(&ep->mt.fd_rd), wr = AO_load(&ep->mt.fd_wr);
    if (rd)
        close((int)rd - 1);
    if (wr)
        close((int)wr - 1);
    AO_store(&ep->mt.fd_rd, 0);
    AO_store(&ep->mt.fd_wr, 0);
}

/* peer->wake_fd once /proc refused us the owner's pipe (it is not dumpable,
 * or setuid): every signal goes through its relay, with no open to try. */
#define AM_FD_REFUSED (~(AO_t)0)

/* Open the write end of peer's owner's pipe, as its header names it: the
 * descriptor, or -errno: -EACCES or -EPERM (refused), -ESTALE (not the
 * pipe it says), -EMFILE (no descriptor free here) etc. */
static int open_peer(struct am_peer *peer)
{
    const struct am_seg_header *h = peer->view->hdr;
    AO_t w = AO_load_acquire(&h->wake_fd); /* pairs with fd_make's release */
    uint64_t ino = h->wake_ino;
    char path[64];
    struct stat st;
    if (w == 0 || w - 1 > INT_MAX)
        return -ENOENT;
    snprintf(path, sizeof path, "/proc/%u/fd/%lu", (unsigned)h->owner_pid,
             (unsigned long)(w - 1));
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_ino != ino) {
        close(fd);
        return -ESTALE;
    }
    return fd;
}

/* peer->wake_fd after a first open that gave fd (see open_peer): fd + 1,
 * AM_FD_REFUSED, or 0 (try again next time: no descriptor free now...). */
static AO_t wake_fd_of(int fd)
{
    if (fd >= 0)
        return (AO_t)fd + 1;
    return fd == -EACCES || fd == -EPERM ? AM_FD_REFUSED : 0;
}

/* Signal peer's owner's descriptor (we cleared its AM_SLEEP_ARMED: the byte
 * is ours to give): one byte through the write end opened once per peer (two
 * threads opening at once: the loser closes its own), or, if we cannot open
 * it or write it, through the owner's relay (the file header). */
void am__fd_signal(struct am_peer *peer)
{
    AO_t c = AO_load(&peer->wake_fd);
    if (!c) {
        int fd = open_peer(peer);
        AO_t v = wake_fd_of(fd);
        if (v && !AO_compare_and_swap_full(&peer->wake_fd, 0, v) && fd >= 0)
            close(fd);
        c = AO_load(&peer->wake_fd);
    }
    if (c && c != AM_FD_REFUSED && (write((int)c - 1, "", 1) == 1 || errno == EAGAIN))
        return; /* a full pipe is readable already */
    relay_poke(&peer->view->shared->sleeping, AM_SLEEP_RELAY);
}

void am__fd_peer_close(struct am_peer *peer)
{
    AO_t c = AO_load(&peer->wake_fd);
    if (c && c != AM_FD_REFUSED)
        close((int)c - 1);
    AO_store(&peer->wake_fd, 0);
}
