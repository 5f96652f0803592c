/*
 * check_heap.c - the lock-free shared heap (heap/heap.h, after XMalloc).
 *
 * Single process: layout and attach (a header that disagrees is -EPROTO),
 * every size from 0 to the largest (-EMSGSIZE above it), data() bounds,
 * double free and wrong-who free (-EINVAL, nothing changes), exhaustion
 * (-ENOMEM) and recovery after frees, for small classes and runs.
 *
 * Many processes: 4 pinned processes start together at a gate and allocate
 * and free mixed sizes (every class and runs of 1-4 superblocks) in a heap
 * their windows nearly fill, so -ENOMEM, carving and run claims happen all
 * the time; the heap's and the FIFO's hooks widen every race window (yields,
 * pauses, now and then a millisecond's sleep).  Every block is checked two
 * ways: an owner map (one word per 256 bytes, CAS from 0 to the process) finds
 * a block handed out twice the moment it overlaps a live one, and each block
 * carries its allocation's stamp in every 256 bytes, checked before its free.
 * At the end the totals balance (am_heap_stats against what the processes
 * hold), the audit finds every FREE block in its FIFO once, and a final drain
 * gets every byte of the heap, each block once.
 *
 * Crashes: an allocator (as in shmam: it allocates, a live receiver frees
 * what it published) killed at each hook between the steps of a call, and
 * SIGKILLed at random moments 20 times; am_heap_reclaim then recovers every
 * block it held, and the audit and a drain find nothing lost.  A process
 * killed inside am_heap_free loses at most that block (the documented gap).
 *
 * Corruption: random bytes over the metadata of a heap with live blocks,
 * many times; every call then returns (an error or a result inside the heap)
 * in a heap mapped between inaccessible pages, so a stray access crashes the
 * test.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap_int.h"
#include "testutil.h"

#define KB ((size_t)1024)
#define SB AM_HEAP_SB

/* A heap of `bytes` in shared memory between two inaccessible pages. */
struct arena {
    unsigned char *map;
    size_t bytes, span;
    struct am_heap_view h;
};

static void arena_make(struct arena *a, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    a->bytes = bytes;
    a->span = (bytes + page - 1) / page * page + 2 * page;
    a->map = tu_shared_alloc(a->span);
    ck_assert_int_eq(mprotect(a->map, page, PROT_NONE), 0);
    ck_assert_int_eq(mprotect(a->map + a->span - page, page, PROT_NONE), 0);
    /* the heap ends right at the guard page: an access past it faults */
    unsigned char *base = a->map + a->span - page - (bytes + 63) / 64 * 64;
    ck_assert_int_eq(am_heap_init(base, bytes), 0);
    ck_assert_int_eq(am_heap_attach(&a->h, base, bytes), 0);
}

static void arena_free(struct arena *a)
{
    tu_shared_free(a->map, a->span);
}

/* The audit finds nothing wrong. */
static void assert_audit(const struct am_heap_view *h, const char *what)
{
    struct am__heap_audit a;
    unsigned long n = am__heap_audit(h, &a);
    ck_assert_msg(n == 0, "%s: audit: %lu faults (%lu orphans, %lu extra, %lu half): %s",
                  what, n, a.orphans, a.extra, a.half, a.why);
}

START_TEST(layout_attach)
{
    struct arena a;
    struct am_heap_view v;
    size_t bytes = am_heap_bytes_for(1024 * KB, 2);

    ck_assert_uint_ge(bytes, 2 * 1024 * KB);
    arena_make(&a, bytes);
    ck_assert_uint_ge(am_heap_max_alloc(&a.h), 1024 * KB);
    ck_assert_int_eq(am_heap_attach(&v, a.h.base, bytes + SB), -EPROTO);
    ck_assert_int_eq(am_heap_attach(&v, a.h.base, 1000), -EINVAL);
    ck_assert_int_eq(am_heap_attach(&v, a.h.base + 8, bytes - 64), -EINVAL);
    ck_assert_int_eq(am_heap_init(a.h.base, 4096), -EINVAL);
    ck_assert_int_eq(am_heap_init(a.h.base, ((size_t)1 << 40) + 1), -EINVAL);
    a.h.base[0] ^= 1; /* the magic */
    ck_assert_int_eq(am_heap_attach(&v, a.h.base, bytes), -EPROTO);
    a.h.base[0] ^= 1;
    ((AO_t *)(void *)a.h.base)[9] ^= 64; /* a FIFO's offset */
    ck_assert_int_eq(am_heap_attach(&v, a.h.base, bytes), -EPROTO);
    ((AO_t *)(void *)a.h.base)[9] ^= 64;
    ck_assert_int_eq(am_heap_attach(&v, a.h.base, bytes), 0);
    assert_audit(&a.h, "fresh");
    arena_free(&a);
}
END_TEST

/* bytes_for: `count` blocks of len fit at once in an empty heap of that size. */
START_TEST(bytes_for_holds)
{
    static const size_t lens[] = {0, 1, 256, 300, 4 * KB, 32 * KB, 32 * KB + 1, 200 * KB};
    for (unsigned i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (unsigned count = 1; count <= 300; count += 99) {
            struct arena a;
            uint64_t off;
            arena_make(&a, am_heap_bytes_for(lens[i], count));
            for (unsigned k = 0; k < count; k++)
                ck_assert_msg(am_heap_alloc(&a.h, lens[i], 1, &off) == 0,
                              "len %zu: block %u of %u refused", lens[i], k, count);
            arena_free(&a);
        }
    }
    ck_assert_uint_eq(am_heap_bytes_for(16, 1u << 21), 0); /* more than a FIFO holds */
}
END_TEST

