/*
 * check_fifo.c - the shared heap's lock-free FIFO (heap/fifo.h, after XMalloc):
 * single-process semantics (order, empty, full, wrap-around of the sequence
 * numbers, am_fifo_holds finding exactly the payloads between head and tail),
 * a FIFO whose words a peer overwrote (its size word too: every call takes
 * the caller's own size), and many processes at once.
 *
 * The concurrent test forks P pinned processes through a start gate, each both
 * enqueuing its own tagged values (process << 24 | sequence) and dequeuing,
 * on a small FIFO (8 messages) so that it is full and empty all the time and
 * its sequence numbers lap the array thousands of times.  The FIFO's stall
 * hook widens the windows between an operation's reads and its CAS: now and
 * then a process yields or pauses there (tu_widen), and one time in 256 it
 * sleeps a millisecond, long enough for the others to lap the array, which is
 * what a stale transfer or a stale head would need to do harm.  Every value is counted:
 * each dequeued exactly once (a shared bitmap per producer), none lost (the
 * drained rest accounts for the others), and every consumer sees each
 * producer's values in increasing order (a FIFO's per-producer order).
 * Crashes: a process kills itself at each hook (between an operation's reads
 * and its CAS), and another is SIGKILLed at random moments; afterwards the
 * FIFO holds what it held, in order, and takes new values.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fifo.h"
#include "testutil.h"

#define SHIFT 3 /* 8 messages: full and empty all the time */
#define PROCS 4
#define PER_PROC 20000 /* values each process enqueues, times the stress factor */
#define PROC_TIMEOUT_S 60

static struct am_fifo *make(unsigned s, size_t *size)
{
    *size = am_fifo_size(s);
    struct am_fifo *f = tu_shared_alloc(*size);
    am_fifo_init(f, s);
    return f;
}

START_TEST(order_empty_full)
{
    size_t size;
    struct am_fifo *f = make(SHIFT, &size);
    uint32_t v;

    ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -ENOENT);
    for (uint32_t round = 0; round < 3 * (1u << SHIFT); round++) {
        for (uint32_t i = 0; i < (1u << SHIFT); i++)
            ck_assert_int_eq(am_fifo_put(f, SHIFT, round * 100 + i), 0);
        ck_assert_int_eq(am_fifo_put(f, SHIFT, 7), -ENOSPC);
        ck_assert_uint_eq(am_fifo_count(f, SHIFT), 1u << SHIFT);
        for (uint32_t i = 0; i < (1u << SHIFT); i++) {
            ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), 0);
            ck_assert_uint_eq(v, round * 100 + i);
        }
        ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -ENOENT);
        /* one in, one out: the tail message alone */
        ck_assert_int_eq(am_fifo_put(f, SHIFT, 42), 0);
        ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), 0);
        ck_assert_uint_eq(v, 42);
    }
    tu_shared_free(f, size);
}
END_TEST

/* The sequence numbers wrap at 2^32: start a FIFO just below and run across. */
START_TEST(sequence_wraps)
{
    size_t size;
    struct am_fifo *f = make(SHIFT, &size);
    uint32_t start = UINT32_MAX - 20, cap = 1u << SHIFT, v;

    for (uint32_t i = 0; i < cap; i++)
        f->slot[i] = (AO_t)(uint32_t)(start + i - cap) << 32; /* as init, shifted */
    f->head = start;
    f->tail = (AO_t)(uint32_t)(start - 1) << 32;
    uint32_t next = 0; /* the value the next get must return */
    for (uint32_t i = 0; i < 100; i++) {
        ck_assert_int_eq(am_fifo_put(f, SHIFT, i), 0);
        while (am_fifo_count(f, SHIFT) > cap - 3) {
            ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), 0);
            ck_assert_uint_eq(v, next++);
        }
    }
    ck_assert_uint_eq((uint32_t)f->head, start + next); /* it did wrap */
    while (am_fifo_get(f, SHIFT, &v) == 0)
        ck_assert_uint_eq(v, next++);
    ck_assert_uint_eq(next, 100);
    ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -ENOENT);
    tu_shared_free(f, size);
}
END_TEST

/* am_fifo_holds finds exactly the payloads between head and tail: the tail
 * message, those in slots, none popped, across laps of the array. */
START_TEST(holds)
{
    size_t size;
    struct am_fifo *f = make(SHIFT, &size);
    uint32_t cap = 1u << SHIFT, v, next = 0, in = 0;

    ck_assert_int_eq(am_fifo_holds(f, SHIFT, 0), 0); /* empty: the tail word is stale */
    for (uint32_t round = 0; round < 5 * cap; round++) {
        while (in - next < round % cap + 1) /* hold 1 .. cap payloads */
            ck_assert_int_eq(am_fifo_put(f, SHIFT, 1000 + in++), 0);
        for (uint32_t p = next >= 2 ? next - 2 : 0; p < in + 2; p++)
            ck_assert_msg(am_fifo_holds(f, SHIFT, 1000 + p) == (p >= next && p < in),
                          "round %u: payload %u of [%u, %u)", round, 1000 + p, next, in);
        while (next < in && (next + round) % 3 != 0) {
            ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), 0);
            ck_assert_uint_eq(v, 1000 + next++);
        }
    }
    ck_assert_int_eq(am_fifo_holds(f, SHIFT + 1, 1000 + next),
                     0);          /* not the caller's size */
    f->tail = (AO_t)0x1234 << 32; /* count beyond the capacity: gives up, says no */
    ck_assert_int_eq(am_fifo_holds(f, SHIFT, 1000 + next), 0);
    tu_shared_free(f, size);
}
END_TEST

