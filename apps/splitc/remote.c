/*
 * remote.c - one-word puts, gets and stores, sc_sync and sc_all_store_sync.
 *
 * A put is a request carrying (region, offset, value); the owner writes the
 * word into its part and replies an ack, which decrements the requester's
 * outstanding count.  A get carries the requester's destination address, split
 * into two words that only the requester interprets; the reply brings it back
 * with the value.  Accesses to our own rank are done at once, in place.
 *
 * A store is a one-way request: the owner only counts it.  sc_all_store_sync
 * has every rank tell every other rank how many stores it sent there; each then
 * polls until those counts have arrived and that many stores have landed, and
 * all meet in a barrier.  A count travels behind its stores through the same
 * queue, and one sender's messages to one queue arrive in order, so when every
 * count has arrived, every request sent before it (stores, and any one-way
 * requests of the application) has been handled; the store count confirms it.
 * Counters are reset before the barrier: no rank can send stores of the next
 * epoch until every rank has arrived there.
 */
#include <string.h>

#include "internal.h"

static void check_nargs(int nargs, int lo, int hi, const char *what)
{
    if (nargs < lo || nargs > hi)
        SC_DIE("%s message with %d arguments", what, nargs);
}

/* Write a 32- or 64-bit value carried in args[3] (and args[4]). */
static void write_word(const uint32_t *args, int nargs, unsigned from)
{
    uint64_t off = sc__join(args[1], args[2]);
    if (nargs == 4) {
        memcpy(sc__local(args[0], off, 4, from), &args[3], 4);
    } else {
        uint64_t v = sc__join(args[3], args[4]);
        memcpy(sc__local(args[0], off, 8, from), &v, 8);
    }
}

static void h_put(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    check_nargs(nargs, 4, 5, "put");
    write_word(args, nargs, am_token_source(t));
    SC_CHECK(am_reply(t, SC_H_ACK, NULL, 0), "am_reply (put ack)");
}

static void h_ack(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    if (sc__.outstanding == 0)
        SC_DIE("an ack with no put outstanding");
    sc__.outstanding--;
}

static void h_get(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    check_nargs(nargs, 6, 6, "get");
    size_t n = args[5] == 8 ? 8 : 4;
    uint64_t v = 0;
    memcpy(&v, sc__local(args[0], sc__join(args[1], args[2]), n, am_token_source(t)), n);
    uint32_t r[4] = {args[3], args[4], sc__lo(v), sc__hi(v)};
    SC_CHECK(am_reply(t, SC_H_GET_REPLY, r, n == 8 ? 4 : 3), "am_reply (get)");
}

static void h_get_reply(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    check_nargs(nargs, 3, 4, "get reply");
    void *dst = (void *)(uintptr_t)sc__join(args[0], args[1]);
    if (nargs == 3) {
        memcpy(dst, &args[2], 4);
    } else {
        uint64_t v = sc__join(args[2], args[3]);
        memcpy(dst, &v, 8);
    }
    if (sc__.outstanding == 0)
        SC_DIE("a get reply with no get outstanding");
    sc__.outstanding--;
}

static void h_store(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    check_nargs(nargs, 4, 5, "store");
    write_word(args, nargs, am_token_source(t));
    sc__.stores_received++;
}

static void h_store_count(am_token_t *t, const uint32_t *args, int nargs, void *d,
                          size_t len)
{
    check_nargs(nargs, 2, 2, "store count");
    sc__.stores_expected += sc__join(args[0], args[1]);
    sc__.counts_arrived++;
}

void sc__remote_init(am_ep_t *ep)
{
    am_set_handler(ep, SC_H_PUT, h_put);
    am_set_handler(ep, SC_H_ACK, h_ack);
    am_set_handler(ep, SC_H_GET, h_get);
    am_set_handler(ep, SC_H_GET_REPLY, h_get_reply);
    am_set_handler(ep, SC_H_STORE, h_store);
    am_set_handler(ep, SC_H_STORE_COUNT, h_store_count);
}

/* Send a put or store of n = 4 or 8 bytes; done in place for our own rank. */
static void send_word(sc_gptr_t g, uint64_t v, size_t n, unsigned handler)
{
    sc__check_gptr(g);
    if (g.rank == (uint32_t)sc__.rank) {
        uint32_t v32 = (uint32_t)v;
        memcpy(sc__local(g.region, g.offset, n, g.rank), n == 4 ? (void *)&v32 : &v, n);
        return;
    }
    uint32_t a[5] = {g.region, sc__lo(g.offset), sc__hi(g.offset), sc__lo(v), sc__hi(v)};
    if (handler == SC_H_PUT)
        sc__.outstanding++;
    else
        sc__.stores_sent[g.rank]++;
    SC_CHECK(am_request(sc__.ep, g.rank, handler, a, n == 8 ? 5 : 4), "am_request");
}

void sc_put32(sc_gptr_t dst, uint32_t v)
{
    send_word(dst, v, 4, SC_H_PUT);
}

void sc_put64(sc_gptr_t dst, uint64_t v)
{
    send_word(dst, v, 8, SC_H_PUT);
}

void sc_store32(sc_gptr_t dst, uint32_t v)
{
    send_word(dst, v, 4, SC_H_STORE);
}

void sc_store64(sc_gptr_t dst, uint64_t v)
{
    send_word(dst, v, 8, SC_H_STORE);
}

static void get_word(void *dst, sc_gptr_t g, size_t n)
{
    sc__check_gptr(g);
    if (g.rank == (uint32_t)sc__.rank) {
        memcpy(dst, sc__local(g.region, g.offset, n, g.rank), n);
        return;
    }
    uint64_t addr = (uintptr_t)dst;
    uint32_t a[6] = {g.region,     sc__lo(g.offset), sc__hi(g.offset),
                     sc__lo(addr), sc__hi(addr),     (uint32_t)n};
    sc__.outstanding++;
    SC_CHECK(am_request(sc__.ep, g.rank, SC_H_GET, a, 6), "am_request");
}

void sc_get32(uint32_t *dst, sc_gptr_t src)
{
    get_word(dst, src, 4);
}

void sc_get64(uint64_t *dst, sc_gptr_t src)
{
    get_word(dst, src, 8);
}

static int nothing_outstanding(const void *arg)
{
    return sc__.outstanding == 0;
}

void sc_sync(void)
{
    sc__wait(nothing_outstanding, NULL);
}

static int stores_landed(const void *arg)
{
    return sc__.counts_arrived == sc__.nprocs - 1 &&
           sc__.stores_received >= sc__.stores_expected;
}

void sc_all_store_sync(void)
{
    for (int r = 0; r < sc__.nprocs; r++) {
        if (r == sc__.rank)
            continue;
        uint64_t n = sc__.stores_sent[r];
        uint32_t a[2] = {sc__lo(n), sc__hi(n)};
        SC_CHECK(am_request(sc__.ep, (unsigned)r, SC_H_STORE_COUNT, a, 2), "am_request");
        sc__.stores_sent[r] = 0;
    }
    sc__wait(stores_landed, NULL);
    if (sc__.stores_received != sc__.stores_expected)
        SC_DIE("%llu stores landed here, but %llu were sent",
               (unsigned long long)sc__.stores_received,
               (unsigned long long)sc__.stores_expected);
    sc__.stores_received = sc__.stores_expected = 0;
    sc__.counts_arrived = 0;
    sc_barrier();
}
