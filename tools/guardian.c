/*
 * guardian.c - shmamrun's guardian: a process that removes a job's names if
 * the launcher dies before it can (shmamrun.c, step 6).
 *
 * Ranks create their names in am_init and remove them only after
 * its barrier, so a launcher SIGKILLed before that barrier (or before step 6)
 * would leave names behind: it cannot clean up, and its ranks die with it
 * (PR_SET_PDEATHSIG) before they can; and a rank's region keeps its name for
 * the endpoint's life (peers open it by name), so even a job killed after the
 * barrier would leave its regions.  The guardian is a child forked before any rank, without
 * a death signal, in a process group of its own (so a signal to the job's
 * group, `kill -KILL -PGID`, does not reach it), ignoring the terminal's
 * signals, holding nothing of the launcher's but stderr and its end of the
 * socket.  It blocks reading the
 * socket, collecting rank pidfds:
 *   - on "done" it exits 0 at once: the launcher has removed every name;
 *   - at the end of the stream without "done" (the launcher died) it waits until
 *     every rank it was told of has exited (at most GUARD_WAIT_NS), unlinks every
 *     rank's name in both backends as in step 6, waits GUARD_RESWEEP_NS (a rank
 *     forked just before the launcher died may have been creating its segment,
 *     its pidfd never sent) and sweeps once more, then exits.
 * So no name of a job outlives the launcher, however it ends, as long as the
 * guardian is not killed by a signal aimed at it.
 * Without pidfds (Linux before 5.3) the guardian cannot wait for the ranks and
 * relies on its two sweeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shmamrun.h"

#define GUARD_WAIT_NS 10000000000LL /* the guardian's longest wait for the ranks */
#define GUARD_RESWEEP_NS 50000000L  /* between the guardian's two sweeps */

/* Messages to the guardian, one byte each. */
enum {
    MSG_RANK = 'r', /* with a rank's pidfd */
    MSG_DONE = 'd'  /* the job ended and its names are gone */
};

/* Signals the guardian ignores: the terminal's, sent to the whole process group
 * (^C, ^\, ^Z, hangup), a SIGTERM meant for the launcher's group, and SIGPIPE
 * from a closed stderr.  It must outlive the launcher and the ranks. */
static const int guard_ignores[] = {SIGINT,  SIGQUIT, SIGTERM, SIGHUP,
                                    SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};

/* Close fds lo..hi: close_range, or one by one (up to 65535) where it is missing. */
static void close_fds(unsigned lo, unsigned hi)
{
    if (lo > hi || close_range(lo, hi, 0) == 0)
        return;
    for (unsigned fd = lo; fd <= hi && fd < 65536; fd++)
        close((int)fd);
}

/* In the new guardian: ignore the signals above, restore the signal mask, put
 * /dev/null on stdin and stdout (a reader of the launcher's stdout must not wait
 * for the guardian) and close every other fd but stderr and the socket sock.
 * Returns the socket, renumbered above 2, or -1 with errno set. */
static int detach_guardian(int sock, const sigset_t *mask)
{
    int fd = fcntl(sock, F_DUPFD, 3), null;

    if (fd < 0)
        return -1;
    for (size_t i = 0; i < sizeof guard_ignores / sizeof guard_ignores[0]; i++)
        signal(guard_ignores[i], SIG_IGN);
    sigprocmask(SIG_SETMASK, mask, NULL);
    close(sock);
    if ((null = open("/dev/null", O_RDWR)) >= 0) {
        dup2(null, 0);
        dup2(null, 1);
    }
    close_fds(3, (unsigned)fd - 1);
    close_fds((unsigned)fd + 1, ~0u);
    return fd;
}

/* In the guardian: the next message, its fd (or -1) in *fd.  Returns MSG_RANK,
 * MSG_DONE, 0 at the end of the stream (the launcher is gone) or -1 on an
 * error. */
static int receive(int sock, int *fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    char msg;
    struct iovec iov = {&msg, 1};
    struct msghdr m = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    ssize_t n;

    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    *fd = -1;
    if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
        memcpy(fd, CMSG_DATA(h), sizeof *fd);
    return n > 0 ? msg : (int)n;
}

/* In the guardian: keep the rank pidfds sent (up to n of them, in pidfd[],
 * counted in *got) until a message that is not MSG_RANK, which it returns
 * (see receive). */
