/*
 * fuzz_segment.c - libFuzzer target: the fuzzer's bytes as shared memory that
 * a peer wrote, under AddressSanitizer and UndefinedBehaviorSanitizer
 * (`make fuzz`, scripts/fuzz.sh).
 *
 * Two modes, one per side of the protocol (modes[] below):
 *   peer  the bytes are a peer's whole segment: attach to it (view.c), register
 *         as a sender (senders.c), claim and publish one short, one medium
 *         (inline in its slot's payload area), one bulk and one long message
 *         (send.c; the long one in a block of the peer's heap, heap/), leave.
 *         A peer whose header names a per-sender queue kind gets them
 *         through our channel there instead (chan_send.c: its ring, the
 *         packets in its slots and their payload areas, its bulk blocks and
 *         their give-back count, the summary), sent from an endpoint of our
 *         own.
 *   own   the bytes overwrite the queue areas (sender table, tails, heads,
 *         packets, bulk states, the heaps' metadata) of an endpoint of our own,
 *         laid out with am__layout_write; then poll it (poll.c) a bounded
 *         number of times.  With a per-sender kind the areas are the summary
 *         and every channel's ring (slots and packets), bulk count and first
 *         bulk bytes, then the heaps' metadata; sender 0 is registered (and
 *         gone, so its channels are also drained and laid out again), and
 *         polling reaches chan_poll.c.
 * Nothing may crash, touch memory outside the segment (it is mapped between
 * two PROT_NONE guard pages), trip a sanitizer, or hang (libFuzzer's -timeout);
 * and once the segment is gone, no robust mutex of it (a lifeline, a lock) may
 * remain on this thread's robust list, where glibc and the kernel would later
 * follow it into unmapped memory (robust_list_empty).
 *
 * Input: a control block, then the payload (the segment image, or the queue
 * areas' bytes in order):
 *   byte 0     flags: bit 0 the mode (0 peer, 1 own) unless --mode= forces it;
 *              bit 1 (peer) send to the reply queue; bit 2 raise `orphans`;
 *              bit 3 the peer writes the same bytes again, where a peer
 *              can (from the shared block on: the header and lifeline pages
 *              are read-only to it), while we are registered (peer: before
 *              we leave; own: after the polls);
 *              bit 4 (peer) it does so while we hold its queue's lock (the
 *              claim's AM_HOOK_LOCKED) or, for a channel, while our packet is
 *              written and not yet committed (AM_HOOK_CHAN_FILLED), once
 *   byte 1     (own) the claim algorithm, modulo AM_CLAIM_COUNT; its bits 3..
 *              the queue kind, modulo AM_QUEUE_COUNT (0: mpsc); bit 2 of byte 0
 *              then also asks for the recycling of departed senders' channels
 *   bytes 2-3  (peer) bulk length, little-endian, modulo AM_BULK_BYTES + 1;
 *              the medium message's is it modulo AM_MEDIUM_BYTES + 1
 * The seeds' queues hold a short, a bulk and medium messages (packets
 * flagged AM_PKT_MEDIUM, their data in their slots' payload areas) of 448,
 * 0 and 1 bytes and one of 449, which the receiver must drop; the handler
 * traps on a medium message's data that does not fit its slot's area.
 *
 * Waiting is bounded by the target, not the runtime: a locked claim waits for
 * a live lock holder by design (a slow holder keeps the lock), so in peer mode
 * the owner's lifeline is cleared first and every wait gives up at its first
 * watch tick (the receiver is gone).  Sends try at most SEND_TRIES times.
 *
 * Options (before libFuzzer's own; libFuzzer ignores flags that start with
 * "--"): --list-modes prints the modes and exits; --mode=NAME forces a mode;
 * --write-seeds=DIR writes the seeds (as in tests/fuzz/corpus/segment; fuzz.sh
 * writes fresh ones on every run, so a layout change never leaves them stale)
 * and exits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "mpsc.h"
#include "options.h"
#include "peers.h"
#include "polling.h"
#include "send.h"
#include "senders.h"
#include "threads.h"

#define CTL_BYTES 4
#define F_OWN 1u
#define F_REPLY 2u
#define F_ORPHANS 4u
#define F_REWRITE 8u
#define F_REWRITE_LOCKED 16u
#define PAGE 4096u
#define PEER_MAX_SIZE (1u << 20) /* largest peer segment tried */
#define SEND_TRIES 64
/* Polls in own mode; more while a head waits on a claim, to get past the
 * runtime's stuck-claim checks (every few dozen polls). */
