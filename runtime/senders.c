/*
 * senders.c - the sender table of a segment: who may put packets here.
 *
 * Before sending to an endpoint a process registers in its table; the entry's
 * index is the `source` of every packet it sends there, which tells the receiver
 * whom to reply to, and its participant index for the Anderson lock.  Entries go
 * FREE -> BUSY (CAS, by the registering process) -> READY (release-store, after
 * the name and pid are written; pairs with the receiver's acquire-load in
 * am__source_index) -> FREE (on am_ep_destroy).  An entry left READY by a process
 * that died is reclaimed (READY -> BUSY by CAS) when no entry is free.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int pid_dead(uint32_t pid)
{
    return pid != 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void fill(struct am_sender *e, const char *name)
{
    e->pid = (uint32_t)getpid();
    memset(e->name, 0, sizeof e->name);
    strncpy(e->name, name, AM_NAME_MAX - 1);
    AO_store_release(&e->state, AM_SENDER_READY);
}

/* Any number of processes may register concurrently.  -ENOSPC if full. */
int am__sender_register(struct am_seg_view *v, const char *name, unsigned *index)
{
    for (unsigned i = 0; i < v->max_senders; i++)
        if (AO_compare_and_swap_full(&v->senders[i].state, AM_SENDER_FREE, AM_SENDER_BUSY)) {
            fill(&v->senders[i], name);
            *index = i;
            return 0;
        }
    for (unsigned i = 0; i < v->max_senders; i++)
        if (pid_dead(v->senders[i].pid) &&
            AO_compare_and_swap_full(&v->senders[i].state, AM_SENDER_READY, AM_SENDER_BUSY)) {
            fill(&v->senders[i], name);
            *index = i;
            return 0;
        }
    return -ENOSPC;
}

/* Give an entry back; only its owner calls this. */
void am__sender_release(struct am_seg_view *v, unsigned index)
{
    struct am_sender *e = &v->senders[index];
    if (e->pid == (uint32_t)getpid())
        AO_store_release(&e->state, AM_SENDER_FREE);
}
