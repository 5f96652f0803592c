/*
 * mpi_job.c - an MPI job as a shmam job (net.h): which ranks share a node, the
 * node's job name, and the transport's state set up at am_init and taken
 * down at am_ep_destroy.
 *
 * A process is a rank of an MPI job if MPI is initialized already (the
 * program called MPI_Init) or if an MPI launcher started it: hydra's PMI_RANK
 * or PMI_SIZE, PMIx's PMIX_RANK, Open MPI's OMPI_COMM_WORLD_SIZE; never under
 * shmamrun (SHMAM_JOB set).  We then initialize MPI ourselves, and finalize it
 * in am_finalize.
 *
 * Nodes: the ranks that share memory (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED), cut into virtual nodes of SHMAM_NODE_SIZE
 * consecutive ranks of that machine when it is set (as GASNet tests its
 * supernodes), so that paths between nodes run on one machine.  A node's
 * first rank makes its job name, "<SHMAM_JOB_PREFIX><pid>-<8 hex>" (prefix
 * "m" by default; job.h's name rules), and gives it to the others.  Each
 * rank's reaper (mpi_reaper.c) removes its names when it has gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "mpi_net.h"
#include "net.h"

static int we_initialized; /* MPI_Init was ours: am__net_end finalizes */
static uint8_t *local_map; /* the job's, [nprocs] */

