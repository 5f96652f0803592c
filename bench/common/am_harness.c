/*
 * am_harness.c - the shmam side of the harness (see am_harness.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
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

void *bm_raw_segment(am_ep_t *job, const char *what, size_t len)
{
    char name[96];
    const char *id = getenv("SHMAM_JOB");
    int rank = am_rank(), fd = -1;
    snprintf(name, sizeof name, "/shmam-%s.%s", id ? id : "nojob", what);
    if (rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)len) != 0)
            bm_die("cannot create the raw segment", -errno);
    }
    bm_check(am_barrier(job), "am_barrier");
    if (rank == 1 && (fd = shm_open(name, O_RDWR, 0)) < 0)
        bm_die("cannot open the raw segment", -errno);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        bm_die("cannot map the raw segment", -errno);
    close(fd);
    bm_check(am_barrier(job), "am_barrier");
    if (rank == 0 && shm_unlink(name) != 0)
        bm_die("cannot unlink the raw segment", -errno);
    return p;
}

size_t bm_long_max(const size_t *sizes, int n)
{
    const char *env = getenv("SHMAM_LONG_MAX");
    char buf[24];
    if (env && *env)
        return strtoul(env, NULL, 10);
    size_t max = sizes[n - 1] > (1u << 20) ? sizes[n - 1] : 1u << 20;
    snprintf(buf, sizeof buf, "%zu", max);
    setenv("SHMAM_LONG_MAX", buf, 1);
    return max;
}
