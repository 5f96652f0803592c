/*
 * rpcbench.c - shmam's calls against what an RPC user would pick instead:
 * an echo server and its client over each transport of
 * bench/rpc/, the client on one CPU and the server process on another.
 *
 *   rpcbench [--iters N] [--rounds R] [--quick] [--timeout S] [--header]
 *
 * Transports (impl), in this order: call and call_poll (shmam, blocking and
 * polling: rpc/shmam.c), unix_stream, unix_seqpacket, pipe (rpc/fds.c),
 * zmq_ipc (ZeroMQ DEALER/ROUTER over ipc://, rpc/zmq.c), eventfd_ring and
 * spin_ring (the blocking and the polling floor: rpc/ring.c).  Tests:
 *
 *   rtt_8B     N round trips of an 8-byte request and its 8-byte echo, µs each
 *   tput_32    4N 8-byte calls with 32 outstanding (send 32, then a reply
 *              received, a request sent), calls/s
 *   echo_4KB   N/2 round trips of 4096 bytes each way, µs each
 *   echo_64KB  N/8 round trips of 65536 bytes each way, µs each
 *
 * The estimator of bench/common/stat.h: one unmeasured warm-up round, then R;
 * in every round every test runs every transport, transports in ABBA order
 * (bm_abba), each preceded by a tenth of its count unmeasured (a waiter's
 * spin budget adapts); a row is the median over rounds of the round's mean,
 * the lowest and highest round as spread.  In-run ratios (per-round
 * quotients, unit x), what the targets are judged on:
 *
 *   call/rtt_vs_unix_stream, call/echo_4KB_vs_unix_stream,
 *   call/echo_64KB_vs_unix_stream   blocking shmam over a Unix stream socket
 *   call/tput_vs_best_alt, call_poll/tput_vs_best_alt   over the fastest in
 *                                   that round of the alternatives (sockets,
 *                                   pipe, ZeroMQ; not the floors)
 *   call_poll/rtt_vs_spin_ring      polling shmam over the polling floor
 *   call/tput_vs_spin_ring, call_poll/tput_vs_spin_ring   32 in flight, the
 *                                   rate over the polling floor's
 *   call/rtt_vs_eventfd_ring        blocking shmam over the blocking floor
 *   call/rtt_vs_call_poll           blocking over polling shmam
 *
 * Every request carries a sequence number and its data that number's stamp;
 * the client checks both in every reply: a lost or damaged message fails
 * the run (exit 1, FAILED on stderr), as does a run longer than --timeout
 * seconds (default 900).  --quick: N = 300, R = 3 (check_bench).  The
 * default N = 4000, R = 5 takes under two minutes on this VM (--quick: 5 s
 * at a load of 11).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "common/am_harness.h"
#include "common/measure.h"
#include "common/place.h"
#include "common/stat.h"
#include "rpc/rpc.h"

static const char *const usage =
    "usage: rpcbench [--iters N] [--rounds R (1..64)] [--quick] [--timeout S] [--header]\n";

static const struct rpc_ops *const transports[] = {
    &rpc_shmam_call, &rpc_shmam_poll, &rpc_unix_stream,  &rpc_unix_seqpacket,
    &rpc_pipe,       &rpc_zmq,        &rpc_eventfd_ring, &rpc_spin_ring};
enum {
    NT = sizeof transports / sizeof transports[0],
    CALL = 0,
    CALL_POLL = 1, /* indices of transports[] */
    MAX_ROUNDS = 64
};

enum test { T_RTT, T_TPUT, T_ECHO4K, T_ECHO64K, NTEST };
static const struct {
    const char *metric, *unit;
    size_t bytes;
    long per_n_num, per_n_den; /* the count: N * num / den */
} tests[NTEST] = {{"rtt_8B", "us", 8, 1, 1},
                  {"tput_32", "calls/s", 8, 4, 1},
                  {"echo_4KB", "us", 4096, 1, 2},
                  {"echo_64KB", "us", 65536, 1, 8}};

/* The operations of test t over all rounds: a row's iters. */
static long iters_of(enum test t, long n, int rounds)
{
    return n * tests[t].per_n_num / tests[t].per_n_den * rounds;
}

/* The client's and the server's meeting place: which transport to serve
 * (mode, the server's next when seq moves), and that the server has opened
 * them all. */
struct ctl {
    AO_t seq, mode, opened;
};
#define MODE_END NT
static struct ctl *ctl;
unsigned rpc_yield_after = 1;

void rpc_check_reply(const struct rpc_hdr *h, size_t n, uint32_t seq, const char *what)
{
    if (h->seq != seq || h->len != n)
        bm_fail("%s: reply %u of %u bytes, not %u of %zu", what, h->seq, h->len, seq, n);
}

void rpc_check_data(const void *buf, size_t n, uint32_t seq, const char *what)
{
    if (!bm_stamped(buf, n, seq))
        bm_fail("%s: reply %u: its data is not what was sent", what, seq);
}

