/*
 * harness.c - failures, the clock, the time limit, common flags (see
 * harness.h).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "measure.h"

static const char *prog = "bench", *usage_text = "";
static int rank = -1;
static void (*on_fail)(void);
static char timeout_msg[96]; /* made before the alarm: the handler only writes */

void bm_program(const char *name, const char *usage, int argc, char **argv)
{
    prog = name, usage_text = usage;
    if (bm_asks_help(argc, argv)) {
        fputs(usage, stdout);
        exit(0);
    }
}

void bm_bad_line(void)
{
    fputs(usage_text, stderr);
    exit(2);
}

void bm_setup(const char *name, int r)
{
    prog = name, rank = r;
}

void bm_on_fail(void (*hook)(void))
{
    on_fail = hook;
}

void bm_set_rank(int r)
{
    rank = r;
}

void bm_fail(const char *fmt, ...)
{
    va_list ap;
    if (rank >= 0)
        fprintf(stderr, "%s: rank %d: FAILED: ", prog, rank);
    else
        fprintf(stderr, "%s: FAILED: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    if (on_fail)
        on_fail();
    exit(1);
}

static void on_alarm(int sig)
{
    (void)sig;
    if (write(2, timeout_msg, strlen(timeout_msg)) < 0)
        _exit(1);
    _exit(1);
}

void bm_timeout(unsigned seconds)
{
    snprintf(timeout_msg, sizeof timeout_msg, "%s: FAILED: timed out (a message lost?)\n",
             prog);
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

double bm_clock_cost_ns(void)
{
    static double v[1001];
    for (int i = 0; i < 1001; i++) {
        int64_t t0 = bm_now_ns();
        v[i] = (double)(bm_now_ns() - t0);
    }
    return bm_median(v, 1001);
}

int bm_common_flag(const char *arg, int *header, int *verbose)
{
    if (strcmp(arg, "--header") == 0)
        return *header = 1;
    if (verbose && strcmp(arg, "--verbose") == 0)
        return *verbose = 1;
    return 0;
}
