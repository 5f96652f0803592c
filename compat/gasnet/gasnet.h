/*
 * gasnet.h - the GASNet-1 names a GASNet-EX program may still use, over
 * gasnetex.h (libgasnet-shmam).
 */
#ifndef GASNET_H
#define GASNET_H

#include "gasnet_coll.h"
#include "gasnetex.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef gex_Rank_t gasnet_node_t;
typedef gex_AM_Index_t gasnet_handler_t;
typedef gex_AM_Arg_t gasnet_handlerarg_t;
typedef gex_Token_t gasnet_token_t;
typedef gex_Event_t gasnet_handle_t;
typedef gex_HSL_t gasnet_hsl_t;
#define GASNET_INVALID_HANDLE GEX_EVENT_INVALID
#define GASNET_HSL_INITIALIZER GEX_HSL_INITIALIZER
#define gasnet_mynode() gex_System_QueryJobRank()
#define gasnet_nodes() gex_System_QueryJobSize()
#define gasnet_hsl_init gex_HSL_Init
#define gasnet_hsl_destroy gex_HSL_Destroy
#define gasnet_hsl_lock gex_HSL_Lock
#define gasnet_hsl_unlock gex_HSL_Unlock
#define gasnet_hsl_trylock gex_HSL_Trylock
#define gasnet_AMMaxArgs() gex_AM_MaxArgs()
#define gasnet_AMMaxMedium() gex_AM_LUBRequestMedium()
#define gasnet_AMMaxLongRequest() gex_AM_LUBRequestLong()
#define gasnet_AMMaxLongReply() gex_AM_LUBReplyLong()
#define gasnet_wait_syncnb gex_Event_Wait
#define gasnet_wait_syncnbi_all() gex_NBI_Wait(GEX_EC_ALL, 0)

/* The objects gex_Client_Init made (each pointer may be NULL). */
void gasnet_QueryGexObjects(gex_Client_t *client_p, gex_EP_t *endpoint_p, gex_TM_t *tm_p,
                            gex_Segment_t *segment_p);

#ifdef __cplusplus
}
#endif
#endif