#define OWN_POLLS 4
#define OWN_POLLS_STUCK 200
/* With a per-sender kind: enough idle polls for two rounds of the owner's
 * chores (every 16 idle polls: a look past the summary, recycling). */
#define OWN_POLLS_CHAN 40
#define OWN_NAME "fuzz"

/* The small endpoint of own mode: packets, bulk blocks, senders, abandon_ms. */
static const struct am_config own_cfg = {.claim = AM_CLAIM_LOCKFREE,
                                         .backend = AM_SHM_POSIX,
                                         .packets = 8,
                                         .bulk_blocks = 2,
                                         .max_senders = 4,
                                         .long_max = AM_MIN_LONG,
                                         .abandon_ms = 400};

/* ---- memory ------------------------------------------------------------- */

/* A fresh zero-filled MAP_SHARED region of `size` bytes (a multiple of PAGE)
 * between two PROT_NONE guard pages, as a segment; base NULL on failure. */
static struct am_segment region_map(size_t size)
{
    struct am_segment seg = {NULL, size, AM_SHM_POSIX, -1, -1};
    char *p = mmap(NULL, size + 2 * PAGE, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return seg;
    if (mprotect(p + PAGE, size, PROT_READ | PROT_WRITE) != 0) {
        munmap(p, size + 2 * PAGE);
        return seg;
    }
    seg.base = p + PAGE;
    return seg;
}

static void region_unmap(struct am_segment *seg)
{
    munmap((char *)seg->base - PAGE, seg->size + 2 * PAGE);
}

static size_t page_up(size_t n)
{
    return (n + PAGE - 1) / PAGE * PAGE;
}

/* Copy up to `len` bytes of the input at *d into dst, consuming them. */
static void spill(const uint8_t **d, size_t *n, void *dst, size_t len)
{
    size_t k = *n < len ? *n : len;
    memcpy(dst, *d, k);
    *d += k;
    *n -= k;
}

/* ---- peer: the bytes are a peer's segment --------------------------------- */

static unsigned char bulk_data[AM_BULK_BYTES];

/* Claim a packet (and a bulk block for AM_BULK) of queue q, trying SEND_TRIES
 * times without waiting, and publish message m if the claim completed.  0,
 * -EAGAIN (no room) or the claim's error. */
static int send_one(struct am_seg_view *v, struct am_queue_view *q, unsigned who,
                    struct am_msg *m)
{
    struct am_claim_state c;
    am__claim_begin(&c, m->kind == AM_BULK, who);
    for (int i = 0; i < SEND_TRIES; i++) {
        int rc = am__claim_try(v, q, &c);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            am__publish(q, &c, m);
            return 0;
        }
    }
    return -EAGAIN;
}

/* A long message of len bytes: a block of the peer's heap (whatever its
 * metadata says), filled, then published as send_one does. */
static int send_long(struct am_seg_view *v, struct am_queue_view *q, unsigned who,
                     struct am_msg *m)
{
    void *block;
    if (am_heap_alloc(&q->heap, m->len, who, &m->off) != 0 ||
        !(block = am_heap_data(&q->heap, m->off, m->len, who)))
        return -EAGAIN;
    memcpy(block, bulk_data, m->len);
    return send_one(v, q, who, m);
}

/* Our own endpoint, for the per-sender kinds' sends (a blocked send polls
 * the sender's endpoint); made once (own_ep, below). */
static am_ep_t *sender;

/* Through our channels at a peer of a per-sender kind, registered as entry
 * `index` with claimant id `who`: open our ends, then the four messages of
 * m (the long one, last, staged in the peer's heap first, as send.c does).  Every
 * wait gives up at its first round: the peer's owner is gone (the file
 * header).  Errors end the sends; nothing else. */
