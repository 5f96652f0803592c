/*
 * rdvbench.c - a call through a rendezvous socket (am_ep_connect: the
 * caller's own door, the path every other-user caller takes) beside a call
 * to the same server mapped by name (the same-user path), in the same run,
 * and what connecting costs beside a Unix socket's connect.
 *
 *   rdvbench [--iters N] [--rounds R] [--quick] [--header]
 *
 * One server process (an echo handler; am_wait) listens on an abstract
 * socket; the client process holds two endpoints, one mapped by name, one
 * connected.  Impls and metrics:
 *
 *   by_name, by_socket   rtt_8B   N blocking calls of one argument, µs each
 *                        tput_32  4N calls with 32 in flight, calls/s
 *   by_socket            rtt_vs_by_name, tput_vs_by_name  in-run ratios
 *   connect              connect_us  am_ep_connect of a fresh anonymous
 *                                    endpoint (its creation not counted)
 *   unix_connect         connect_us  connect(2) to a SOCK_SEQPACKET socket
 *                                    and the server's first byte read
 *
 * The uid does not change the data path (a door is the same for a caller
 * of any uid), so one user runs both; check_rendezvous runs real other
 * users.  Rounds as bench/common/stat.h says: a warm-up, then R rounds of
 * every impl in ABBA order; a row is the median of round means.  A wrong
 * reply fails the run (exit 1).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/am_harness.h"
#include "common/measure.h"
#include "common/stat.h"

#define H_ECHO 1
#define WINDOW 32
#define MAX_ROUNDS 64

static char name[64], where[108], plain[108];
static volatile int quit;

static void echo_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    bm_check(am_reply(tok, 0, a, n), "am_reply");
    if (n == 1 && a[0] == 0xffffffffu)
        quit = 1;
}

/* The plain socket's server: accept, write one byte, close. */
static void *plain_server(void *arg)
{
    int l = *(int *)arg;
    for (;;) {
        int s = accept(l, NULL, NULL);
        if (s < 0)
            continue;
        if (write(s, "", 1) < 0) {
            /* the client left */
        }
        close(s);
    }
    return NULL;
}

static int plain_listen(void)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(plain);
    memcpy(sa.sun_path + 1, plain + 1, n - 1);
    int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (l < 0 ||
        bind(l, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + n) ||
        listen(l, 64))
        bm_fail("plain socket: %s", strerror(errno));
    return l;
}

static void server(int ready_fd)
{
    am_ep_t *ep;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    bm_check(am_ep_create(name, NULL, &ep), "server: am_ep_create");
    bm_check(am_set_handler(ep, H_ECHO, echo_h), "am_set_handler");
    bm_check(am_ep_listen(ep, where, NULL), "am_ep_listen");
    static int l;
    l = plain_listen();
    pthread_t t;
    pthread_create(&t, NULL, plain_server, &l);
    if (write(ready_fd, "", 1) != 1)
        bm_fail("ready");
    while (!quit) {
        int rc = am_wait(ep, -1);
        if (rc < 0 && rc != -EINTR)
            bm_check(rc, "am_wait");
    }
    am_ep_destroy(ep);
    _exit(0);
}

static void call_one(am_ep_t *ep, uint32_t seq)
{
    struct am_result res = {0};
    bm_check(am_call(ep, 0, H_ECHO, &seq, 1, NULL, 0, &res, 60000), "am_call");
    if (res.nargs != 1 || res.args[0] != seq)
        bm_fail("call %u: a wrong reply", seq);
}

/* N round trips: µs each. */
static double rtt(am_ep_t *ep, long n)
{
    int64_t t0 = bm_now_ns();
    for (long i = 0; i < n; i++)
        call_one(ep, (uint32_t)i);
    return (double)(bm_now_ns() - t0) / 1e3 / (double)n;
}

/* 4N calls, WINDOW in flight: calls/s. */
static double tput(am_ep_t *ep, long n)
{
    am_call_t id[WINDOW];
    struct am_result res[WINDOW];
    uint32_t seq[WINDOW];
    long total = 4 * n, sent = 0, done = 0;
    int64_t t0 = bm_now_ns();
    while (done < total) {
        while (sent < total && sent - done < WINDOW) {
            int k = (int)(sent % WINDOW);
            seq[k] = (uint32_t)sent;
            res[k] = (struct am_result){0};
            bm_check(
                am_call_start(ep, 0, H_ECHO, &seq[k], 1, NULL, 0, &res[k], 60000, &id[k]),
                "am_call_start");
            sent++;
        }
        int k = (int)(done % WINDOW);
        int rc;
        while ((rc = am_call_wait(ep, id[k], -1)) == -EINTR)
            ;
        bm_check(rc, "am_call_wait");
        if (res[k].nargs != 1 || res[k].args[0] != (uint32_t)done)
            bm_fail("call %ld: a wrong reply", done);
        done++;
    }
    return (double)total / ((double)(bm_now_ns() - t0) / 1e9);
}

