/*
 * check_spsc.c - the single-producer/single-consumer rings of spsc/,
 * every kind of am_spsc_table, the kind's name in every failure message.
 *
 * Tcases: single, stream, stopped, corrupt (run one with CK_RUN_CASE).
 *
 * Single process (rings that end at an inaccessible page, so a slot index
 * past the array faults): the ring's size and header (init and open refuse a
 * bad shift, alignment, end, option, kind, version, magic), a verb on the
 * wrong end aborts, reserved items and empty batches are refused; order,
 * empty and full over many laps (lamport and fastforward take the whole
 * ring; bqueue's producer claims whole batches and mcring's consumer gives
 * slots back once per batch, so those two may take up to a batch less); one
 * to three items at a time so that positions cross the array's end at every
 * offset; what flush means (mcring holds an item back until its batch fills
 * or flush, the others show it at once); enqueue_batch of more than fits.
 *
 * Stream: two processes pinned to the two CPUs start together at a gate and
 * move 250000 items (times SHMAM_STRESS) through a ring of 16 slots, which is
 * full and empty all the time, for every kind and every option it takes
 * (fastforward with slip), and every kind on a wide ring (64-byte slots)
 * through the zero-copy verbs, each item's seven payload words checked
 * (wide_verbs: the same in one process, and reserve/peek repeated before
 * commit/release give the same slot).  The ring's stall hook widens every window between
 * a check and its publication in both ends (tu_widen: a yield 1 call in 8,
 * up to 63 pauses 1 in 4; a 200 us sleep 1 call in 16384, long enough for the
 * other end to go round the ring).  The producer mixes enqueue, enqueue_batch
 * of 1-6 items and flush at random; the consumer checks that item i is the
 * i-th value sent, so every item arrives exactly once and in order.
 *
 * Stopped producers (rings of 64 slots, batch 16): a producer that enqueues
 * 37 items (two batches and 5 of a third), slowly so that the consumer
 * races it, then stops for good (alive, or SIGKILLed) must have all 37 taken
 * within 10 s of its stop (for bqueue that is its backtracking; mcring's
 * producer flushes first, as its contract asks).  And 10 times a producer
 * streaming, slower than its consumer (so batches are part full), with its
 * count of finished enqueues in shared memory, SIGKILLs itself at a random
 * item (100-2100) and step (before the enqueue, before the flush, before
 * counting it): the consumer, which kept pace, then drains done or done + 1
 * items (the one under way may have been published), in order.
 *
 * Corruption: targeted, an index further than the ring from the other end
 * (lamport, mcring: -EPROTO within a lap, never -EAGAIN), an empty slot inside
 * a batch bqueue found (-EPROTO), a header word changed (open refuses it);
 * random, 3000 trials per kind writing random and plausible words (positions
 * near either end's, +-2 rings, small values, header fields near the real
 * ones) into the header, indices and slots, each followed by 20 random verbs
 * and now and then a fresh open: every call returns an allowed code, without
 * spinning (20 verbs in under CORRUPT_SLOW_S, slack for a busy machine), and
 * nothing touches the guard page.
 *
 * Each fails against a deliberately broken ring (checked when written):
 *   slot index without the wrap mask (lamport)      order_empty_full_wrap
 *                                                   (SIGSEGV at the guard page)
 *   fastforward dequeue not checking the full mark  order_empty_full_wrap, stream
 *   fastforward enqueue not checking for empty      order_empty_full_wrap (17 in
 *                                                   16 slots), stream
 *   lamport head published before the slot written  stream (a stale item)
 *   mcring flush that publishes nothing             order_empty_full_wrap,
 *                                                   stopped_mid_batch (32 of 37),
 *                                                   killed_at_random
 *   bqueue without backtracking (full batches only) stopped_mid_batch (32 of 37),
 *                                                   killed_at_random
 *   bqueue producer not probing its next batch      order_empty_full_wrap, stream
 *   bqueue batch one longer than the slot probed    stream (an empty slot taken:
 *                                                   -EPROTO)
 *   lamport, mcring: head - tail not bounded        corrupt_targeted (garbage
 *                                                   items, then -EAGAIN)
 *   open taking the ring's shift for its mask       corrupt_random (SIGSEGV)
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spsc.h"
#include "testutil.h"

#define SHIFT 4 /* 16 slots: full and empty all the time */
/* Items per stream, times the stress factor: 15625 laps of the ring, and as
 * every item passes the stall hook in both ends, at least 15 of each end's
 * sleeps long enough for the other end to go round it.  (A head published
 * before its slot was written, lamport, fails within 200 items.) */
#define STREAM_ITEMS 250000L
#define STOP_SHIFT 6        /* 64 slots, batch 16 */
#define STOP_ITEMS 37       /* two batches and 5 of a third */
#define STOP_BOUND_S 10.0   /* a stopped producer's items are taken within */
#define KILLS 10            /* random kills per kind, times the stress factor */
#define CORRUPT_TRIALS 3000 /* per kind */
#define CORRUPT_OPS 20      /* verbs after each corruption */
#define CORRUPT_SLOW_S 5.0  /* they take microseconds; a spinning one seconds */
#define PROC_TIMEOUT_S 60
#define STREAM_TCASE_S 600 /* a stream's whole run, times the stress factor */

/* ---- kinds and cases ---- */

static int n_kinds(void)
{
    int n = 0;
    while (am_spsc_table[n])
        n++;
    return n;
}

