/*
 * tsan_threads.c - the shared-memory code run as threads, for ThreadSanitizer.
 *
 * TSan cannot see across processes, so `make tsan` builds this program with
 * -fsanitize=thread and runs the same code as pthreads over one
 * MAP_SHARED|MAP_ANONYMOUS region.  A missing acquire/release pair then shows as
 * a data race on the plain data the code protects, and TSan makes the program
 * exit nonzero (66) at the end.  The program also checks its own counts, prints
 * one line per case, and exits 1 if any case failed.
 *
 * Structure: `suites[]` lists one function per module; each runs its cases,
 * prints their lines and returns how many failed.  To cover another module, add
 * a function and a row to suites[].
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include <sched.h>
#include <string.h>

#include "internal.h"
#include "lock.h"
#include "mpsc.h"
#include "options.h"
#include "peers.h"
#include "send.h"
#include "senders.h"
#include "spin.h"

#define THREADS 4
#define LOCK_ITERS 20000

/* One region of shared memory, mapped as between processes. */
static void *region(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        perror("tsan_threads: mmap");
        exit(2);
    }
    return p;
}

/* Starts n threads running fn(&args[i]) and joins them; args has n entries of
 * `size` bytes. */
static void run_threads(int n, void *(*fn)(void *), void *args, size_t size)
{
    pthread_t t[n];

    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, fn, (char *)args + i * size) != 0) {
            perror("tsan_threads: pthread_create");
            exit(2);
        }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* ---- locks: a plain counter under each lock of am_lock_table ----------------- */

struct lock_region {
    long counter; /* plain: only the lock orders it */
    char pad[AM_LOCK_ALIGN - sizeof(long)];
    char lock[]; /* at AM_LOCK_ALIGN */
};

_Static_assert(offsetof(struct lock_region, lock) == AM_LOCK_ALIGN,
               "lock state is aligned");

struct lock_thread {
    const struct am_lock_ops *ops;
    struct lock_region *r;
    unsigned self;
    unsigned long mended; /* mutexes found changed at unlock: none, unvandalised */
};

/* Every third acquisition goes through trylock, to check its ordering too. */
static void *lock_thread(void *arg)
{
    struct lock_thread *a = arg;
    struct am_lock_ctx c = {.self = a->self};

    for (long i = 0; i < LOCK_ITERS; i++) {
        struct spin s = SPIN_INIT;

        if (i % 3 != 2)
            a->ops->lock(a->r->lock, &c);
        else
            while (!a->ops->trylock(a->r->lock, &c))
                spin_wait(&s);
        a->r->counter++;
        a->ops->unlock(a->r->lock, &c);
    }
    a->mended = am_lock_mutex_mended();
    return NULL;
}

/* One lock: 0 if the count came out right. */
static int run_lock(const struct am_lock_ops *ops)
{
    size_t size = sizeof(struct lock_region) + ops->size(THREADS);
    struct lock_region *r = region(size);
    struct lock_thread args[THREADS];
    int rc = ops->init(r->lock, THREADS);

    for (unsigned i = 0; i < THREADS; i++)
        args[i] = (struct lock_thread){ops, r, i, 0};
    if (rc == 0)
        run_threads(THREADS, lock_thread, args, sizeof(args[0]));
    rc = rc != 0 || r->counter != (long)THREADS * LOCK_ITERS;
    for (unsigned i = 0; i < THREADS; i++)
        rc |= args[i].mended != 0; /* contention alone must never look like a peer */
    printf("tsan_threads: lock %-8s %d threads: counter %ld of %ld: %s\n", ops->name,
           THREADS, r->counter, (long)THREADS * LOCK_ITERS, rc ? "FAIL" : "ok");
    munmap(r, size);
    return rc;
}

static int run_locks(void)
{
    int failed = 0;

    for (int i = 0; am_lock_table[i]; i++)
        failed += run_lock(am_lock_table[i]);
    return failed;
}

/* ---- queues: the claim protocol and delivery, senders as threads ---------- */

/* Short, bulk and long messages: a long one's data goes through the queue's
 * heap (heap/), so TSan also sees the heap hand a block freed by the receiver
 * to the next sender. */

/* Senders and the receiver share one mapping of the endpoint (TSan cannot relate
 * two mappings of the same memory), so senders claim and publish through the
 * receiver's own view, exactly as mpsc_send.c does through a peer's. */
#define QUEUE_SENDERS 3
#define QUEUE_MSGS 20000

struct queue_run {
    am_ep_t ep;
    unsigned next[QUEUE_SENDERS]; /* receiver: next sequence per sender */
    unsigned errors;              /* receiver: out of order or bad payload */
    unsigned received;
};

struct queue_sender {
    struct queue_run *run;
    unsigned id, source, who;
    uint64_t hint; /* onecas's, for runs */
};

static unsigned char payload_byte(unsigned id, unsigned seq, size_t i)
{
    return (unsigned char)(id * 31 + seq * 7 + i);
}

/* Runs on the receiver thread: order per sender, and every bulk byte. */
static void queue_handler(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    struct queue_run *r = (struct queue_run *)am_token_ep(tok);
    unsigned id = a[0], seq = a[1];
    int bad = n != 2 || id >= QUEUE_SENDERS || seq != r->next[id];
    for (size_t i = 0; !bad && i < len; i++)
        bad = ((unsigned char *)d)[i] != payload_byte(id, seq, i);
    r->errors += bad;
    if (id < QUEUE_SENDERS)
        r->next[id] = seq + 1;
    r->received++;
}