static int launched_by_mpi(void)
{
    static const char *const vars[] = {"PMI_RANK", "PMI_SIZE", "PMIX_RANK",
                                       "OMPI_COMM_WORLD_SIZE"};
    if (getenv(SHMAM_JOB))
        return 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

/* SHMAM_NODE_SIZE: 0 if unset or empty, the size, or -1 if it is not one. */
static int node_size(void)
{
    const char *s = getenv(SHMAM_NODE_SIZE);
    char *end;
    if (!s || !*s)
        return 0;
    long k = strtol(s, &end, 10);
    return *end || k < 1 || k > AM_MAX_SENDERS ? -1 : (int)k;
}

/* The job name a node's first rank makes, into name (AM_NET_JOB_NAME). */
static int make_name(char *name)
{
    const char *p = getenv(SHMAM_JOB_PREFIX);
    if (!p || !*p)
        p = "m";
    size_t n = strlen(p);
    if (n > AM_JOB_PREFIX_MAX || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789") != n) {
        fprintf(stderr, "shmam: %s=%s: want 1 to %d of [a-z0-9]\n", SHMAM_JOB_PREFIX, p,
                AM_JOB_PREFIX_MAX);
        return -EINVAL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned salt = (unsigned)ts.tv_nsec * 2654435761u ^ (unsigned)ts.tv_sec;
    snprintf(name, AM_NET_JOB_NAME, "%s%ld-%08x", p, (long)getpid(), salt);
    return 0;
}

/* Our node: its first rank's world rank, and the job name it made. */
static int find_node(int rank, int k, int *leader, char *name)
{
    MPI_Comm shm, node;
    int lr, nr, rc = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    MPI_Comm_rank(shm, &lr);
    MPI_Comm_split(shm, k > 0 ? lr / k : 0, lr, &node);
    MPI_Comm_rank(node, &nr);
    *leader = rank;
    MPI_Bcast(leader, 1, MPI_INT, 0, node);
    if (nr == 0)
        rc = make_name(name);
    MPI_Bcast(&rc, 1, MPI_INT, 0, node);
    MPI_Bcast(name, AM_NET_JOB_NAME, MPI_CHAR, 0, node);
    MPI_Comm_free(&node);
    MPI_Comm_free(&shm);
    return rc;
}

/* Which ranks share our node, and how many nodes there are. */
static int map_nodes(struct am_net_job *j, int leader)
{
    int *leaders = malloc((size_t)j->nprocs * sizeof *leaders);
    local_map = calloc((size_t)j->nprocs, 1);
    if (!leaders || !local_map) {
        free(leaders);
        return -ENOMEM;
    }
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    j->nodes = j->node = 0;
    for (int r = 0; r < j->nprocs; r++) {
        local_map[r] = leaders[r] == leader;
        j->nodes += leaders[r] == r;
        j->node += leaders[r] == r && r < leader;
    }
    j->local = local_map;
    free(leaders);
    return 0;
}

int am__net_job(int *argc, char ***argv, struct am_net_job *j)
{
    int inited = 0, k = node_size(), leader;
    MPI_Initialized(&inited);
    if (!inited && !launched_by_mpi())
        return 0;
    if (k < 0) {
        fprintf(stderr, "shmam: %s=%s: want a number of ranks, 1 to %d\n", SHMAM_NODE_SIZE,
                getenv(SHMAM_NODE_SIZE), AM_MAX_SENDERS);
        return -EINVAL;
    }
    int rc = am__mpi_reaper_start();
    if (rc < 0)
        return rc;
    if (!inited && MPI_Init(argc, argv) != MPI_SUCCESS)
        return -EIO;
    we_initialized = !inited;
    MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j->nprocs);
    if ((rc = find_node(j->rank, k, &leader, j->name)) < 0)
        return rc;
    am__mpi_reaper_name(j->name, j->rank);
    return map_nodes(j, leader) < 0 ? -ENOMEM : 1;
}

/* ---- the transport's state ------------------------------------------------ */

static int net_close(am_ep_t *ep);

static const struct am_net_ops mpi_ops = {
    .send = am__mpi_send,
    .progress = am__mpi_progress,
    .close = net_close,
};

static void state_free(struct am_mpi *n)
{
    free(n->remote);
    free(n->long_max);
    free(n->received);
    for (int qid = 0; qid < 2; qid++) {
        free(n->sent[qid]);
        free(n->sync[qid]);
        free(n->txq[qid].tx);
        free(n->txq[qid].stage);
    }
    free(n->data);
    free(n);
}

static struct am_mpi *state_alloc(unsigned p)
{
    struct am_mpi *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->remote = calloc(p, 1);
    n->long_max = calloc(p, sizeof *n->long_max);
    n->received = calloc(p, sizeof *n->received);
    int ok = n->remote && n->long_max && n->received;
    for (int qid = 0; qid < 2; qid++) {
        n->sent[qid] = calloc(p, sizeof *n->sent[qid]);
        n->sync[qid] = calloc(p, sizeof *n->sync[qid]);
        n->txq[qid].tx = calloc(AM_NET_TX, sizeof *n->txq[qid].tx);
        ok = ok && n->sent[qid] && n->sync[qid] && n->txq[qid].tx;
    }
    if (!ok) {
        state_free(n);
        return NULL;
    }
    return n;
}

int am__net_attach(am_ep_t *ep, const struct am_net_job *j)
{
    struct am_mpi *n = state_alloc((unsigned)j->nprocs);
    if (!n)
        return -ENOMEM;
    n->pub.ops = &mpi_ops;
    n->pub.nranks = (unsigned)j->nprocs;
    n->pub.remote = n->remote;
    n->me = (unsigned)j->rank;
    for (int r = 0; r < j->nprocs; r++)
        n->remote[r] = !j->local[r];
    MPI_Comm_dup(MPI_COMM_WORLD, &n->comm);
    MPI_Allgather(&ep->own.long_max, 1, MPI_UINT32_T, n->long_max, 1, MPI_UINT32_T,
                  n->comm);
    int rc = am__mpi_rx_post(n);
    if (rc < 0) {
        state_free(n);
        return rc;
    }
    ep->net = &n->pub;
    ep->net_every = 1;
    return 0;
}

/* Collective: every message in, every send done, receives cancelled. */
static int net_close(am_ep_t *ep)
{
    struct am_mpi *n = am_mpi_of(ep);
    am__mpi_drain(ep);
    for (int qid = 0; qid < 2; qid++) {
        struct am_txq *q = &n->txq[qid];
        while (q->done < q->next)
            MPI_Wait(&q->tx[q->done++ % AM_NET_TX].req, MPI_STATUS_IGNORE);
    }
    am__mpi_rx_cancel(n);
    MPI_Comm_free(&n->comm);
    state_free(n);
    return 0;
}

void am__net_end(void)
{
    int done = 0;
    free(local_map);
    local_map = NULL;
    MPI_Finalized(&done);
    if (we_initialized && !done)
        MPI_Finalize();
    we_initialized = 0;
}