/* A stream case: a kind and the options its consumer opens with; every kind
 * plain, then each option a kind takes (from the table, not typed again). */
struct scase {
    const struct am_spsc_ops *k;
    unsigned opt; /* the consumer's options; AM_SPSC_WIDE: a wide ring, moved
                   * with the zero-copy verbs, payload words checked */
    char name[48];
};

static int scases(struct scase *out, int max)
{
    int n = 0;
    for (int i = 0; am_spsc_table[i] && n < max; i++) {
        out[n].k = am_spsc_table[i];
        out[n].opt = 0;
        snprintf(out[n].name, sizeof out[n].name, "%s", am_spsc_table[i]->name);
        n++;
    }
    for (int i = 0; am_spsc_table[i] && n < max; i++)
        if (am_spsc_table[i]->options & AM_SPSC_SLIP) {
            out[n].k = am_spsc_table[i];
            out[n].opt = AM_SPSC_SLIP;
            snprintf(out[n].name, sizeof out[n].name, "%s+slip", am_spsc_table[i]->name);
            n++;
        }
    for (int i = 0; am_spsc_table[i] && n < max; i++) {
        out[n].k = am_spsc_table[i];
        out[n].opt = AM_SPSC_WIDE;
        snprintf(out[n].name, sizeof out[n].name, "%s wide", am_spsc_table[i]->name);
        n++;
    }
    return n;
}

#define MAX_CASES 16

static int n_scases(void)
{
    struct scase c[MAX_CASES];
    return scases(c, MAX_CASES);
}

static struct scase scase_of(int i)
{
    struct scase c[MAX_CASES];
    int n = scases(c, MAX_CASES);
    ck_assert_int_lt(i, n);
    return c[i];
}

/* The s-th value sent: distinct, 0 first, and now and then the extremes. */
static uint64_t val(uint64_t s)
{
    if (s % 7 == 3)
        return AM_SPSC_ITEM_MAX - (s & 1);
    return s * 0x9e3779b97f4a7c15ull; /* odd: one to one; UINT64_MAX only near 2^60 */
}

/* ---- rings between inaccessible pages ---- */

struct guarded {
    unsigned char *map;
    size_t span, bytes;
    void *ring;
};

/* A ring of kind k and 2^shift slots ending at an inaccessible page, in memory
 * children forked later share; initialised. */
static void *ring_make_as(struct guarded *g, const struct am_spsc_ops *k, unsigned shift,
                          int wide)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    g->bytes = wide ? am_spsc_size_wide(k, shift) : k->size(shift);
    ck_assert_msg(g->bytes > 0 && g->bytes % AM_SPSC_LINE == 0, "%s: size(%u) = %zu",
                  k->name, shift, g->bytes);
    g->span = (g->bytes + page - 1) / page * page + 2 * page;
    g->map = tu_shared_alloc(g->span);
    ck_assert_int_eq(mprotect(g->map, page, PROT_NONE), 0);
    ck_assert_int_eq(mprotect(g->map + g->span - page, page, PROT_NONE), 0);
    g->ring = g->map + g->span - page - g->bytes;
    ck_assert_msg((wide ? am_spsc_init_wide(k, g->ring, shift) : k->init(g->ring, shift)) ==
                      0,
                  "%s: init", k->name);
    return g->ring;
}

static void *ring_make(struct guarded *g, const struct am_spsc_ops *k, unsigned shift)
{
    return ring_make_as(g, k, shift, 0);
}

static void ring_free(struct guarded *g)
{
    tu_shared_free(g->map, g->span);
}

static void open_both(const struct am_spsc_ops *k, void *ring, unsigned shift,
                      struct am_spsc_end *p, struct am_spsc_end *c)
{
    int rp = k->open(p, ring, shift, AM_SPSC_PRODUCER);
    int rc = k->open(c, ring, shift, AM_SPSC_CONSUMER);
    ck_assert_msg(rp == 0 && rc == 0, "%s: open: producer %d, consumer %d", k->name, rp,
                  rc);
}

/* The fewest items a fill of an empty ring must take: all of them, but
 * bqueue's producer may refuse a batch whose last slot is still full, and
 * mcring's consumer publishes its reads once per batch (or on finding the ring
 * empty), so up to a batch less than the ring may look free. */
static uint64_t least_fill(const struct am_spsc_ops *k, unsigned shift)
{
    uint64_t n = (uint64_t)1 << shift;
    int batched = k->kind == AM_SPSC_BQUEUE || k->kind == AM_SPSC_MCRING;
    return batched ? n - am_spsc_batch(shift) + 1 : n;
}

/* ---- single process ---- */

/* A kind and a producer's end, made by the test and inherited by a child. */
struct misuse {
    const struct am_spsc_ops *k;
    struct am_spsc_end p;
};

/* Calls dequeue on the producer's end: must abort. */
static void wrong_end(void *arg)
{
    struct misuse *m = arg;
    uint64_t v;
    int devnull = open("/dev/null", O_WRONLY);

    if (devnull >= 0)
        dup2(devnull, 2); /* the abort's message is expected */
    m->k->dequeue(&m->p, &v);
    _exit(3); /* it should have aborted */
}

