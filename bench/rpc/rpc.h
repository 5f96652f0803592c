/*
 * rpc.h - the transports of rpcbench (bench/rpcbench.c), each an echo server
 * and its client behind one table of operations, so that the driver measures
 * every one the same way.
 *
 * A transport carries a request of n bytes (8 .. RPC_MAX) and its echo, a
 * reply of the same n bytes.  The client keeps up to RPC_WINDOW requests
 * outstanding (send, then recv the oldest); a round trip is send + recv, or
 * `call` where the transport has a call of its own (am_call).  The server
 * serves one transport at a time: `serve` answers every request until the
 * quit request (rpc_quit), answers that too and returns.  Every request and
 * reply carries a sequence number (the header's, or a call's args) and the
 * data is stamped with it (bm_stamp): a lost, reordered or damaged message
 * fails the benchmark (bm_fail), it never hides in a figure.
 *
 * Process model: the driver forks one server process before any transport is
 * opened by the client; `setup` runs before the fork (descriptors, shared
 * rings), `server_open` in the server, `client_open` in the client after the
 * server has opened them all, `close` in each at the end.  A failure of the
 * client kills the server and `reclaim`s its names.
 */
#ifndef SHMAM_BENCH_RPC_H
#define SHMAM_BENCH_RPC_H

#include <stddef.h>
#include <stdint.h>

#define RPC_MAX 65536        /* the largest request and reply */
#define RPC_WINDOW 32        /* requests outstanding in the throughput test */
#define RPC_QUIT 0xffffffffu /* the sequence number of the quit request */

/* The header of the descriptor and ring transports: the data's bytes and the
 * request's sequence number; the reply repeats both. */
struct rpc_hdr {
    uint32_t len, seq;
};

/* Every operation takes the transport's state, t. */
struct rpc_ops {
    const char *name; /* the rows' impl */
    int alt;          /* 1: what an RPC user would pick instead of shmam */
    void *t;
    void (*setup)(void *t);
    void (*server_open)(void *t);
    void (*client_open)(void *t);
    void (*serve)(void *t);
    /* Client: send request seq of n bytes from buf; recv the oldest reply's
     * n bytes into buf, checking its seq.  call: one round trip (NULL: send
     * and recv). */
    void (*send)(void *t, const void *buf, size_t n, uint32_t seq);
    void (*recv)(void *t, void *buf, size_t n, uint32_t seq);
    void (*call)(void *t, const void *req, void *rep, size_t n, uint32_t seq);
    void (*close)(void *t, int server);
    /* Client, after a failure killed the server: removes what the server may
     * have left in the file system (NULL: nothing). */
    void (*reclaim)(void *t);
};

/* The transports, in the rows' order. */
extern const struct rpc_ops rpc_shmam_call, rpc_shmam_poll, rpc_unix_stream,
    rpc_unix_seqpacket, rpc_pipe, rpc_zmq, rpc_eventfd_ring, rpc_spin_ring;

/* Where the server process runs and the spin policy of a polling side
 * (bm_yield_after of the two CPUs); set by the driver before setup. */
extern unsigned rpc_yield_after;

/* Fails unless h is the reply to request seq of n bytes (`what` names it). */
void rpc_check_reply(const struct rpc_hdr *h, size_t n, uint32_t seq, const char *what);

/* Fails unless buf's n bytes carry seq's stamp. */
void rpc_check_data(const void *buf, size_t n, uint32_t seq, const char *what);

/* A server's buffer of RPC_MAX + a header, 64-byte aligned. */
void *rpc_buffer(void);

#endif
