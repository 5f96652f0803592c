/*
 * senders.h - who is at the other end (senders.c): a segment's table of
 * sender entries, each held by a lifeline.
 *   register  any process, concurrently: takes an entry for this thread (its
 *             lifeline, held for life), never blocks; 0 or -EUSERS.
 *   release   the registered thread, after its last send to v.
 *   who_dead  any process: has claimant `who` died or left?  Never 1 for a live
 *             sender; final.  Plain loads of pages only their holders write.
 *   who_bulk_idle  any process: has live claimant `who` no bulk claim in
 *             flight (its entry's counts)?  who_bulk_began: has it begun one
 *             since idle said so?
 *   peer_alive  any process: is v's owner there (LIVE and its lifeline held)?
 *   source_index  the owner, delivering: claimant -> local peer index (maps the
 *             sender on first contact); -1 for an id no entry ever had.
 */
#ifndef SHMAM_SENDERS_H
#define SHMAM_SENDERS_H

#include "lifeline.h"
#include "shmam.h"
#include "view.h"

int am__sender_register(struct am_seg_view *v, const char *name, unsigned *index,
                        unsigned *who);
void am__sender_release(struct am_seg_view *v, unsigned index);
int am__who_dead(const struct am_seg_view *v, unsigned who);
int am__who_bulk_idle(const struct am_seg_view *v, unsigned who, AO_t *begun);
int am__who_bulk_began(const struct am_seg_view *v, unsigned who, AO_t begun);
/* Inline: every send and every backoff round asks it (out of line, the call
 * cost the many-to-one test 15% of its throughput). */
static inline int am__peer_alive(const struct am_seg_view *v)
{
    return AO_load(&v->hdr->state) == AM_SEG_LIVE &&
           !am__lifeline_gone(&v->hdr->owner_life);
}
int am__source_index(am_ep_t *ep, unsigned sender, unsigned *index);

#endif