START_TEST(open_checks)
{
    const struct am_spsc_ops *k = am_spsc_table[_i];
    const char *nm = k->name;
    struct guarded g, other;
    struct am_spsc_end e;
    void *ring = ring_make(&g, k, SHIFT);
    struct am_spsc_hdr *h = ring;

    ck_assert_msg(am_spsc_find(nm) == k, "%s: am_spsc_find", nm);
    ck_assert_msg(k->size(AM_SPSC_MIN_SHIFT - 1) == 0 &&
                      k->size(AM_SPSC_MAX_SHIFT + 1) == 0,
                  "%s: size of a shift out of range", nm);
    ck_assert_msg(k->size(SHIFT) >= (sizeof(AO_t) << SHIFT) + AM_SPSC_LINE, "%s: size", nm);
    ck_assert_msg(k->init((char *)ring + 8, SHIFT) == -EINVAL, "%s: misaligned init", nm);
    ck_assert_msg(k->init(ring, AM_SPSC_MAX_SHIFT + 1) == -EINVAL, "%s: init shift", nm);
    ck_assert_msg(k->open(&e, ring, SHIFT, 0) == -EINVAL &&
                      k->open(&e, ring, SHIFT, AM_SPSC_PRODUCER | AM_SPSC_CONSUMER) ==
                          -EINVAL &&
                      k->open(&e, ring, SHIFT, AM_SPSC_CONSUMER | 0x100) == -EINVAL &&
                      k->open(&e, (char *)ring + 8, SHIFT, AM_SPSC_CONSUMER) == -EINVAL,
                  "%s: open with bad flags or alignment", nm);
    int slip = k->open(&e, ring, SHIFT, AM_SPSC_CONSUMER | AM_SPSC_SLIP);
    ck_assert_msg(slip == ((k->options & AM_SPSC_SLIP) ? 0 : -EINVAL),
                  "%s: open with the slip option: %d", nm, slip);
    ck_assert_msg(k->open(&e, ring, SHIFT - 1, AM_SPSC_CONSUMER) == -EPROTO,
                  "%s: open with another size", nm);
    /* the header's words, one at a time */
    uint32_t *field[] = {&h->version, &h->kind, &h->shift};
    for (unsigned f = 0; f < 3; f++) {
        uint32_t keep = *field[f];
        *field[f] = keep + 1;
        ck_assert_msg(k->open(&e, ring, SHIFT, AM_SPSC_PRODUCER) == -EPROTO,
                      "%s: open with header field %u changed", nm, f);
        *field[f] = keep;
    }
    h->magic = 0;
    ck_assert_msg(k->open(&e, ring, SHIFT, AM_SPSC_PRODUCER) == -EPROTO, "%s: no magic",
                  nm);
    /* a ring of another kind */
    const struct am_spsc_ops *o = am_spsc_table[(_i + 1) % n_kinds()];
    ring_make(&other, o, SHIFT);
    ck_assert_msg(k->open(&e, other.ring, SHIFT, AM_SPSC_PRODUCER) == -EPROTO,
                  "%s: opened a %s ring", nm, o->name);
    ring_free(&other);
    /* a verb on the wrong end is a programming error: it aborts */
    struct misuse mu = {k, {0}};
    k->init(ring, SHIFT);
    ck_assert_int_eq(k->open(&mu.p, ring, SHIFT, AM_SPSC_PRODUCER), 0);
    int st = tu_reap(tu_spawn(wrong_end, &mu, 0), 10);
    ck_assert_msg(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
                  "%s: dequeue on the producer's end: status %d", nm, st);
    ring_free(&g);
}
END_TEST

/* Dequeues the items seq .. to - 1 from c, in order; returns to. */
static uint64_t drain(const struct am_spsc_ops *k, struct am_spsc_end *c, uint64_t seq,
                      uint64_t to, const char *step)
{
    uint64_t v;
    for (; seq < to; seq++) {
        int rc = k->dequeue(c, &v);
        ck_assert_msg(rc == 0 && v == val(seq), "%s: %s: item %llu: rc %d, %#llx for %#llx",
                      k->name, step, (unsigned long long)seq, rc, (unsigned long long)v,
                      (unsigned long long)val(seq));
    }
    int rc = k->dequeue(c, &v);
    ck_assert_msg(rc == -EAGAIN, "%s: %s: dequeue after the last item: %d (%#llx)", k->name,
                  step, rc, (unsigned long long)v);
    return seq;
}

