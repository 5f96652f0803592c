/*
 * senders.c - who is at the other end: the sender table of a segment (who may
 * put packets here, who sent a packet), and whether each sender, and the
 * owner, is still alive.
 *
 * Before sending to an endpoint a process registers in its table.  An entry
 * belongs to whoever holds its lifeline (lifeline.h); it is alone on a page
 * that only its holder maps writable (layout.h), so nobody else can change
 * what it says.  A registering process makes the page writable and takes the
 * lifeline of an entry nobody alive holds (a trylock, so exactly one
 * of several concurrent registrants wins, and one that dies half way leaves the
 * entry to the next), then release-stores BUSY with the next generation, writes
 * its name and pid, and release-stores READY (pairs with the receiver's
 * acquire-load in am__source_index).  Leaving stores CLOSED and lets go of the
 * lifeline; dying lets the kernel mark it.  Either way the entry is free to be
 * taken again, FREE ones first, then CLOSED, then those of dead senders.
 *
 * Its claimant id AM_WHO(index, generation) marks the sender's claims; a claim
 * whose generation is no longer the entry's, or whose entry's lifeline is gone,
 * is a dead sender's (am__who_dead).  A CLOSED entry keeps its name, so packets
 * its sender left in the queue are still credited to it until the entry is
 * reused; after that they are delivered with an unknown source.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "peers.h"
#include "senders.h"
#include "waiting.h"

/* Fill an entry whose lifeline we just took. */
static unsigned fill(struct am_sender *e, unsigned index, const char *name)
{
    unsigned gen = (AM_SENDER_GEN(AO_load(&e->state)) + 1) & AM_GEN_MASK;
    AO_store_release(&e->state, AM_SENDER(gen, AM_SENDER_BUSY));
    am__hook(AM_HOOK_REGISTERING);
    e->pid = (uint32_t)getpid();
    /* a dead holder's bulk claim in flight is not ours */
    AO_store(&e->bulk_ended, AO_load(&e->bulk_begun));
    memset(e->name, 0, sizeof e->name);
    strncpy(e->name, name, AM_NAME_MAX - 1);
    AO_store_release(&e->state, AM_SENDER(gen, AM_SENDER_READY));
    return AM_WHO(index, gen);
}

/* Is entry e one to try in pass p (0: FREE, 1: CLOSED, 2: any other)? */
static int candidate(const struct am_sender *e, unsigned pass)
{
    unsigned st = AM_SENDER_ST(AO_load(&e->state));
    if (pass < 2)
        return st == (pass == 0 ? AM_SENDER_FREE : AM_SENDER_CLOSED);
    return st != AM_SENDER_FREE && st != AM_SENDER_CLOSED && am__lifeline_gone(&e->life);
}

/* Take entry i's lifeline, its page writable while we hold it: 0, -EBUSY if a
 * live thread holds it, or -errno (mprotect). */
static int take(struct am_seg_view *v, unsigned i)
{
    int rc = am__view_entry_writable(v, i, 1);
    if (rc == 0 && (rc = am__lifeline_take(&am__sender(v, i)->life)) != 0)
        am__view_entry_writable(v, i, 0);
    return rc;
}

/* With per-sender channels (channel.h), are entry e's channels laid out for
 * its next generation?  The acquire pairs with the owner's release of
 * chan_ready (chan_poll.c): the rings are laid out.  Always for mpsc. */
static int fresh(const struct am_seg_view *v, unsigned i, const struct am_sender *e)
{
    unsigned next = (AM_SENDER_GEN(AO_load(&e->state)) + 1) & AM_GEN_MASK;
    return v->queue == AM_QUEUE_MPSC ||
           AO_short_load_acquire(&v->hdr->chan_ready[i]) == next;
}

/* One pass over the table: 0, -EBUSY (none free now), or -errno. */
static int register_once(struct am_seg_view *v, const char *name, unsigned *index,
                         unsigned *who)
{
    for (unsigned pass = 0; pass < 3; pass++)
        for (unsigned i = 0; i < v->max_senders; i++) {
            struct am_sender *e = am__sender(v, i);
            if (candidate(e, pass) && fresh(v, i, e) && take(v, i) == 0) {
                *who = fill(e, i, name);
                *index = i;
                return 0;
            }
        }
    return -EBUSY;
}

#define AM_RECYCLE_WAIT_MS 2000 /* longest a registrant waits for fresh channels */

/* Any number of processes may register concurrently.  -EUSERS if every entry
 * belongs to a live sender.  With per-sender channels an entry whose sender
 * has gone is taken only once its owner has laid its channels out again: a
 * registrant finding none asks (`recycle`), wakes the owner and retries for
 * up to AM_RECYCLE_WAIT_MS, while the owner lives. */
