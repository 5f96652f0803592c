/*
 * prog_job.c - a rank for check_job, started by shmamrun; uses am_init.
 *
 *   prog_job ring N          each rank sends N requests to rank r+1 (mod P), whose
 *                            handler checks their order and replies; every rank
 *                            counts N requests and N replies, then barriers
 *   prog_job kill-init R     rank R kills itself with SIGKILL after am_init
 *   prog_job kill-early R    rank R kills itself with SIGKILL before am_init
 *   prog_job exit R CODE     rank R exits CODE after am_init
 *
 * Rank 0 first prints "job JOB" so the test can look for leftovers; each rank
 * prints "rank R ok" when it is done.  Ranks that wait for a dead rank sleep in
 * am_wait until the launcher stops them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shmam.h"

static unsigned requests, replies, disorder;

static void on_request(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    disorder += a[0] != requests;
    requests++;
    uint32_t back = a[0] * 3u;
    if (am_reply(t, 1, &back, 1) != 0)
        disorder++;
}

static void on_reply(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    disorder += a[0] != replies * 3u;
    replies++;
}

static int ring(am_ep_t *ep, unsigned n)
{
    unsigned next = (unsigned)((am_rank() + 1) % am_nprocs());
    for (uint32_t i = 0; i < n; i++)
        if (am_request(ep, next, 0, &i, 1) != 0)
            return 1;
    while (requests < n || replies < n)
        am_wait(ep, 1000);
    return disorder != 0 || am_ep_bad_packets(ep) != 0;
}

static void park(am_ep_t *ep)
{
    for (;;)
        am_wait(ep, 1000);
}

int main(int argc, char **argv)
{
    am_ep_t *ep;
    const char *mode = argc > 1 ? argv[1] : "";
    int who = argc > 2 ? atoi(argv[2]) : -1;
    const char *rank_env = getenv("SHMAM_RANK");
    if (strcmp(mode, "kill-early") == 0 && rank_env && atoi(rank_env) == who)
        raise(SIGKILL);
    int rc = am_init(&argc, &argv, &ep);
    if (rc < 0) {
        fprintf(stderr, "prog_job: am_init: %s\n", am_strerror(rc));
        return 99;
    }
    if (am_rank() == 0)
        dprintf(1, "job %s\n", getenv("SHMAM_JOB"));
    am_set_handler(ep, 0, on_request);
    am_set_handler(ep, 1, on_reply);
    if (strcmp(mode, "ring") == 0)
        rc = ring(ep, (unsigned)who);
    else if (am_rank() == who && strcmp(mode, "kill-init") == 0)
        raise(SIGKILL);
    else if (am_rank() == who && strcmp(mode, "exit") == 0) {
        fflush(stdout); /* an abrupt exit: no finalize, no leak report (make asan) */
        _exit(atoi(argv[3]));
    } else if (strcmp(mode, "ring") != 0)
        park(ep);
    if (rc == 0)
        rc = am_finalize(ep);
    dprintf(1, "rank %d %s\n", am_rank(), rc == 0 ? "ok" : "FAILED");
    return rc != 0;
}