/* A long message's data: a block of the queue's heap, allocated as send.c
 * does (yielding while the heap is full: the receiver thread frees). */
static uint64_t stage_long(struct am_queue_view *q, unsigned who, const void *data,
                           size_t len)
{
    uint64_t off;
    while (am_heap_alloc(&q->heap, len, who, &off) != 0)
        sched_yield();
    memcpy(am_heap_data(&q->heap, off, len, who), data, len);
    return off;
}

/* A batch's run (am__claim_some): short messages seq .. seq + QUEUE_RUN - 1,
 * claimed a run at a time, published in ticket order. */
#define QUEUE_RUN 5
static void queue_run_send(struct queue_sender *s, struct am_queue_view *q, unsigned seq)
{
    uint64_t ticket[QUEUE_RUN];
    int done = 0;
    while (done < QUEUE_RUN) {
        int got =
            am__claim_some(&s->run->ep.own, q, s->who, &s->hint, QUEUE_RUN - done, ticket);
        if (got <= 0) {
            sched_yield();
            continue;
        }
        for (int j = 0; j < got; j++, done++) {
            uint32_t args[2] = {s->id, seq + (unsigned)done};
            struct am_msg m = {AM_SHORT, 0, args, 2, NULL, 0, 0, 0, 0, 0};
            struct am_claim_state c = {.ticket = ticket[j], .who = s->who};
            am__publish(q, &c, &m);
        }
    }
}

/* Message seq: every fourth a bulk one (every other of them medium: its
 * data in its slot's payload area), every fourth from the second a long
 * one (lengths of one size class, 513..1024 bytes), the rest short. */
static void *queue_sender(void *arg)
{
    struct queue_sender *s = arg;
    struct am_queue_view *q = &s->run->ep.own.q[AM_REQUEST];
    unsigned char data[1024];
    for (unsigned seq = 0; seq < QUEUE_MSGS; seq++) {
        struct am_claim_state c;
        enum am_kind kind = seq % 8 == 0   ? AM_MEDIUM
                            : seq % 4 == 0 ? AM_BULK
                            : seq % 4 == 1 ? AM_LONG
                                           : AM_SHORT;
        size_t len = kind == AM_BULK || kind == AM_MEDIUM ? seq % 300
                     : kind == AM_LONG                    ? 513 + seq % 512
                                                          : 0;
        uint32_t args[2] = {s->id, seq};
        for (size_t i = 0; i < len; i++)
            data[i] = payload_byte(s->id, seq, i);
        struct am_msg m = {kind, 0, args, 2, kind == AM_SHORT ? NULL : data, len, 0};
        if (seq % 16 == 2 && seq + QUEUE_RUN <= QUEUE_MSGS) {
            queue_run_send(s, q, seq);
            seq += QUEUE_RUN - 1;
            continue;
        }
        if (kind == AM_LONG)
            m.off = stage_long(q, s->who, data, len);
        am__claim_begin(&c, kind == AM_BULK, s->who);
        while (am__claim_try(&s->run->ep.own, q, &c) <= 0)
            sched_yield();
        am__publish(q, &c, &m);
    }
    return NULL;
}

static void *queue_receiver(void *arg)
{
    struct queue_run *r = arg;
    r->ep.mt.owner = am__self(); /* this thread owns the endpoint made by hand */
    while (r->received < QUEUE_SENDERS * QUEUE_MSGS)
        if (am_poll(&r->ep) == 0)
            sched_yield();
    am__peers_close(&r->ep); /* the senders it learned: their lifelines are this
                                thread's, and only it may let go of them */
    return NULL;
}

static void yield_hook(enum am_hook where)
{
    static _Thread_local unsigned n;
    if (++n % 3 == 0)
        sched_yield();
}

/* One claim algorithm: a small endpoint laid out in an anonymous shared region
 * (the ep struct is the handler's context: am_token_ep gives it back). */