int am__sender_register(struct am_seg_view *v, const char *name, unsigned *index,
                        unsigned *who)
{
    int rc = register_once(v, name, index, who);
    for (unsigned ms = 0; rc == -EBUSY && v->queue != AM_QUEUE_MPSC &&
                          ms < AM_RECYCLE_WAIT_MS && am__peer_alive(v);
         ms++) {
        AO_store(&v->shared->recycle, 1);
        am__wake(v->shared);
        usleep(1000);
        rc = register_once(v, name, index, who);
    }
    return rc == -EBUSY ? -EUSERS : rc;
}

/* Leave the table; only the registered thread calls this, after its last send. */
void am__sender_release(struct am_seg_view *v, unsigned index)
{
    struct am_sender *e = am__sender(v, index);
    AO_t st = AO_load(&e->state);
    AO_store_release(&e->state, AM_SENDER(AM_SENDER_GEN(st), AM_SENDER_CLOSED));
    am__lifeline_release(&e->life);
    am__view_entry_writable(v, index, 0);
}

/* Has the sender with claimant id `who` died or left?  Never 1 for a live
 * sender, however slow or stopped.  Once 1, 1 for good (but for the few
 * instructions in which a new sender that has taken the entry's lifeline has
 * not yet stored its generation).  Plain
 * loads; any process.  An id naming no entry is a dead one (it cannot be a live
 * sender's). */
int am__who_dead(const struct am_seg_view *v, unsigned who)
{
    if (who == 0 || AM_WHO_INDEX(who) >= v->max_senders)
        return 1;
    const struct am_sender *e = am__sender(v, AM_WHO_INDEX(who));
    AO_t st = AO_load(&e->state);
    if (AM_SENDER_GEN(st) != AM_WHO_GEN(who) || AM_SENDER_ST(st) != AM_SENDER_READY)
        return 1;
    return am__lifeline_gone(&e->life);
}

/* Has the live sender `who` no bulk claim in flight?  Its entry counts the
 * claims it began and ended (mpsc_send.c); ended is read first, so equal
 * counts mean none was in flight between the two loads.  Then *begun is the
 * count for am__who_bulk_began: a claim it makes later than that begins with
 * a full barrier before the claim's CAS or store, so whoever sees the claim
 * and then loads begun sees it moved.  The acquires pair with those stores. */
int am__who_bulk_idle(const struct am_seg_view *v, unsigned who, AO_t *begun)
{
    if (am__who_dead(v, who))
        return 0;
    const struct am_sender *e = am__sender(v, AM_WHO_INDEX(who));
    AO_t ended = AO_load_acquire(&e->bulk_ended);
    *begun = AO_load_acquire(&e->bulk_begun);
    return *begun == ended;
}

int am__who_bulk_began(const struct am_seg_view *v, unsigned who, AO_t begun)
{
    if (who == 0 || AM_WHO_INDEX(who) >= v->max_senders)
        return 1;
    return AO_load_acquire(&am__sender(v, AM_WHO_INDEX(who))->bulk_begun) != begun;
}

/* Resolve claimant `who` of our table to a local peer index, mapping the sender
 * as a new peer on first contact.  AM_SOURCE_UNKNOWN for a sender whose entry
 * has since been taken by another (it has gone) or whose endpoint cannot be
 * mapped.  The acquire pairs with the release of READY in senders.c.  -1 if
 * `who` names no sender that ever registered. */
int am__source_index(am_ep_t *ep, unsigned who, unsigned *index)
{
    unsigned i = AM_WHO_INDEX(who);
    if (who == 0 || i >= ep->own.max_senders)
        return -1;
    struct am_source *s = &ep->sources[i];
    if (s->who != who) {
        const struct am_sender *e = am__sender(&ep->own, i);
        AO_t st = AO_load_acquire(&e->state);
        if (AM_SENDER_ST(st) != AM_SENDER_READY && AM_SENDER_ST(st) != AM_SENDER_CLOSED)
            return -1;
        char name[AM_NAME_MAX];
        memcpy(name, e->name, sizeof name);
        name[AM_NAME_MAX - 1] = '\0';
        if (AM_SENDER_GEN(st) != AM_WHO_GEN(who)) {
            *index = AM_SOURCE_UNKNOWN;
            return 0;
        }
        *s = (struct am_source){.who = who, .index = am__peer_learn(ep, name)};
    }
    *index = s->index;
    return 0;
}
