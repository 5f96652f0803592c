/*
 * gasnetex.h - the GASNet-EX core API on shmam (libgasnet-shmam).  Written
 * from GASNet-EX's published specification (docs/GASNet-EX.txt, spec 0.13,
 * and the GASNet-1 spec for the gasnet_* calls it keeps); no file of GASNet
 * is copied.  The names, types and signatures are the specification's; the
 * values of its constants are this layer's own.
 *
 * A job is a shmamrun job: rank r is shmam's rank r (am_init), the world
 * team is the only team, a rank's segment is its endpoint's one-copy region
 * (am_region_create), AMs ride shmam's messages and RMA is plain memory
 * copies through am_region_map.  The limits (gex_AM_Max*, gex_AM_LUB*) are
 * shmam's, told exactly: see man/shmam-gasnet.7.
 *
 * Not supported, and so absent (a program using them does not compile):
 * GASNET_PAR / GASNET_PARSYNC threading (SEQ only), teams other than the
 * world (gex_TM_Split, gex_TM_Create), VIS (gex_VIS_*), remote atomics
 * (gex_AD_*), memory kinds, segment-disposition flags.  Named barriers are
 * refused at run time (gasnet_barrier_wait returns GASNET_ERR_BAD_ARG).
 */
#ifndef GASNETEX_H
#define GASNETEX_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#if defined(GASNET_PAR) || defined(GASNET_PARSYNC)
#error "libgasnet-shmam supports GASNET_SEQ only (no GASNET_PAR, GASNET_PARSYNC)"
#endif
#ifndef GASNET_SEQ
#define GASNET_SEQ 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GASNET_RELEASE_VERSION_MAJOR 2020
#define GASNET_RELEASE_VERSION_MINOR 11
#define GASNET_RELEASE_VERSION_PATCH 0
#define GEX_SPEC_VERSION_MAJOR 0
#define GEX_SPEC_VERSION_MINOR 13
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8

#define GASNET_CONDUIT_SHMAM 1
#define GASNET_CONDUIT_NAME shmam
#define GASNET_CONDUIT_NAME_STR "shmam"
#define GASNET_PSHM 1
#define GASNET_SEGMENT_FAST 1
#define GASNET_ALIGNED_SEGMENTS 0
#define GASNET_PAGESIZE 4096
#define GASNET_MAXNODES 1024
#define GASNET_MAXEPS 1
#define GASNET_HIDDEN_AM_CONCURRENCY_LEVEL 0
#define GASNET_SUPPORTS_AM_COMMIT_V2 1
#define GASNET_SUPPORTS_AM_CANCEL 1
#define GASNET_SUPPORTS_AM_NPAM 1
/* Negotiated payload copies today (a layer buffer): not native. */
#undef GASNET_NATIVE_NP_ALLOC_REQ_MEDIUM
#undef GASNET_NATIVE_NP_ALLOC_REP_MEDIUM
#undef GASNET_NATIVE_NP_ALLOC_REQ_LONG
#undef GASNET_NATIVE_NP_ALLOC_REP_LONG

/* Error codes (GASNet-1's). */
#define GASNET_OK 0
#define GASNET_ERR_BASE 10000
#define GASNET_ERR_NOT_INIT (GASNET_ERR_BASE + 1)
#define GASNET_ERR_RESOURCE (GASNET_ERR_BASE + 2)
#define GASNET_ERR_BAD_ARG (GASNET_ERR_BASE + 3)
#define GASNET_ERR_NOT_READY (GASNET_ERR_BASE + 4)
#define GASNET_ERR_BARRIER_MISMATCH (GASNET_ERR_BASE + 5)
const char *gasnet_ErrorName(int errval);
const char *gasnet_ErrorDesc(int errval);

/* Basic types. */
typedef uint32_t gex_Rank_t;
#define GEX_RANK_INVALID ((gex_Rank_t)0xFFFFFFFFu)
typedef uint32_t gex_Flags_t;
typedef uint8_t gex_AM_Index_t;
typedef int32_t gex_AM_Arg_t;
typedef void (*gex_AM_Fn_t)();
typedef uint64_t gex_RMA_Value_t;
#define SIZEOF_GEX_RMA_VALUE_T 8
typedef void *gex_Addr_t;
typedef struct {
    void *gex_addr;
    size_t gex_len;
} gex_Memvec_t;
typedef struct gex_shmam_client *gex_Client_t;
typedef struct gex_shmam_ep *gex_EP_t;
typedef struct gex_shmam_tm *gex_TM_t;
typedef struct gex_shmam_segment *gex_Segment_t;
typedef struct gex_shmam_token *gex_Token_t;
typedef struct gex_shmam_event *gex_Event_t;
typedef struct gex_shmam_srcdesc *gex_AM_SrcDesc_t;
typedef uint32_t gex_EP_Index_t;
typedef uint32_t gex_TI_t;
typedef uint32_t gex_EC_t;
typedef struct {
    gex_Rank_t gex_rank;
    gex_EP_Index_t gex_ep_index;
} gex_EP_Location_t;