static int run_queue(enum am_claim claim)
{
    struct am_config cfg = {.claim = claim,
                            .backend = AM_SHM_POSIX,
                            .packets = 8,
                            .bulk_blocks = 2,
                            .max_senders = QUEUE_SENDERS + 1,
                            .long_max = AM_MIN_LONG};
    struct am_segment seg = {
        region(am__layout_size(&cfg)), am__layout_size(&cfg), AM_SHM_POSIX, -1, -1, 0};
    struct queue_run *r = calloc(1, sizeof *r);
    struct queue_sender s[QUEUE_SENDERS];
    pthread_t t[QUEUE_SENDERS + 1];
    int rc = am__layout_write(seg.base, &cfg, "tsan");
    if (rc == 0)
        rc = am__view_own(&r->ep.own, &seg);
    r->ep.magic = AM_EP_MAGIC;
    strcpy(r->ep.name, "tsan");
    r->ep.sources = calloc(cfg.max_senders, sizeof *r->ep.sources);
    r->ep.handlers[0] = queue_handler;
    r->ep.unlinked = 1;
    for (unsigned i = 0; i < QUEUE_SENDERS && rc == 0; i++) {
        s[i] = (struct queue_sender){r, i, 0, 0, 0};
        rc = am__sender_register(&r->ep.own, "tsan", &s[i].source, &s[i].who);
    }
    am__claim_stall_hook = yield_hook;
    for (unsigned i = 0; i < QUEUE_SENDERS && rc == 0; i++)
        pthread_create(&t[i], NULL, queue_sender, &s[i]);
    if (rc == 0)
        pthread_create(&t[QUEUE_SENDERS], NULL, queue_receiver, r);
    for (unsigned i = 0; i <= QUEUE_SENDERS && rc == 0; i++)
        pthread_join(t[i], NULL);
    am__claim_stall_hook = NULL;
    rc = rc != 0 || r->errors != 0 || r->ep.bad_packets != 0;
    printf("tsan_threads: queue %-8s %d senders: %u messages, %u errors, %lu bad: %s\n",
           am_claim_names[claim], QUEUE_SENDERS, r->received, r->errors, r->ep.bad_packets,
           rc ? "FAIL" : "ok");
    for (unsigned i = 0; i < QUEUE_SENDERS; i++) /* their lifelines, before the unmap */
        am__sender_release(&r->ep.own, s[i].source);
    free(r->ep.sources);
    free(r);
    munmap(seg.base, seg.size);
    return rc;
}

static int run_queues(void)
{
    int failed = 0;
    for (int c = 0; c < AM_CLAIM_COUNT; c++)
        failed += run_queue((enum am_claim)c);
    return failed;
}

/* ---- channels: per-sender channels of each kind, senders as threads -------- */

/* One real endpoint with a per-sender queue kind, owned by a receiver thread
 * that polls it with am_wait; CHAN_SENDERS threads, each with an endpoint of
 * its own (its name is the source the receiver learns), register in the
 * receiver's table and send through chan_send.c into their own channels.  As
 * for the queues, a sender's peer views the receiver through the receiver's
 * own mapping (TSan cannot relate two mappings of the same memory), so the
 * ring's slots and indices, the packets in the slots, the bulk blocks and
 * their give-back count, the summary bits, the heap's blocks and the wake-up
 * are all under TSan's eye.  Messages: every third bulk (every other of
 * them medium, in the ring slot's payload area), every third from
 * the second long (through the receiver's heap), the rest short; channels of
 * 4 packets and 1 bulk block, so they fill, and a bulk block is taken again
 * while packets of its last message's ring lap are still queued. */
#define CHAN_SENDERS 3
#define CHAN_MSGS 4000

struct chan_run {
    const char *kind;
    char name[40];
    am_ep_t *ep;                 /* the receiver; its thread's */
    unsigned next[CHAN_SENDERS]; /* receiver: next sequence per sender */
    unsigned errors, received;   /* receiver's */
    unsigned long bad;           /* receiver's bad packets */
    AO_t ready;                  /* 1: the receiver exists; 2: it failed */
    AO_t done;                   /* the receiver has every message */
    AO_t failed;                 /* a sender failed */
    AO_t left;                   /* senders that have let go of their entries */
};
static struct chan_run *chan_of_ep; /* the run of the receiver's handler */

/* Registering and leaving make a sender entry's page writable and read-only
 * again in the view they go through: between processes each has its own
 * mapping, but these threads share the receiver's, so a thread that tries an
 * entry another has just taken would make the winner's page read-only under
 * it.  One at a time, then. */
static pthread_mutex_t chan_table_lock = PTHREAD_MUTEX_INITIALIZER;

struct chan_sender {
    struct chan_run *run;
    unsigned id;
};

static void chan_handler(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    struct chan_run *r = chan_of_ep; /* set before the threads start */
    unsigned id = n == 2 ? a[0] : CHAN_SENDERS, seq = n == 2 ? a[1] : 0;
    int bad = id >= CHAN_SENDERS || seq != r->next[id];
    for (size_t i = 0; !bad && i < len; i++)
        bad = ((unsigned char *)d)[i] != payload_byte(id, seq, i);
    r->errors += bad;
    if (id < CHAN_SENDERS)
        r->next[id] = seq + 1;
    r->received++;
}

static void *chan_receiver(void *arg)
{
    struct chan_run *r = arg;
    struct am_ep_opts o = {.shm = "posix",
                           .queue = r->kind,
                           .packets = 4,
                           .bulk_blocks = 1,
                           .max_senders = CHAN_SENDERS + 1,
                           .long_max = AM_MIN_LONG};
    if (am_ep_create(r->name, &o, &r->ep) != 0 ||
        am_set_handler(r->ep, 0, chan_handler) != 0) {
        AO_store_release(&r->ready, 2);
        return NULL;
    }
    AO_store_release(&r->ready, 1);
    time_t end = time(NULL) + 120; /* lost messages: give up, loudly */
    while (r->received < CHAN_SENDERS * CHAN_MSGS && !AO_load(&r->failed))
        if (am_wait(r->ep, 100) < 0 || time(NULL) > end) {
            printf("tsan_threads: chan  %-11s FAIL: %u of %d messages after 120 s\n",
                   r->kind, r->received, CHAN_SENDERS * CHAN_MSGS);
            exit(1); /* senders may wait for room for good */
        }
    r->bad = am_ep_bad_packets(r->ep);
    AO_store_release(&r->done, 1);
    while (AO_load_acquire(&r->left) < CHAN_SENDERS) /* they write our table */
        sched_yield();
    am_ep_destroy(r->ep); /* by its own thread, which holds its lifelines */
    return NULL;
}