START_TEST(order_empty_full_wrap)
{
    const struct am_spsc_ops *k = am_spsc_table[_i];
    const char *nm = k->name;
    struct guarded g;
    struct am_spsc_end p, c;
    uint64_t n = 1u << SHIFT, least = least_fill(k, SHIFT), in = 0, out = 0, v;
    uint64_t bad[3] = {1, UINT64_MAX, 2}, many[4 << SHIFT];

    open_both(k, ring_make(&g, k, SHIFT), SHIFT, &p, &c);
    ck_assert_msg(k->dequeue(&c, &v) == -EAGAIN, "%s: dequeue from a new ring", nm);
    ck_assert_msg(k->enqueue(&p, UINT64_MAX) == -EINVAL, "%s: UINT64_MAX enqueued", nm);
    ck_assert_msg(k->enqueue_batch(&p, bad, 3) == -EINVAL &&
                      k->enqueue_batch(&p, bad, 0) == -EINVAL,
                  "%s: a batch with UINT64_MAX, or of none", nm);
    k->flush(&p);
    ck_assert_msg(k->dequeue(&c, &v) == -EAGAIN, "%s: a refused batch left items", nm);

    /* fill and drain, lap after lap */
    for (int lap = 0; lap < 3 * (int)n; lap++) {
        uint64_t took = 0;
        int rc;
        while ((rc = k->enqueue(&p, val(in))) == 0 && took <= n)
            in++, took++;
        ck_assert_msg(rc == -EAGAIN && took >= least && took <= n,
                      "%s: lap %d: a ring of %llu took %llu, then %d", nm, lap,
                      (unsigned long long)n, (unsigned long long)took, rc);
        ck_assert_int_eq(k->flush(&p), 0);
        ck_assert_msg(k->enqueue(&p, 5) == -EAGAIN, "%s: lap %d: not full after flush", nm,
                      lap);
        out = drain(k, &c, out, in, "fill and drain");
    }
    /* one to three at a time: positions cross the array's end at every offset */
    for (uint64_t j = 0; j < 20 * n; j++) {
        for (uint64_t m = 0; m < 1 + j % 3; m++)
            ck_assert_msg(k->enqueue(&p, val(in + m)) == 0, "%s: step %llu", nm,
                          (unsigned long long)j);
        in += 1 + j % 3;
        k->flush(&p);
        out = drain(k, &c, out, in, "a few at a time");
    }
    /* flush: what enqueue may hold back */
    ck_assert_int_eq(k->enqueue(&p, val(in)), 0);
    int rc = k->dequeue(&c, &v);
    if (k->holds) {
        ck_assert_msg(rc == -EAGAIN, "%s: holds items, yet one showed unflushed", nm);
        ck_assert_int_eq(k->flush(&p), 0);
        rc = k->dequeue(&c, &v);
    }
    ck_assert_msg(rc == 0 && v == val(in), "%s: the item after %s: %d", nm,
                  k->holds ? "flush" : "enqueue", rc);
    out = ++in;
    /* a batch of more than fits, visible on return */
    for (unsigned i = 0; i < 4 << SHIFT; i++)
        many[i] = val(in + i);
    int took = k->enqueue_batch(&p, many, 2 * (unsigned)n);
    ck_assert_msg(took >= (int)least && took <= (int)n, "%s: enqueue_batch took %d", nm,
                  took);
    ck_assert_msg(k->enqueue_batch(&p, many, 3) == -EAGAIN, "%s: batch into a full ring",
                  nm);
    in += (uint64_t)took;
    out = drain(k, &c, out, in, "after enqueue_batch");
    ring_free(&g);
}
END_TEST

/* ---- two processes streaming ---- */

struct stream {
    struct tu_gate gate;
    struct tu_errors err;
    AO_t stop, got; /* got: items taken, published every 4096 (the watchdog's) */
    struct scase sc;
    void *ring;
    long items;
};

static unsigned hook_calls;

static void widen(enum am_spsc_hook where)
{
    unsigned n = hook_calls++;
    if (n % 16384 == 16383)
        usleep(200);
    else
        tu_widen(n * 3 + (unsigned)where);
}

static void produce(struct stream *s, struct am_spsc_end *e)
{
    const struct am_spsc_ops *k = s->sc.k;
    uint64_t batch[6];
    long i = 0;

    for (unsigned step = 0; i < s->items && !AO_load(&s->stop); step++) {
        uint32_t h = tu_mix32(step, 77);
        int rc;
        if (h % 8 == 0) {
            unsigned m = 1 + h / 8 % 6;
            if (m > s->items - i)
                m = (unsigned)(s->items - i);
            for (unsigned j = 0; j < m; j++)
                batch[j] = val((uint64_t)i + j);
            rc = k->enqueue_batch(e, batch, m);
            i += rc > 0 ? rc : 0;
        } else {
            rc = k->enqueue(e, val((uint64_t)i));
            i += rc == 0;
        }
        if (rc < 0 && rc != -EAGAIN) {
            tu_error(&s->err, "%s: producer: %d at item %ld", s->sc.name, rc, i);
            AO_store(&s->stop, 1);
        }
        if (h % 16 == 1)
            k->flush(e);
    }
    k->flush(e);
}

/* Word j of item i's wide slot. */
static uint64_t word_of(long i, unsigned j)
{
    return tu_mix32((uint32_t)i, j) | (uint64_t)j << 40;
}

/* The wide stream: reserve, fill words 1..7, commit; the window between
 * filling and committing widened (the ring's own hook, AM_SPSC_PUT, is in
 * commit). */
static void produce_wide(struct stream *s, struct am_spsc_end *e)
{
    const struct am_spsc_ops *k = s->sc.k;
    for (long i = 0; i < s->items && !AO_load(&s->stop);) {
        AO_t *slot;
        int rc = k->reserve(e, &slot);
        if (rc == 0) {
            for (unsigned j = 1; j < AM_SPSC_WIDE_WORDS; j++)
                slot[j] = word_of(i, j);
            rc = k->commit(e, val((uint64_t)i));
            i += rc == 0;
            if (tu_mix32((uint32_t)i, 5) % 16 == 1)
                k->flush(e);
        }
        if (rc < 0 && rc != -EAGAIN) {
            tu_error(&s->err, "%s: producer: %d at item %ld", s->sc.name, rc, i);
            AO_store(&s->stop, 1);
        }
    }
    k->flush(e);
}

/* Item i of the stream: dequeued (narrow), or peeked, its words checked
 * (twice: a second peek gives the same slot) and released (wide).  The
 * ring's rc; *ok when it was item i, whole (and then it is taken). */
