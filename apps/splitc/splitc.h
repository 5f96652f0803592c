/*
 * splitc.h - a small Split-C-like layer over shmam, shared by the applications.
 *
 * Programs are bulk synchronous: every rank runs the same phases, separated by
 * barriers.  Data lives in spread arrays: each rank allocates its part of a
 * region collectively (all ranks call sc_region_alloc in the same order, so a
 * region id means the same array everywhere; parts may differ in size).  A
 * global pointer names a byte by rank + region + byte offset, never by a raw
 * address.  Every remote access is bounds-checked by the owner against the
 * size of its part: a bad global pointer aborts the program with a message.
 *
 * Remote access is split phase, as in Split-C:
 *   sc_put* / sc_get*      start a remote write / read; sc_sync() waits until
 *                          every put and get this rank started has completed
 *                          (puts are acknowledged, gets answered by a reply).
 *                          A get's destination must stay valid until sc_sync.
 *   sc_store*              one-way remote write, no acknowledgement; after
 *                          sc_all_store_sync() (collective) every store sent by
 *                          any rank before it has landed
 *   sc_bulk_*              the same for byte ranges of any length, as long
 *                          messages of up to long_max (1 MiB by default) each
 * Accesses to the caller's own rank happen at once, in place.  There is no
 * ordering between two puts or two stores in flight (they may be to the same
 * word only if the program does not care which lands last).
 *
 * sc_all_store_sync also covers an application's own one-way requests: each
 * rank sends every other rank its store count behind everything it sent
 * before, and one sender's messages to one queue arrive in order, so when it
 * returns, every request (of the layer or the application) that any rank sent
 * before calling it has been handled at its destination.  SAMPLE relies on
 * this to send one active message per key.
 *
 * Collectives (every rank calls them, in the same order): barrier, broadcast
 * of any length from any root, and all-reductions of one 64-bit value (the
 * result is computed once, at rank 0, combining in rank order, and is the same
 * bit for bit on every rank).
 *
 * Everything runs on the job's shmam endpoint (sc_ep()).  The layer's handlers
 * are ids SC_FIRST_HANDLER..255; applications may add their own with ids below
 * it: register them with am_set_handler(sc_ep(), ...) right after sc_init,
 * before any call that communicates (which polls), since a message for a
 * handler not yet registered would be dropped.  Remote operations and
 * collectives are only legal outside handlers (handlers may only reply).
 * Waits poll the endpoint, spinning briefly and then sleeping in am_wait, so
 * that more ranks than cores still make progress.  Errors from the runtime (a
 * dead peer, say) end the program with a message: these are applications, not
 * a library.
 *
 * Messages used (handler: arguments):
 *   put        region, offset lo/hi, value (1 or 2 words) -> ack reply
 *   get        region, offset lo/hi, dest address lo/hi, width -> reply with
 *              address lo/hi and value (the address means something only to
 *              the requester)
 *   store      as put, no reply; the owner counts stores received
 *   bulk put   long request, region, offset lo/hi -> ack; bulk store: no reply,
 *              counted as one store per chunk of up to long_max bytes
 *   bulk get   region, offset lo/hi, length, dest address lo/hi -> long reply
 *   store count, broadcast ready/data, reduce contribution/result
 */
#ifndef SPLITC_H
#define SPLITC_H

#include <stddef.h>
#include <stdint.h>

#include "shmam.h"

#define SC_FIRST_HANDLER 200 /* ids 200..255 belong to this layer */
#define SC_MAX_REGIONS 32

typedef struct {
    uint32_t rank;
    uint32_t region;
    uint64_t offset; /* bytes from the start of that rank's part */
} sc_gptr_t;

static inline sc_gptr_t sc_gptr(unsigned rank, unsigned region, uint64_t offset)
{
    sc_gptr_t g = {rank, region, offset};
    return g;
}

/* Start and end.  sc_init calls am_init (exiting with a message if it fails)
 * and registers the layer's handlers; sc_finalize waits for this rank's puts
 * and gets (sc_sync), calls am_finalize (a barrier, then the endpoint goes)
 * and frees every region. */
void sc_init(int *argc, char ***argv);
void sc_finalize(void);
int sc_rank(void);
int sc_nprocs(void);
am_ep_t *sc_ep(void);

/* Collective: every rank allocates `bytes` (zeroed, 64-byte aligned) as its part
 * of a new spread array; returns the region id and sets *local to the part.
 * Ends with a barrier, so remote accesses may start as soon as it returns.  At
 * most SC_MAX_REGIONS regions per run; they are freed by sc_finalize. */
unsigned sc_region_alloc(size_t bytes, void **local);
void *sc_region_base(unsigned region);
size_t sc_region_size(unsigned region); /* this rank's part, as allocated */

/* One-word split-phase operations.  Offsets need no alignment. */
void sc_put32(sc_gptr_t dst, uint32_t v);
void sc_put64(sc_gptr_t dst, uint64_t v);
void sc_get32(uint32_t *dst, sc_gptr_t src);
void sc_get64(uint64_t *dst, sc_gptr_t src);
void sc_store32(sc_gptr_t dst, uint32_t v);
void sc_store64(sc_gptr_t dst, uint64_t v);
void sc_sync(void);           /* this rank's puts and gets have completed */
void sc_all_store_sync(void); /* collective: all stores everywhere have landed;
                               * ends with a barrier */

/* Bulk split-phase operations (any length; split into long messages of up to
 * long_max bytes). */
void sc_bulk_put(sc_gptr_t dst, const void *src, size_t n);
void sc_bulk_get(void *dst, sc_gptr_t src, size_t n);
void sc_bulk_store(sc_gptr_t dst, const void *src, size_t n);

/* Collectives. */
void sc_barrier(void);
void sc_broadcast(void *buf, size_t n, int root); /* n must agree on all ranks */
double sc_allreduce_sum_d(double x);
double sc_allreduce_max_d(double x);
uint64_t sc_allreduce_sum_u64(uint64_t x); /* modulo 2^64 */
uint64_t sc_allreduce_max_u64(uint64_t x);
uint64_t sc_allreduce_xor_u64(uint64_t x);

/* Wall-clock seconds (monotonic), for phase timings. */
double sc_now(void);

/* Poll until *flag is nonzero (handlers set it); sleeps, never spins forever. */
void sc_wait_until(volatile int *flag);

#endif
