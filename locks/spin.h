/*
 * spin.h - bounded exponential backoff shared by every spin in shmam.
 *
 * A waiter calls spin_wait() once per failed attempt.  The first rounds pause the
 * core for 1, 2, 4 ... SPIN_CAP pause instructions; once the cap has been reached
 * SPIN_YIELD_AFTER times, spinning has clearly failed (the process we wait for is
 * probably descheduled: this machine may run more processes than cores) and every
 * further round gives the processor away with sched_yield().
 */
#ifndef SHMAM_SPIN_H
#define SHMAM_SPIN_H

#include <sched.h>

#define SPIN_CAP 64u
#define SPIN_YIELD_AFTER 1u

struct spin {
    unsigned pauses; /* pause instructions in the next round */
    unsigned capped; /* rounds spent at the cap */
};

#define SPIN_INIT                                                                          \
    {                                                                                      \
        1u, 0u                                                                             \
    }

static inline void spin_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Returns 1 if this round yielded the processor, 0 if it only paused. */
static inline int spin_wait(struct spin *s)
{
    if (s->capped >= SPIN_YIELD_AFTER) {
        sched_yield();
        return 1;
    }
    for (unsigned i = 0; i < s->pauses; i++)
        spin_cpu_relax();
    if (s->pauses < SPIN_CAP)
        s->pauses <<= 1;
    else
        s->capped++;
    return 0;
}

#endif
