/*
 * waitcost.c - what blocking costs: a round trip of an 8-byte
 * request and reply when both sides block in am_wait against both sides
 * polling, and a blocking am_call against a polling one (am_call_start and
 * am_call_test); and the CPU an idle am_wait(ep, -1) uses.
 *
 *   build/bench/waitcost [--iters N] [--rounds R] [--idle-s S] [--header]
 *
 * The server is a forked child pinned to CPU 1, the client this process on
 * CPU 0.  Rounds interleave the four kinds (poll, wait, call_poll, call), N
 * round trips each; a row per kind gives the median over rounds of the mean
 * round trip in microseconds, and its spread (min..max).  Then the idle row:
 * a child sleeps in am_wait(ep, -1) for S seconds (the parent wakes it with
 * one message), and reports its user+system CPU time by getrusage over that
 * span, in percent of one CPU.  Rows: waitcost,KIND,METRIC,VALUE,MIN,MAX.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "shmam.h"

enum { H_PING = 1, H_PONG, H_CALL };
enum kind { K_POLL, K_WAIT, K_CALL_POLL, K_CALL, K_COUNT };
static const char *const kind_names[] = {"poll", "wait", "call_poll", "call"};

struct shared {
    AO_t mode; /* enum kind the server serves in; K_COUNT: quit */
    AO_t ready;
    double cpu_s, wall_s;
};
static struct shared *sh;
static volatile unsigned long pongs;

static void die(const char *what, int rc)
{
    fprintf(stderr, "waitcost: %s: %s\n", what, am_strerror(rc));
    exit(1);
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void ping_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply_bulk(t, H_PONG, d, l, a, n);
}

static void call_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_reply_bulk(t, 0, d, l, a, n);
}

static void pong_h(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    pongs++;
}

static void server(const char *name)
{
    am_ep_t *ep;
    int rc = am_ep_create(name, NULL, &ep);
    if (rc)
        die("server: create", rc);
    am_set_handler(ep, H_PING, ping_h);
    am_set_handler(ep, H_CALL, call_h);
    AO_store_release(&sh->ready, 1);
    for (AO_t m; (m = AO_load_acquire(&sh->mode)) != K_COUNT;)
        if (m == K_POLL || m == K_CALL_POLL)
            am_poll(ep);
        else
            am_wait(ep, 100);
    am_ep_destroy(ep);
    _exit(0);
}

/* n round trips of kind k; the mean in microseconds. */
static double trips(am_ep_t *ep, enum kind k, long n)
{
    uint64_t x = 42, back;
    struct am_result res = {&back, sizeof back, 0, {0}, 0};
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        int rc;
        if (k == K_POLL || k == K_WAIT) {
            unsigned long want = pongs + 1;
            if ((rc = am_request_bulk(ep, 0, H_PING, &x, sizeof x, NULL, 0)))
                die("request", rc);
            while (pongs < want)
                if ((rc = k == K_POLL ? am_poll(ep) : am_wait(ep, -1)) < 0)
                    die("poll/wait", rc);
        } else if (k == K_CALL) {
            if ((rc = am_call(ep, 0, H_CALL, NULL, 0, &x, sizeof x, &res, 10000)))
                die("am_call", rc);
        } else {
            am_call_t id;
            if ((rc =
                     am_call_start(ep, 0, H_CALL, NULL, 0, &x, sizeof x, &res, 10000, &id)))
                die("am_call_start", rc);
            while ((rc = am_call_test(ep, id)) == -EINPROGRESS)
                ;
            if (rc)
                die("am_call_test", rc);
        }
    }
    return (now_s() - t0) * 1e6 / n;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void row(const char *kind, const char *metric, double *v, int n)
{
    qsort(v, n, sizeof *v, cmp);
    printf("waitcost,%s,%s,%.3f,%.3f,%.3f\n", kind, metric, v[n / 2], v[0], v[n - 1]);
}