/* N connects of fresh endpoints: µs each (creation and destroy apart). */
static double connects(long n)
{
    double sum = 0;
    for (long i = 0; i < n; i++) {
        am_ep_t *ep;
        bm_check(am_ep_create(NULL, NULL, &ep), "am_ep_create");
        int64_t t0 = bm_now_ns();
        bm_check(am_ep_connect(ep, where, 0), "am_ep_connect");
        sum += (double)(bm_now_ns() - t0);
        am_ep_destroy(ep);
    }
    return sum / 1e3 / (double)n;
}

static double plain_connects(long n)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(plain);
    memcpy(sa.sun_path + 1, plain + 1, len - 1);
    int64_t t0 = bm_now_ns();
    for (long i = 0; i < n; i++) {
        char b;
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (s < 0 ||
            connect(s, (struct sockaddr *)&sa,
                    offsetof(struct sockaddr_un, sun_path) + len) ||
            read(s, &b, 1) != 1)
            bm_fail("plain connect: %s", strerror(errno));
        close(s);
    }
    return (double)(bm_now_ns() - t0) / 1e3 / (double)n;
}

static void bad_usage(void)
{
    fprintf(stderr, "usage: rdvbench [--iters N] [--rounds R] [--quick] [--header]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long iters = 4000, rounds = 5;
    int header = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = bm_opt_long(argv[++i], 1, bad_usage);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = bm_opt_range(argv[++i], 1, MAX_ROUNDS, bad_usage);
        else if (!strcmp(argv[i], "--quick"))
            iters = 300, rounds = 3;
        else if (!strcmp(argv[i], "--header"))
            header = 1;
        else
            bad_usage();
    snprintf(name, sizeof name, "rdvbench-%d", (int)getpid());
    snprintf(where, sizeof where, "@shmam-rdvbench-%d", (int)getpid());
    snprintf(plain, sizeof plain, "@shmam-rdvbench-plain-%d", (int)getpid());
    int p[2];
    if (pipe(p) != 0)
        bm_fail("pipe");
    pid_t srv = fork();
    if (srv == 0)
        server(p[1]);
    char b;
    if (read(p[0], &b, 1) != 1)
        bm_fail("the server did not start");
    am_ep_t *ep[2]; /* by_name, by_socket */
    bm_check(am_ep_create(NULL, NULL, &ep[0]), "am_ep_create");
    bm_check(am_ep_map(ep[0], 0, name), "am_ep_map");
    bm_check(am_ep_create(NULL, NULL, &ep[1]), "am_ep_create");
    bm_check(am_ep_connect(ep[1], where, 0), "am_ep_connect");
    double r[2][MAX_ROUNDS], t[2][MAX_ROUNDS], c[2][MAX_ROUNDS];
    for (long k = -1; k < rounds; k++) { /* round -1: the warm-up */
        for (int j = 0; j < 2; j++) {
            int i = bm_abba((int)(k < 0 ? 0 : k), j, 2);
            double a = rtt(ep[i], iters), b2 = tput(ep[i], iters);
            double cc = i ? connects(iters / 20 + 1) : plain_connects(iters / 20 + 1);
            if (k >= 0)
                r[i][k] = a, t[i][k] = b2, c[i][k] = cc;
        }
    }
    struct bm_row row = {stdout, "rdvbench", "posix", 2, 0};
    int n = (int)rounds;
    if (header)
        bm_print_header(stdout);
    const char *impl[2] = {"by_name", "by_socket"};
    for (int i = 0; i < 2; i++) {
        bm_print(&row, impl[i], iters, "rtt_8B", bm_stat_of(r[i], n), "us", 3);
        bm_print(&row, impl[i], 4 * iters, "tput_32", bm_stat_of(t[i], n), "calls/s", 0);
    }
    bm_print(&row, "by_socket", iters, "rtt_vs_by_name", bm_stat_ratio(r[1], r[0], n), "x",
             3);
    bm_print(&row, "by_socket", 4 * iters, "tput_vs_by_name", bm_stat_ratio(t[1], t[0], n),
             "x", 3);
    bm_print(&row, "connect", iters / 20 + 1, "connect_us", bm_stat_of(c[1], n), "us", 1);
    bm_print(&row, "unix_connect", iters / 20 + 1, "connect_us", bm_stat_of(c[0], n), "us",
             1);
    uint32_t q = 0xffffffffu;
    struct am_result res = {0};
    am_call(ep[0], 0, H_ECHO, &q, 1, NULL, 0, &res, 60000);
    am_ep_destroy(ep[0]);
    am_ep_destroy(ep[1]);
    int st;
    waitpid(srv, &st, 0);
    return 0;
}