static void chan_send4(struct am_seg_view *v, enum am_qid qid, unsigned index, unsigned who,
                       struct am_msg *m)
{
    static struct am_peer peer;
    void *block;
    memset(&peer, 0, sizeof peer);
    peer.view = v;
    peer.sender_index = index;
    peer.who = who;
    if (!sender || am__chan_open_tx(&peer) != 0)
        return;
    for (int i = 0; i < 3; i++)
        if (am__chan_send(sender, &peer, qid, &m[i]) != 0)
            return;
    if (am_heap_alloc(&v->q[qid].heap, m[3].len, who, &m[3].off) != 0)
        return;
    if ((block = am_heap_data(&v->q[qid].heap, m[3].off, m[3].len, who)))
        memcpy(block, bulk_data, m[3].len);
    if (!block || am__chan_send(sender, &peer, qid, &m[3]) != 0)
        am_heap_free(&v->q[qid].heap, m[3].off, who);
}

/* F_REWRITE_LOCKED: the image the peer writes again over `view`'s segment
 * when the claim hook next reports a held lock. */
static struct rewrite {
    const struct am_seg_view *view; /* NULL when not armed */
    const uint8_t *d;
    size_t n;
} rewrite;

/* Write the image (d, n) again over view v's segment where a peer can: from
 * the shared block on (the header and lifeline pages are read-only to peers,
 * layout.h). */
static void peer_rewrite(const struct am_seg_view *v, const uint8_t *d, size_t n)
{
    size_t from = (size_t)((unsigned char *)v->shared - (unsigned char *)v->seg.base);
    if (n > from)
        memcpy((unsigned char *)v->seg.base + from, d + from, n - from);
}

static void rewrite_hook(enum am_hook where)
{
    if ((where == AM_HOOK_LOCKED || where == AM_HOOK_CHAN_FILLED) && rewrite.view) {
        peer_rewrite(rewrite.view, rewrite.d, rewrite.n);
        rewrite.view = NULL;
    }
}

/* Register in the peer's table, send a short, a medium, a bulk and a long
 * message, and leave
 * (the entry's lifeline is a robust mutex this thread holds: let it go before
 * the segment is unmapped, or glibc's robust list points into nothing).  With
 * F_REWRITE the peer writes its image (d, n) over the segment again first. */
static void peer_send(struct am_seg_view *v, unsigned flags, size_t len, const uint8_t *d,
                      size_t n)
{
    unsigned index, who;
    enum am_qid qid = flags & F_REPLY ? AM_REPLY : AM_REQUEST;
    if (am__sender_register(v, "fuzz-sender", &index, &who) != 0)
        return;
    n = n < v->seg.size ? n : v->seg.size;
    rewrite = (struct rewrite){flags & F_REWRITE_LOCKED ? v : NULL, d, n};
    static const uint32_t args[AM_MAX_ARGS] = {1, 2, 3, 4, 5, 6, 7, 8};
    struct am_msg m[4] = {
        {AM_SHORT, 1, args, AM_MAX_ARGS, NULL, 0, 0},
        {AM_MEDIUM, 1, args, 2, bulk_data, len % (AM_MEDIUM_BYTES + 1), 0},
        {AM_BULK, 1, args, 2, bulk_data, len, 0},
        {AM_LONG, 1, args, 2, bulk_data, len % (AM_MIN_LONG + 1), 0}};
    if (v->queue != AM_QUEUE_MPSC)
        chan_send4(v, qid, index, who, m);
    else if (send_one(v, &v->q[qid], who, &m[0]) != -EPIPE &&
             send_one(v, &v->q[qid], who, &m[1]) != -EPIPE &&
             send_one(v, &v->q[qid], who, &m[2]) != -EPIPE)
        send_long(v, &v->q[qid], who, &m[3]);
    rewrite.view = NULL;
    if (flags & F_ORPHANS)
        am__claim_orphans_ask(v, qid);
    if (flags & F_REWRITE)
        peer_rewrite(v, d, n);
    am__sender_release(v, index);
}

/* The segment's size: the header's own if it is plausible, else the input's,
 * page-rounded and at most PEER_MAX_SIZE. */
