/*
 * view.c - where everything lies in an endpoint segment, and process-local views.
 *
 * The creator computes the layout from the sizes and claim algorithm and writes it
 * into the header; an attaching process recomputes it from the header's sizes and
 * refuses the segment unless every offset, the size, magic and version agree.  A
 * zero-filled segment is nearly a valid empty endpoint: state 0 is
 * AM_STATE(0, 0, AM_FREE) for every packet and bulk block, tails and heads are 0
 * and sender entries are FREE (generation 0); only the lifelines (robust mutexes) need
 * their initialisation.
 *
 * Protection (layout.h, "who writes where").  A view maps the owner's page and
 * the sender entries' pages read-only, except the pages whose lifeline this
 * thread holds: the owner's view keeps page 0 writable; a sender makes its
 * entry's page writable only to take that lifeline and hold the entry
 * (am__view_entry_writable).  Protection is per mapping, and every endpoint and
 * peer has its own mapping, so threads of one process do not disturb each other.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "options.h"
#include "view.h"

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

/* This machine's page size: the unit of protection. */
static uint32_t page_size(void)
{
    static uint32_t page;
    if (!page)
        page = (uint32_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* The ring of a per-sender kind, and its bytes for Q slots (0 for mpsc). */
static const struct am_spsc_ops *chan_ring(enum am_queue_kind k)
{
    return k == AM_QUEUE_MPSC ? NULL : am_spsc_find(am_queue_names[k]);
}

/* A channel's ring: Q wide slots, a packet each (channel.h). */
static uint64_t chan_ring_bytes(enum am_queue_kind k, uint32_t q)
{
    return am_spsc_size_wide(chan_ring(k), (unsigned)__builtin_ctz(q));
}

/* One channel's bytes (channel.h): ring, ctl, B bulk blocks, Q medium areas. */
static uint64_t chan_bytes(const struct am_config *cfg)
{
    return chan_ring_bytes(cfg->queue, cfg->packets) + sizeof(struct am_chan_ctl) +
           (uint64_t)cfg->bulk_blocks * AM_BULK_BYTES +
           (uint64_t)cfg->packets * AM_MEDIUM_BYTES;
}

/* Queue qid's heap: two long messages of long_max at once, and never less
 * than AM_HEAP_FLOOR's; an anonymous endpoint's (a client's) holds just two
 * replies of long_max, and its request queue has none. */
static uint64_t heap_bytes(const struct am_config *cfg, enum am_qid qid)
{
    if (cfg->anon && !cfg->door)
        return qid == AM_REQUEST ? 0 : am_heap_bytes_for(cfg->long_max, 2);
    return am_heap_bytes_for(cfg->long_max > AM_HEAP_FLOOR ? cfg->long_max : AM_HEAP_FLOOR,
                             2);
}

/* Fill the offsets and sizes of `h` from `cfg`; returns the segment size. */
static uint64_t layout(struct am_seg_header *h, const struct am_config *cfg)
{
    const struct am_lock_ops *lock =
        cfg->queue == AM_QUEUE_MPSC ? am__claim_lock(cfg->claim) : NULL;
    uint64_t page = page_size();
    h->page_size = (uint32_t)page;
    h->senders_off = page;
    uint64_t off = page + (uint64_t)cfg->max_senders * page;
    h->shared_off = off;
    off += sizeof(struct am_seg_shared);
    for (int q = 0; q < 2 && cfg->queue != AM_QUEUE_MPSC; q++)
        h->send_off[q] = h->recv_off[q] = h->lock_off[q] = h->packets_off[q] =
            h->medium_off[q] = h->bulk_state_off[q] = h->bulk_off[q] = 0;
    if (cfg->queue != AM_QUEUE_MPSC) {
        off = align_up(off, AM_BLOCK);
        h->summary_off = off;
        off += 2 * sizeof(struct am_chan_summary);
        h->chan_off = off;
        h->chan_bytes = chan_bytes(cfg);
        off += (uint64_t)cfg->max_senders * 2 * h->chan_bytes;
    } else
        h->summary_off = h->chan_off = h->chan_bytes = 0;
    for (int q = 0; q < 2 && cfg->queue == AM_QUEUE_MPSC; q++) {
        off = align_up(off, AM_BLOCK); /* one bulk state line leaves it 64-aligned */
        h->send_off[q] = off;
        off += AM_BLOCK;
        h->lock_off[q] = lock ? off : 0;
        off += lock ? align_up(lock->size(cfg->max_senders), AM_BLOCK) : 0;
        h->recv_off[q] = off;
        off += AM_BLOCK;
        h->packets_off[q] = off;
        off += (uint64_t)cfg->packets * sizeof(struct am_packet);
        h->medium_off[q] = off;
        off += (uint64_t)cfg->packets * AM_MEDIUM_BYTES;
        h->bulk_state_off[q] = off;
        off += (uint64_t)cfg->bulk_blocks * sizeof(struct am_bulk_state);
        h->bulk_off[q] = off;
        off += (uint64_t)cfg->bulk_blocks * AM_BULK_BYTES;
    }
    for (int q = 0; q < 2; q++) { /* the heaps last: the rest stays close */
        off = align_up(off, page);
        h->heap_bytes[q] = heap_bytes(cfg, (enum am_qid)q);
        h->heap_off[q] = h->heap_bytes[q] ? off : 0;
        off += h->heap_bytes[q];
    }
    h->flags = (cfg->anon ? AM_SEG_ANON : 0) | (cfg->anon && cfg->door ? AM_SEG_DOOR : 0);
    h->long_max = cfg->long_max;
    h->queue = cfg->queue;
    h->claim = cfg->claim;
    h->packets = cfg->packets;
    h->bulk_blocks = cfg->bulk_blocks;
    h->max_senders = cfg->max_senders;
    h->segment_size = align_up(off, page);
    return h->segment_size;
}

size_t am__layout_size(const struct am_config *cfg)
{
    struct am_seg_header h;
    return (size_t)layout(&h, cfg);
}

/* Point a view's fields into the mapping at `base` as `h` says: a private,
 * validated copy of the header, never the shared one, which a peer may change
 * between two reads.  -EPROTO if a queue's heap is not one (heap.h). */
static int view_fill(struct am_seg_view *v, const struct am_seg_header *h)
{
    unsigned char *b = v->seg.base;
    v->hdr = (struct am_seg_header *)b;
    v->senders = b + h->senders_off;
    v->page = h->page_size;
    v->shared = (struct am_seg_shared *)(b + h->shared_off);
#define AT(off) ((off) ? b + (off) : NULL) /* mpsc parts of per-sender kinds: none */
    v->claim = (enum am_claim)h->claim;
    v->queue = (enum am_queue_kind)h->queue;
    v->lock = h->lock_off[0] ? am__claim_lock(v->claim) : NULL;
    v->max_senders = h->max_senders;
    v->ring = chan_ring(v->queue);
    v->summary = (struct am_chan_summary *)AT(h->summary_off);
    v->chans = AT(h->chan_off);
    v->chan_bytes = h->chan_bytes;
    v->chan_ring = v->ring ? chan_ring_bytes(v->queue, h->packets) : 0;
    for (int i = 0; i < 2; i++) {
        struct am_queue_view *q = &v->q[i];
        q->send = (struct am_queue_send *)AT(h->send_off[i]);
        q->recv = (struct am_queue_recv *)AT(h->recv_off[i]);
        q->lock = AT(h->lock_off[i]);
        q->packets = (struct am_packet *)AT(h->packets_off[i]);
        q->medium = AT(h->medium_off[i]);
        q->bulk_state = (struct am_bulk_state *)AT(h->bulk_state_off[i]);
        q->bulk = AT(h->bulk_off[i]);
        q->packets_n = h->packets;
        q->bulk_n = h->bulk_blocks;
        memset(&q->heap, 0, sizeof q->heap); /* no heap: a view that serves nothing */
        if (h->heap_bytes[i] &&
            am_heap_attach(&q->heap, b + h->heap_off[i], h->heap_bytes[i]) != 0)
            return -EPROTO;
    }
    v->long_max = h->long_max;
    return 0;
#undef AT
}

void am__chan_at(const struct am_seg_view *v, unsigned i, enum am_qid qid,
                 struct am_chan_view *c)
{
    unsigned char *p = v->chans + ((uint64_t)i * 2 + qid) * v->chan_bytes;
    c->ring = p;
    c->packets = (struct am_packet *)(p + v->ring->slots);
    c->ctl = (struct am_chan_ctl *)(p + v->chan_ring);
    c->bulk = p + v->chan_ring + sizeof(struct am_chan_ctl);
    c->medium = c->bulk + (uint64_t)v->q[0].bulk_n * AM_BULK_BYTES;
}

/* Initialise a fresh zero-filled segment.  Called by the creator only, before
 * anyone else can attach (attachers wait for state LIVE, set last). */
int am__layout_write(void *base, const struct am_config *cfg, const char *name)
{
    int rc = 0;
    struct am_seg_header *h = base;
    layout(h, cfg);
    h->magic = AM_MAGIC;
    h->version = AM_LAYOUT_VERSION;
    h->owner_pid = (uint32_t)getpid();
    strncpy(h->name, name, AM_NAME_MAX - 1);
    rc = am__lifeline_init(&h->owner_life);
    for (uint32_t i = 0; i < cfg->max_senders && rc == 0; i++)
        rc = am__lifeline_init((struct am_lifeline *)((char *)base + h->senders_off +
                                                      (uint64_t)i * h->page_size));
    for (int q = 0; q < 2 && rc == 0; q++)
        if (h->heap_bytes[q])
            rc = am_heap_init((char *)base + h->heap_off[q], h->heap_bytes[q]);
    for (int q = 0; q < 2 && rc == 0; q++)
        if (h->lock_off[q] && cfg->queue == AM_QUEUE_MPSC)
            rc = am__claim_lock(cfg->claim)
                     ->init((char *)base + h->lock_off[q], cfg->max_senders);
    return rc;
}

/* Map read-only the pages this view's thread does not write: the sender
 * entries' pages, and the header page from `from` = 0 (a peer), not from
 * `from` = P (the owner). */
static int protect(struct am_seg_view *v, size_t from)
{
    size_t end = v->page + (size_t)v->max_senders * v->page;
    return mprotect((char *)v->seg.base + from, end - from, PROT_READ) ? -errno : 0;
}

/* The header's sizes as a config, or -EPROTO if they are out of range. */
static int header_config(const struct am_seg_header *h, struct am_config *cfg)
{
    uint32_t q = h->packets, b = h->bulk_blocks;
    if (h->claim >= AM_CLAIM_COUNT || h->queue >= AM_QUEUE_COUNT || q < 2 ||
        q > AM_MAX_PACKETS || (q & (q - 1)) || b < 1 || b > AM_MAX_BULK_BLOCKS ||
        (b & (b - 1)) || h->max_senders < 1 || h->max_senders > AM_MAX_SENDERS ||
        h->long_max < AM_MIN_LONG || h->long_max > AM_MAX_LONG ||
        (h->flags & ~(AM_SEG_ANON | AM_SEG_DOOR)) || h->flags == AM_SEG_DOOR)
        return -EPROTO;
    cfg->anon = (h->flags & AM_SEG_ANON) != 0;
    cfg->door = (h->flags & AM_SEG_DOOR) != 0;
    cfg->long_max = h->long_max;
    cfg->claim = (enum am_claim)h->claim;
    cfg->queue = (enum am_queue_kind)h->queue;
    cfg->packets = q;
    cfg->bulk_blocks = b;
    cfg->max_senders = h->max_senders;
    return 0;
}

/* Attach a view to a mapped segment after checking it is a live shmam endpoint of
 * this layout named `name` (a name, or an anonymous endpoint's address).
 * -EPROTO on any mismatch, -ENOENT if an address's nonce differs, -EAGAIN if
 * not yet LIVE, -EPIPE if closed.  The header is read once, into a private copy; everything
 * is judged on the copy, and every address derives from the layout this build
 * computes from the copy's sizes (attach once: a peer flipping the shared
 * header meanwhile changes nothing). */
int am__view_attach(struct am_seg_view *v, const struct am_segment *seg, const char *name)
{
    struct am_seg_header copy, expect;
    const struct am_seg_header *h = &copy;
    struct am_config cfg;
    if (seg->size < sizeof copy)
        return -EPROTO;
    /* The creator writes the header, then release-stores LIVE: before that the
     * header may be all zero or half written (a segment is visible from its
     * creation), so it is judged only once LIVE.  Pairs with that release. */
    AO_t state = AO_load_acquire(&((const struct am_seg_header *)seg->base)->state);
    memcpy(&copy, seg->base, sizeof copy);
    if (state != AM_SEG_LIVE) {
        if (h->magic != 0 && h->magic != AM_MAGIC)
            return -EPROTO;
        return state == AM_SEG_CLOSED ? -EPIPE : state == AM_SEG_INIT ? -EAGAIN : -EPROTO;
    }
    if (h->magic != AM_MAGIC || h->version != AM_LAYOUT_VERSION ||
        header_config(h, &cfg) != 0 || layout(&expect, &cfg) != h->segment_size ||
        h->page_size != page_size() || h->segment_size > seg->size)
        return -EPROTO;
    /* A name that differs: another name's segment (-EPROTO), or at an
     * anonymous address, a later endpoint at a reused pid, fd or id (-ENOENT:
     * the one addressed is gone). */
    if (strncmp(h->name, name, AM_NAME_MAX) != 0)
        return name[0] == '@' ? -ENOENT : -EPROTO;
    if (cfg.anon != (name[0] == '@'))
        return -EPROTO;
    /* The offsets must be the ones this build computes: no pointer is ever
     * derived from an unchecked offset. */
    if (memcmp(&expect.senders_off, &h->senders_off,
               offsetof(struct am_seg_header, name) -
                   offsetof(struct am_seg_header, senders_off)) != 0)
        return -EPROTO;
    v->seg = *seg;
    int rc = view_fill(v, &expect);
    return rc < 0 ? rc : protect(v, 0);
}

/* The owner's view of the segment it has just laid out, before anyone else can
 * see it.  0 or -errno (mprotect). */
int am__view_own(struct am_seg_view *v, const struct am_segment *seg)
{
    struct am_seg_header copy;
    memcpy(&copy, seg->base, sizeof copy);
    v->seg = *seg;
    int rc = view_fill(v, &copy);
    return rc < 0 ? rc : protect(v, v->page);
}

int am__view_entry_writable(struct am_seg_view *v, unsigned index, int writable)
{
    int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    return mprotect(am__sender(v, index), v->page, prot) ? -errno : 0;
}