static int take(struct stream *s, struct am_spsc_end *e, long i, uint64_t *v, int *ok)
{
    const struct am_spsc_ops *k = s->sc.k;
    const AO_t *slot, *slot2;
    uint64_t v2;
    if (!(s->sc.opt & AM_SPSC_WIDE)) {
        int rc = k->dequeue(e, v);
        *ok = rc == 0 && *v == val((uint64_t)i);
        return rc;
    }
    int rc = k->peek(e, v, &slot);
    *ok = rc == 0 && *v == val((uint64_t)i) && k->peek(e, &v2, &slot2) == 0 && v2 == *v &&
          slot2 == slot;
    for (unsigned j = 1; j < AM_SPSC_WIDE_WORDS && *ok; j++)
        *ok = slot[j] == word_of(i, j);
    if (*ok)
        k->release(e);
    return rc;
}

static void consume(struct stream *s, struct am_spsc_end *e)
{
    double last = tu_now_s();
    uint64_t v = 0;
    long i = 0;

    for (unsigned long idle = 0; i < s->items && !AO_load(&s->stop);) {
        int ok, rc = take(s, e, i, &v, &ok);
        if (ok) {
            if (++i % 4096 == 0)
                AO_store_release(&s->got, (AO_t)i);
            idle = 0;
            continue;
        }
        if (rc == 0 || rc != -EAGAIN) {
            tu_error(&s->err,
                     "%s: consumer: item %ld: rc %d, %#llx for %#llx (or its words)",
                     s->sc.name, i, rc, (unsigned long long)v,
                     (unsigned long long)val((uint64_t)i));
            AO_store(&s->stop, 1);
        } else if (++idle % 65536 == 0 && tu_now_s() - last > 20) {
            tu_error(&s->err, "%s: consumer: no item %ld for 20 s", s->sc.name, i);
            AO_store(&s->stop, 1);
        } else if (idle == 1) {
            last = tu_now_s();
        }
    }
    AO_store(&s->got, (AO_t)i);
}

static void stream_worker(int idx, void *arg)
{
    struct stream *s = arg;
    struct am_spsc_end e;
    unsigned wide = s->sc.opt & AM_SPSC_WIDE;
    unsigned flags = idx == 0 ? AM_SPSC_PRODUCER | wide : AM_SPSC_CONSUMER | s->sc.opt;
    int rc = s->sc.k->open(&e, s->ring, SHIFT, flags);

    hook_calls = (unsigned)idx * 7919u;
    am_spsc_stall_hook = widen;
    tu_gate_wait(&s->gate);
    if (rc != 0) {
        tu_error(&s->err, "%s: open: %d", s->sc.name, rc);
        AO_store(&s->stop, 1);
    } else if (idx == 0) {
        (wide ? produce_wide : produce)(s, &e);
    } else {
        consume(s, &e);
    }
}

START_TEST(stream)
{
    struct stream *s = tu_shared_alloc(sizeof *s);
    struct guarded g;

    s->sc = scase_of(_i);
    s->items = STREAM_ITEMS * tu_stress_factor();
    s->ring = ring_make_as(&g, s->sc.k, SHIFT, (s->sc.opt & AM_SPSC_WIDE) != 0);
    tu_gate_init(&s->gate, 2);
    double t0 = tu_now_s();
    /* killed only after PROC_TIMEOUT_S without an item: a busy machine
     * stretches a stream of widened windows many times (seen: over 60 s) */
    int failed = tu_run_procs_moving(2, stream_worker, s, &s->got, PROC_TIMEOUT_S);
    ck_assert_msg(failed == 0 && s->err.n == 0 && (long)s->got == s->items,
                  "%s: %d processes failed; %lu items of %ld in order; %s", s->sc.name,
                  failed, (unsigned long)s->got, s->items,
                  tu_first_error(&s->err, "no error"));
    fprintf(stderr, "stream %s: %ld items in %.2f s\n", s->sc.name, s->items,
            tu_now_s() - t0);
    ring_free(&g);
    tu_shared_free(s, sizeof *s);
}
END_TEST

/* ---- wide rings, one process ---- */

/* A wide ring: a narrow end refused on it and a wide end on a narrow ring
 * (-EPROTO); reserve twice before commit gives the same slot, peek twice the
 * same item and slot; the ring fills (reserve -EAGAIN) and empties (peek
 * -EAGAIN) with every payload word where it was written, over laps. */
