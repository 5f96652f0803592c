/*
 * am_harness.c - the shmam side of the harness (see am_harness.h).
 */
#include <unistd.h>

#include "common/am_harness.h"

am_ep_t *bm_am_init(const char *prog, int *argc, char ***argv)
{
    am_ep_t *ep;
    bm_setup(prog, -1);
    bm_check(am_init(argc, argv, &ep), "am_init");
    bm_set_rank(am_rank());
    return ep;
}

void bm_die(const char *what, int err)
{
    bm_fail("%s%s%s", what, err ? ": " : "", err ? am_strerror(err) : "");
}

unsigned bm_yield_after(int cpu_a, int cpu_b)
{
    int shared = sysconf(_SC_NPROCESSORS_ONLN) <= 1 || (cpu_a >= 0 && cpu_a == cpu_b);
    return shared ? 1 : bm_pinned_apart(cpu_a, cpu_b) ? 1u << 14 : 256;
}

void bm_wait_stalled(struct bm_wait *w)
{
    int64_t t = bm_now_ns();
    if (!w->since)
        w->since = t;
    else if (t - w->since > BM_STALL_NS)
        bm_fail("STALL: nothing for %.0f s while %s", BM_STALL_NS / 1e9, w->what);
}

void bm_await(am_ep_t *e, unsigned yield_after, const unsigned long *count,
              unsigned long want, const char *what)
{
    struct bm_wait w = BM_WAIT(yield_after, what);
    while (*count < want)
        bm_wait_poll(&w, e);
}

unsigned long bm_bad_packets(const am_ep_t *job, const struct bm_algs *a)
{
    unsigned long bad = job ? am_ep_bad_packets(job) : 0;
    for (int i = 0; a && i < a->n; i++)
        bad += am_ep_bad_packets(a->ep[i]);
    return bad;
}
