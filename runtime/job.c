/*
 * job.c - the job layer: processes started together by shmamrun.
 *
 * am_init creates this rank's endpoint "JOB.RANK", maps every rank r as index r
 * (waiting for each to appear), and meets the others in a barrier; then each
 * rank removes its own segment's name, so that from here on no name of the job
 * exists and nothing can outlive the job, whatever kills it.  No rank polls
 * before it has mapped all the others, so every sender is found among the mapped
 * peers, never auto-mapped at a wrong index.
 *
 * The barrier is central: ranks send ARRIVE to rank 0, which counts P-1 of them
 * and sends RELEASE to each.  A process started without shmamrun is a job of one.
 *
 * Under mpiexec with libshmam-mpi (net.h), the job is MPI's: each node's ranks
 * share a job name their node's first rank chose, map only each other, and
 * reach the other nodes' ranks through the transport, attached before the
 * barrier; the barrier's messages take whichever path their pair has.
 *
 * A POSIX rank keeps a read-only descriptor of its own segment, opened just
 * before its name goes, until am_finalize: the name is gone, but shmamstat
 * finds the segment through the descriptor (/proc/<pid>/fd, segment.h's
 * am__segment_list_unnamed) for as long as the rank runs; it dies with the
 * rank, however the rank ends, and is closed across exec.  (A System V rank
 * needs none: the kernel lists a marked segment while it is attached.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "endpoint.h"
#include "internal.h"
#include "job.h"
#include "net.h"
#include "peers.h"
#include "send.h"
#include "senders.h"

#define AM_INIT_TIMEOUT_MS 60000

static int job_rank, job_nprocs = 1;
static int job_fd = -1; /* POSIX: this rank's own segment, held (above) */

int am_rank(void)
{
    return job_rank;
}

int am_nprocs(void)
{
    return job_nprocs;
}

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

/* Map rank r, waiting (1 ms naps) while it does not exist or is not ready. */
static int map_rank(am_ep_t *ep, const char *job, int r)
{
    char name[AM_NAME_MAX];
    if (am__job_ep_name(job, r, name, sizeof name) < 0)
        return -EINVAL;
    struct timespec nap = {0, 1000000};
    for (int waited = 0;; waited++) {
        int rc = am_ep_map(ep, (unsigned)r, name);
        if ((rc != -ENOENT && rc != -EAGAIN) || waited >= AM_INIT_TIMEOUT_MS)
            return rc == -ENOENT || rc == -EAGAIN ? -ETIMEDOUT : rc;
        nanosleep(&nap, NULL);
    }
}

static int create_rank_ep(const char *job, int senders, am_ep_t **ep)
{
    char name[AM_NAME_MAX];
    struct am_ep_opts o = {0};
    if (am__job_ep_name(job, job_rank, name, sizeof name) < 0)
        return -EINVAL;
    if (senders > 64)
        o.max_senders = (unsigned)senders;
    return am_ep_create(name, &o, ep);
}

static void release_own(void)
{
    if (job_fd >= 0)
        close(job_fd);
    job_fd = -1;
}

/* Hold this rank's segment (POSIX), then remove its name.  Not holding it
 * costs only shmamstat's view of the rank. */
static int unlink_own(am_ep_t *ep)
{
    release_own();
    if (ep->backend == AM_SHM_POSIX) {
        int fd = am__segment_hold(&ep->own.seg, ep->name);
        job_fd = fd < 0 ? -1 : fd;
    }
    return am__ep_unlink(ep);
}

/* Which job this process is a rank of: MPI's (net.h), shmamrun's, or its own
 * of one; *local NULL when every rank is on our node. */
static int find_job(int *argc, char ***argv, struct am_net_job *nj, const char **job)
{
    static char single[32];
    int rc = am__net_job(argc, argv, nj);
    if (rc != 0) {
        job_rank = nj->rank, job_nprocs = nj->nprocs, *job = nj->name;
        return rc < 0 ? rc : 0;
    }
    nj->local = NULL;
    *job = getenv(SHMAM_JOB);
    if (!*job) {
        snprintf(single, sizeof single, "s%ld", (long)getpid());
        *job = single;
    }
    job_rank = *job == single ? 0 : env_int(SHMAM_RANK, -1);
    job_nprocs = *job == single ? 1 : env_int(SHMAM_NPROCS, 0);
    return 0;
}