START_TEST(wide_verbs)
{
    const struct am_spsc_ops *k = am_spsc_table[_i];
    struct guarded g, n;
    struct am_spsc_end p, c, e;
    void *ring = ring_make_as(&g, k, SHIFT, 1), *narrow = ring_make(&n, k, SHIFT);
    ck_assert_msg(
        k->open(&e, ring, SHIFT, AM_SPSC_PRODUCER) == -EPROTO &&
            k->open(&e, narrow, SHIFT, AM_SPSC_CONSUMER | AM_SPSC_WIDE) == -EPROTO,
        "%s: a narrow end on a wide ring, or the other way, not refused", k->name);
    ck_assert_msg(k->open(&p, ring, SHIFT, AM_SPSC_PRODUCER | AM_SPSC_WIDE) == 0 &&
                      k->open(&c, ring, SHIFT, AM_SPSC_CONSUMER | AM_SPSC_WIDE) == 0,
                  "%s: wide open", k->name);
    long sent = 0, got = 0;
    for (int lap = 0; lap < 5; lap++) {
        AO_t *slot, *again;
        while (k->reserve(&p, &slot) == 0) {
            ck_assert_msg(k->reserve(&p, &again) == 0 && again == slot,
                          "%s: a second reserve gave another slot", k->name);
            for (unsigned j = 1; j < AM_SPSC_WIDE_WORDS; j++)
                slot[j] = word_of(sent, j);
            ck_assert_int_eq(k->commit(&p, val((uint64_t)sent)), 0);
            sent++;
        }
        k->flush(&p);
        ck_assert_msg(sent - got >= (long)least_fill(k, SHIFT),
                      "%s: lap %d: full after %ld", k->name, lap, sent - got);
        uint64_t v, v2;
        const AO_t *cs, *cs2;
        while (k->peek(&c, &v, &cs) == 0) {
            ck_assert_msg(k->peek(&c, &v2, &cs2) == 0 && v2 == v && cs2 == cs,
                          "%s: a second peek differs", k->name);
            ck_assert_msg(v == val((uint64_t)got), "%s: item %ld", k->name, got);
            for (unsigned j = 1; j < AM_SPSC_WIDE_WORDS; j++)
                ck_assert_msg(cs[j] == word_of(got, j), "%s: item %ld word %u", k->name,
                              got, j);
            k->release(&c);
            got++;
        }
        ck_assert_msg(got == sent, "%s: lap %d: %ld of %ld taken", k->name, lap, got, sent);
    }
    ring_free(&g);
    ring_free(&n);
}
END_TEST

/* ---- producers that stop ---- */

struct stopper {
    const struct am_spsc_ops *k;
    void *ring;
    int die;   /* 1: SIGKILL itself after its items; 0: live on, idle */
    AO_t done; /* 1 once its items are enqueued (and flushed) */
};

static void stop_run(void *arg)
{
    struct stopper *s = arg;
    struct am_spsc_end p;

    if (s->k->open(&p, s->ring, STOP_SHIFT, AM_SPSC_PRODUCER) != 0)
        _exit(3);
    for (uint64_t i = 0; i < STOP_ITEMS; i++) {
        if (s->k->enqueue(&p, val(i)) != 0)
            _exit(4);
        for (int w = 0; w < 8; w++)
            tu_widen((unsigned)(i * 8 + (uint64_t)w));
    }
    if (s->k->holds)
        s->k->flush(&p); /* the contract: flush before waiting */
    AO_store_release(&s->done, 1);
    if (s->die)
        raise(SIGKILL);
    for (;;)
        pause();
}

START_TEST(stopped_mid_batch)
{
    struct stopper *s = tu_shared_alloc(sizeof *s);
    const struct am_spsc_ops *k = am_spsc_table[_i / 2];
    const char *how = _i % 2 ? "killed" : "idle";
    struct guarded g;
    struct am_spsc_end c;
    uint64_t got = 0, v;
    double stopped = 0, end = tu_now_s() + 20;

    s->k = k;
    s->die = _i % 2;
    s->ring = ring_make(&g, k, STOP_SHIFT);
    ck_assert_int_eq(k->open(&c, s->ring, STOP_SHIFT, AM_SPSC_CONSUMER), 0);
    pid_t pid = tu_spawn(stop_run, s, 0);
    ck_assert_int_gt(pid, 0);
    while (got < STOP_ITEMS && tu_now_s() < end) {
        int rc = k->dequeue(&c, &v);
        ck_assert_msg(rc == -EAGAIN || (rc == 0 && v == val(got)),
                      "%s: %s producer: item %llu: rc %d, %#llx", k->name, how,
                      (unsigned long long)got, rc, (unsigned long long)v);
        got += rc == 0;
        if (!stopped && AO_load_acquire(&s->done)) /* pairs with its release */
            stopped = tu_now_s();
        if (stopped && tu_now_s() - stopped > STOP_BOUND_S)
            break;
    }
    ck_assert_msg(got == STOP_ITEMS, "%s: %s producer: %llu of %d items taken %s", k->name,
                  how, (unsigned long long)got, STOP_ITEMS,
                  stopped ? "within 10 s of its stop" : "before it stopped (20 s)");
    ck_assert_msg(k->dequeue(&c, &v) == -EAGAIN, "%s: an item after the last", k->name);
    kill(pid, SIGKILL);
    tu_reap(pid, 10);
    ring_free(&g);
    tu_shared_free(s, sizeof *s);
}
END_TEST

struct victim {
    const struct am_spsc_ops *k;
    void *ring;
    uint64_t die_at; /* the item at which it SIGKILLs itself */
    int die_step;    /* before its enqueue, before its flush, before counting it */
    AO_t done;       /* enqueues finished (and flushed) */
};

static void victim_run(void *arg)
{
    struct victim *v = arg;
    struct am_spsc_end p;
    int rc;

    if (v->k->open(&p, v->ring, STOP_SHIFT, AM_SPSC_PRODUCER) != 0)
        _exit(3);
    for (uint64_t i = 0;; i++) {
        if (i == v->die_at && v->die_step == 0)
            raise(SIGKILL);
        while ((rc = v->k->enqueue(&p, val(i))) == -EAGAIN)
            ;
        if (rc != 0)
            _exit(4);
        if (i == v->die_at && v->die_step == 1)
            raise(SIGKILL);
        v->k->flush(&p);
        if (i == v->die_at && v->die_step == 2)
            raise(SIGKILL);
        AO_store(&v->done, (AO_t)(i + 1));
        for (double t = tu_now_s() + 1e-6; tu_now_s() < t;)
            ; /* a microsecond: slower than the consumer, so batches are part full */
    }
}