/* A peer wrote garbage into the words: every call returns (an error or a
 * value), none spins for ever, and a bad size word is refused. */
START_TEST(corrupt_words)
{
    size_t size;
    struct am_fifo *f = make(SHIFT, &size);
    uint32_t v;

    f->tail = (AO_t)0x1234 << 32; /* count far beyond the capacity */
    ck_assert_int_eq(am_fifo_put(f, SHIFT, 1), -EAGAIN);
    ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -EAGAIN);
    ck_assert_uint_eq(am_fifo_count(f, SHIFT), 0);
    am_fifo_init(f, SHIFT);
    ck_assert_int_eq(am_fifo_put(f, SHIFT, 1), 0);
    ck_assert_int_eq(am_fifo_put(f, SHIFT, 2), 0);
    f->slot[0] = 0xdeadbeefdeadbeefull; /* the head message's slot */
    ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -EAGAIN);
    f->shift = 63;
    ck_assert_int_eq(am_fifo_put(f, SHIFT, 1), -EINVAL);
    ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -EINVAL);
    /* a size word in range but not the caller's: trusting it would index a
     * million slots past this 8-slot array */
    f->shift = AM_FIFO_MAX_SHIFT;
    ck_assert_int_eq(am_fifo_put(f, SHIFT, 1), -EINVAL);
    ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), -EINVAL);
    ck_assert_uint_eq(am_fifo_count(f, SHIFT), 0);
    tu_shared_free(f, size);
}
END_TEST

struct shared {
    struct tu_gate gate;
    AO_t put[PROCS], got[PROCS], errors;
    struct am_fifo *f;
    unsigned char *seen; /* [producer][sequence] dequeue counts */
    long per;
};

/* Records a dequeued value; last[] is this consumer's latest sequence per
 * producer, for the order check. */
static void take(struct shared *s, uint32_t v, long *last)
{
    uint32_t p = v >> 24, q = v & 0xffffff;
    if (p >= PROCS || q >= (uint32_t)s->per || (long)q <= last[p]) {
        AO_fetch_and_add1(&s->errors);
        return;
    }
    last[p] = q;
    AO_char_fetch_and_add(&s->seen[p * s->per + q], 1); /* shared counts */
}

static unsigned hook_calls;

static void stall(enum am_fifo_hook where)
{
    unsigned n = hook_calls++;
    if (n % 256 == 255)
        tu_sleep_ms(1);
    else
        tu_widen(n * 2 + (unsigned)where);
}

static void worker(int idx, void *arg)
{
    struct shared *s = arg;
    long last[PROCS], sent = 0, got = 0;
    uint32_t v;

    for (int p = 0; p < PROCS; p++)
        last[p] = -1;
    hook_calls = (unsigned)idx * 97;
    am_fifo_stall_hook = stall;
    tu_gate_wait(&s->gate);
    while (sent < s->per && !AO_load(&s->errors)) { /* the first error ends all */
        int rc = am_fifo_put(s->f, SHIFT, (uint32_t)idx << 24 | (uint32_t)sent);
        if (rc == 0)
            sent++;
        else if (rc != -ENOSPC)
            AO_fetch_and_add1(&s->errors);
        if ((rc = am_fifo_get(s->f, SHIFT, &v)) == 0) {
            take(s, v, last);
            got++;
        } else if (rc != -ENOENT) {
            AO_fetch_and_add1(&s->errors);
        }
    }
    AO_store(&s->put[idx], (AO_t)sent);
    AO_store(&s->got[idx], (AO_t)got);
}

START_TEST(many_processes)
{
    size_t size, seen_size;
    struct shared *s = tu_shared_alloc(sizeof *s);
    long per = PER_PROC * tu_stress_factor();
    long last[PROCS];
    uint32_t v;

    s->f = make(SHIFT, &size);
    s->per = per;
    seen_size = (size_t)PROCS * (size_t)per;
    s->seen = tu_shared_alloc(seen_size);
    tu_gate_init(&s->gate, PROCS);
    ck_assert_int_eq(tu_run_procs(PROCS, worker, s, PROC_TIMEOUT_S * tu_stress_factor()),
                     0);
    for (int p = 0; p < PROCS; p++)
        last[p] = -1; /* the drain is one consumer too */
    long drained = 0;
    while (am_fifo_get(s->f, SHIFT, &v) == 0) {
        take(s, v, last);
        drained++;
    }
    long got = drained, once = 0, twice = 0;
    for (int p = 0; p < PROCS; p++)
        got += (long)s->got[p];
    for (size_t i = 0; i < seen_size; i++) {
        once += s->seen[i] == 1;
        twice += s->seen[i] > 1;
    }
    ck_assert_msg(s->errors == 0, "%lu values out of order, unknown, or failed calls",
                  (unsigned long)s->errors);
    ck_assert_msg(twice == 0 && once == PROCS * per && got == PROCS * per,
                  "of %ld values: %ld dequeued once, %ld more than once, %ld dequeues "
                  "(%ld in the final drain)",
                  PROCS * per, once, twice, got, drained);
    tu_shared_free(s->seen, seen_size);
    tu_shared_free(s->f, size);
    tu_shared_free(s, sizeof *s);
}
END_TEST

