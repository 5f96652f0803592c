/*
 * collectives.c - barrier, broadcast and small all-reductions over messages.
 *
 * Every rank calls each collective in the same order; nothing else is assumed.
 *
 * Broadcast: a receiver records where its data goes, then tells the root it is
 * ready; the root waits until every receiver is ready and sends the bytes as
 * bulk requests carrying their offset.  Data thus never arrives before its
 * buffer is known.  The ready counts are kept by the parity of the broadcast's
 * sequence number: a rank may be ready for broadcast k+1 while its root is
 * still in broadcast k, but never for k+2 (that needs k+1 finished everywhere,
 * which needs the root's readiness for it, which comes after broadcast k).
 *
 * All-reduce: every rank sends its 64-bit value to rank 0, which combines them
 * in rank order (so a floating-point sum is the same on every run), resets its
 * count and sends the result to every rank.  A contribution to the next
 * reduction can only follow that result, so one set of counters suffices.
 */
#include <string.h>

#include "internal.h"

enum sc_op { SC_SUM_D, SC_MAX_D, SC_SUM_U64, SC_MAX_U64, SC_XOR_U64 };

void sc_barrier(void)
{
    SC_CHECK(am_barrier(sc__.ep), "am_barrier");
}

static void h_bcast_ready(am_token_t *t, const uint32_t *args, int nargs, void *d,
                          size_t len)
{
    if (nargs != 1)
        SC_DIE("broadcast ready message with %d arguments", nargs);
    sc__.bcast_ready[args[0] & 1]++;
}

static void h_bcast_data(am_token_t *t, const uint32_t *args, int nargs, void *data,
                         size_t len)
{
    uint64_t off = nargs == 2 ? sc__join(args[0], args[1]) : UINT64_MAX;
    if (!sc__.bcast_dst || off > sc__.bcast_n || len > sc__.bcast_n - off)
        SC_DIE("broadcast data from rank %u outside the buffer", am_token_source(t));
    memcpy(sc__.bcast_dst + off, data, len);
    sc__.bcast_got += len;
}

static void h_reduce(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    unsigned from = am_token_source(t);
    if (nargs != 2 || sc__.rank != 0 || from >= (unsigned)sc__.nprocs)
        SC_DIE("bad reduction contribution from rank %u", from);
    sc__.reduce_vals[from] = sc__join(args[0], args[1]);
    sc__.reduce_arrived++;
}

static void h_result(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    if (nargs != 2 || sc__.result_ready)
        SC_DIE("unexpected reduction result from rank %u", am_token_source(t));
    sc__.result = sc__join(args[0], args[1]);
    sc__.result_ready = 1;
}

void sc__collectives_init(am_ep_t *ep)
{
    am_set_handler(ep, SC_H_BCAST_READY, h_bcast_ready);
    am_set_handler(ep, SC_H_BCAST_DATA, h_bcast_data);
    am_set_handler(ep, SC_H_REDUCE, h_reduce);
    am_set_handler(ep, SC_H_RESULT, h_result);
}

static int all_ready(const void *parity)
{
    return sc__.bcast_ready[*(const unsigned *)parity] == sc__.nprocs - 1;
}

static int bcast_arrived(const void *arg)
{
    return sc__.bcast_got == sc__.bcast_n;
}

static void bcast_send(const void *buf, size_t n, unsigned parity)
{
    sc__wait(all_ready, &parity);
    sc__.bcast_ready[parity] = 0;
    size_t max = am_ep_long_max(sc__.ep);
    for (int r = 0; r < sc__.nprocs; r++) {
        for (size_t done = 0; r != sc__.rank && done < n;) {
            size_t len = n - done < max ? n - done : max;
            uint32_t a[2] = {sc__lo(done), sc__hi(done)};
            SC_CHECK(am_request_long(sc__.ep, (unsigned)r, SC_H_BCAST_DATA,
                                     (const unsigned char *)buf + done, len, a, 2),
                     "am_request_long (broadcast)");
            done += len;
        }
    }
}

static void bcast_receive(void *buf, size_t n, int root, unsigned parity)
{
    sc__.bcast_dst = buf;
    sc__.bcast_n = n;
    sc__.bcast_got = 0;
    SC_CHECK(am_request(sc__.ep, (unsigned)root, SC_H_BCAST_READY, &parity, 1),
             "am_request (broadcast)");
    sc__wait(bcast_arrived, NULL);
    sc__.bcast_dst = NULL;
}

void sc_broadcast(void *buf, size_t n, int root)
{
    if (root < 0 || root >= sc__.nprocs)
        SC_DIE("broadcast from rank %d of %d", root, sc__.nprocs);
    unsigned parity = sc__.bcast_epoch++ & 1;
    if (n == 0 || sc__.nprocs == 1)
        return;
    if (root == sc__.rank)
        bcast_send(buf, n, parity);
    else
        bcast_receive(buf, n, root, parity);
}

static uint64_t combine(enum sc_op op, uint64_t a, uint64_t b)
{
    double x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    switch (op) {
    case SC_SUM_D:
        x += y;
        break;
    case SC_MAX_D:
        x = y > x ? y : x;
        break;
    case SC_SUM_U64:
        return a + b;
    case SC_MAX_U64:
        return a > b ? a : b;
    case SC_XOR_U64:
        return a ^ b;
    }
    memcpy(&a, &x, 8);
    return a;
}

static int contributions_in(const void *arg)
{
    return sc__.reduce_arrived == sc__.nprocs - 1;
}

static int result_in(const void *arg)
{
    return sc__.result_ready;
}

static uint64_t allreduce(enum sc_op op, uint64_t v)
{
    uint32_t a[2] = {sc__lo(v), sc__hi(v)};
    if (sc__.rank != 0) {
        SC_CHECK(am_request(sc__.ep, 0, SC_H_REDUCE, a, 2), "am_request (reduce)");
        sc__wait(result_in, NULL);
        sc__.result_ready = 0;
        return sc__.result;
    }
    sc__wait(contributions_in, NULL);
    sc__.reduce_arrived = 0;
    for (int r = 1; r < sc__.nprocs; r++)
        v = combine(op, v, sc__.reduce_vals[r]);
    a[0] = sc__lo(v);
    a[1] = sc__hi(v);
    for (int r = 1; r < sc__.nprocs; r++)
        SC_CHECK(am_request(sc__.ep, (unsigned)r, SC_H_RESULT, a, 2),
                 "am_request (result)");
    return v;
}

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

static double real(uint64_t b)
{
    double x;
    memcpy(&x, &b, 8);
    return x;
}

double sc_allreduce_sum_d(double x)
{
    return real(allreduce(SC_SUM_D, bits(x)));
}

double sc_allreduce_max_d(double x)
{
    return real(allreduce(SC_MAX_D, bits(x)));
}

uint64_t sc_allreduce_sum_u64(uint64_t x)
{
    return allreduce(SC_SUM_U64, x);
}

uint64_t sc_allreduce_max_u64(uint64_t x)
{
    return allreduce(SC_MAX_U64, x);
}

uint64_t sc_allreduce_xor_u64(uint64_t x)
{
    return allreduce(SC_XOR_U64, x);
}