void *rpc_buffer(void)
{
    void *p;
    if (posix_memalign(&p, 64, RPC_MAX + sizeof(struct rpc_hdr)))
        bm_fail("out of memory");
    return p;
}

/* The server process: opens every transport, then serves the one the client
 * names until it names MODE_END.  Dies with the client (PDEATHSIG). */
static void server(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(1);
    for (int k = 0; k < NT; k++)
        transports[k]->server_open(transports[k]->t);
    AO_store_release(&ctl->opened, 1);
    for (AO_t seen = 0;;) {
        AO_t s;
        while ((s = AO_load_acquire(&ctl->seq)) == seen) /* pairs with select_mode */
            usleep(50);
        seen = s;
        AO_t m = AO_load(&ctl->mode);
        if (m >= NT)
            break;
        transports[m]->serve(transports[m]->t);
    }
    for (int k = 0; k < NT; k++)
        transports[k]->close(transports[k]->t, 1);
    _exit(0);
}

static pid_t server_pid;

/* A failure of the client (bm_on_fail): the server goes too, and what it
 * named with it. */
static void kill_server(void)
{
    if (server_pid <= 0)
        return;
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
    for (int k = 0; k < NT; k++)
        if (transports[k]->reclaim)
            transports[k]->reclaim(transports[k]->t);
}

/* Tells the server which transport to serve next (it has left the last one:
 * its quit was answered). */
static void select_mode(AO_t mode)
{
    AO_store(&ctl->mode, mode);
    AO_store_release(&ctl->seq, AO_load(&ctl->seq) + 1); /* pairs with server's acquire */
}

static uint32_t next_seq;
static char *req, *rep;

static uint32_t stamped(size_t n)
{
    uint32_t s = next_seq++;
    bm_stamp(req, n, s);
    return s;
}

static void send1(const struct rpc_ops *o, size_t n, uint32_t seq)
{
    o->send(o->t, req, n, seq);
}

static void recv1(const struct rpc_ops *o, size_t n, uint32_t seq)
{
    o->recv(o->t, rep, n, seq);
    rpc_check_data(rep, n, seq, o->name);
}

/* One round trip of n bytes each way. */
static void round_trip(const struct rpc_ops *o, size_t n)
{
    uint32_t seq = stamped(n);
    if (o->call)
        o->call(o->t, req, rep, n, seq);
    else {
        send1(o, n, seq);
        o->recv(o->t, rep, n, seq);
    }
    rpc_check_data(rep, n, seq, o->name);
}

/* count calls of n bytes with RPC_WINDOW outstanding (fewer at the start
 * and the end). */
static void window(const struct rpc_ops *o, size_t n, long count)
{
    uint32_t first = next_seq;
    long sent = 0, got = 0;
    while (got < count) {
        while (sent < count && sent - got < RPC_WINDOW) {
            send1(o, n, stamped(n));
            sent++;
        }
        recv1(o, n, first + (uint32_t)got++);
    }
}

static void run(const struct rpc_ops *o, enum test t, long count)
{
    if (t == T_TPUT)
        window(o, tests[t].bytes, count);
    else
        for (long i = 0; i < count; i++)
            round_trip(o, tests[t].bytes);
}

/* The server leaves serve(): the quit request, answered. */
static void quit(const struct rpc_ops *o)
{
    bm_stamp(req, 8, RPC_QUIT);
    send1(o, 8, RPC_QUIT);
    recv1(o, 8, RPC_QUIT);
}

/* Test t over transport k, count operations after a tenth unmeasured: µs
 * per operation, or calls/s for the throughput test. */
static double segment(int k, enum test t, long count)
{
    const struct rpc_ops *o = transports[k];
    select_mode((AO_t)k);
    run(o, t, count / 10 > 0 ? count / 10 : 1);
    double t0 = bm_now_s();
    run(o, t, count);
    double dt = bm_now_s() - t0;
    quit(o);
    return t == T_TPUT ? count / dt : dt * 1e6 / count;
}

static double v[NTEST][NT][MAX_ROUNDS];

static void measure(long n, int rounds)
{
    for (int r = 0; r <= rounds; r++) /* round 0 warms up */
        for (int t = 0; t < NTEST; t++)
            for (int i = 0; i < NT; i++) {
                int k = bm_abba(r, i, NT);
                long count = iters_of((enum test)t, n, 1);
                double x = segment(k, (enum test)t, count > 0 ? count : 1);
                if (r > 0)
                    v[t][k][r - 1] = x;
            }
}

static int index_of(const char *name)
{
    for (int k = 0; k < NT; k++)
        if (strcmp(transports[k]->name, name) == 0)
            return k;
    bm_fail("no transport %s", name);
}