/* A long message's data in a block of the receiver's heap, as send.c stages
 * it (yielding while the heap is full: the receiver thread frees). */
static int chan_stage(struct am_peer *p, struct am_msg *m)
{
    void *block;
    struct am_heap_view *h = &p->view->q[AM_REQUEST].heap;
    while (am_heap_alloc(h, m->len, p->who, &m->off) == -ENOMEM)
        sched_yield();
    if (!(block = am_heap_data(h, m->off, m->len, p->who)))
        return -EPROTO;
    memcpy(block, m->data, m->len);
    return 0;
}

/* A batch (am__chan_send_batch): messages seq .. seq + CHAN_RUN - 1, short
 * and medium by turns, through our channel; 0 or the error. */
#define CHAN_RUN 5
static int chan_batch(am_ep_t *ep, struct am_peer *p, unsigned id, unsigned seq)
{
    static _Thread_local unsigned char data[CHAN_RUN][AM_MEDIUM_BYTES];
    static _Thread_local uint32_t args[CHAN_RUN][2];
    struct am_msg m[CHAN_RUN];
    for (unsigned j = 0; j < CHAN_RUN; j++) {
        size_t len = j % 2 ? (seq + j) % (AM_MEDIUM_BYTES + 1) : 0;
        args[j][0] = id, args[j][1] = seq + j;
        for (size_t i = 0; i < len; i++)
            data[j][i] = payload_byte(id, seq + j, i);
        m[j] = (struct am_msg){len ? AM_MEDIUM : AM_SHORT,
                               0,
                               args[j],
                               2,
                               len ? data[j] : NULL,
                               len,
                               0,
                               0,
                               0,
                               0};
    }
    int sent = 0, rc = 0;
    while (rc == 0 && sent < CHAN_RUN) {
        int went = 0;
        rc = am__chan_send_batch(ep, p, AM_REQUEST, m + sent, CHAN_RUN - sent, &went);
        sent += went;
    }
    return rc;
}

static void *chan_sender_thread(void *arg)
{
    struct chan_sender *s = arg;
    struct chan_run *r = s->run;
    struct am_ep_opts o = {.shm = "posix",
                           .queue = "mpsc",
                           .packets = 2,
                           .bulk_blocks = 1,
                           .max_senders = 2,
                           .long_max = AM_MIN_LONG};
    char name[sizeof r->name + 16];
    am_ep_t *ep = NULL;
    struct am_peer *p = calloc(1, sizeof *p);
    unsigned char data[1024];
    int rc = p ? 0 : -ENOMEM;
    snprintf(name, sizeof name, "%s-s%u", r->name, s->id);
    while (AO_load_acquire(&r->ready) == 0)
        sched_yield();
    if (rc == 0 && AO_load(&r->ready) == 1 && (rc = am_ep_create(name, &o, &ep)) == 0) {
        p->view = &r->ep->own; /* the receiver's own mapping (see above) */
        strcpy(p->name, r->name);
        pthread_mutex_lock(&chan_table_lock);
        rc = am__sender_register(p->view, name, &p->sender_index, &p->who);
        if (rc == 0 && (rc = am__chan_open_tx(p)) < 0)
            am__sender_release(p->view, p->sender_index);
        pthread_mutex_unlock(&chan_table_lock);
    }
    for (unsigned seq = 0; rc == 0 && seq < CHAN_MSGS; seq++) {
        enum am_kind kind = seq % 6 == 0   ? AM_MEDIUM
                            : seq % 3 == 0 ? AM_BULK
                            : seq % 3 == 1 ? AM_LONG
                                           : AM_SHORT;
        size_t len = kind == AM_MEDIUM ? seq % (AM_MEDIUM_BYTES + 1)
                     : kind == AM_BULK ? seq % 700
                     : kind == AM_LONG ? 513 + seq % 512
                                       : 0;
        uint32_t args[2] = {s->id, seq};
        for (size_t i = 0; i < len; i++)
            data[i] = payload_byte(s->id, seq, i);
        struct am_msg m = {kind, 0, args, 2, kind == AM_SHORT ? NULL : data, len, 0};
        if (seq % 12 == 2 && seq + CHAN_RUN <= CHAN_MSGS) {
            rc = chan_batch(ep, p, s->id, seq);
            seq += CHAN_RUN - 1;
            continue;
        }
        if (kind == AM_LONG && (rc = chan_stage(p, &m)) < 0)
            break;
        rc = am__chan_send(ep, p, AM_REQUEST, &m);
    }
    if (rc < 0)
        AO_store(&r->failed, 1);
    while (AO_load(&r->ready) == 1 && !AO_load_acquire(&r->done))
        sched_yield(); /* until the receiver has learned our name */
    pthread_mutex_lock(&chan_table_lock);
    if (p && p->view && rc == 0)
        am__sender_release(p->view, p->sender_index);
    pthread_mutex_unlock(&chan_table_lock);
    AO_fetch_and_add1_release(&r->left);
    free(p);
    if (ep)
        am_ep_destroy(ep);
    return NULL;
}

static void spsc_yield_hook(enum am_spsc_hook where)
{
    static _Thread_local unsigned n;
    if (++n % 3 == 0)
        sched_yield();
}

