/*
 * ring.c - the floors: what an RPC over shared memory costs with nothing but
 * a ring per direction.  eventfd_ring: the blocking floor, a shared ring and
 * an eventfd per direction, written after every message and read by a
 * consumer that finds nothing it was told of (one wake-up per message, one
 * read per batch of them); spin_ring: the polling floor, the same rings, the
 * consumer spins on the ring (pause, and a yield after rpc_yield_after empty
 * looks).  Neither has framing, peers that die, more than one client or
 * messages longer than a slot: a lower bound, not a transport.
 *
 * A ring: RING_SLOTS slots of a header line and RPC_MAX bytes, a producer's
 * tail and a consumer's head counting messages, each on its own line.  The
 * producer fills slot tail % RING_SLOTS and release-stores tail + 1, which
 * pairs with the consumer's acquire load of tail; the consumer reads the slot
 * and release-stores head + 1, which pairs with the producer's acquire load
 * of head before it reuses the slot.  The echo server copies a request's slot
 * straight into the reply's: one copy per hop, as shmam's heap and the
 * kernel's socket buffers make one each way.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "common/am_harness.h"
#include "rpc/rpc.h"

#define RING_SLOTS 64 /* > RPC_WINDOW + 1: a ring is never full */
#define LINE 128

struct slot {
    struct rpc_hdr h;
    char pad[LINE - sizeof(struct rpc_hdr)];
    char data[RPC_MAX];
};

struct ring {
    AO_t tail; /* the producer's */
    char pad0[LINE - sizeof(AO_t)];
    AO_t head; /* the consumer's */
    char pad1[LINE - sizeof(AO_t)];
    struct slot slot[RING_SLOTS];
};

/* One floor's state: the shared rings and, private to each process, its
 * eventfds and how many messages its consumer side was told of. */
struct floor {
    const char *name;
    int blocking;
    struct ring *req, *rep;
    int efd_req, efd_rep;
    uint64_t told;
};

static struct floor event_floor = {"eventfd_ring", 1, NULL, NULL, -1, -1, 0};
static struct floor spin_floor = {"spin_ring", 0, NULL, NULL, -1, -1, 0};

static void setup(void *t)
{
    struct floor *f = t;
    struct ring *r = mmap(NULL, 2 * sizeof *r, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        bm_fail("%s: mmap: %s", f->name, strerror(errno));
    f->req = r, f->rep = r + 1;
    if (f->blocking &&
        ((f->efd_req = eventfd(0, 0)) < 0 || (f->efd_rep = eventfd(0, 0)) < 0))
        bm_fail("%s: eventfd: %s", f->name, strerror(errno));
}

/* The producer's slot for the next message (waits while the ring is full). */
static struct slot *next_slot(struct ring *r)
{
    AO_t t = AO_load(&r->tail); /* ours alone */
    unsigned spins = 0;
    while (t - AO_load_acquire(&r->head) >= RING_SLOTS) /* pairs with pop's release */
        bm_relax(&spins, rpc_yield_after);
    return &r->slot[t % RING_SLOTS];
}

/* Publishes the slot next_slot gave, and wakes the consumer (eventfd). */
static void publish(const struct floor *f, struct ring *r, int efd)
{
    AO_store_release(&r->tail, AO_load(&r->tail) + 1); /* pairs with the acquire below */
    uint64_t one = 1;
    if (f->blocking && write(efd, &one, sizeof one) != sizeof one)
        bm_fail("%s: eventfd write: %s", f->name, strerror(errno));
}

/* The consumer's oldest message: sleeps on efd until told of one (blocking),
 * or spins on the ring's tail. */
static struct slot *oldest(struct floor *f, struct ring *r, int efd)
{
    AO_t h = AO_load(&r->head); /* ours alone */
    if (f->blocking) {
        while (f->told == 0) {
            ssize_t k = read(efd, &f->told, sizeof f->told);
            if (k != sizeof f->told && !(k < 0 && errno == EINTR))
                bm_fail("%s: eventfd read: %s", f->name, k < 0 ? strerror(errno) : "short");
            if (k < 0)
                f->told = 0;
        }
        f->told--;
        if (AO_load_acquire(&r->tail) == h) /* written before the eventfd */
            bm_fail("%s: told of a message the ring does not hold", f->name);
    } else {
        unsigned spins = 0;
        while (AO_load_acquire(&r->tail) == h) /* pairs with publish's release */
            bm_relax(&spins, rpc_yield_after);
    }
    return &r->slot[h % RING_SLOTS];
}

/* Frees the slot oldest gave. */
static void pop(struct ring *r)
{
    AO_store_release(&r->head, AO_load(&r->head) + 1); /* pairs with next_slot's acquire */
}

static void serve(void *t)
{
    struct floor *f = t;
    for (uint32_t seq = 0; seq != RPC_QUIT;) {
        struct slot *q = oldest(f, f->req, f->efd_req);
        struct rpc_hdr h = q->h; /* a private copy: validated, then used */
        if (h.len > RPC_MAX)
            bm_fail("%s: a request of %u bytes", f->name, h.len);
        struct slot *p = next_slot(f->rep);
        memcpy(p->data, q->data, h.len);
        p->h = h;
        seq = h.seq;
        pop(f->req);
        publish(f, f->rep, f->efd_rep);
    }
}

static void send_request(void *t, const void *buf, size_t n, uint32_t seq)
{
    struct floor *f = t;
    struct slot *s = next_slot(f->req);
    memcpy(s->data, buf, n);
    s->h = (struct rpc_hdr){(uint32_t)n, seq};
    publish(f, f->req, f->efd_req);
}

static void recv_reply(void *t, void *buf, size_t n, uint32_t seq)
{
    struct floor *f = t;
    struct slot *s = oldest(f, f->rep, f->efd_rep);
    struct rpc_hdr h = s->h;
    rpc_check_reply(&h, n, seq, f->name);
    memcpy(buf, s->data, n);
    pop(f->rep);
}

static void nothing(void *t)
{
    (void)t;
}

static void drop(void *t, int server)
{
    struct floor *f = t;
    if (f->blocking) {
        close(f->efd_req);
        close(f->efd_rep);
    }
    munmap(f->req, 2 * sizeof *f->req);
    (void)server;
}

const struct rpc_ops rpc_eventfd_ring = {.name = "eventfd_ring",
                                         .alt = 0,
                                         .t = &event_floor,
                                         .setup = setup,
                                         .server_open = nothing,
                                         .client_open = nothing,
                                         .serve = serve,
                                         .send = send_request,
                                         .recv = recv_reply,
                                         .call = NULL,
                                         .close = drop};
const struct rpc_ops rpc_spin_ring = {.name = "spin_ring",
                                      .alt = 0,
                                      .t = &spin_floor,
                                      .setup = setup,
                                      .server_open = nothing,
                                      .client_open = nothing,
                                      .serve = serve,
                                      .send = send_request,
                                      .recv = recv_reply,
                                      .call = NULL,
                                      .close = drop};