static size_t peer_size(const uint8_t *d, size_t n)
{
    struct am_seg_header h = {0};
    memcpy(&h, d, n < sizeof h ? n : sizeof h);
    size_t size = n;
    if (h.segment_size > n && h.segment_size <= PEER_MAX_SIZE)
        size = (size_t)h.segment_size;
    size = page_up(size < sizeof h ? sizeof h : size);
    return size < PEER_MAX_SIZE ? size : PEER_MAX_SIZE;
}

static void peer_case(const uint8_t *ctl, const uint8_t *d, size_t n)
{
    struct am_segment seg = region_map(peer_size(d, n));
    struct am_seg_view v;
    char name[AM_NAME_MAX];
    if (!seg.base)
        return;
    memcpy(seg.base, d, n < seg.size ? n : seg.size);
    struct am_seg_header *h = seg.base;
    memcpy(name, h->name, sizeof name);
    name[AM_NAME_MAX - 1] = '\0';
    memset(&h->owner_life, 0, sizeof h->owner_life); /* see the file header */
    if (am__view_attach(&v, &seg, name) == 0) {
        peer_send(&v, ctl[0], (ctl[2] | (size_t)ctl[3] << 8) % (AM_BULK_BYTES + 1), d, n);
    }
    region_unmap(&seg);
}

/* ---- own: the bytes are our own queues ------------------------------------ */

static volatile unsigned sink;

/* What the runtime promises a handler, whatever the queue held: checked here,
 * a trap if broken.  Reads every argument and bulk byte (ASan and the guard
 * pages see any that lie outside). */
/* Is (data, len) a medium message's that does not fit its slot's payload
 * area: data inside the areas at `areas` (n slots), off its area's start or
 * running past its end? */
static int medium_off_area(const unsigned char *areas, uint32_t n,
                           const unsigned char *data, size_t len)
{
    if (!areas || data < areas || data >= areas + (size_t)n * AM_MEDIUM_BYTES)
        return 0;
    return (size_t)(data - areas) % AM_MEDIUM_BYTES != 0 || len > AM_MEDIUM_BYTES;
}

/* Does (data, len) break a medium message's bound, in any queue or channel
 * of our own endpoint? */
static int medium_bad(am_ep_t *ep, const void *data, size_t len)
{
    const struct am_seg_view *v = &ep->own;
    for (int q = 0; q < 2; q++) {
        if (v->queue == AM_QUEUE_MPSC) {
            if (medium_off_area(v->q[q].medium, v->q[q].packets_n, data, len))
                return 1;
            continue;
        }
        for (unsigned i = 0; i < v->max_senders; i++) {
            struct am_chan_view c;
            am__chan_at(v, i, (enum am_qid)q, &c);
            if (medium_off_area(c.medium, v->q[q].packets_n, data, len))
                return 1;
        }
    }
    return 0;
}

static void handler(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                    size_t len)
{
    am_ep_t *ep = am_token_ep(tok);
    unsigned src = am_token_source(tok), sum = 0;
    if (nargs < 0 || nargs > AM_MAX_ARGS || len > AM_BULK_BYTES || (len && !data) ||
        (src != AM_SOURCE_UNKNOWN && !am__peer(ep, src)) || medium_bad(ep, data, len))
        __builtin_trap();
    for (int i = 0; i < nargs; i++)
        sum += args[i];
    for (size_t i = 0; i < len; i++)
        sum += ((const unsigned char *)data)[i];
    sink = sum; /* keep the reads */
}

/* The queue areas of view v that own mode overwrites, in layout order: at
 * most OWN_AREAS of them.  Returns how many.  Per-sender kinds: the summary,
 * then each channel's ring (its slots are the packets), bulk count and first
 * line of bulk data, then the heaps' metadata. */