/* One kind: 0 if every message arrived once, in order, intact. */
static int run_chan(const char *kind)
{
    struct chan_run *r = calloc(1, sizeof *r);
    struct chan_sender s[CHAN_SENDERS];
    pthread_t t[CHAN_SENDERS + 1];
    r->kind = kind;
    snprintf(r->name, sizeof r->name, "tsan-chan-%ld", (long)getpid());
    chan_of_ep = r;
    am__claim_stall_hook = yield_hook;
    am_spsc_stall_hook = spsc_yield_hook;
    pthread_create(&t[CHAN_SENDERS], NULL, chan_receiver, r);
    for (unsigned i = 0; i < CHAN_SENDERS; i++) {
        s[i] = (struct chan_sender){r, i};
        pthread_create(&t[i], NULL, chan_sender_thread, &s[i]);
    }
    for (unsigned i = 0; i < CHAN_SENDERS; i++)
        pthread_join(t[i], NULL);
    pthread_join(t[CHAN_SENDERS], NULL);
    am__claim_stall_hook = NULL;
    am_spsc_stall_hook = NULL;
    int rc = AO_load(&r->ready) != 1 || AO_load(&r->failed) || r->errors != 0 ||
             r->bad != 0 || r->received != CHAN_SENDERS * CHAN_MSGS;
    printf("tsan_threads: chan  %-11s %d senders: %u messages, %u errors, %lu bad: %s\n",
           kind, CHAN_SENDERS, r->received, r->errors, r->bad, rc ? "FAIL" : "ok");
    free(r);
    return rc;
}

static int run_chans(void)
{
    int failed = 0;
    for (int k = 1; am_queue_names[k]; k++) /* every kind but mpsc */
        failed += run_chan(am_queue_names[k]);
    return failed;
}

/* ---- the heap: blocks handed from thread to thread ------------------------ */

/* Threads allocate blocks of mixed sizes in one small heap, fill each with
 * their own pattern (plain stores), check it, and free it; a block freed by one
 * thread and allocated by the next is written by both, so a missing
 * release/acquire between free and alloc shows as a race on its bytes. */
#define HEAP_BYTES (4u << 20)
#define HEAP_ITERS 20000

struct heap_thread {
    struct am_heap_view *h;
    unsigned who, errors, full;
};

static void *heap_thread(void *arg)
{
    struct heap_thread *t = arg;
    for (unsigned i = 0; i < HEAP_ITERS; i++) {
        size_t len = (size_t)(t->who * 7919u + i * 104729u) % (80u << 10); /* to runs */
        uint64_t off;
        if (am_heap_alloc(t->h, len, t->who, &off) != 0) {
            t->full++;
            sched_yield();
            continue;
        }
        unsigned char *b = am_heap_data(t->h, off, len, t->who);
        if (b)
            memset(b, (int)(t->who + i), len);
        for (size_t k = 0; b && k < len; k += 61)
            t->errors += b[k] != (unsigned char)(t->who + i);
        t->errors += !b || am_heap_free(t->h, off, t->who) != 0;
    }
    return NULL;
}

static int run_heap(void)
{
    void *base = region(HEAP_BYTES);
    struct am_heap_view h;
    struct heap_thread t[THREADS];
    int rc =
        am_heap_init(base, HEAP_BYTES) != 0 || am_heap_attach(&h, base, HEAP_BYTES) != 0;
    for (unsigned i = 0; i < THREADS; i++)
        t[i] = (struct heap_thread){&h, i + 1, 0, 0};
    if (rc == 0)
        run_threads(THREADS, heap_thread, t, sizeof t[0]);
    unsigned errors = 0, full = 0;
    struct am_heap_stats st = {0};
    for (unsigned i = 0; i < THREADS; i++)
        errors += t[i].errors, full += t[i].full;
    am_heap_stats(&h, &st);
    rc = rc || errors || st.blocks_live;
    printf(
        "tsan_threads: heap %d threads: %u blocks each, %u errors, %u full, %lu left: %s\n",
        THREADS, HEAP_ITERS, errors, full, st.blocks_live, rc ? "FAIL" : "ok");
    munmap(base, HEAP_BYTES);
    return rc;
}

/* ---- am_wait and the wake-up --------------------------------------------- */

/* One real endpoint (a segment in /dev/shm), mapped once: its owner thread
 * sleeps in am_wait, and a second thread, a peer with an endpoint of its own,
 * sends to it through the owner's own view of the segment, so both sides of the
 * sleeping/READY handshake (wait.c, send.c) touch one mapping that TSan watches.  The
 * sender sends one message at a time and waits for the handler's acknowledgement first, so
 * the queue never fills and it never polls the endpoint (which only its owner may), and it
 * pauses at random so the owner often sleeps in the futex.  A lost wake-up shows as an
 * am_wait that times out (1 s) although a message was sent. */
#define WAIT_MSGS 3000

struct wait_run {
    am_ep_t *ep;
    AO_t acked; /* messages handled; release by the handler */
    AO_t ready; /* the endpoint exists and maps itself */
    unsigned timeouts;
    AO_t failed; /* set by the owner when something went wrong */
};
static struct wait_run wr;