static void rtt(long iters, int rounds)
{
    char srv[40], cli[40];
    snprintf(srv, sizeof srv, "waitcost-s-%d", (int)getpid());
    snprintf(cli, sizeof cli, "waitcost-c-%d", (int)getpid());
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        pin(1);
        server(srv);
    }
    pin(0);
    while (!AO_load_acquire(&sh->ready))
        usleep(1000);
    am_ep_t *ep;
    int rc = am_ep_create(cli, NULL, &ep);
    if (rc || (rc = am_ep_map(ep, 0, srv)))
        die("client", rc);
    am_set_handler(ep, H_PONG, pong_h);
    double v[K_COUNT][64];
    for (int r = 0; r < rounds + 1; r++)
        for (int k = 0; k < K_COUNT; k++) {
            AO_store_release(&sh->mode, (AO_t)k);
            usleep(2000);
            trips(ep, k, iters / 10); /* settle: spin budgets adapt */
            double us = trips(ep, k, iters);
            if (r > 0) /* round 0 warms up */
                v[k][r - 1] = us;
        }
    for (int k = 0; k < K_COUNT; k++)
        row(kind_names[k], "rtt_us", v[k], rounds);
    double ratio[2][64];
    for (int r = 0; r < rounds; r++) {
        ratio[0][r] = v[K_WAIT][r] / v[K_POLL][r];
        ratio[1][r] = v[K_CALL][r] / v[K_CALL_POLL][r];
    }
    row("wait/poll", "ratio", ratio[0], rounds);
    row("call/call_poll", "ratio", ratio[1], rounds);
    AO_store_release(&sh->mode, K_COUNT);
    am_ep_destroy(ep);
    waitpid(p, NULL, 0);
}

static void idle(int secs)
{
    char name[40];
    snprintf(name, sizeof name, "waitcost-i-%d", (int)getpid());
    AO_store(&sh->ready, 0);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        pin(1);
        am_ep_t *ep;
        int rc = am_ep_create(name, NULL, &ep);
        if (rc)
            die("idle: create", rc);
        am_set_handler(ep, H_PONG, pong_h);
        struct rusage a, b;
        getrusage(RUSAGE_SELF, &a);
        double t0 = now_s();
        AO_store_release(&sh->ready, 1);
        rc = am_wait(ep, -1);
        sh->wall_s = now_s() - t0;
        getrusage(RUSAGE_SELF, &b);
        sh->cpu_s = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) +
                    (b.ru_utime.tv_usec - a.ru_utime.tv_usec) * 1e-6 +
                    (b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
                    (b.ru_stime.tv_usec - a.ru_stime.tv_usec) * 1e-6;
        am_ep_destroy(ep);
        _exit(rc == 1 ? 0 : 1);
    }
    while (!AO_load_acquire(&sh->ready))
        usleep(1000);
    sleep((unsigned)secs);
    am_ep_t *ep;
    char me[40];
    snprintf(me, sizeof me, "waitcost-w-%d", (int)getpid());
    int rc = am_ep_create(me, NULL, &ep);
    if (rc || (rc = am_ep_map(ep, 0, name)) || (rc = am_request(ep, 0, H_PONG, NULL, 0)))
        die("idle: wake", rc);
    int st;
    waitpid(p, &st, 0);
    am_ep_destroy(ep);
    double pct = 100 * sh->cpu_s / sh->wall_s;
    printf("waitcost,idle_wait,cpu_percent,%.4f,%.4f,%.4f\n", pct, pct, pct);
    printf("waitcost,idle_wait,seconds,%.2f,%.2f,%.2f\n", sh->wall_s, sh->wall_s,
           sh->wall_s);
}

int main(int argc, char **argv)
{
    long iters = 20000;
    int rounds = 5, idle_s = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--idle-s") && i + 1 < argc)
            idle_s = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--header"))
            printf("bench,kind,metric,value,min,max\n");
        else {
            fprintf(stderr, "usage: waitcost [--iters N] [--rounds R (<= 64)] [--idle-s S] "
                            "[--header]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 64 || iters < 10)
        return 2;
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    rtt(iters, rounds);
    if (idle_s > 0)
        idle(idle_s);
    return 0;
}