#define GEX_CLIENT_INVALID ((gex_Client_t)0)
#define GEX_EP_INVALID ((gex_EP_t)0)
#define GEX_TM_INVALID ((gex_TM_t)0)
#define GEX_SEGMENT_INVALID ((gex_Segment_t)0)
#define GEX_AM_SRCDESC_NO_OP ((gex_AM_SrcDesc_t)0)

/* Events.  Every copy this layer makes is done before its call returns, so
 * communication events are complete at once (GEX_EVENT_INVALID, and an
 * lc_opt event is set to it); barriers and broadcasts return real ones. */
#define GEX_EVENT_INVALID ((gex_Event_t)0)
#define GEX_EVENT_NO_OP ((gex_Event_t)1)
#define GEX_EVENT_NOW ((gex_Event_t *)1)
#define GEX_EVENT_DEFER ((gex_Event_t *)2)
#define GEX_EVENT_GROUP ((gex_Event_t *)3)

#define GEX_EC_GET ((gex_EC_t)1)
#define GEX_EC_PUT ((gex_EC_t)2)
#define GEX_EC_AM ((gex_EC_t)4)
#define GEX_EC_LC ((gex_EC_t)8)
#define GEX_EC_RMW ((gex_EC_t)16)
#define GEX_EC_ALL ((gex_EC_t)0xFF)

/* Flags of communication calls. */
#define GEX_FLAG_IMMEDIATE ((gex_Flags_t)1u << 0)
#define GEX_FLAG_AM_PREPARE_LEAST_CLIENT ((gex_Flags_t)1u << 1)
#define GEX_FLAG_AM_PREPARE_LEAST_ALLOC ((gex_Flags_t)1u << 2)
#define GEX_FLAG_USES_GASNET1 ((gex_Flags_t)1u << 3)

/* Flags of handler registration (gex_AM_Entry_t.gex_flags). */
#define GEX_FLAG_AM_SHORT ((gex_Flags_t)1u << 0)
#define GEX_FLAG_AM_MEDIUM ((gex_Flags_t)1u << 1)
#define GEX_FLAG_AM_LONG ((gex_Flags_t)1u << 2)
#define GEX_FLAG_AM_MEDLONG (GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_LONG)
#define GEX_FLAG_AM_REQUEST ((gex_Flags_t)1u << 3)
#define GEX_FLAG_AM_REPLY ((gex_Flags_t)1u << 4)
#define GEX_FLAG_AM_REQREP (GEX_FLAG_AM_REQUEST | GEX_FLAG_AM_REPLY)

#define GEX_AM_INDEX_BASE 128

typedef struct {
    gex_AM_Index_t gex_index;
    gex_AM_Fn_t gex_fnptr;
    gex_Flags_t gex_flags;
    unsigned int gex_nargs;
    const void *gex_cdata;
    const char *gex_name;
} gex_AM_Entry_t;

typedef struct {
    gex_Rank_t gex_srcrank;
    gex_EP_t gex_ep;
    const gex_AM_Entry_t *gex_entry;
    int gex_is_req;
    int gex_is_long;
} gex_Token_Info_t;
#define GEX_TI_SRCRANK ((gex_TI_t)1)
#define GEX_TI_EP ((gex_TI_t)2)
#define GEX_TI_ENTRY ((gex_TI_t)4)
#define GEX_TI_IS_REQ ((gex_TI_t)8)
#define GEX_TI_IS_LONG ((gex_TI_t)16)
#define GEX_TI_ALL ((gex_TI_t)31)

/* System, client, segment, team, endpoint. */
gex_Rank_t gex_System_QueryJobRank(void);
gex_Rank_t gex_System_QueryJobSize(void);
int gex_System_GetVerboseErrors(void);
void gex_System_SetVerboseErrors(int enable);
typedef const struct {
    gex_Rank_t gex_jobrank;
} gex_RankInfo_t;
void gex_System_QueryNbrhdInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                               gex_Rank_t *my_info_index_p);
void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                              gex_Rank_t *my_info_index_p);
void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size, gex_Rank_t *nbrhd_set_rank,
                                gex_Rank_t *host_set_size, gex_Rank_t *host_set_rank);

int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p,
                    const char *clientName, int *argc, char ***argv, gex_Flags_t flags);
gex_Flags_t gex_Client_QueryFlags(gex_Client_t client);
const char *gex_Client_QueryName(gex_Client_t client);
void gex_Client_SetCData(gex_Client_t client, const void *val);
void *gex_Client_QueryCData(gex_Client_t client);

