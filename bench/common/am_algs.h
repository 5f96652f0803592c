/*
 * am_algs.h - one endpoint per claim algorithm in one job, so that a benchmark
 * compares algorithms in one run (interleaved rounds, in-run ratios) instead
 * of one job per algorithm at different times.
 *
 * Every rank of the job (shmamrun -n P) creates, beside its job endpoint
 * "JOB.RANK", an endpoint "JOB.RANK.ALG" per algorithm with that claim
 * algorithm and the same options otherwise (backend, sizes: from the
 * environment), sets the same handlers on each, and maps every rank's endpoint
 * of the same algorithm at that rank's index.  shmamrun removes every
 * "JOB.*" name when the job ends, so a killed benchmark leaves none of them.
 * Needs libshmam: MPI programs do not link the am_*.c files of bench/common.
 */
#ifndef SHMAM_BENCH_AM_ALGS_H
#define SHMAM_BENCH_AM_ALGS_H

#include "shmam.h"

#define BM_MAX_ALGS 16

struct bm_algs {
    int n;
    const char *name[BM_MAX_ALGS]; /* from am_claim_names */
    am_ep_t *ep[BM_MAX_ALGS];
};

struct bm_handler {
    unsigned id;
    am_handler_t fn;
};

/* Parses a comma-separated list of claim algorithms, or "all" (am_claim_names
 * in its order), into a->name[] (a->n set, no endpoints yet).  0, or -1 with a
 * message on stderr for an unknown or repeated name or too many. */
int bm_algs_parse(const char *list, struct bm_algs *a);

/* Collective over the job of `job` (every rank, same list): creates this
 * rank's endpoint per algorithm, sets the nh handlers of h on each, and maps
 * every rank's.  0, or a negative errno with a message on stderr. */
int bm_algs_open(am_ep_t *job, struct bm_algs *a, const struct bm_handler *h, int nh);

/* Collective: waits for every rank, then destroys this rank's endpoints. */
void bm_algs_close(am_ep_t *job, struct bm_algs *a);

#endif
