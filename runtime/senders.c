/*
 * senders.c - the sender table of a segment: who may put packets here.
 *
 * Before sending to an endpoint a process registers in its table; the entry's
 * index is the `source` of every packet it sends there, which tells the receiver
 * whom to reply to.  Entries go FREE -> BUSY (CAS, by the registering process)
 * -> READY (release-store, after the name and pid are written; pairs with the
 * receiver's acquire-load in am__source_index) -> CLOSED (am_ep_destroy).  A
 * CLOSED entry keeps its name, so packets its sender left in the queue are still
 * delivered with a known source.  When no entry is FREE, a CLOSED one, then one
 * left READY by a process that died, is reused (CAS to BUSY): only packets still
 * queued from the old sender at that moment could be misattributed.
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

/* Take entry i if it is in state `from` (and, with check_pid, its owner died). */
static int take(struct am_seg_view *v, unsigned i, AO_t from, int check_pid,
                const char *name)
{
    struct am_sender *e = &v->senders[i];
    if (AO_load(&e->state) != from || (check_pid && !pid_dead(e->pid)) ||
        !AO_compare_and_swap_full(&e->state, from, AM_SENDER_BUSY))
        return 0;
    fill(e, name);
    return 1;
}

/* Any number of processes may register concurrently.  -ENOSPC if full. */
int am__sender_register(struct am_seg_view *v, const char *name, unsigned *index)
{
    static const struct { AO_t from; int check_pid; } passes[] = {
        {AM_SENDER_FREE, 0}, {AM_SENDER_CLOSED, 0}, {AM_SENDER_READY, 1}};
    for (unsigned p = 0; p < 3; p++)
        for (unsigned i = 0; i < v->max_senders; i++)
            if (take(v, i, passes[p].from, passes[p].check_pid, name)) {
                *index = i;
                return 0;
            }
    return -ENOSPC;
}

/* Mark an entry closed; only its owner calls this, after its last send. */
void am__sender_release(struct am_seg_view *v, unsigned index)
{
    struct am_sender *e = &v->senders[index];
    if (e->pid == (uint32_t)getpid())
        AO_store_release(&e->state, AM_SENDER_CLOSED);
}
