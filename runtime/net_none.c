/*
 * net_none.c - libshmam's transport between nodes: none (net.h).  A process
 * is never a rank of an MPI job here; libshmam-mpi links net/ instead.
 */
#include "internal.h"
#include "net.h"

int am__net_job(int *argc, char ***argv, struct am_net_job *j)
{
    return 0;
}

int am__net_attach(am_ep_t *ep, const struct am_net_job *j)
{
    return 0;
}

void am__net_end(void)
{
}