static void wait_handler(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    if (n != 1 || a[0] != AO_load(&wr.acked))
        AO_store(&wr.failed, 1);
    AO_store_release(&wr.acked, AO_load(&wr.acked) + 1);
}

static void *wait_owner(void *arg)
{
    char name[40];
    snprintf(name, sizeof name, "tsan-wait-%ld", (long)getpid());
    if (am_ep_create(name, NULL, &wr.ep) != 0 ||
        am_set_handler(wr.ep, 1, wait_handler) != 0) {
        AO_store(&wr.failed, 1);
        AO_store_release(&wr.ready, 2);
        return NULL;
    }
    AO_store_release(&wr.ready, 1);
    while (AO_load(&wr.acked) < WAIT_MSGS && !AO_load(&wr.failed)) {
        int n = am_wait(wr.ep, 1000);
        wr.timeouts += n == 0;
        if (n < 0 || wr.timeouts > 0)
            AO_store(&wr.failed, 1);
    }
    am_ep_destroy(wr.ep);
    return NULL;
}

/* The sender is a peer with an endpoint of its own, made, used and destroyed
 * in this thread (an endpoint belongs to its thread: the sender's private
 * state, its peer table and send hints, is not the owner's to share).  Its
 * peer sends through the owner's own view of the segment rather than a
 * second mapping, so that TSan, which tells memory by address, sees both
 * sides of the handshake; the mapping am_ep_map made is put back before the
 * endpoint goes. */
static void *wait_sender(void *arg)
{
    char name[40], owner[40];
    am_ep_t *ep = NULL;
    snprintf(name, sizeof name, "tsan-wsend-%ld", (long)getpid());
    snprintf(owner, sizeof owner, "tsan-wait-%ld", (long)getpid());
    while (AO_load_acquire(&wr.ready) == 0)
        sched_yield();
    if (AO_load_acquire(&wr.ready) != 1 || am_ep_create(name, NULL, &ep) != 0 ||
        am_ep_map(ep, 0, owner) != 0) {
        AO_store(&wr.failed, 1);
        if (ep)
            am_ep_destroy(ep);
        return NULL;
    }
    struct am_peer *p = am__peer(ep, 0);
    struct am_seg_view *mapped = p->view;
    p->view = &wr.ep->own;
    for (uint32_t i = 0; i < WAIT_MSGS; i++) {
        while (AO_load_acquire(&wr.acked) < i && !AO_load(&wr.failed))
            sched_yield();
        if (AO_load(&wr.failed) || am_request(ep, 0, 1, &i, 1) != 0)
            break;
        if (i % 4 == 0)
            usleep(i % 64);
    }
    while (AO_load_acquire(&wr.acked) < WAIT_MSGS && !AO_load(&wr.failed))
        sched_yield(); /* the owner still holds our entry's last message */
    p->view = mapped;
    am_ep_destroy(ep);
    return NULL;
}

static int run_wait(void)
{
    pthread_t o, t;
    pthread_create(&o, NULL, wait_owner, NULL);
    pthread_create(&t, NULL, wait_sender, NULL);
    pthread_join(t, NULL);
    pthread_join(o, NULL);
    int rc = AO_load(&wr.failed) || AO_load(&wr.acked) != WAIT_MSGS;
    printf("tsan_threads: wait     %d messages through am_wait: %lu handled, %u lost "
           "wake-ups: %s\n",
           WAIT_MSGS, (unsigned long)AO_load(&wr.acked), wr.timeouts, rc ? "FAIL" : "ok");
    return rc;
}

/* ---- a shared endpoint: many senders, two servers, kept replies ---------- */

/* Two endpoints of this process, both shared (am_ep_share): SHARE_SENDERS
 * threads send through S to R, SHARE_SERVERS threads serve R (am_wait), and
 * a worker answers the requests whose handles R's handler kept.  What TSan
 * checks here is the process-local locking of a shared endpoint
 * (threads.h): the peer tables (R learns S while S's threads send), the
 * receiver's state with handlers running unlocked, the per-peer send state,
 * the kept handles, the handler frames.  (S maps R as a peer does, at
 * another address than R's own view: the queues' own pairs are run_queue's
 * and run_wait's to check.  Sending through R's view, as run_wait does,
 * would fault here: a backoff counts in the sender's entry, read-only in
 * the owner's view.)  Counts: every request runs once, every reply (direct
 * or kept) arrives once. */
#define SHARE_SENDERS 3
#define SHARE_SERVERS 2
#define SHARE_MSGS 3000
#define SHARE_KEPT 64 /* a ring of handles for the worker */

struct share_run {
    am_ep_t *r, *s;
    AO_t ran, replies, stop, failed;
    AO_t runs[SHARE_SENDERS][SHARE_MSGS];
    pthread_mutex_t mu; /* the kept ring */
    pthread_cond_t cv;
    am_kept_t *kept[SHARE_KEPT];
    unsigned head, tail;
};
static struct share_run sr;