/* Prints the ratio metric of impl a: test t of a over test t of b, per round. */
static void ratio(const struct bm_row *row, long n, int rounds, const char *metric,
                  const char *a, const char *b, enum test t)
{
    struct bm_stat s = bm_stat_ratio(v[t][index_of(a)], v[t][index_of(b)], rounds);
    bm_print(row, a, iters_of(t, n, rounds), metric, s, "x", 3);
}

/* Transport a's throughput over the best alternative's of the same round. */
static void over_best_alt(const struct bm_row *row, long n, int rounds, int a)
{
    double best[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        best[r] = 0;
        for (int k = 0; k < NT; k++)
            if (transports[k]->alt && v[T_TPUT][k][r] > best[r])
                best[r] = v[T_TPUT][k][r];
    }
    bm_print(row, transports[a]->name, iters_of(T_TPUT, n, rounds), "tput_vs_best_alt",
             bm_stat_ratio(v[T_TPUT][a], best, rounds), "x", 3);
}

static void report(const struct bm_row *row, long n, int rounds)
{
    for (int k = 0; k < NT; k++)
        for (int t = 0; t < NTEST; t++)
            bm_print(row, transports[k]->name, iters_of((enum test)t, n, rounds),
                     tests[t].metric, bm_stat_of(v[t][k], rounds), tests[t].unit,
                     t == T_TPUT ? 0 : 3);
    ratio(row, n, rounds, "rtt_vs_unix_stream", "call", "unix_stream", T_RTT);
    ratio(row, n, rounds, "echo_4KB_vs_unix_stream", "call", "unix_stream", T_ECHO4K);
    ratio(row, n, rounds, "echo_64KB_vs_unix_stream", "call", "unix_stream", T_ECHO64K);
    ratio(row, n, rounds, "rtt_vs_eventfd_ring", "call", "eventfd_ring", T_RTT);
    ratio(row, n, rounds, "rtt_vs_call_poll", "call", "call_poll", T_RTT);
    ratio(row, n, rounds, "rtt_vs_spin_ring", "call_poll", "spin_ring", T_RTT);
    ratio(row, n, rounds, "tput_vs_spin_ring", "call", "spin_ring", T_TPUT);
    ratio(row, n, rounds, "tput_vs_spin_ring", "call_poll", "spin_ring", T_TPUT);
    over_best_alt(row, n, rounds, CALL);
    over_best_alt(row, n, rounds, CALL_POLL);
}

static cpu_set_t allowed; /* the CPUs this program was given */

/* Pins this process to the i-th CPU of `allowed`; the CPU, or -1. */
static int pin(unsigned i)
{
    if (sched_setaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    return bm_pin_nth(i) == 0 ? bm_pinned_cpu() : -1;
}

int main(int argc, char **argv)
{
    long n = 4000, timeout = 900;
    int rounds = 5, header = 0;
    bm_program("rpcbench", usage, argc, argv);
    bm_setup("rpcbench", -1);
    for (int i = 1; i < argc; i++) {
        if (bm_common_flag(argv[i], &header, NULL))
            continue;
        if (!strcmp(argv[i], "--quick"))
            n = 300, rounds = 3;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            n = bm_opt_long(argv[++i], 8, bm_bad_line);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = (int)bm_opt_range(argv[++i], 1, MAX_ROUNDS, bm_bad_line);
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = bm_opt_long(argv[++i], 1, bm_bad_line);
        else
            bm_bad_line();
    }
    bm_timeout((unsigned)timeout);
    ctl =
        mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    req = rpc_buffer(), rep = rpc_buffer();
    if (ctl == MAP_FAILED)
        bm_fail("mmap: %s", strerror(errno));
    sched_getaffinity(0, sizeof allowed, &allowed);
    int ccpu = pin(0), scpu = pin(1); /* the server's CPU, then the client's again */
    rpc_yield_after = bm_yield_after(ccpu, scpu);
    for (int k = 0; k < NT; k++)
        transports[k]->setup(transports[k]->t);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        bm_fail("fork: %s", strerror(errno));
    if (child == 0)
        server();
    server_pid = child;
    bm_on_fail(kill_server);
    signal(SIGPIPE, SIG_IGN); /* a dead server is an error of a write, which fails */
    pin(0);
    while (!AO_load_acquire(&ctl->opened)) /* pairs with server's release */
        usleep(1000);
    for (int k = 0; k < NT; k++)
        transports[k]->client_open(transports[k]->t);
    measure(n, rounds);
    select_mode(MODE_END);
    for (int k = 0; k < NT; k++)
        transports[k]->close(transports[k]->t, 0);
    int st;
    pid_t w = waitpid(child, &st, 0);
    server_pid = 0;
    if (w != child || !WIFEXITED(st) || WEXITSTATUS(st))
        bm_fail("the server ended badly (status %#x)", st);
    struct bm_row row = {stdout, "rpcbench", "-", 2, bm_pinned_apart(ccpu, scpu)};
    if (header)
        bm_print_header(stdout);
    report(&row, n, rounds);
    return 0;
}
