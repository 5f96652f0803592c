/*
 * prog_linger.c - a rank for check_launcher's launcher-crash test, started by
 * shmamrun:
 *
 *   prog_linger MS [region]  am_init, an endpoint of its own beside the
 *                      job's ("JOB.RANK.x", as the benchmarks make one per claim
 *                      algorithm), a barrier, sleep MS milliseconds, destroy
 *                      it, am_finalize; with "region", each of the two
 *                      endpoints makes a one-copy region after the barrier
 *
 * Each rank prints "rank R start" first thing and "rank R init" once am_init has
 * returned (one write each, so lines of several ranks never mix), so that a test
 * that kills the launcher at a random moment can tell how far the ranks got;
 * with regions, "rank R regions JOB.RANK" once they are made.
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "shmam.h"

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 100;
    const char *rank = getenv("SHMAM_RANK");
    struct timespec nap = {ms / 1000, ms % 1000 * 1000000};
    am_ep_t *ep, *extra = NULL;
    char name[AM_MAX_NAME + 1];

    dprintf(1, "rank %s start\n", rank ? rank : "?");
    int rc = am_init(&argc, &argv, &ep);
    if (rc == 0) {
        dprintf(1, "rank %d init\n", am_rank());
        snprintf(name, sizeof name, "%s.x", am_ep_name(ep));
        rc = am_ep_create(name, NULL, &extra);
    }
    if (rc == 0)
        rc = am_barrier(ep);
    if (rc == 0 && argc > 2 && strcmp(argv[2], "region") == 0) {
        void *base;
        if ((rc = am_region_create(ep, 1 << 16, &base)) == 0)
            rc = am_region_create(extra, 1 << 16, &base);
        if (rc == 0)
            dprintf(1, "rank %d regions %s\n", am_rank(), am_ep_name(ep));
    }
    if (rc == 0) {
        nanosleep(&nap, NULL);
        rc = am_ep_destroy(extra);
    }
    if (rc == 0)
        rc = am_finalize(ep);
    if (rc != 0)
        fprintf(stderr, "prog_linger: %s\n", am_strerror(rc));
    return rc != 0;
}