int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size);
gex_Client_t gex_Segment_QueryClient(gex_Segment_t seg);
gex_Flags_t gex_Segment_QueryFlags(gex_Segment_t seg);
void *gex_Segment_QueryAddr(gex_Segment_t seg);
uintptr_t gex_Segment_QuerySize(gex_Segment_t seg);
void gex_Segment_SetCData(gex_Segment_t seg, const void *val);
void *gex_Segment_QueryCData(gex_Segment_t seg);
int gex_Segment_QueryBound(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                           void **localaddr_p, uintptr_t *size_p);
gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                       void **localaddr_p, uintptr_t *size_p,
                                       gex_Flags_t flags);

gex_Client_t gex_TM_QueryClient(gex_TM_t tm);
gex_EP_t gex_TM_QueryEP(gex_TM_t tm);
gex_Flags_t gex_TM_QueryFlags(gex_TM_t tm);
gex_Rank_t gex_TM_QueryRank(gex_TM_t tm);
gex_Rank_t gex_TM_QuerySize(gex_TM_t tm);
void gex_TM_SetCData(gex_TM_t tm, const void *val);
void *gex_TM_QueryCData(gex_TM_t tm);
gex_Rank_t gex_TM_TranslateRankToJobrank(gex_TM_t tm, gex_Rank_t rank);
gex_Rank_t gex_TM_TranslateJobrankToRank(gex_TM_t tm, gex_Rank_t jobrank);

gex_Client_t gex_EP_QueryClient(gex_EP_t ep);
gex_Flags_t gex_EP_QueryFlags(gex_EP_t ep);
gex_Segment_t gex_EP_QuerySegment(gex_EP_t ep);
gex_EP_Index_t gex_EP_QueryIndex(gex_EP_t ep);
void gex_EP_SetCData(gex_EP_t ep, const void *val);
void *gex_EP_QueryCData(gex_EP_t ep);
int gex_EP_PublishBoundSegment(gex_TM_t tm, gex_EP_t *eps, size_t num_eps,
                               gex_Flags_t flags);
int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries);

/* Limits: shmam's, told as they are (man/shmam-gasnet.7). */
unsigned int gex_AM_MaxArgs(void);
size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs);
size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                           gex_Flags_t flags, unsigned int numargs);
size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank,
                               const gex_Event_t *lc_opt, gex_Flags_t flags,
                               unsigned int numargs);
size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs);
size_t gex_Token_MaxReplyLong(gex_Token_t token, const gex_Event_t *lc_opt,
                              gex_Flags_t flags, unsigned int numargs);
size_t gex_Token_MaxReplyMedium(gex_Token_t token, const gex_Event_t *lc_opt,
                                gex_Flags_t flags, unsigned int numargs);
size_t gex_AM_LUBRequestLong(void);
size_t gex_AM_LUBReplyLong(void);
size_t gex_AM_LUBRequestMedium(void);
size_t gex_AM_LUBReplyMedium(void);

gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask);

/* Active messages: the numbered forms (0 .. 16 arguments) and the counting
 * forms are macros over these; each returns 0 once sent, non-zero if
 * GEX_FLAG_IMMEDIATE found no room now (nothing sent), or a GASNET_ERR_*
 * code for a bad argument or a peer gone (also printed on stderr). */
int gex_shmam_RequestShort(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                           gex_Flags_t flags, unsigned int numargs, ...);
int gex_shmam_ReplyShort(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags,
                         unsigned int numargs, ...);
int gex_shmam_RequestMedium(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                            const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                            gex_Flags_t flags, unsigned int numargs, ...);
int gex_shmam_ReplyMedium(gex_Token_t token, gex_AM_Index_t handler,
                          const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                          gex_Flags_t flags, unsigned int numargs, ...);
int gex_shmam_RequestLong(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                          const void *source_addr, size_t nbytes, void *dest_addr,
                          gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int numargs,
                          ...);
int gex_shmam_ReplyLong(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                        size_t nbytes, void *dest_addr, gex_Event_t *lc_opt,
                        gex_Flags_t flags, unsigned int numargs, ...);

/* Negotiated payload.  Today it copies: a payload not in client_buf is
 * assembled in a buffer of the layer and sent from there by Commit. */
gex_AM_SrcDesc_t gex_AM_PrepareRequestMedium(gex_TM_t tm, gex_Rank_t rank,
                                             const void *client_buf, size_t least_payload,
                                             size_t most_payload, gex_Event_t *lc_opt,
                                             gex_Flags_t flags, unsigned int numargs);
gex_AM_SrcDesc_t gex_AM_PrepareReplyMedium(gex_Token_t token, const void *client_buf,
                                           size_t least_payload, size_t most_payload,
                                           gex_Event_t *lc_opt, gex_Flags_t flags,
                                           unsigned int numargs);
