/*
 * splitc.h - a small Split-C-like layer over shmam, shared by the applications.
 *
 * Programs are bulk synchronous: every rank runs the same phases, separated by
 * barriers.  Data lives in spread arrays: each rank allocates its part of a
 * region collectively (all ranks call sc_region_alloc in the same order, so a
 * region id means the same array everywhere).  A global pointer names a word by
 * rank + region + byte offset, never by a raw address.
 *
 * Remote access is split phase, as in Split-C:
 *   sc_put* / sc_get*      start a remote write / read; sc_sync() waits until
 *                          every put and get this rank started has completed
 *                          (puts are acknowledged, gets answered by a reply)
 *   sc_store*              one-way remote write, no acknowledgement; after
 *                          sc_all_store_sync() (collective) every store sent by
 *                          any rank before it has landed
 *   sc_bulk_*              the same for byte ranges, as bulk messages of up to
 *                          8 KB each
 * Collectives: barrier, broadcast, small all-reduce.
 *
 * Everything runs on the job's shmam endpoint (sc_ep()); applications may add
 * their own handlers with ids below SC_FIRST_HANDLER.  Remote operations are
 * only legal outside handlers.  Errors from the runtime (a dead peer, say) end
 * the program with a message: these are applications, not a library.
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

/* Start and end (am_init / am_finalize, with the layer's handlers). */
void sc_init(int *argc, char ***argv);
void sc_finalize(void);
int sc_rank(void);
int sc_nprocs(void);
am_ep_t *sc_ep(void);

/* Collective: every rank allocates `bytes` (zeroed, 64-byte aligned) as its part
 * of a new spread array; returns the region id and sets *local to the part. */
unsigned sc_region_alloc(size_t bytes, void **local);
void *sc_region_base(unsigned region);
size_t sc_region_size(unsigned region);

/* One-word split-phase operations. */
void sc_put32(sc_gptr_t dst, uint32_t v);
void sc_put64(sc_gptr_t dst, uint64_t v);
void sc_get32(uint32_t *dst, sc_gptr_t src);
void sc_get64(uint64_t *dst, sc_gptr_t src);
void sc_store32(sc_gptr_t dst, uint32_t v);
void sc_store64(sc_gptr_t dst, uint64_t v);
void sc_sync(void);          /* this rank's puts and gets have completed */
void sc_all_store_sync(void); /* collective: all stores everywhere have landed */

/* Bulk split-phase operations (any length; split into 8 KB messages). */
void sc_bulk_put(sc_gptr_t dst, const void *src, size_t n);
void sc_bulk_get(void *dst, sc_gptr_t src, size_t n);
void sc_bulk_store(sc_gptr_t dst, const void *src, size_t n);

/* Collectives. */
void sc_barrier(void);
void sc_broadcast(void *buf, size_t n, int root);
double sc_allreduce_sum_d(double x);
double sc_allreduce_max_d(double x);
uint64_t sc_allreduce_sum_u64(uint64_t x);
uint64_t sc_allreduce_max_u64(uint64_t x);

/* Wall-clock seconds (monotonic), for phase timings. */
double sc_now(void);

/* Poll until *flag is nonzero (handlers set it); sleeps, never spins forever. */
void sc_wait_until(volatile int *flag);

#endif
