/*
 * gasnet_tools.h - the subset of GASNet's tools (gasnett_*) that GASNet-EX
 * programs and benchmarks use: timers, atomics, environment helpers,
 * platform macros.  Header-only; no library call of its own.
 */
#ifndef GASNET_TOOLS_H
#define GASNET_TOOLS_H

#include <atomic_ops.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GASNETT_SPEC_VERSION_MAJOR 1
#define GASNETT_SPEC_VERSION_MINOR 16
#define GASNETT_THREAD_SAFE 1
#define GASNETT_CACHE_LINE_BYTES 64
#define GASNETT_PAGESIZE 4096

/* Platform and compiler. */
#if defined(__linux__)
#define PLATFORM_OS_LINUX 1
#endif
#if defined(__x86_64__)
#define PLATFORM_ARCH_X86_64 1
#elif defined(__aarch64__)
#define PLATFORM_ARCH_AARCH64 1
#endif
#if defined(__GNUC__)
#define PLATFORM_COMPILER_GNU 1
#endif
#define GASNETT_INLINE(fnname) static inline
#define GASNETT_NEVER_INLINE(fnname, declarator) __attribute__((noinline)) declarator
#define GASNETT_PREDICT_TRUE(exp) __builtin_expect(!!(exp), 1)
#define GASNETT_PREDICT_FALSE(exp) __builtin_expect(!!(exp), 0)
#define GASNETT_LIKELY(exp) GASNETT_PREDICT_TRUE(exp)
#define GASNETT_UNLIKELY(exp) GASNETT_PREDICT_FALSE(exp)
#define GASNETT_UNUSED __attribute__((unused))
#define GASNETT_NORETURN __attribute__((noreturn))
#define GASNETT_FORMAT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define GASNETT_IDENT(identName, identText)                                                \
    static const char identName[] GASNETT_UNUSED = identText
#define GASNETT_PRIu64 PRIu64
#define GASNETT_PRId64 PRId64
#define GASNETT_PRIx64 PRIx64