#define OWN_AREAS (1 + 3 * 2 * 4 + 2) /* own_cfg.max_senders channels a queue */
struct area {
    void *p;
    size_t len;
};
static int own_areas(const struct am_seg_view *v, struct area a[OWN_AREAS])
{
    int k = 0;
    if (v->queue != AM_QUEUE_MPSC) {
        a[k++] = (struct area){v->summary, 2 * sizeof *v->summary};
        for (unsigned i = 0; i < v->max_senders && k + 3 <= OWN_AREAS - 2; i++)
            for (int q = 0; q < 2; q++) {
                struct am_chan_view c;
                am__chan_at(v, i, (enum am_qid)q, &c);
                a[k++] = (struct area){c.ring, v->chan_ring};
                a[k++] = (struct area){c.ctl, sizeof *c.ctl};
                a[k++] = (struct area){c.bulk, 64};
            }
        for (int i = 0; i < 2; i++)
            a[k++] = (struct area){v->q[i].heap.base, v->q[i].heap.meta};
        return k;
    }
    for (int i = 0; i < 2; i++) {
        const struct am_queue_view *q = &v->q[i];
        a[k++] = (struct area){q->send, sizeof *q->send};
        a[k++] = (struct area){q->recv, sizeof *q->recv};
        a[k++] = (struct area){q->packets, q->packets_n * sizeof *q->packets};
        a[k++] = (struct area){q->bulk_state, q->bulk_n * sizeof *q->bulk_state};
        a[k++] = (struct area){q->heap.base, q->heap.meta};
    }
    return k;
}

/* Overwrite the queue areas of view v with the input. */
static void own_overwrite(struct am_seg_view *v, const uint8_t *d, size_t n)
{
    struct area a[OWN_AREAS];
    for (int i = 0, k = own_areas(v, a); i < k; i++)
        spill(&d, &n, a[i].p, a[i].len);
}

/* An endpoint over `seg` as am_ep_create would make it (no name in /dev/shm),
 * handler 0 and 1 registered.  NULL if out of memory. */
static am_ep_t *own_ep(const struct am_segment *seg, const struct am_config *cfg)
{
    am_ep_t *ep = calloc(1, sizeof *ep);
    if (!ep || !(ep->sources = calloc(cfg->max_senders, sizeof *ep->sources))) {
        free(ep);
        return NULL;
    }
    if (am__view_own(&ep->own, seg) != 0) {
        free(ep->sources);
        free(ep);
        return NULL;
    }
    ep->magic = AM_EP_MAGIC;
    /* This thread owns it, as am_ep_create's am__mt_init says: a peer it
     * learns (a message from its own name maps itself) is closed, and its
     * lifeline let go, by the owner's am__peers_close only. */
    ep->mt.owner = am__self();
    strcpy(ep->name, OWN_NAME);
    ep->backend = AM_SHM_POSIX;
    ep->unlinked = 1;
    ep->abandon_ms = cfg->abandon_ms;
    ep->bad_packets = 1; /* past the once-only report: bad packets stay quiet */
    ep->handlers[0] = ep->handlers[1] = handler;
    if (am__chans_open(ep) != 0) { /* per-sender kinds: every channel laid out */
        free(ep->sources);
        free(ep);
        return NULL;
    }
    return ep;
}

/* Sender entry 0 of view v taken by OWN_NAME, generation 1, READY, its
 * lifeline held by nobody (so the owner finds it gone). */
static void own_sender0(struct am_seg_view *v)
{
    struct am_sender *e = am__sender(v, 0);
    if (am__view_entry_writable(v, 0, 1) != 0)
        return;
    e->state = AM_SENDER(1, AM_SENDER_READY);
    strcpy(e->name, OWN_NAME);
    am__view_entry_writable(v, 0, 0);
}

static void own_free(am_ep_t *ep)
{
    am__peers_close(ep); /* lets go of the lifelines taken, unmaps peers */
    am__chans_free(ep);
    free(ep->sources);
    free(ep);
}

static void own_case(const uint8_t *ctl, const uint8_t *d, size_t n)
{
    struct am_config cfg = own_cfg;
    cfg.claim = (enum am_claim)(ctl[1] % AM_CLAIM_COUNT);
    cfg.queue = (enum am_queue_kind)((ctl[1] >> 3) % AM_QUEUE_COUNT);
    int chans = cfg.queue != AM_QUEUE_MPSC;
    struct am_segment seg = region_map(am__layout_size(&cfg));
    am_ep_t *ep = seg.base && am__layout_write(seg.base, &cfg, OWN_NAME) == 0
                      ? own_ep(&seg, &cfg)
                      : NULL;
    if (ep) {
        AO_store(&ep->own.hdr->state, AM_SEG_LIVE);
        if (chans)
            own_sender0(&ep->own);
        own_overwrite(&ep->own, d, n);
        if (ctl[0] & F_ORPHANS)
            ep->own.shared->orphans[0] = ep->own.shared->orphans[1] =
                ep->own.shared->recycle = 1;
        for (int i = 0; i < (chans ? OWN_POLLS_CHAN : OWN_POLLS) ||
                        (am__stuck(ep) && i < OWN_POLLS_STUCK);
             i++)
            am__poll(ep);
        if (ctl[0] & F_REWRITE)
            own_overwrite(&ep->own, d, n);
        own_free(ep);
    }
    if (seg.base)
        region_unmap(&seg);
}