START_TEST(killed_at_random)
{
    struct victim *v = tu_shared_alloc(sizeof *v);
    const struct am_spsc_ops *k = am_spsc_table[_i];
    unsigned seed = (unsigned)getpid();
    struct guarded g;

    v->k = k;
    v->ring = ring_make(&g, k, STOP_SHIFT);
    for (int run = 0; run < KILLS * tu_stress_factor(); run++) {
        struct am_spsc_end c;
        uint64_t got = 0, x;
        int st = 0, rc;
        v->die_at = 100 + (uint64_t)rand_r(&seed) % 2000;
        v->die_step = rand_r(&seed) % 3;
        ck_assert_int_eq(k->init(v->ring, STOP_SHIFT), 0);
        ck_assert_int_eq(k->open(&c, v->ring, STOP_SHIFT, AM_SPSC_CONSUMER), 0);
        AO_store(&v->done, 0);
        tu_pin(run + 1); /* the consumer on the other CPU */
        pid_t pid = tu_spawn(victim_run, v, run);
        ck_assert_int_gt(pid, 0);
        /* consume while it runs, so it never waits for room */
        double end = tu_now_s() + 20;
        for (unsigned long i = 0; tu_now_s() < end; i++) {
            if (i % 64 == 0 && waitpid(pid, &st, WNOHANG) == pid)
                break;
            rc = k->dequeue(&c, &x);
            ck_assert_msg(rc == -EAGAIN || (rc == 0 && x == val(got)),
                          "%s: run %d: item %llu: rc %d", k->name, run,
                          (unsigned long long)got, rc);
            got += rc == 0;
        }
        if (tu_now_s() >= end)
            tu_reap(pid, 1);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                      "%s: run %d: the producer did not die in 20 s (status %d)", k->name,
                      run, st);
        uint64_t done = AO_load(&v->done);
        while ((rc = k->dequeue(&c, &x)) == 0) {
            ck_assert_msg(x == val(got), "%s: run %d: drained item %llu is %#llx", k->name,
                          run, (unsigned long long)got, (unsigned long long)x);
            got++;
        }
        ck_assert_msg(rc == -EAGAIN && got >= done && got <= done + 1,
                      "%s: run %d: killed after %llu enqueues (step %d of item %llu), %llu "
                      "items taken (rc %d)",
                      k->name, run, (unsigned long long)done, v->die_step,
                      (unsigned long long)v->die_at, (unsigned long long)got, rc);
    }
    ring_free(&g);
    tu_shared_free(v, sizeof *v);
}
END_TEST

/* ---- corruption ---- */

/* Within two laps of calls the end meets the bad index: -EPROTO, never
 * -EAGAIN (a bad index must not read as full or empty for ever). */
static void assert_refused(const struct am_spsc_ops *k, struct am_spsc_end *e, int producer,
                           const char *what)
{
    uint64_t v;
    int rc = 0;
    for (int i = 0; i < 2 << SHIFT && rc == 0; i++)
        rc = producer ? k->enqueue(e, 1) : k->dequeue(e, &v);
    ck_assert_msg(rc == -EPROTO, "%s: %s: %d", k->name, what, rc);
}

START_TEST(corrupt_targeted)
{
    const struct am_spsc_ops *k = am_spsc_table[_i];
    struct guarded g;
    struct am_spsc_end p, c;
    uint64_t v, n = 1u << SHIFT;
    void *ring = ring_make(&g, k, SHIFT);
    struct am_spsc_indexed_ring *r = ring;
    struct am_spsc_marked_ring *m = ring;

    if (k->kind == AM_SPSC_LAMPORT || k->kind == AM_SPSC_MCRING) {
        open_both(k, ring, SHIFT, &p, &c);
        r->head = n + 1; /* more items than the ring holds */
        assert_refused(k, &c, 0, "head a ring and one ahead of the consumer");
        open_both(k, ring, SHIFT, &p, &c);
        r->head = (AO_t)-1; /* behind the consumer */
        assert_refused(k, &c, 0, "head behind the consumer");
        k->init(ring, SHIFT);
        open_both(k, ring, SHIFT, &p, &c);
        r->tail = 3 * n; /* the consumer ahead of the producer */
        assert_refused(k, &p, 1, "tail ahead of the producer");
        k->init(ring, SHIFT);
        open_both(k, ring, SHIFT, &p, &c);
        r->tail = (AO_t) - (AO_t)n - 1; /* a ring and one behind */
        assert_refused(k, &p, 1, "tail a ring and one behind the producer");
    } else if (k->kind == AM_SPSC_BQUEUE) {
        open_both(k, ring, SHIFT, &p, &c);
        for (uint64_t i = 0; i < 8; i++)
            ck_assert_int_eq(k->enqueue(&p, val(i)), 0);
        ck_assert_int_eq(k->dequeue(&c, &v), 0); /* finds a batch of 4 */
        m->slot[2] = 0;
        ck_assert_int_eq(k->dequeue(&c, &v), 0);
        ck_assert_msg(k->dequeue(&c, &v) == -EPROTO, "%s: an empty slot in a batch",
                      k->name);
    }
    ring_free(&g);
}
END_TEST

/* A word a peer might write: random, small, near either end's position, or
 * near the header's real fields. */