gex_AM_SrcDesc_t gex_AM_PrepareRequestLong(gex_TM_t tm, gex_Rank_t rank,
                                           const void *client_buf, size_t least_payload,
                                           size_t most_payload, void *dest_addr,
                                           gex_Event_t *lc_opt, gex_Flags_t flags,
                                           unsigned int numargs);
gex_AM_SrcDesc_t gex_AM_PrepareReplyLong(gex_Token_t token, const void *client_buf,
                                         size_t least_payload, size_t most_payload,
                                         void *dest_addr, gex_Event_t *lc_opt,
                                         gex_Flags_t flags, unsigned int numargs);
void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd);
size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd);
/* Commit: 0 once sent; with GEX_FLAG_IMMEDIATE (the _v2 forms) non-zero if
 * not sent now, the descriptor kept for another Commit or a Cancel. */
int gex_shmam_Commit(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes,
                     void *dest_addr, gex_Flags_t flags, unsigned int numargs, ...);
int gex_AM_CancelRequestMedium(gex_AM_SrcDesc_t sd, gex_Flags_t flags);
int gex_AM_CancelReplyMedium(gex_AM_SrcDesc_t sd, gex_Flags_t flags);
int gex_AM_CancelRequestLong(gex_AM_SrcDesc_t sd, gex_Flags_t flags);
int gex_AM_CancelReplyLong(gex_AM_SrcDesc_t sd, gex_Flags_t flags);

/* RMA: memory copies through the peer's mapped segment (am_region_map),
 * complete when the call returns; the target sees a put once it ran a
 * handler of an AM sent after it (a barrier's too). */
int gex_RMA_PutBlocking(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                        size_t nbytes, gex_Flags_t flags);
int gex_RMA_PutNBI(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src, size_t nbytes,
                   gex_Event_t *lc_opt, gex_Flags_t flags);
gex_Event_t gex_RMA_PutNB(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                          size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags);
int gex_RMA_GetBlocking(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                        gex_Flags_t flags);
int gex_RMA_GetNBI(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                   gex_Flags_t flags);
gex_Event_t gex_RMA_GetNB(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                          size_t nbytes, gex_Flags_t flags);
gex_RMA_Value_t gex_RMA_GetBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *src,
                                       size_t nbytes, gex_Flags_t flags);
int gex_RMA_PutBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *dest, gex_RMA_Value_t value,
                           size_t nbytes, gex_Flags_t flags);
int gex_RMA_PutNBIVal(gex_TM_t tm, gex_Rank_t rank, void *dest, gex_RMA_Value_t value,
                      size_t nbytes, gex_Flags_t flags);
gex_Event_t gex_RMA_PutNBVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                             gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags);

/* Events and NBI. */
void gex_NBI_BeginAccessRegion(gex_Flags_t flags);
gex_Event_t gex_NBI_EndAccessRegion(gex_Flags_t flags);
int gex_Event_Test(gex_Event_t event);
void gex_Event_Wait(gex_Event_t event);
int gex_Event_TestSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
void gex_Event_WaitSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
int gex_Event_TestAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
void gex_Event_WaitAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
gex_Event_t gex_Event_QueryLeaf(gex_Event_t root, gex_EC_t event_category);
int gex_NBI_Test(gex_EC_t event_mask, gex_Flags_t flags);
void gex_NBI_Wait(gex_EC_t event_mask, gex_Flags_t flags);

/* Handler-safe locks. */
typedef struct {
    pthread_mutex_t lock;
} gex_HSL_t;
#define GEX_HSL_INITIALIZER                                                                \
    {                                                                                      \
        PTHREAD_MUTEX_INITIALIZER                                                          \
    }
void gex_HSL_Init(gex_HSL_t *hsl);
void gex_HSL_Destroy(gex_HSL_t *hsl);
void gex_HSL_Lock(gex_HSL_t *hsl);
void gex_HSL_Unlock(gex_HSL_t *hsl);
int gex_HSL_Trylock(gex_HSL_t *hsl);

/* GASNet-1 calls the core keeps. */
int gasnet_AMPoll(void);
#define GASNET_WAIT_SPIN 0
#define GASNET_WAIT_BLOCK 1
#define GASNET_WAIT_SPINBLOCK 2
int gasnet_set_waitmode(int wait_mode);
/* One step of a wait: poll (GASNET_WAIT_SPIN), or sleep until a message or
 * 1 ms (GASNET_WAIT_BLOCK; the condition may change by a peer's store). */
void gex_shmam_wait_step(void);
#define GASNET_BLOCKUNTIL(cond)                                                            \
    do {                                                                                   \
        while (!(cond))                                                                    \
            gex_shmam_wait_step();                                                         \
    } while (0)
