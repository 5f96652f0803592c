/*
 * net.h - the hooks between the runtime and a transport between nodes.
 *
 * Clusters of SMPs (Lumetta and Culler's Clumps): under mpiexec, the job's
 * ranks fall into nodes; ranks of one node talk through shared-memory
 * endpoints as under shmamrun, ranks of different nodes through MPI.  The
 * transport lives in libshmam-mpi (net/, built with mpicc); libshmam itself
 * links runtime/net_none.c instead, which says "not a multi-node job", so a
 * program that never uses MPI links no MPI and runs exactly as before.
 *
 * The contract:
 *   am__net_job     am_init, first: 1 and *j filled if this process is a rank
 *                   of an MPI job (MPI initialized here unless the program
 *                   did), 0 if not (net_none.c: always), or -errno.
 *   am__net_attach  am_init, once the rank's endpoint exists and the ranks
 *                   of its node are mapped at their ranks: sets ep->net.
 *                   Collective over the job.  0 or -errno.
 *   am__net_end     am_finalize, after the endpoint has gone: finalizes MPI
 *                   if am__net_job initialized it.
 *   ops->send       am__send, for a rank of another node (am__net_remote):
 *                   the semantics of am__send (blocks, polling ep, while the
 *                   transport has no room; per-sender FIFO per queue).
 *   ops->progress   poll.c: runs the remote messages that have arrived, of
 *                   the reply queue only if replies_only; returns how many.
 *   ops->close      am_ep_destroy, first: collective over the job; every
 *                   message sent is received (unrun if it came too late)
 *                   before the transport lets go, so no send is left pending.
 * A rank of another node has no peer (am__peer is NULL at its index); its
 * messages reach handlers with a token whose source is its rank.
 */
#ifndef SHMAM_NET_H
#define SHMAM_NET_H

#include <stdint.h>

#include "layout.h"
#include "shmam.h"

#define AM_NET_JOB_NAME 25 /* AM_JOB_NAME_MAX + 1 */

struct am_msg;

struct am_net_job {
    int rank, nprocs;           /* in the whole job */
    int node, nodes;            /* ours, and how many */
    char name[AM_NET_JOB_NAME]; /* the node's job name (job.h), same on its ranks */
    const uint8_t *local;       /* [nprocs]: 1 for a rank of our node */
};

struct am_net_ops {
    int (*send)(am_ep_t *ep, unsigned dest, enum am_qid qid, const struct am_msg *m);
    int (*progress)(am_ep_t *ep, int replies_only);
    int (*close)(am_ep_t *ep);
};

/* The part of a transport's state the runtime reads; the transport's own
 * struct begins with it. */
struct am_net {
    const struct am_net_ops *ops;
    unsigned nranks;
    const uint8_t *remote; /* [nranks]: 1 for a rank of another node */
};

int am__net_job(int *argc, char ***argv, struct am_net_job *j);
int am__net_attach(am_ep_t *ep, const struct am_net_job *j);
void am__net_end(void);

/* Is dest a rank of another node?  Inline: every send to a multi-node
 * endpoint asks. */
static inline int am__net_remote(const struct am_net *n, unsigned dest)
{
    return dest < n->nranks && n->remote[dest];
}

/* The progress policy, in both libraries.  am__net_poll (poll.c): ops->progress
 * on this schedule (every poll while remote messages keep arriving, backing
 * off to every AM_NET_EVERY_MAX polls while none do, so the shared-memory
 * path pays one test per many polls).  am_wait (wait.c), for an
 * endpoint with a transport, cannot sleep on the futex (MPI does not wake it):
 * it polls, yielding, then napping AM_NET_NAP_US between polls. */
#define AM_NET_EVERY_MAX 64
#define AM_NET_HOT 1024 /* polls after a remote message that test every time */
#define AM_NET_NAP_US 50
int am__net_poll(am_ep_t *ep, int replies_only);

#endif
