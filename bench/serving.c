/*
 * serving.c - calls per second that W threads serving one shared endpoint
 * (am_ep_share) give, with handlers of a fixed amount of CPU work.
 *
 *   serving [-w W] [-c C] [-k K] [-u US] [-t SECONDS] [-H]
 *
 * One server process makes endpoint NAME, shares it and runs W threads in
 * am_wait; its request handler spins a calibrated loop of about US
 * microseconds (20) of CPU work, then replies.  C client processes (2)
 * each keep K requests (16) outstanding, sending more as replies come.  After a warm-up
 * second the clients count replies for SECONDS (3).  One CSV row:
 * serving,W,C,K,US,seconds,calls,calls_per_s.  On this machine's two CPUs, shared with
 * other work, compare W=1 and W=2 in one run, and give the load average with the figures.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "shmam.h"

enum { H_REQ = 1, H_REP };

struct shared {
    AO_t ready, counting, stop, calls;
};
static struct shared *sh;
static am_ep_t *srv;
static unsigned long spin_iters;
static volatile unsigned long sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void work(unsigned long n)
{
    unsigned long x = sink;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink = x;
}

/* Iterations of work() that take `us` microseconds: the fastest of a few
 * tries (a try that lost the CPU measures the machine, not the loop). */
static unsigned long calibrate(double us)
{
    unsigned long n = 100000;
    double best = 1e9;
    for (int i = 0; i < 20; i++) {
        double t0 = now_s();
        work(n);
        double dt = now_s() - t0;
        best = dt < best ? dt : best;
    }
    return (unsigned long)(n * us * 1e-6 / best);
}

static void req_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    work(spin_iters);
    am_reply(tok, H_REP, a, n);
}

static void *server_thread(void *arg)
{
    while (!AO_load(&sh->stop))
        am_wait(srv, 50);
    return NULL;
}

static int serve(const char *name, int w)
{
    pthread_t t[64];
    int rc = am_ep_create(name, NULL, &srv);
    if (rc < 0) {
        fprintf(stderr, "serving: create %s: %s\n", name, am_strerror(rc));
        return 1;
    }
    am_set_handler(srv, H_REQ, req_h);
    am_ep_share(srv);
    AO_store_release(&sh->ready, 1);
    for (int i = 1; i < w; i++)
        pthread_create(&t[i], NULL, server_thread, NULL);
    server_thread(NULL);
    for (int i = 1; i < w; i++)
        pthread_join(t[i], NULL);
    am_ep_destroy(srv);
    return 0;
}

static am_ep_t *cli;
static int outstanding;

static void rep_h(am_token_t *tok, const uint32_t *a, int n, void *d, size_t l)
{
    if (AO_load(&sh->counting))
        AO_fetch_and_add1(&sh->calls);
    outstanding--;
}

static int client(const char *server, int id, int k)
{
    char name[64];
    snprintf(name, sizeof name, "%s.c%d", server, id);
    int rc = am_ep_create(name, NULL, &cli);
    if (rc == 0)
        rc = am_ep_map(cli, 0, server);
    if (rc < 0) {
        fprintf(stderr, "serving: client: %s\n", am_strerror(rc));
        return 1;
    }
    am_set_handler(cli, H_REP, rep_h);
    for (uint32_t i = 0; !AO_load(&sh->stop); i++) {
        while (outstanding < k && am_request(cli, 0, H_REQ, &i, 1) == 0)
            outstanding++; /* requests go from here: handlers may not send them */
        am_wait(cli, 50);
    }
    am_ep_destroy(cli);
    return 0;
}

int main(int argc, char **argv)
{
    int w = 1, c = 2, k = 16, opt, header = 0;
    double us = 20, secs = 3;
    while ((opt = getopt(argc, argv, "w:c:k:u:t:H")) != -1)
        switch (opt) {
        case 'w':
            w = atoi(optarg);
            break;
        case 'c':
            c = atoi(optarg);
            break;
        case 'k':
            k = atoi(optarg);
            break;
        case 'u':
            us = atof(optarg);
            break;
        case 't':
            secs = atof(optarg);
            break;
        case 'H':
            header = 1;
            break;
        default:
            fprintf(stderr, "usage: serving [-w W] [-c C] [-k K] [-u US] [-t S] [-H]\n");
            return 2;
        }
    if (w < 1 || w > 64 || c < 1 || c > 64 || k < 1)
        return 2;
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    spin_iters = calibrate(us);
    char name[40];
    snprintf(name, sizeof name, "serving%d", (int)getpid());
    pid_t pids[65];
    if ((pids[0] = fork()) == 0)
        _exit(serve(name, w));
    while (!AO_load_acquire(&sh->ready))
        usleep(1000);
    for (int i = 1; i <= c; i++)
        if ((pids[i] = fork()) == 0)
            _exit(client(name, i, k));
    sleep(1);
    AO_store(&sh->counting, 1);
    double t0 = now_s();
    usleep((useconds_t)(secs * 1e6));
    AO_t calls = AO_load(&sh->calls);
    double dt = now_s() - t0;
    AO_store(&sh->stop, 1);
    int bad = 0;
    for (int i = 0; i <= c; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    if (header)
        printf("bench,threads,clients,window,handler_us,seconds,calls,calls_per_s\n");
    printf("serving,%d,%d,%d,%.0f,%.2f,%lu,%.0f\n", w, c, k, us, dt, (unsigned long)calls,
           calls / dt);
    return bad;
}