void gasnet_exit(int exitcode) __attribute__((noreturn));

#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_MISMATCH 2
void gasnet_barrier_notify(int id, int flags);
int gasnet_barrier_wait(int id, int flags);
int gasnet_barrier_try(int id, int flags);
int gasnet_barrier(int id, int flags);

/* shmam's own: the endpoint the layer runs on (NULL before gex_Client_Init),
 * for programs that also use shmam's calls (shmam.h) in the same job: the
 * layer uses shmam handler ids 1..12; others are free. */
struct am_ep;
struct am_ep *gex_shmam_endpoint(void);

/* Argument counting for the counting forms (the last fixed parameter rides
 * in __VA_ARGS__, so zero arguments need no empty __VA_ARGS__). */
#define GEX_SHMAM_NTH(x, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, \
                      _16, N, ...)                                                         \
    N
#define GEX_SHMAM_COUNT(...)                                                               \
    GEX_SHMAM_NTH(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, ~)
#define GEX_SHMAM_CAT_(a, b) a##b
#define GEX_SHMAM_CAT(a, b) GEX_SHMAM_CAT_(a, b)
#define GEX_SHMAM_CAT3_(a, b, c) a##b##c
#define GEX_SHMAM_CAT3(a, b, c) GEX_SHMAM_CAT3_(a, b, c)

/* clang-format off */
#define gex_AM_RequestShort0(tm,rank,h,flags) \
    gex_shmam_RequestShort(tm,rank,h,flags,0)