static void share_request(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    if (n != 2 || a[0] >= SHARE_SENDERS || a[1] >= SHARE_MSGS ||
        AO_fetch_and_add1(&sr.runs[a[0]][a[1]]) != 0)
        AO_store(&sr.failed, 1);
    AO_fetch_and_add1(&sr.ran);
    if (a[1] % 2)
        return;
    if (a[1] % 4 == 0) {
        if (am_reply(tok, 2, a, n) != 0)
            AO_store(&sr.failed, 1);
        return;
    }
    am_kept_t *k;
    if (am_token_keep(tok, &k) != 0) {
        AO_store(&sr.failed, 1);
        return;
    }
    pthread_mutex_lock(&sr.mu);
    while (sr.tail - sr.head == SHARE_KEPT) /* the worker is behind */
        pthread_cond_wait(&sr.cv, &sr.mu);
    sr.kept[sr.tail++ % SHARE_KEPT] = k;
    pthread_cond_broadcast(&sr.cv);
    pthread_mutex_unlock(&sr.mu);
}

static void share_reply(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    AO_fetch_and_add1(&sr.replies);
}

static void *share_worker(void *arg)
{
    for (;;) {
        pthread_mutex_lock(&sr.mu);
        while (sr.head == sr.tail && !AO_load(&sr.stop))
            pthread_cond_wait(&sr.cv, &sr.mu);
        if (sr.head == sr.tail) {
            pthread_mutex_unlock(&sr.mu);
            return NULL;
        }
        am_kept_t *k = sr.kept[sr.head++ % SHARE_KEPT];
        pthread_cond_broadcast(&sr.cv);
        pthread_mutex_unlock(&sr.mu);
        char data[100] = {0};
        if (am_reply_kept(k, 2, data, sizeof data, NULL, 0) != 0 ||
            am_reply_kept(k, 2, NULL, 0, NULL, 0) != -EALREADY)
            AO_store(&sr.failed, 1);
    }
}

static void *share_server(void *arg)
{
    while (!AO_load(&sr.stop))
        if (am_wait(sr.r, 20) < 0)
            AO_store(&sr.failed, 1);
    return NULL;
}

static void *share_sender(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg;
    char buf[300];
    memset(buf, (int)i, sizeof buf);
    for (uint32_t k = 0; k < SHARE_MSGS; k++) {
        uint32_t a[2] = {i, k};
        int rc = k % 3 ? am_request(sr.s, 0, 1, a, 2)
                       : am_request_bulk(sr.s, 0, 1, buf, 1 + k % 300, a, 2);
        if (rc != 0) {
            AO_store(&sr.failed, 1);
            break;
        }
    }
    while (AO_load(&sr.replies) < SHARE_SENDERS * SHARE_MSGS / 2 && !AO_load(&sr.failed) &&
           !AO_load(&sr.stop))
        am_wait(sr.s, 20);
    return NULL;
}

static int run_share(void)
{
    char r[40], s[40];
    snprintf(r, sizeof r, "tsan-share-r-%ld", (long)getpid());
    snprintf(s, sizeof s, "tsan-share-s-%ld", (long)getpid());
    struct am_ep_opts o = {.packets = 8, .bulk_blocks = 2};
    pthread_mutex_init(&sr.mu, NULL);
    pthread_cond_init(&sr.cv, NULL);
    if (am_ep_create(r, &o, &sr.r) != 0 || am_ep_create(s, &o, &sr.s) != 0 ||
        am_set_handler(sr.r, 1, share_request) != 0 ||
        am_set_handler(sr.s, 2, share_reply) || am_ep_map(sr.s, 0, r) != 0) {
        printf("tsan_threads: share    setup failed\n");
        return 1;
    }
    am_ep_share(sr.r);
    am_ep_share(sr.s);
    pthread_t snd[SHARE_SENDERS], srv[SHARE_SERVERS], w;
    pthread_create(&w, NULL, share_worker, NULL);
    for (uintptr_t i = 0; i < SHARE_SERVERS; i++)
        pthread_create(&srv[i], NULL, share_server, NULL);
    for (uintptr_t i = 0; i < SHARE_SENDERS; i++)
        pthread_create(&snd[i], NULL, share_sender, (void *)i);
    for (int i = 0; i < SHARE_SENDERS; i++)
        pthread_join(snd[i], NULL);
    pthread_mutex_lock(&sr.mu);
    AO_store(&sr.stop, 1);
    pthread_cond_broadcast(&sr.cv);
    pthread_mutex_unlock(&sr.mu);
    pthread_join(w, NULL);
    for (int i = 0; i < SHARE_SERVERS; i++)
        pthread_join(srv[i], NULL);
    am_ep_destroy(sr.s);
    am_ep_destroy(sr.r);
    int rc = AO_load(&sr.failed) || AO_load(&sr.ran) != SHARE_SENDERS * SHARE_MSGS ||
             AO_load(&sr.replies) != SHARE_SENDERS * SHARE_MSGS / 2;
    printf("tsan_threads: share    %d sender and %d serving threads, one endpoint each: "
           "%lu of %d ran, %lu of %d replies: %s\n",
           SHARE_SENDERS, SHARE_SERVERS, (unsigned long)AO_load(&sr.ran),
           SHARE_SENDERS * SHARE_MSGS, (unsigned long)AO_load(&sr.replies),
           SHARE_SENDERS * SHARE_MSGS / 2, rc ? "FAIL" : "ok");
    return rc;
}

/* ---- calls from several threads of one shared endpoint ------------------- */