static uint64_t plausible(unsigned *seed, const struct am_spsc_end *p,
                          const struct am_spsc_end *c, uint64_t n)
{
    uint64_t r = (uint64_t)rand_r(seed) << 33 ^ (uint64_t)rand_r(seed) << 11 ^
                 (uint64_t)rand_r(seed);
    int64_t d = (int64_t)(r % (4 * n + 1)) - (int64_t)(2 * n);
    switch (rand_r(seed) % 6) {
    case 0:
        return r;
    case 1:
        return r % 4;
    case 2:
        return p->pos + (uint64_t)d;
    case 3:
        return c->pos + (uint64_t)d;
    case 4: /* shift, kind or version off by a little, in either half */
        return (uint64_t)(SHIFT + r % 8) << (32 * (r >> 40 & 1));
    default:
        return UINT64_MAX - r % 4;
    }
}

/* One random verb; fails the test for a code the verb may not return. */
static void random_verb(const struct am_spsc_ops *k, struct am_spsc_end *p,
                        struct am_spsc_end *c, unsigned *seed)
{
    uint64_t v, items[3] = {7, 8, 9};
    int rc, which = rand_r(seed) % 4;
    switch (which) {
    case 0:
        rc = k->enqueue(p, (uint64_t)rand_r(seed));
        break;
    case 1:
        rc = k->enqueue_batch(p, items, 3);
        rc = rc >= 1 && rc <= 3 ? 0 : rc;
        break;
    case 2:
        rc = k->flush(p);
        break;
    default:
        rc = k->dequeue(c, &v);
    }
    ck_assert_msg(rc == 0 || rc == -EAGAIN || rc == -EPROTO, "%s: verb %d returned %d",
                  k->name, which, rc);
}

START_TEST(corrupt_random)
{
    const struct am_spsc_ops *k = am_spsc_table[_i];
    struct guarded g;
    struct am_spsc_end p, c;
    unsigned seed = (unsigned)getpid() ^ (unsigned)_i << 20;
    uint64_t n = 1u << SHIFT;
    void *ring = ring_make(&g, k, SHIFT);
    AO_t *word = ring;
    size_t words = g.bytes / sizeof(AO_t);
    int indexed = k->kind == AM_SPSC_LAMPORT || k->kind == AM_SPSC_MCRING;
    size_t ctl = indexed ? offsetof(struct am_spsc_indexed_ring, slot) / sizeof(AO_t)
                         : offsetof(struct am_spsc_marked_ring, slot) / sizeof(AO_t);
    /* the words read: magic, version and kind, shift; head and tail */
    size_t ctl_word[] = {0, 1, 2,
                         offsetof(struct am_spsc_indexed_ring, head) / sizeof(AO_t),
                         offsetof(struct am_spsc_indexed_ring, tail) / sizeof(AO_t)};
    double slowest = 0;

    open_both(k, ring, SHIFT, &p, &c);
    for (int t = 0; t < CORRUPT_TRIALS; t++) {
        if (t % 100 == 0) { /* a fresh ring now and then */
            k->init(ring, SHIFT);
            open_both(k, ring, SHIFT, &p, &c);
            for (int i = 0; i < 5; i++)
                k->enqueue(&p, (uint64_t)i);
        }
        /* half the time a header or index word, else a slot */
        size_t w = rand_r(&seed) % 2 ? ctl_word[rand_r(&seed) % (indexed ? 5 : 3)]
                                     : ctl + (size_t)rand_r(&seed) % (words - ctl);
        word[w] = plausible(&seed, &p, &c, n);
        double t0 = tu_now_s();
        for (int i = 0; i < CORRUPT_OPS; i++)
            random_verb(k, &p, &c, &seed);
        if (rand_r(&seed) % 10 == 0) { /* a fresh end on the corrupted ring */
            struct am_spsc_end e;
            int rc = k->open(&e, ring, SHIFT,
                             rand_r(&seed) % 2 ? AM_SPSC_PRODUCER : AM_SPSC_CONSUMER);
            ck_assert_msg(rc == 0 || rc == -EPROTO, "%s: open: %d", k->name, rc);
            if (rc == 0)
                *(e.flags & AM_SPSC_PRODUCER ? &p : &c) = e;
        }
        double dt = tu_now_s() - t0;
        slowest = dt > slowest ? dt : slowest;
    }
    ck_assert_msg(slowest < CORRUPT_SLOW_S, "%s: %d verbs took %.3f s after a corruption",
                  k->name, CORRUPT_OPS, slowest);
    ring_free(&g);
}
END_TEST

static Suite *spsc_suite(void)
{
    Suite *s = suite_create("spsc");
    int nk = n_kinds();
    TCase *tc = tu_tcase(s, "single", 30);
    tcase_add_loop_test(tc, open_checks, 0, nk);
    tcase_add_loop_test(tc, order_empty_full_wrap, 0, nk);
    tc = tu_tcase(s, "stream", STREAM_TCASE_S);
    tcase_add_loop_test(tc, stream, 0, n_scases());
    tcase_add_loop_test(tc, wide_verbs, 0, nk);
    tc = tu_tcase(s, "stopped", 60);
    tcase_add_loop_test(tc, stopped_mid_batch, 0, 2 * nk);
    tcase_add_loop_test(tc, killed_at_random, 0, nk);
    tc = tu_tcase(s, "corrupt", 60);
    tcase_add_loop_test(tc, corrupt_targeted, 0, nk);
    tcase_add_loop_test(tc, corrupt_random, 0, nk);
    return s;
}

int main(void)
{
    tu_run_init("sp");
    return tu_run_suite(spsc_suite(), "check_spsc");
}