#define gex_AM_RequestShort1(tm,rank,h,flags,a0) \
    gex_shmam_RequestShort(tm,rank,h,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_RequestShort2(tm,rank,h,flags,a0,a1) \
    gex_shmam_RequestShort(tm,rank,h,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_RequestShort3(tm,rank,h,flags,a0,a1,a2) \
    gex_shmam_RequestShort(tm,rank,h,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_RequestShort4(tm,rank,h,flags,a0,a1,a2,a3) \
    gex_shmam_RequestShort(tm,rank,h,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_RequestShort5(tm,rank,h,flags,a0,a1,a2,a3,a4) \
    gex_shmam_RequestShort(tm,rank,h,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_RequestShort6(tm,rank,h,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_RequestShort(tm,rank,h,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_RequestShort7(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_RequestShort(tm,rank,h,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_RequestShort8(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_RequestShort(tm,rank,h,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_RequestShort9(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_RequestShort(tm,rank,h,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_RequestShort10(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_RequestShort(tm,rank,h,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_RequestShort11(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_RequestShort(tm,rank,h,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_RequestShort12(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_RequestShort(tm,rank,h,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_RequestShort13(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_RequestShort(tm,rank,h,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_RequestShort14(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_RequestShort(tm,rank,h,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_RequestShort15(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_RequestShort(tm,rank,h,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_RequestShort16(tm,rank,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_RequestShort(tm,rank,h,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_ReplyShort0(token,h,flags) \
    gex_shmam_ReplyShort(token,h,flags,0)
#define gex_AM_ReplyShort1(token,h,flags,a0) \
    gex_shmam_ReplyShort(token,h,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_ReplyShort2(token,h,flags,a0,a1) \
    gex_shmam_ReplyShort(token,h,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_ReplyShort3(token,h,flags,a0,a1,a2) \
    gex_shmam_ReplyShort(token,h,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_ReplyShort4(token,h,flags,a0,a1,a2,a3) \
    gex_shmam_ReplyShort(token,h,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_ReplyShort5(token,h,flags,a0,a1,a2,a3,a4) \
    gex_shmam_ReplyShort(token,h,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_ReplyShort6(token,h,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_ReplyShort(token,h,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_ReplyShort7(token,h,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_ReplyShort(token,h,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_ReplyShort8(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_ReplyShort(token,h,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_ReplyShort9(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_ReplyShort(token,h,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_ReplyShort10(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_ReplyShort(token,h,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_ReplyShort11(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_ReplyShort(token,h,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_ReplyShort12(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_ReplyShort(token,h,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_ReplyShort13(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_ReplyShort(token,h,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_ReplyShort14(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_ReplyShort(token,h,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_ReplyShort15(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_ReplyShort(token,h,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_ReplyShort16(token,h,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_ReplyShort(token,h,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_RequestMedium0(tm,rank,h,src,nbytes,lc,flags) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,0)
#define gex_AM_RequestMedium1(tm,rank,h,src,nbytes,lc,flags,a0) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_RequestMedium2(tm,rank,h,src,nbytes,lc,flags,a0,a1) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_RequestMedium3(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_RequestMedium4(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_RequestMedium5(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_RequestMedium6(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_RequestMedium7(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_RequestMedium8(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_RequestMedium9(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_RequestMedium10(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_RequestMedium11(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_RequestMedium12(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_RequestMedium13(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_RequestMedium14(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_RequestMedium15(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_RequestMedium16(tm,rank,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_RequestMedium(tm,rank,h,src,nbytes,lc,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_ReplyMedium0(token,h,src,nbytes,lc,flags) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,0)
#define gex_AM_ReplyMedium1(token,h,src,nbytes,lc,flags,a0) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_ReplyMedium2(token,h,src,nbytes,lc,flags,a0,a1) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_ReplyMedium3(token,h,src,nbytes,lc,flags,a0,a1,a2) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_ReplyMedium4(token,h,src,nbytes,lc,flags,a0,a1,a2,a3) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_ReplyMedium5(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_ReplyMedium6(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_ReplyMedium7(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_ReplyMedium8(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_ReplyMedium9(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_ReplyMedium10(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_ReplyMedium11(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_ReplyMedium12(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_ReplyMedium13(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_ReplyMedium14(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_ReplyMedium15(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_ReplyMedium16(token,h,src,nbytes,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_ReplyMedium(token,h,src,nbytes,lc,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_RequestLong0(tm,rank,h,src,nbytes,dst,lc,flags) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,0)
#define gex_AM_RequestLong1(tm,rank,h,src,nbytes,dst,lc,flags,a0) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_RequestLong2(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_RequestLong3(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_RequestLong4(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_RequestLong5(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_RequestLong6(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_RequestLong7(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_RequestLong8(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_RequestLong9(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_RequestLong10(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_RequestLong11(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_RequestLong12(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_RequestLong13(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_RequestLong14(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_RequestLong15(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_RequestLong16(tm,rank,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_RequestLong(tm,rank,h,src,nbytes,dst,lc,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_ReplyLong0(token,h,src,nbytes,dst,lc,flags) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,0)
#define gex_AM_ReplyLong1(token,h,src,nbytes,dst,lc,flags,a0) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_ReplyLong2(token,h,src,nbytes,dst,lc,flags,a0,a1) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_ReplyLong3(token,h,src,nbytes,dst,lc,flags,a0,a1,a2) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_ReplyLong4(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_ReplyLong5(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_ReplyLong6(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_ReplyLong7(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_ReplyLong8(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_ReplyLong9(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_ReplyLong10(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_ReplyLong11(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_ReplyLong12(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_ReplyLong13(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_ReplyLong14(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_ReplyLong15(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_ReplyLong16(token,h,src,nbytes,dst,lc,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_ReplyLong(token,h,src,nbytes,dst,lc,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitRequestMedium0(sd,h,nbytes) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,0)
#define gex_AM_CommitRequestMedium1(sd,h,nbytes,a0) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitRequestMedium2(sd,h,nbytes,a0,a1) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitRequestMedium3(sd,h,nbytes,a0,a1,a2) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitRequestMedium4(sd,h,nbytes,a0,a1,a2,a3) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitRequestMedium5(sd,h,nbytes,a0,a1,a2,a3,a4) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitRequestMedium6(sd,h,nbytes,a0,a1,a2,a3,a4,a5) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitRequestMedium7(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitRequestMedium8(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitRequestMedium9(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitRequestMedium10(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitRequestMedium11(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitRequestMedium12(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitRequestMedium13(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitRequestMedium14(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitRequestMedium15(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitRequestMedium16(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitReplyMedium0(sd,h,nbytes) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,0)
#define gex_AM_CommitReplyMedium1(sd,h,nbytes,a0) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitReplyMedium2(sd,h,nbytes,a0,a1) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitReplyMedium3(sd,h,nbytes,a0,a1,a2) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitReplyMedium4(sd,h,nbytes,a0,a1,a2,a3) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitReplyMedium5(sd,h,nbytes,a0,a1,a2,a3,a4) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitReplyMedium6(sd,h,nbytes,a0,a1,a2,a3,a4,a5) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitReplyMedium7(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitReplyMedium8(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitReplyMedium9(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitReplyMedium10(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitReplyMedium11(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitReplyMedium12(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitReplyMedium13(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitReplyMedium14(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitReplyMedium15(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitReplyMedium16(sd,h,nbytes,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    (void)gex_shmam_Commit(sd,h,nbytes,0,0,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitRequestLong0(sd,h,nbytes,dst) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,0)
#define gex_AM_CommitRequestLong1(sd,h,nbytes,dst,a0) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitRequestLong2(sd,h,nbytes,dst,a0,a1) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitRequestLong3(sd,h,nbytes,dst,a0,a1,a2) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitRequestLong4(sd,h,nbytes,dst,a0,a1,a2,a3) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitRequestLong5(sd,h,nbytes,dst,a0,a1,a2,a3,a4) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitRequestLong6(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitRequestLong7(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitRequestLong8(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitRequestLong9(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitRequestLong10(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitRequestLong11(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitRequestLong12(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitRequestLong13(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitRequestLong14(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitRequestLong15(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitRequestLong16(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitReplyLong0(sd,h,nbytes,dst) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,0)
#define gex_AM_CommitReplyLong1(sd,h,nbytes,dst,a0) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitReplyLong2(sd,h,nbytes,dst,a0,a1) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitReplyLong3(sd,h,nbytes,dst,a0,a1,a2) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitReplyLong4(sd,h,nbytes,dst,a0,a1,a2,a3) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitReplyLong5(sd,h,nbytes,dst,a0,a1,a2,a3,a4) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitReplyLong6(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitReplyLong7(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitReplyLong8(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitReplyLong9(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitReplyLong10(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitReplyLong11(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitReplyLong12(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitReplyLong13(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitReplyLong14(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitReplyLong15(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitReplyLong16(sd,h,nbytes,dst,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    (void)gex_shmam_Commit(sd,h,nbytes,dst,0,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitRequestMedium0_v2(sd,h,nbytes,flags) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,0)
#define gex_AM_CommitRequestMedium1_v2(sd,h,nbytes,flags,a0) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitRequestMedium2_v2(sd,h,nbytes,flags,a0,a1) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitRequestMedium3_v2(sd,h,nbytes,flags,a0,a1,a2) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitRequestMedium4_v2(sd,h,nbytes,flags,a0,a1,a2,a3) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitRequestMedium5_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitRequestMedium6_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitRequestMedium7_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitRequestMedium8_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitRequestMedium9_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitRequestMedium10_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitRequestMedium11_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitRequestMedium12_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitRequestMedium13_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitRequestMedium14_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitRequestMedium15_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitRequestMedium16_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitReplyMedium0_v2(sd,h,nbytes,flags) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,0)
#define gex_AM_CommitReplyMedium1_v2(sd,h,nbytes,flags,a0) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitReplyMedium2_v2(sd,h,nbytes,flags,a0,a1) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitReplyMedium3_v2(sd,h,nbytes,flags,a0,a1,a2) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitReplyMedium4_v2(sd,h,nbytes,flags,a0,a1,a2,a3) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitReplyMedium5_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitReplyMedium6_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitReplyMedium7_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitReplyMedium8_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitReplyMedium9_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitReplyMedium10_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitReplyMedium11_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitReplyMedium12_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitReplyMedium13_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitReplyMedium14_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitReplyMedium15_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitReplyMedium16_v2(sd,h,nbytes,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_Commit(sd,h,nbytes,0,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitRequestLong0_v2(sd,h,nbytes,dst,flags) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,0)
#define gex_AM_CommitRequestLong1_v2(sd,h,nbytes,dst,flags,a0) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitRequestLong2_v2(sd,h,nbytes,dst,flags,a0,a1) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitRequestLong3_v2(sd,h,nbytes,dst,flags,a0,a1,a2) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitRequestLong4_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitRequestLong5_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitRequestLong6_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitRequestLong7_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitRequestLong8_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitRequestLong9_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitRequestLong10_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitRequestLong11_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitRequestLong12_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitRequestLong13_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitRequestLong14_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitRequestLong15_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitRequestLong16_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_CommitReplyLong0_v2(sd,h,nbytes,dst,flags) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,0)
#define gex_AM_CommitReplyLong1_v2(sd,h,nbytes,dst,flags,a0) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,1,(gex_AM_Arg_t)(a0))
#define gex_AM_CommitReplyLong2_v2(sd,h,nbytes,dst,flags,a0,a1) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,2,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1))
#define gex_AM_CommitReplyLong3_v2(sd,h,nbytes,dst,flags,a0,a1,a2) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,3,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2))
#define gex_AM_CommitReplyLong4_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,4,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3))
#define gex_AM_CommitReplyLong5_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,5,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4))
#define gex_AM_CommitReplyLong6_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,6,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5))
#define gex_AM_CommitReplyLong7_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,7,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6))
#define gex_AM_CommitReplyLong8_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,8,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7))
#define gex_AM_CommitReplyLong9_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,9,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8))
#define gex_AM_CommitReplyLong10_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,10,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9))
#define gex_AM_CommitReplyLong11_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,11,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10))
#define gex_AM_CommitReplyLong12_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,12,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11))
#define gex_AM_CommitReplyLong13_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,13,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12))
#define gex_AM_CommitReplyLong14_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,14,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13))
#define gex_AM_CommitReplyLong15_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,15,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14))
#define gex_AM_CommitReplyLong16_v2(sd,h,nbytes,dst,flags,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15) \
    gex_shmam_Commit(sd,h,nbytes,dst,flags,16,(gex_AM_Arg_t)(a0),(gex_AM_Arg_t)(a1),(gex_AM_Arg_t)(a2),(gex_AM_Arg_t)(a3),(gex_AM_Arg_t)(a4),(gex_AM_Arg_t)(a5),(gex_AM_Arg_t)(a6),(gex_AM_Arg_t)(a7),(gex_AM_Arg_t)(a8),(gex_AM_Arg_t)(a9),(gex_AM_Arg_t)(a10),(gex_AM_Arg_t)(a11),(gex_AM_Arg_t)(a12),(gex_AM_Arg_t)(a13),(gex_AM_Arg_t)(a14),(gex_AM_Arg_t)(a15))

#define gex_AM_RequestShort(tm,rank,h,...) \
    GEX_SHMAM_CAT(gex_AM_RequestShort, GEX_SHMAM_COUNT(__VA_ARGS__))(tm,rank,h,__VA_ARGS__)
#define gex_AM_ReplyShort(token,h,...) \
    GEX_SHMAM_CAT(gex_AM_ReplyShort, GEX_SHMAM_COUNT(__VA_ARGS__))(token,h,__VA_ARGS__)
#define gex_AM_RequestMedium(tm,rank,h,src,nbytes,lc,...) \
    GEX_SHMAM_CAT(gex_AM_RequestMedium, GEX_SHMAM_COUNT(__VA_ARGS__))(tm,rank,h,src,nbytes,lc,__VA_ARGS__)
#define gex_AM_ReplyMedium(token,h,src,nbytes,lc,...) \
    GEX_SHMAM_CAT(gex_AM_ReplyMedium, GEX_SHMAM_COUNT(__VA_ARGS__))(token,h,src,nbytes,lc,__VA_ARGS__)
#define gex_AM_RequestLong(tm,rank,h,src,nbytes,dst,lc,...) \
    GEX_SHMAM_CAT(gex_AM_RequestLong, GEX_SHMAM_COUNT(__VA_ARGS__))(tm,rank,h,src,nbytes,dst,lc,__VA_ARGS__)
#define gex_AM_ReplyLong(token,h,src,nbytes,dst,lc,...) \
    GEX_SHMAM_CAT(gex_AM_ReplyLong, GEX_SHMAM_COUNT(__VA_ARGS__))(token,h,src,nbytes,dst,lc,__VA_ARGS__)
#define gex_AM_CommitRequestMedium(sd,h,...) \
    GEX_SHMAM_CAT(gex_AM_CommitRequestMedium, GEX_SHMAM_COUNT(__VA_ARGS__))(sd,h,__VA_ARGS__)
#define gex_AM_CommitReplyMedium(sd,h,...) \
    GEX_SHMAM_CAT(gex_AM_CommitReplyMedium, GEX_SHMAM_COUNT(__VA_ARGS__))(sd,h,__VA_ARGS__)
#define gex_AM_CommitRequestLong(sd,h,nbytes,...) \
    GEX_SHMAM_CAT(gex_AM_CommitRequestLong, GEX_SHMAM_COUNT(__VA_ARGS__))(sd,h,nbytes,__VA_ARGS__)
#define gex_AM_CommitReplyLong(sd,h,nbytes,...) \
    GEX_SHMAM_CAT(gex_AM_CommitReplyLong, GEX_SHMAM_COUNT(__VA_ARGS__))(sd,h,nbytes,__VA_ARGS__)
#define gex_AM_CommitRequestMedium_v2(sd,h,nbytes,...) \
    GEX_SHMAM_CAT3(gex_AM_CommitRequestMedium, GEX_SHMAM_COUNT(__VA_ARGS__), _v2)(sd,h,nbytes,__VA_ARGS__)
#define gex_AM_CommitReplyMedium_v2(sd,h,nbytes,...) \
    GEX_SHMAM_CAT3(gex_AM_CommitReplyMedium, GEX_SHMAM_COUNT(__VA_ARGS__), _v2)(sd,h,nbytes,__VA_ARGS__)
#define gex_AM_CommitRequestLong_v2(sd,h,nbytes,dst,...) \
    GEX_SHMAM_CAT3(gex_AM_CommitRequestLong, GEX_SHMAM_COUNT(__VA_ARGS__), _v2)(sd,h,nbytes,dst,__VA_ARGS__)
#define gex_AM_CommitReplyLong_v2(sd,h,nbytes,dst,...) \
    GEX_SHMAM_CAT3(gex_AM_CommitReplyLong, GEX_SHMAM_COUNT(__VA_ARGS__), _v2)(sd,h,nbytes,dst,__VA_ARGS__)
/* clang-format on */

#ifdef __cplusplus
}
#endif
#endif
