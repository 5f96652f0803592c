/*
 * bulk.c - byte-range puts, gets and stores, as long messages (through the
 * destination's shared heap) of at most the endpoint's long_max bytes each (1
 * MiB by default: one message for every range the applications move).
 *
 * A bulk put is a long request per chunk carrying (region, offset); the owner
 * copies the chunk into its part and acks, like a one-word put.  A bulk get is
 * a short request per chunk with (region, offset, length, destination address);
 * the owner answers with a long reply carrying the bytes and the address.  A
 * bulk store is a bulk put without the ack, counted at the owner as one store
 * per chunk, so sc_all_store_sync covers it.  Ranges on our own rank are copied
 * in place.  Every rank of a job has the same long_max (the job's option), so
 * our own is the destination's.
 */
#include <string.h>

#include "internal.h"

static void check_nargs(int nargs, int want, const char *what)
{
    if (nargs != want)
        SC_DIE("%s message with %d arguments", what, nargs);
}

static void h_bulk_put(am_token_t *t, const uint32_t *args, int nargs, void *data,
                       size_t len)
{
    check_nargs(nargs, 3, "bulk put");
    memcpy(sc__local(args[0], sc__join(args[1], args[2]), len, am_token_source(t)), data,
           len);
    SC_CHECK(am_reply(t, SC_H_ACK, NULL, 0), "am_reply (bulk put ack)");
}

static void h_bulk_store(am_token_t *t, const uint32_t *args, int nargs, void *data,
                         size_t len)
{
    check_nargs(nargs, 3, "bulk store");
    memcpy(sc__local(args[0], sc__join(args[1], args[2]), len, am_token_source(t)), data,
           len);
    sc__.stores_received++;
}

static void h_bulk_get(am_token_t *t, const uint32_t *args, int nargs, void *data,
                       size_t len)
{
    check_nargs(nargs, 6, "bulk get");
    size_t n = args[3];
    if (n > am_ep_long_max(sc__.ep))
        SC_DIE("bulk get of %zu bytes in one message", n);
    const void *src = sc__local(args[0], sc__join(args[1], args[2]), n, am_token_source(t));
    SC_CHECK(am_reply_long(t, SC_H_BULK_GET_REPLY, src, n, &args[4], 2),
             "am_reply_long (bulk get)");
}

static void h_bulk_get_reply(am_token_t *t, const uint32_t *args, int nargs, void *data,
                             size_t len)
{
    check_nargs(nargs, 2, "bulk get reply");
    memcpy((void *)(uintptr_t)sc__join(args[0], args[1]), data, len);
    if (sc__.outstanding == 0)
        SC_DIE("a bulk get reply with no get outstanding");
    sc__.outstanding--;
}

void sc__bulk_init(am_ep_t *ep)
{
    am_set_handler(ep, SC_H_BULK_PUT, h_bulk_put);
    am_set_handler(ep, SC_H_BULK_STORE, h_bulk_store);
    am_set_handler(ep, SC_H_BULK_GET, h_bulk_get);
    am_set_handler(ep, SC_H_BULK_GET_REPLY, h_bulk_get_reply);
}

/* Copy in place when the range is ours; returns 1 if it was. */
static int local_copy(void *dst, const void *src, sc_gptr_t g, size_t n, int to_global)
{
    sc__check_gptr(g);
    if (g.rank != (uint32_t)sc__.rank)
        return 0;
    void *p = sc__local(g.region, g.offset, n, g.rank);
    if (n)
        memmove(to_global ? p : dst, to_global ? src : p, n);
    return 1;
}

/* The longest message a chunk may be. */
static size_t chunk_max(void)
{
    return am_ep_long_max(sc__.ep);
}

static void send_chunks(sc_gptr_t dst, const void *src, size_t n, unsigned handler)
{
    const unsigned char *s = src;
    size_t max = chunk_max();
    for (size_t done = 0; done < n;) {
        size_t len = n - done < max ? n - done : max;
        uint64_t off = dst.offset + done;
        uint32_t a[3] = {dst.region, sc__lo(off), sc__hi(off)};
        if (handler == SC_H_BULK_PUT)
            sc__.outstanding++;
        else
            sc__.stores_sent[dst.rank]++;
        SC_CHECK(am_request_long(sc__.ep, dst.rank, handler, s + done, len, a, 3),
                 "am_request_long");
        done += len;
    }
}

void sc_bulk_put(sc_gptr_t dst, const void *src, size_t n)
{
    if (!local_copy(NULL, src, dst, n, 1))
        send_chunks(dst, src, n, SC_H_BULK_PUT);
}

void sc_bulk_store(sc_gptr_t dst, const void *src, size_t n)
{
    if (!local_copy(NULL, src, dst, n, 1))
        send_chunks(dst, src, n, SC_H_BULK_STORE);
}

void sc_bulk_get(void *dst, sc_gptr_t src, size_t n)
{
    if (local_copy(dst, NULL, src, n, 0))
        return;
    unsigned char *d = dst;
    size_t max = chunk_max();
    for (size_t done = 0; done < n;) {
        size_t len = n - done < max ? n - done : max;
        uint64_t off = src.offset + done, addr = (uintptr_t)(d + done);
        uint32_t a[6] = {src.region,    sc__lo(off),  sc__hi(off),
                         (uint32_t)len, sc__lo(addr), sc__hi(addr)};
        sc__.outstanding++;
        SC_CHECK(am_request(sc__.ep, src.rank, SC_H_BULK_GET, a, 6), "am_request");
        done += len;
    }
}