int am_init(int *argc, char ***argv, am_ep_t **ep)
{
    struct am_net_job nj;
    const char *job;
    if (!ep)
        return -EINVAL;
    int rc = find_job(argc, argv, &nj, &job);
    if (rc < 0)
        return rc;
    int here = 0; /* ranks on our node */
    for (int r = 0; r < job_nprocs; r++)
        here += !nj.local || nj.local[r];
    if (job_rank < 0 || job_nprocs < 1 || job_rank >= job_nprocs ||
        (unsigned)here > AM_MAX_SENDERS)
        return -EINVAL;
    rc = create_rank_ep(job, here, ep);
    if (rc == 0)
        (*ep)->holding = 1;
    for (int r = 0; rc == 0 && r < job_nprocs; r++)
        if (!nj.local || nj.local[r])
            rc = map_rank(*ep, job, r);
    if (rc == 0 && nj.local)
        rc = am__net_attach(*ep, &nj);
    if (rc == 0)
        rc = am_barrier(*ep);
    if (rc == 0)
        rc = unlink_own(*ep);
    if (rc == 0)
        (*ep)->holding = 0;
    if (rc < 0 && *ep) {
        am_ep_destroy(*ep);
        release_own();
        *ep = NULL;
    }
    return rc;
}

/* Are all ranks of our node still there?  (A rank that died never arrives;
 * one of another node ends the job: MPI's failure model, net.h.) */
static int all_alive(am_ep_t *ep)
{
    for (int r = 0; r < job_nprocs; r++) {
        struct am_peer *p = am__peer(ep, (unsigned)r);
        if (p && !am__peer_alive(p->view))
            return 0;
    }
    return 1;
}

/* Poll, sleeping between messages, until `*counter` reaches `target`. */
static int wait_for(am_ep_t *ep, const unsigned *counter, unsigned target)
{
    while (*counter < target) {
        int n = am_wait(ep, 1000);
        if (n < 0)
            return n;
        if (n == 0 && !all_alive(ep))
            return -EPIPE;
    }
    return 0;
}

/* The barrier's internal handlers: they only count, am_barrier waits. */
static void barrier_arrive(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_token_ep(t)->barrier_arrived++;
}

static void barrier_release(am_token_t *t, const uint32_t *a, int n, void *d, size_t l)
{
    am_token_ep(t)->barrier_epoch++;
}

void am__barrier_handlers(am_ep_t *ep)
{
    ep->handlers[AM_H_BARRIER_ARRIVE] = barrier_arrive;
    ep->handlers[AM_H_BARRIER_RELEASE] = barrier_release;
}

int am_barrier(am_ep_t *ep)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM; /* the rank's owner only (a fork child's copy: nobody's) */
    if (am__in_handler(ep))
        return -EDEADLK;
    unsigned others = (unsigned)job_nprocs - 1, epoch = ep->barrier_epoch + 1;
    int rc = 0;
    if (job_rank != 0) {
        rc = am__send(ep, 0, AM_REQUEST, &(struct am_msg){.handler = AM_H_BARRIER_ARRIVE});
        return rc < 0 ? rc : wait_for(ep, &ep->barrier_epoch, epoch);
    }
    rc = wait_for(ep, &ep->barrier_arrived, others);
    ep->barrier_arrived -= others;
    for (int r = 1; rc == 0 && r < job_nprocs; r++)
        rc = am__send(ep, (unsigned)r, AM_REQUEST,
                      &(struct am_msg){.handler = AM_H_BARRIER_RELEASE});
    ep->barrier_epoch = epoch;
    return rc;
}

int am_finalize(am_ep_t *ep)
{
    if (!am__ep_ok(ep))
        return -EINVAL;
    if (ep->mt.owner != am__self())
        return -EPERM; /* as am_barrier: changing nothing */
    int rc = am_barrier(ep);
    int rc2 = am_ep_destroy(ep);
    if (rc2 != -EPERM && rc2 != -EDEADLK && rc2 != -EBUSY)
        release_own(); /* destroyed: am_ep_destroy refuses only so */
    am__net_end();
    return rc < 0 ? rc : rc2;
}