/* CALL_THREADS threads make calls through one shared endpoint C to a shared
 * server endpoint V that two threads serve; every CALL_PARK_EVERY-th call
 * goes to a handler that holds its reply until its caller has timed out.
 * What TSan checks: the call records under calls_mu (a reply taken by any
 * thread's poll, timeouts, the limit's waits), the wake-up of a waiter whose
 * call another thread ended, and the server's replies into the callers'
 * rooms from two threads.  Counts: every call gets its own reply or
 * -ETIMEDOUT, and every late reply is counted. */
#define CALL_THREADS 3
#define CALL_N 300
#define CALL_PARK_EVERY 25

struct call_run {
    am_ep_t *v, *c;
    AO_t ok, parks, sent, stop, failed;
    AO_t timed_out[CALL_THREADS][CALL_N];
};
static struct call_run cr;

static void call_echo(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    if (am_reply_long(tok, 1, d, len, a, n) != 0)
        AO_store(&cr.failed, 1);
}

static void call_park(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    if (n != 2 || a[0] >= CALL_THREADS || a[1] >= CALL_N) {
        AO_store(&cr.failed, 1);
        return;
    }
    while (!AO_load_acquire(&cr.timed_out[a[0]][a[1]]))
        sched_yield();
    call_echo(tok, a, n, d, len);
}

static void *call_server(void *arg)
{
    while (!AO_load(&cr.stop))
        if (am_wait(cr.v, 20) < 0)
            AO_store(&cr.failed, 1);
    return NULL;
}

static void *call_caller(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg;
    char data[200], back[200];
    for (uint32_t k = 0; k < CALL_N; k++) {
        uint32_t a[2] = {i, k};
        size_t len = k % 200;
        memset(data, (int)(i * 31 + k), len);
        struct am_result res = {.data = back, .cap = sizeof back};
        if (k % CALL_PARK_EVERY == CALL_PARK_EVERY - 1) {
            am_call_t id;
            int rc = am_call_start(cr.c, 0, 2, a, 2, NULL, 0, &res, 20, &id);
            if (rc == 0) {
                AO_fetch_and_add1(&cr.sent);
                while ((rc = am_call_wait(cr.c, id, -1)) == -EINPROGRESS)
                    ;
            }
            AO_store_release(&cr.timed_out[i][k], 1);
            AO_fetch_and_add1(&cr.parks);
            if (rc != -ETIMEDOUT)
                AO_store(&cr.failed, 1);
            continue;
        }
        int rc = am_call(cr.c, 0, 1, a, 2, data, len, &res, 60000);
        if (rc != 0 || res.nargs != 2 || res.args[0] != i || res.args[1] != k ||
            res.len != len || memcmp(back, data, len) != 0)
            AO_store(&cr.failed, 1);
        else
            AO_fetch_and_add1(&cr.ok);
    }
    return NULL;
}

static int run_calls(void)
{
    char v[40], c[40];
    snprintf(v, sizeof v, "tsan-call-v-%ld", (long)getpid());
    snprintf(c, sizeof c, "tsan-call-c-%ld", (long)getpid());
    struct am_ep_opts o = {.packets = 4};
    if (am_ep_create(v, &o, &cr.v) != 0 || am_ep_create(c, &o, &cr.c) != 0 ||
        am_set_handler(cr.v, 1, call_echo) != 0 ||
        am_set_handler(cr.v, 2, call_park) != 0 || am_ep_map(cr.c, 0, v) != 0 ||
        am_ep_share(cr.v) != 0 || am_ep_share(cr.c) != 0) {
        printf("tsan_threads: calls    setup failed\n");
        return 1;
    }
    pthread_t callers[CALL_THREADS], srv[2];
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&srv[i], NULL, call_server, NULL);
    for (uintptr_t i = 0; i < CALL_THREADS; i++)
        pthread_create(&callers[i], NULL, call_caller, (void *)i);
    for (int i = 0; i < CALL_THREADS; i++)
        pthread_join(callers[i], NULL);
    for (int t = 0; t < 3000 && am_ep_late_replies(cr.c) < AO_load(&cr.sent); t++)
        am_wait(cr.c, 10);
    AO_store(&cr.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(srv[i], NULL);
    unsigned long late = am_ep_late_replies(cr.c);
    am_ep_destroy(cr.c);
    am_ep_destroy(cr.v);
    unsigned long total = CALL_THREADS * CALL_N;
    int rc = AO_load(&cr.failed) || AO_load(&cr.ok) + AO_load(&cr.parks) != total ||
             late != AO_load(&cr.sent);
    printf("tsan_threads: calls    %d calling and 2 serving threads: %lu of %lu replies, "
           "%lu timed out, %lu of %lu late replies: %s\n",
           CALL_THREADS, (unsigned long)AO_load(&cr.ok), total - AO_load(&cr.parks),
           (unsigned long)AO_load(&cr.parks), late, (unsigned long)AO_load(&cr.sent),
           rc ? "FAIL" : "ok");
    return rc;
}

/* ---- the table of suites ------------------------------------------------- */

static const struct suite {
    const char *name;
    int (*run)(void); /* returns the number of failed cases */
} suites[] = {
    {"locks", run_locks}, {"queues", run_queues}, {"channels", run_chans},
    {"heap", run_heap},   {"wait", run_wait},     {"share", run_share},
    {"calls", run_calls},
};

int main(void)
{
    int failed = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
        int f = suites[i].run();

        if (f)
            printf("tsan_threads: %s: %d case(s) failed\n", suites[i].name, f);
        failed += f;
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
