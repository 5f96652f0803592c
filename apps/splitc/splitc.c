/*
 * splitc.c - the layer's start and end, regions, waiting and timing.
 *
 * A region is a spread array: every rank allocates its own part, in the same
 * collective order, so the id counter advances identically everywhere and a
 * region id names the same array on every rank.  The allocation ends in a
 * barrier, so no rank can reach a part that its owner has not allocated yet.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

struct sc_state sc__;

#define SC_SPIN_POLLS 256 /* empty polls before a wait sleeps in am_wait */
#define SC_NAP_MS 100     /* longest sleep between two checks of a wait */

void sc__die(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "splitc: rank %d: %s:%d: ", sc__.rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void sc__check(int rc, const char *what, const char *file, int line)
{
    if (rc < 0)
        sc__die(file, line, "%s: %s", what, am_strerror(rc));
}

void sc_init(int *argc, char ***argv)
{
    int rc = am_init(argc, argv, &sc__.ep);
    if (rc < 0) {
        fprintf(stderr, "splitc: am_init: %s\n", am_strerror(rc));
        exit(EXIT_FAILURE);
    }
    sc__.rank = am_rank();
    sc__.nprocs = am_nprocs();
    sc__.stores_sent = calloc((size_t)sc__.nprocs, sizeof *sc__.stores_sent);
    sc__.reduce_vals = calloc((size_t)sc__.nprocs, sizeof *sc__.reduce_vals);
    if (!sc__.stores_sent || !sc__.reduce_vals)
        SC_DIE("out of memory");
    sc__remote_init(sc__.ep);
    sc__bulk_init(sc__.ep);
    sc__collectives_init(sc__.ep);
}

void sc_finalize(void)
{
    sc_sync();
    SC_CHECK(am_finalize(sc__.ep), "am_finalize");
    for (unsigned i = 0; i < sc__.regions; i++)
        free(sc__.region[i].base);
    free(sc__.stores_sent);
    free(sc__.reduce_vals);
    memset(&sc__, 0, sizeof sc__);
}

int sc_rank(void)
{
    return sc__.rank;
}

int sc_nprocs(void)
{
    return sc__.nprocs;
}

am_ep_t *sc_ep(void)
{
    return sc__.ep;
}

unsigned sc_region_alloc(size_t bytes, void **local)
{
    if (sc__.regions == SC_MAX_REGIONS)
        SC_DIE("more than %d regions", SC_MAX_REGIONS);
    size_t rounded = (bytes + 63) / 64 * 64;
    unsigned char *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        SC_DIE("cannot allocate a region of %zu bytes", bytes);
    memset(p, 0, rounded);
    unsigned id = sc__.regions++;
    sc__.region[id] = (struct sc_region){.base = p, .size = bytes};
    if (local)
        *local = p;
    sc_barrier();
    return id;
}

void *sc_region_base(unsigned region)
{
    if (region >= sc__.regions)
        SC_DIE("no region %u", region);
    return sc__.region[region].base;
}

size_t sc_region_size(unsigned region)
{
    if (region >= sc__.regions)
        SC_DIE("no region %u", region);
    return sc__.region[region].size;
}

void *sc__local(uint32_t region, uint64_t offset, size_t n, unsigned from)
{
    if (region >= sc__.regions)
        SC_DIE("bad global pointer from rank %u: no region %u", from, region);
    size_t size = sc__.region[region].size;
    if (offset > size || n > size - offset)
        SC_DIE("bad global pointer from rank %u: bytes %llu..%llu of region %u, "
               "which has %zu here",
               from, (unsigned long long)offset, (unsigned long long)(offset + n), region,
               size);
    return sc__.region[region].base + offset;
}

void sc__check_gptr(sc_gptr_t g)
{
    if (g.rank >= (uint32_t)sc__.nprocs || g.region >= sc__.regions)
        SC_DIE("bad global pointer: rank %u region %u (of %d ranks, %u regions)", g.rank,
               g.region, sc__.nprocs, sc__.regions);
}

void sc__wait(int (*done)(const void *arg), const void *arg)
{
    int idle = 0;
    while (!done(arg)) {
        int n = am_poll(sc__.ep);
        SC_CHECK(n, "am_poll");
        if (n > 0)
            idle = 0;
        else if (++idle > SC_SPIN_POLLS)
            SC_CHECK(am_wait(sc__.ep, SC_NAP_MS), "am_wait");
    }
}

static int flag_set(const void *flag)
{
    return *(const volatile int *)flag != 0;
}

void sc_wait_until(volatile int *flag)
{
    sc__wait(flag_set, (const void *)flag);
}

double sc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