/* ---- processes killed in the middle of an operation ---- */

struct victim {
    struct am_fifo *f;
    int where; /* the hook at which it kills itself, or -1: never */
    AO_t done; /* operations completed (put then get), stored after each */
};

static struct victim *self_victim;

static void die_here(enum am_fifo_hook where)
{
    if ((int)where == self_victim->where)
        raise(SIGKILL);
}

/* Puts and gets its own increasing values until it is killed, counting each
 * completed operation: the FIFO must stay usable with at most the one
 * operation under way lost or done. */
static void victim_run(void *arg)
{
    struct victim *v = arg;
    uint32_t x;

    self_victim = v;
    am_fifo_stall_hook = die_here;
    for (uint32_t i = 0;; i++) {
        if (am_fifo_put(v->f, SHIFT, i) != 0 || am_fifo_get(v->f, SHIFT, &x) != 0)
            _exit(3);
        AO_store(&v->done, i + 1);
    }
}

/* After the victim died: every value left comes out once, in order, and the
 * FIFO takes new ones. */
static void assert_usable(struct am_fifo *f, const char *what)
{
    uint32_t v, prev = 0, n = 0;
    int rc;

    while ((rc = am_fifo_get(f, SHIFT, &v)) == 0) {
        ck_assert_msg(n == 0 || v > prev, "%s: %u after %u", what, v, prev);
        prev = v;
        n++;
    }
    ck_assert_msg(rc == -ENOENT && n <= 2, "%s: drain ended %d after %u values", what, rc,
                  n);
    for (uint32_t i = 0; i < 3u << SHIFT; i++) {
        ck_assert_int_eq(am_fifo_put(f, SHIFT, i), 0);
        ck_assert_int_eq(am_fifo_get(f, SHIFT, &v), 0);
        ck_assert_uint_eq(v, i);
    }
}

/* Killed by itself at each hook: between reading the tail and its slot and the
 * CAS of a put, and between reading the head message and the CAS of a get. */
START_TEST(killed_at_hook)
{
    size_t size;
    struct victim *v = tu_shared_alloc(sizeof *v);

    v->f = make(SHIFT, &size);
    v->where = _i;
    am_fifo_put(v->f, SHIFT, 1000000); /* one resident, so a get reads a slot */
    pid_t p = tu_spawn(victim_run, v, 0);
    int st = tu_reap(p, 10);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "victim: status %d", st);
    uint32_t x;
    ck_assert_int_eq(am_fifo_get(v->f, SHIFT, &x), 0);
    ck_assert_uint_eq(x, 1000000); /* the resident is still first */
    assert_usable(v->f, _i == AM_FIFO_PUT_READ ? "killed in put" : "killed in get");
    tu_shared_free(v->f, size);
    tu_shared_free(v, sizeof *v);
}
END_TEST

/* Killed by SIGKILL from outside at a random moment, many times. */
START_TEST(killed_at_random)
{
    size_t size;
    struct victim *v = tu_shared_alloc(sizeof *v);
    unsigned seed = (unsigned)getpid();
    char what[64];

    v->f = make(SHIFT, &size);
    for (int run = 0; run < 20 * tu_stress_factor(); run++) {
        am_fifo_init(v->f, SHIFT);
        v->where = -1;
        AO_store(&v->done, 0);
        pid_t p = tu_spawn(victim_run, v, run);
        while (AO_load(&v->done) < 100)
            sched_yield();
        tu_sleep_ms((int)(rand_r(&seed) % 5));
        kill(p, SIGKILL);
        tu_reap(p, 10);
        snprintf(what, sizeof what, "run %d, killed after %lu operations", run,
                 (unsigned long)AO_load(&v->done));
        assert_usable(v->f, what);
    }
    tu_shared_free(v->f, size);
    tu_shared_free(v, sizeof *v);
}
END_TEST

static Suite *fifo_suite(void)
{
    Suite *s = suite_create("fifo");
    TCase *tc = tcase_create("fifo");
    tcase_set_timeout(tc, PROC_TIMEOUT_S + 20);
    tcase_add_test(tc, order_empty_full);
    tcase_add_test(tc, sequence_wraps);
    tcase_add_test(tc, holds);
    tcase_add_test(tc, corrupt_words);
    tcase_add_test(tc, many_processes);
    tcase_add_loop_test(tc, killed_at_hook, AM_FIFO_PUT_READ, AM_FIFO_GET_READ + 1);
    tcase_add_test(tc, killed_at_random);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    tu_run_init("ff");
    return tu_run_suite(fifo_suite(), "check_fifo");
}
