/*
 * gasnet_coll.h - the collectives of GASNet-EX this layer has: the world
 * team's barrier and broadcast (gasnetex.h says what else is left out).
 */
#ifndef GASNET_COLL_H
#define GASNET_COLL_H

#include "gasnetex.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over tm (the world): an event that completes once every rank
 * has entered the barrier.  Flags must be 0. */
gex_Event_t gex_Coll_BarrierNB(gex_TM_t tm, gex_Flags_t flags);

/* Collective over tm: nbytes from root's src into every rank's dst; the
 * event completes once this rank's dst holds them (at the root: at once). */
gex_Event_t gex_Coll_BroadcastNB(gex_TM_t tm, gex_Rank_t root, void *dst, const void *src,
                                 size_t nbytes, gex_Flags_t flags);

#ifdef __cplusplus
}
#endif
#endif