/* ---- modes, options, seeds -------------------------------------------------- */

static const struct mode {
    const char *name;
    void (*run)(const uint8_t *ctl, const uint8_t *d, size_t n);
} modes[] = {
    {"peer", peer_case},
    {"own", own_case},
};
#define MODES ((int)(sizeof modes / sizeof modes[0]))

static int forced = -1; /* --mode=: index into modes[], or -1 (input byte 0) */

/* Is this thread's robust list (glibc's, registered with the kernel) empty, as
 * it must be once every lifeline and mutex lock taken has been let go? */
static int robust_list_empty(void)
{
    struct robust_list_head *head;
    size_t len;
    if (syscall(SYS_get_robust_list, 0, &head, &len) != 0)
        return 1;
    return head->list.next == &head->list;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t ctl[CTL_BYTES] = {0};
    const uint8_t *d = data;
    size_t n = size;
    spill(&d, &n, ctl, sizeof ctl);
    modes[forced >= 0 ? forced : (ctl[0] & F_OWN) % MODES].run(ctl, d, n);
    if (!robust_list_empty()) {
        fprintf(stderr, "fuzz_segment: a robust mutex of the unmapped segment is still "
                        "on this thread's robust list\n");
        abort();
    }
    return 0;
}

/* Write one seed: the control block, then `len` bytes of `body`. */
static void seed_write(const char *dir, const char *name, const uint8_t *ctl,
                       const void *body, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(ctl, 1, CTL_BYTES, f) != CTL_BYTES || fwrite(body, 1, len, f) != len ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* The lengths of the seeds' medium messages, in the slots after a short and
 * a bulk one: AM_MEDIUM_BYTES + 1 is one the receiver must drop. */
#define MEDIUM_SEEDS 4
static const uint32_t medium_seed_len[MEDIUM_SEEDS] = {AM_MEDIUM_BYTES, 0, 1,
                                                       AM_MEDIUM_BYTES + 1};

/* A live endpoint of `cfg` in a fresh region, viewed by v, with sender 0
 * registered as OWN_NAME (generation 1) and, in the request queue, a short
 * message ready in slot 0, a bulk one in slot 1 and medium ones in the
 * slots after (medium_seed_len, as many as fit), their data in the slots'
 * payload areas. */
static struct am_segment seed_endpoint(const struct am_config *cfg, struct am_seg_view *v)
{
    struct am_segment seg = region_map(am__layout_size(cfg));
    struct am_queue_view *q = &v->q[AM_REQUEST];
    unsigned who = AM_WHO(0, 1);
    if (!seg.base || am__layout_write(seg.base, cfg, OWN_NAME) != 0 ||
        am__view_own(v, &seg))
        exit(1);
    v->hdr->state = AM_SEG_LIVE;
    v->hdr->owner_pid = 0;
    struct am_sender *e = am__sender(v, 0);
    if (am__view_entry_writable(v, 0, 1) != 0)
        exit(1);
    e->state = AM_SENDER(1, AM_SENDER_READY);
    strcpy(e->name, OWN_NAME);
    q->packets[0] = (struct am_packet){.state = AM_STATE(0, who, AM_READY), .nargs = 2};
    q->packets[1] = (struct am_packet){
        .state = AM_STATE(0, who, AM_READY_BULK), .handler = 1, .bulk_len = 100};
    q->bulk_state[0].state = AM_STATE(0, who, AM_CLAIMED);
    q->send->tail = 2;
    q->send->bulk_tail = 1;
    /* Medium ones in the slots after: full, empty, one byte, one too long
     * (dropped: over its slot's area), as many as the queue holds. */
    for (uint32_t k = 2; k < 2 + MEDIUM_SEEDS && k < cfg->packets; k++) {
        uint32_t len = medium_seed_len[k - 2];
        q->packets[k] = (struct am_packet){.state = AM_STATE(0, who, AM_READY),
                                           .handler = 1,
                                           .flags = AM_PKT_MEDIUM,
                                           .bulk_len = len};
        memset(q->medium + k * AM_MEDIUM_BYTES, 0x5a, AM_MEDIUM_BYTES);
        q->send->tail = k + 1;
    }
    return seg;
}

/* A live endpoint of per-sender kind cfg->queue in a fresh region, every
 * channel laid out (own_ep), sender 0 registered as OWN_NAME (generation 1),
 * and in its request channel a short message, a bulk one and medium ones
 * (medium_seed_len, as many as fit; their data in the slots' payload
 * areas), committed and flagged in the summary as its producer would. */
static am_ep_t *seed_chan_endpoint(const struct am_config *cfg, struct am_segment *seg)
{
    *seg = region_map(am__layout_size(cfg));
    am_ep_t *ep = seg->base && am__layout_write(seg->base, cfg, OWN_NAME) == 0
                      ? own_ep(seg, cfg)
                      : NULL;
    if (!ep)
        exit(1);
    struct am_seg_view *v = &ep->own;
    struct am_chan_view c;
    struct am_spsc_end end;
    AO_t *slot;
    unsigned who = AM_WHO(0, 1);
    v->hdr->state = AM_SEG_LIVE;
    v->hdr->owner_pid = 0;
    own_sender0(v);
    am__chan_at(v, 0, AM_REQUEST, &c);
    if (v->ring->open(&end, c.ring, (unsigned)__builtin_ctz(cfg->packets),
                      AM_SPSC_PRODUCER | AM_SPSC_WIDE) != 0)
        exit(1);
    for (unsigned k = 0; k < 2 + MEDIUM_SEEDS && k < cfg->packets; k++) {
        if (v->ring->reserve(&end, &slot) != 0)
            exit(1);
        struct am_packet *p = (struct am_packet *)slot; /* words 1..: ours */
        p->handler = (uint16_t)(k != 0);
        p->nargs = 2;
        p->flags = k >= 2 ? AM_PKT_MEDIUM : 0;
        p->bulk_len = k == 1 ? 100 : k >= 2 ? medium_seed_len[k - 2] : 0;
        p->bulk_ticket = 0;
        if (k >= 2)
            memset(c.medium + (size_t)(p - c.packets) * AM_MEDIUM_BYTES, 0x5a,
                   AM_MEDIUM_BYTES);
        v->ring->commit(&end, AM_STATE(am_lap(k, cfg->packets), who,
                                       k == 1 ? AM_READY_BULK : AM_READY));
    }
    v->ring->flush(&end);
    v->summary[AM_REQUEST].bits[0] = 1;
    return ep;
}

/* Seeds for per-sender kind k: a peer image cut where the reply queue's heap
 * metadata ends, and our own areas (control byte 1: the kind in bits 3..). */
static void seeds_queue(const char *dir, enum am_queue_kind k)
{
    struct am_config peer = {.claim = AM_CLAIM_LOCKFREE,
                             .queue = k,
                             .backend = AM_SHM_POSIX,
                             .packets = 2u << (k % 3),
                             .bulk_blocks = 1,
                             .max_senders = 2 + k % 3,
                             .long_max = AM_MIN_LONG};
    struct am_config own = own_cfg;
    uint8_t ctl[CTL_BYTES] = {0, 0, 100, 0};
    struct am_segment seg;
    struct area a[OWN_AREAS];
    char name[64];
    am_ep_t *ep = seed_chan_endpoint(&peer, &seg);
    const struct am_heap_view *h = &ep->own.q[AM_REPLY].heap;
    snprintf(name, sizeof name, "peer-%s", am_queue_names[k]);
    seed_write(dir, name, ctl, seg.base, (size_t)(h->base + h->meta - (uint8_t *)seg.base));
    own_free(ep);
    region_unmap(&seg);
    own.queue = k;
    ep = seed_chan_endpoint(&own, &seg);
    uint8_t *b = malloc(seg.size), *p = b;
    if (!b)
        exit(1);
    for (int i = 0, n = own_areas(&ep->own, a); i < n; p += a[i].len, i++)
        memcpy(p, a[i].p, a[i].len);          /* gathered in layout order */
    ctl[0] = F_OWN | (k % 2 ? F_ORPHANS : 0); /* half of them: recycling asked */
    ctl[1] = (uint8_t)(k << 3);
    snprintf(name, sizeof name, "own-%s", am_queue_names[k]);
    seed_write(dir, name, ctl, b, (size_t)(p - b));
    free(b);
    own_free(ep);
    region_unmap(&seg);
}

/* Seeds for claim algorithm c: a peer image cut where the reply queue's heap
 * metadata ends (the rest, heap blocks, reads as zeros), and our own queues'
 * areas. */
static void seeds_claim(const char *dir, enum am_claim c)
{
    struct am_config peer = {.claim = c,
                             .backend = AM_SHM_POSIX,
                             .packets = 2u << (c % 3),
                             .bulk_blocks = 1,
                             .max_senders = 2 + c % 3,
                             .long_max = AM_MIN_LONG};
    struct am_config own = own_cfg;
    uint8_t ctl[CTL_BYTES] = {0, (uint8_t)c, 100, 0};
    struct am_seg_view v;
    struct area a[OWN_AREAS];
    char name[64];
    struct am_segment seg = seed_endpoint(&peer, &v);
    snprintf(name, sizeof name, "peer-%s", am_claim_names[c]);
    seed_write(
        dir, name, ctl, seg.base,
        (size_t)(v.q[AM_REPLY].heap.base + v.q[AM_REPLY].heap.meta - (uint8_t *)seg.base));
    region_unmap(&seg);
    own.claim = c;
    seg = seed_endpoint(&own, &v);
    uint8_t *b = malloc(seg.size), *p = b;
    if (!b)
        exit(1);
    for (int i = 0, k = own_areas(&v, a); i < k; p += a[i].len, i++)
        memcpy(p, a[i].p, a[i].len); /* gathered in layout order */
    ctl[0] = F_OWN | (c == AM_CLAIM_MUTEX ? F_ORPHANS : 0);
    snprintf(name, sizeof name, "own-%s", am_claim_names[c]);
    seed_write(dir, name, ctl, b, (size_t)(p - b));
    free(b);
    region_unmap(&seg);
}

/* The index of mode `name` in modes[], or -1. */
static int mode_find(const char *name)
{
    for (int m = 0; m < MODES; m++)
        if (strcmp(name, modes[m].name) == 0)
            return m;
    return -1;
}

/* Our options (see the file header); libFuzzer parses its own after this. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    am__claim_stall_hook = rewrite_hook;
    for (int i = 1; i < *argc; i++) {
        const char *a = (*argv)[i];
        if (strcmp(a, "--list-modes") == 0)
            for (int m = 0; m < MODES; m++)
                puts(modes[m].name);
        if (strncmp(a, "--write-seeds=", 14) == 0) {
            for (int c = 0; c < AM_CLAIM_COUNT; c++)
                seeds_claim(a + 14, (enum am_claim)c);
            for (int k = 1; k < AM_QUEUE_COUNT; k++) /* every kind but mpsc */
                seeds_queue(a + 14, (enum am_queue_kind)k);
        }
        if (strcmp(a, "--list-modes") == 0 || strncmp(a, "--write-seeds=", 14) == 0)
            exit(0);
        if (strncmp(a, "--mode=", 7) == 0 && (forced = mode_find(a + 7)) < 0) {
            fprintf(stderr, "fuzz_segment: no mode %s (--list-modes)\n", a + 7);
            exit(2);
        }
    }
    struct am_segment seg = region_map(am__layout_size(&own_cfg));
    if (!seg.base || am__layout_write(seg.base, &own_cfg, OWN_NAME) != 0 ||
        !(sender = own_ep(&seg, &own_cfg)))
        exit(1);
    AO_store(&sender->own.hdr->state, AM_SEG_LIVE);
    return 0;
}