static int listen_launcher(int sock, int *pidfd, int n, int *got)
{
    int msg, fd;

    while ((msg = receive(sock, &fd)) == MSG_RANK) {
        if (fd >= 0 && *got < n)
            pidfd[(*got)++] = fd;
        else if (fd >= 0)
            close(fd);
    }
    return msg;
}

/* In the guardian: wait until each of the n pidfds is readable (its process has
 * exited), for at most GUARD_WAIT_NS in all. */
static void await_ranks(const int *pidfd, int n)
{
    int64_t deadline = now_ns() + GUARD_WAIT_NS, left;

    for (int i = 0; i < n; i++) {
        struct pollfd p = {.fd = pidfd[i], .events = POLLIN};
        while ((left = deadline - now_ns()) > 0 &&
               poll(&p, 1, (int)(left / 1000000) + 1) <= 0)
            ;
    }
}

/* The guardian's life, from its fork to its exit.  It sweeps the job's names
 * only once the launcher is gone without saying "done". */
static _Noreturn void run_guardian(const struct job *job, int sock, const sigset_t *mask)
{
    int *pidfd = calloc((size_t)job->nprocs, sizeof *pidfd), got = 0, msg;
    struct timespec pause = {0, GUARD_RESWEEP_NS};

    if ((sock = detach_guardian(sock, mask)) < 0) {
        perror("shmamrun: guardian");
        _exit(1);
    }
    msg = listen_launcher(sock, pidfd, pidfd ? job->nprocs : 0, &got);
    if (msg < 0)
        fprintf(stderr, "shmamrun: guardian: cannot hear the launcher: %s\n",
                strerror(errno));
    if (msg != 0)
        _exit(msg == MSG_DONE ? 0 : 1);
    await_ranks(pidfd, got);
    remove_segments(job);
    nanosleep(&pause, NULL);
    remove_segments(job);
    _exit(0);
}

/* Fork the guardian, before any rank exists (so none inherits its socket's
 * other end), into a process group of its own, so that a signal to the job's
 * group (`kill -KILL -PGID`) does not reach it: the launcher moves it there
 * before it forks any rank (so no rank can be signalled with the group before
 * the guardian has left it), and it moves itself too, whichever runs first.
 * mask is the signal mask to restore in it.  Returns 0, or -1 with errno set. */
int start_guardian(struct job *job, const sigset_t *mask)
{
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    pid_t p = fork();
    if (p == 0) {
        close(sv[0]);
        setpgid(0, 0);
        run_guardian(job, sv[1], mask);
    }
    if (p > 0)
        setpgid(p, p);
    close(sv[1]);
    job->guardian = p > 0 ? p : 0;
    job->guard_fd = p > 0 ? sv[0] : -1;
    if (p < 0)
        close(sv[0]);
    return p > 0 ? 0 : -1;
}

/* Send the guardian one message, with fd attached if fd >= 0.  A guardian
 * that is gone is not told (EPIPE, never SIGPIPE). */
static void tell_guardian(const struct job *job, char msg, int fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {&msg, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

    if (fd >= 0) {
        m.msg_control = ctl.buf;
        m.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        *h = (struct cmsghdr){.cmsg_len = CMSG_LEN(sizeof fd),
                              .cmsg_level = SOL_SOCKET,
                              .cmsg_type = SCM_RIGHTS};
        memcpy(CMSG_DATA(h), &fd, sizeof fd);
    }
    while (sendmsg(job->guard_fd, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

/* Hand the guardian a pidfd of rank pid p.  p is not reaped yet, so it names
 * this rank and no other process. */
void guard_rank(const struct job *job, pid_t p)
{
    int fd = (int)syscall(SYS_pidfd_open, p, 0);

    tell_guardian(job, MSG_RANK, fd);
    if (fd >= 0)
        close(fd);
}

/* The job's names are gone: let the guardian go and reap it, so that no
 * process of the job outlives the launcher. */
void dismiss_guardian(struct job *job)
{
    tell_guardian(job, MSG_DONE, -1);
    close(job->guard_fd);
    if (job->guardian > 0)
        while (waitpid(job->guardian, NULL, 0) < 0 && errno == EINTR)
            ;
    job->guardian = 0;
}