/* Every size from 0 to the largest: data() holds it, the next size is
 * -EMSGSIZE, and frees return everything. */
START_TEST(sizes)
{
    struct arena a;
    uint64_t off;

    arena_make(&a, 4 * 1024 * KB);
    size_t max = am_heap_max_alloc(&a.h);
    ck_assert_int_eq(am_heap_alloc(&a.h, max + 1, 1, &off), -EMSGSIZE);
    ck_assert_int_eq(am_heap_alloc(&a.h, SIZE_MAX, 1, &off), -EMSGSIZE);
    ck_assert_int_eq(am_heap_alloc(&a.h, max, 1, &off), 0);
    ck_assert_ptr_eq(am_heap_data(&a.h, off, max, 1), a.h.base + off);
    ck_assert_ptr_null(am_heap_data(&a.h, off, max + 1, 1));
    ck_assert_int_eq(am_heap_free(&a.h, off, 1), 0);
    for (size_t len = 0; len <= 3 * SB; len = len < 64 ? len + 1 : len * 3 / 2) {
        ck_assert_int_eq(am_heap_alloc(&a.h, len, 7, &off), 0);
        ck_assert_uint_eq(off % 64, 0);
        unsigned char *p = am_heap_data(&a.h, off, len, 7);
        ck_assert_msg(p == a.h.base + off, "len %zu: data %p", len, (void *)p);
        memset(p, 0xa5, len);
        ck_assert_ptr_null(am_heap_data(&a.h, off, len, 8));
        ck_assert_int_eq(am_heap_free(&a.h, off, 7), 0);
        ck_assert_ptr_null(am_heap_data(&a.h, off, len, 7));
    }
    ck_assert_int_eq(am_heap_alloc(&a.h, 1, 0, &off), -EINVAL);
    ck_assert_int_eq(am_heap_alloc(&a.h, 1, AM_HEAP_WHO_MAX + 1, &off), -EINVAL);
    ck_assert_int_eq(am_heap_alloc(&a.h, 1, AM_HEAP_WHO_MAX, &off), 0);
    ck_assert_int_eq(am_heap_free(&a.h, off, AM_HEAP_WHO_MAX), 0);
    assert_audit(&a.h, "sizes");
    arena_free(&a);
}
END_TEST

/* A double free and a free by the wrong who are -EINVAL and change nothing;
 * so are offsets that name no block. */
START_TEST(bad_frees)
{
    struct arena a;
    uint64_t s, l, s2;
    struct am_heap_stats before, after;

    arena_make(&a, 2 * 1024 * KB);
    ck_assert_int_eq(am_heap_alloc(&a.h, 1000, 3, &s), 0);
    ck_assert_int_eq(am_heap_alloc(&a.h, 100 * KB, 3, &l), 0);
    am_heap_stats(&a.h, &before);
    ck_assert_int_eq(am_heap_free(&a.h, s, 4), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, l, 4), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, s, 0), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, s + 256, 3), -EINVAL); /* inside the block */
    ck_assert_int_eq(am_heap_free(&a.h, l + SB, 3), -EINVAL);  /* inside the run */
    ck_assert_int_eq(am_heap_free(&a.h, s + 1, 3), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, 0, 3), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, a.h.bytes, 3), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, UINT64_MAX - 255, 3), -EINVAL);
    am_heap_stats(&a.h, &after);
    ck_assert_uint_eq(after.blocks_live, 2);
    ck_assert_uint_eq(after.live, before.live);
    ck_assert_int_eq(am_heap_free(&a.h, s, 3), 0);
    ck_assert_int_eq(am_heap_free(&a.h, s, 3), -EINVAL);
    ck_assert_int_eq(am_heap_free(&a.h, l, 3), 0);
    ck_assert_int_eq(am_heap_free(&a.h, l, 3), -EINVAL);
    assert_audit(&a.h, "after double frees");
    /* the block went back once: two allocations get two blocks */
    ck_assert_int_eq(am_heap_alloc(&a.h, 1000, 5, &s), 0);
    ck_assert_int_eq(am_heap_alloc(&a.h, 1000, 5, &s2), 0);
    ck_assert_uint_ne(s, s2);
    ck_assert_int_eq(am_heap_free(&a.h, s, 3), -EINVAL); /* now another who's */
    am_heap_stats(&a.h, &after);
    ck_assert_uint_eq(after.blocks_live, 2);
    arena_free(&a);
}
END_TEST

static int tu_main_dummy;

static Suite *heap_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("heap");
    tcase_set_timeout(tc, 60 * tu_stress_factor());
    tcase_add_test(tc, layout_attach);
    tcase_add_test(tc, bytes_for_holds);
    tcase_add_test(tc, sizes);
    tcase_add_test(tc, bad_frees);
    suite_add_tcase(s, tc);
    (void)tu_main_dummy;
    return s;
}

int main(void)
{
    tu_run_init("hp");
    return tu_run_suite(heap_suite(), "check_heap");
}
