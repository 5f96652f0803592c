/*
 * ring.h - what the four kinds of spsc/ share, inside spsc/ only: the header
 * every ring starts with, opening an end, the checks of the verbs, the stall
 * hook and the pause of a bounded wait.
 */
#ifndef SHMAM_SPSC_RING_H
#define SHMAM_SPSC_RING_H

#include <stddef.h>
#include <stdint.h>

#include <atomic_ops.h>

#include "spsc.h"

#if !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release) ||                   \
    !defined(AO_HAVE_load) || !defined(AO_HAVE_store)
#error "spsc/ needs AO_load, AO_store, AO_load_acquire and AO_store_release"
#endif

/* Bytes of a ring whose slots of `words` words start at byte `slots` (a
 * multiple of AM_SPSC_LINE): the slots rounded up to whole line pairs; 0 if
 * shift is out of range. */
size_t am__spsc_size(size_t slots, unsigned shift, unsigned words);

/* Zeroes a ring of that shape and writes its header, magic last (release: an
 * end that acquires the magic sees the rest).  0 or -EINVAL. */
int am__spsc_init(void *ring, size_t slots, enum am_spsc_kind kind, unsigned shift,
                  unsigned words);

/* Fills e for one end of the ring, after checking the arguments (-EINVAL:
 * shift, alignment, not exactly one end, an option not in `options`) and the
 * header against kind and shift (-EPROTO).  The caller sets its kind's own
 * fields afterwards. */
int am__spsc_open(struct am_spsc_end *e, void *ring, size_t slots, enum am_spsc_kind kind,
                  unsigned shift, unsigned flags, unsigned options);

/* A kind's zero-copy verb: in the ops table, and inlined into its enqueue
 * and dequeue (which are reserve-commit and peek-release in one step), so the
 * narrow rings' fast paths pay no call for the sharing. */
#define AM__SPSC_VERB static inline __attribute__((always_inline))

/* Word 0 of the slot of position pos. */
static inline AO_t *am__spsc_at(const struct am_spsc_end *e, uint64_t pos)
{
    return e->slot + ((pos & e->mask) << e->wshift);
}

/* Aborts naming the file and line: a verb called on the wrong end. */
_Noreturn void am__spsc_misuse(const char *file, int line, const char *what);

#define AM__SPSC_IS(e, end)                                                                \
    do {                                                                                   \
        if (__builtin_expect(!((e)->flags & (end)), 0))                                    \
            am__spsc_misuse(__FILE__, __LINE__, #end " verb on another end");              \
    } while (0)

/* Calls the stall hook; out of line and cold, so that a verb's fast path pays a
 * load and a branch for it. */
__attribute__((cold)) void am__spsc_stall(enum am_spsc_hook where);

static inline void am__spsc_hook(enum am_spsc_hook where)
{
    if (__builtin_expect(am_spsc_stall_hook != NULL, 0))
        am__spsc_stall(where);
}

/* n pause instructions: a bounded wait that leaves the core's pipeline (and
 * its sibling hyperthread) to others. */
static inline void am__spsc_pause(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

#endif
