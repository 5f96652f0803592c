/*
 * am_algs.h - one endpoint per claim algorithm or queue kind in one job, so
 * that a benchmark compares them in one run (interleaved rounds, in-run
 * ratios) instead of one job each at different times.
 *
 * A benchmark's "algorithms" are the claim algorithms of the shared
 * many-to-one queues (am_claim_names: lockfree, tas, ...) and the per-sender
 * queue kinds (am_queue_names but mpsc: lamport, fastforward, mcring,
 * bqueue), which have no claim.  An endpoint named for a claim algorithm has
 * queue mpsc and that claim; one named for a per-sender kind has that queue
 * (its claim algorithm unused).  Both say so explicitly: SHMAM_QUEUE or
 * SHMAM_CLAIM in the environment (shmamrun --queue, -a) changes neither.
 *
 * Every rank of the job (shmamrun -n P) creates, beside its job endpoint
 * "JOB.RANK", an endpoint "JOB.RANK.NAME" per algorithm, with the same
 * options otherwise (backend, sizes: from the environment), sets the same
 * handlers on each, and maps every rank's endpoint of the same algorithm at
 * that rank's index.  shmamrun removes every "JOB.*" name when the job ends,
 * so a killed benchmark leaves none of them.  Needs libshmam: MPI programs do
 * not link the am_*.c files of bench/common.
 */
#ifndef SHMAM_BENCH_AM_ALGS_H
#define SHMAM_BENCH_AM_ALGS_H

#include "shmam.h"

#define BM_MAX_ALGS 16

struct bm_algs {
    int n;
    const char *name[BM_MAX_ALGS]; /* from am_claim_names or am_queue_names */
    am_ep_t *ep[BM_MAX_ALGS];
};

struct bm_handler {
    unsigned id;
    am_handler_t fn;
};

/* Parses a comma-separated list into a->name[] (a->n set, no endpoints yet).
 * Each item is a claim algorithm, a per-sender queue kind, or one of two
 * words: "all" (every claim algorithm, am_claim_names in its order) and
 * "channels" (every per-sender kind, am_queue_names' order); so
 * "all,channels" is every one of them.  0, or -1 with a message on stderr for
 * an unknown or repeated name (mpsc too: name its claim algorithm) or too
 * many. */
int bm_algs_parse(const char *list, struct bm_algs *a);

/* The algorithm endpoint ep runs: its queue kind if it is a per-sender one,
 * else its claim algorithm.  Of the job's endpoint, it is a benchmark's
 * default list (shmamrun --queue KIND, or -a ALG). */
const char *bm_algs_name_of(const am_ep_t *ep);

/* Is `name` a per-sender queue kind (not a claim algorithm)? */
int bm_algs_is_channel(const char *name);

/* Collective over the job of `job` (every rank, same list): creates this
 * rank's endpoint per algorithm, sets the nh handlers of h on each, and maps
 * every rank's.  0, or a negative errno with a message on stderr. */
int bm_algs_open(am_ep_t *job, struct bm_algs *a, const struct bm_handler *h, int nh);

/* Collective: waits for every rank, then destroys this rank's endpoints. */
void bm_algs_close(am_ep_t *job, struct bm_algs *a);

#endif