/* Timers: ticks are nanoseconds of CLOCK_MONOTONIC. */
typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
static inline gasnett_tick_t gasnett_ticks_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (gasnett_tick_t)ts.tv_sec * 1000000000u + (gasnett_tick_t)ts.tv_nsec;
}
#define gasnett_ticks_to_ns(ticks) ((uint64_t)(ticks))
#define gasnett_ticks_to_us(ticks) ((uint64_t)(ticks) / 1000u)
#define gasnett_ticks_to_ms(ticks) ((uint64_t)(ticks) / 1000000u)
static inline double gasnett_ticks_to_dbl_us(gasnett_tick_t t)
{
    return (double)t / 1e3;
}
static inline double gasnett_tick_granularityus(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static inline double gasnett_tick_overheadus(void)
{
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (int i = 0; i < 999; i++)
        (void)gasnett_ticks_now();
    return (double)(gasnett_ticks_now() - t0) / 1000.0 / 1e3;
}

/* Fences and yields. */
#define gasnett_local_mb() AO_nop_full()
#define gasnett_local_wmb() AO_nop_write()
#define gasnett_local_rmb() AO_nop_read()
#define gasnett_compiler_fence() __asm__ __volatile__("" ::: "memory")
#define gasnett_sched_yield() sched_yield()
#define gasnett_spinloop_hint() gasnett_compiler_fence()

/* Atomics (over libatomic_ops).  The flags name fences (GASNETT_ATOMIC_*):
 * every operation here is full-fenced, which satisfies any of them. */
#define GASNETT_ATOMIC_NONE 0
#define GASNETT_ATOMIC_RMB_PRE 1
#define GASNETT_ATOMIC_WMB_PRE 2
#define GASNETT_ATOMIC_RMB_POST 4
#define GASNETT_ATOMIC_WMB_POST 8
#define GASNETT_ATOMIC_MB_PRE (GASNETT_ATOMIC_RMB_PRE | GASNETT_ATOMIC_WMB_PRE)
#define GASNETT_ATOMIC_MB_POST (GASNETT_ATOMIC_RMB_POST | GASNETT_ATOMIC_WMB_POST)
#define GASNETT_ATOMIC_REL GASNETT_ATOMIC_WMB_PRE
#define GASNETT_ATOMIC_ACQ GASNETT_ATOMIC_RMB_POST
#define GASNETT_HAVE_ATOMIC_CAS 1
#define GASNETT_HAVE_ATOMIC_ADD_SUB 1
#if !defined(AO_HAVE_fetch_and_add_full) || !defined(AO_HAVE_compare_and_swap_full) ||     \
    !defined(AO_HAVE_load_full) || !defined(AO_HAVE_store_full)
#error "gasnet_tools.h needs libatomic_ops' full-fenced fetch_and_add, CAS, load, store"
#endif
typedef AO_t gasnett_atomic_val_t;
typedef struct {
    volatile AO_t ctr;
} gasnett_atomic_t;
#define gasnett_atomic_init(v)                                                             \
    {                                                                                      \
        (AO_t)(v)                                                                          \
    }
#define GASNETT_ATOMIC_MAX (~(gasnett_atomic_val_t)0)
static inline gasnett_atomic_val_t gasnett_atomic_read(gasnett_atomic_t *p, int flags)
{
    return AO_load_full(&p->ctr);
}
static inline void gasnett_atomic_set(gasnett_atomic_t *p, gasnett_atomic_val_t v,
                                      int flags)
{
    AO_store_full(&p->ctr, v);
}
static inline gasnett_atomic_val_t gasnett_atomic_add(gasnett_atomic_t *p,
                                                      gasnett_atomic_val_t v, int flags)
{
    return AO_fetch_and_add_full(&p->ctr, v) + v;
}
static inline gasnett_atomic_val_t
gasnett_atomic_subtract(gasnett_atomic_t *p, gasnett_atomic_val_t v, int flags)
{
    return AO_fetch_and_add_full(&p->ctr, (AO_t)0 - v) - v;
}
static inline void gasnett_atomic_increment(gasnett_atomic_t *p, int flags)
{
    (void)AO_fetch_and_add_full(&p->ctr, 1);
}
static inline void gasnett_atomic_decrement(gasnett_atomic_t *p, int flags)
{
    (void)AO_fetch_and_add_full(&p->ctr, (AO_t)-1);
}
static inline int gasnett_atomic_decrement_and_test(gasnett_atomic_t *p, int flags)
{
    return AO_fetch_and_add_full(&p->ctr, (AO_t)-1) == 1;
}
static inline int gasnett_atomic_compare_and_swap(gasnett_atomic_t *p,
                                                  gasnett_atomic_val_t oldval,
                                                  gasnett_atomic_val_t newval, int flags)
{
    return AO_compare_and_swap_full(&p->ctr, oldval, newval);
}

/* Environment.  Sizes take a K, M or G suffix (gasnett_getenv_int_withdefault
 * with mem_size_multiplier != 0: a bare number is that many units). */
static inline const char *gasnett_getenv(const char *keyname)
{
    return getenv(keyname);
}
static inline const char *gasnett_getenv_withdefault(const char *keyname,
                                                     const char *defaultval)
{
    const char *v = getenv(keyname);
    return v ? v : defaultval;
}
static inline int gasnett_getenv_yesno_withdefault(const char *keyname, int defaultval)
{
    const char *v = getenv(keyname);
    if (!v || !*v)
        return defaultval;
    return strchr("yYtT1", v[0]) != NULL || strcasecmp(v, "on") == 0;
}
static inline int64_t gasnett_getenv_int_withdefault(const char *keyname,
                                                     int64_t defaultval,
                                                     uint64_t mem_size_multiplier)
{
    const char *v = getenv(keyname);
    char *end;
    if (!v || !*v)
        return defaultval;
    double d = strtod(v, &end);
    uint64_t mult = mem_size_multiplier ? mem_size_multiplier : 1;
    switch (mem_size_multiplier ? *end : 0) {
    case 'k':
    case 'K':
        mult = 1u << 10;
        break;
    case 'm':
    case 'M':
        mult = 1u << 20;
        break;
    case 'g':
    case 'G':
        mult = 1u << 30;
        break;
    }
    return (int64_t)(d * (double)mult);
}
static inline double gasnett_getenv_dbl_withdefault(const char *keyname, double defaultval)
{
    const char *v = getenv(keyname);
    return v && *v ? strtod(v, NULL) : defaultval;
}

/* Host. */
static inline long gasnett_cpu_count(void)
{
    return sysconf(_SC_NPROCESSORS_ONLN);
}
static inline uint64_t gasnett_getPhysMemSz(int failureIsFatal)
{
    return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}
static inline const char *gasnett_gethostname(void)
{
    static char name[256];
    if (!name[0] && gethostname(name, sizeof name - 1) != 0)
        strcpy(name, "localhost");
    return name;
}
static inline void gasnett_flush_streams(void)
{
    fflush(NULL);
}
static inline GASNETT_NORETURN
    GASNETT_FORMAT_PRINTF(1, 2) void gasnett_fatalerror(const char *msg, ...)
{
    va_list ap;
    va_start(ap, msg);
    fprintf(stderr, "*** FATAL ERROR: ");
    vfprintf(stderr, msg, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(NULL);
    abort();
}

#ifdef __cplusplus
}
#endif
#endif
