/*
 * prog_rank.c - a rank for check_launcher, started by shmamrun.
 *
 *   prog_rank ok | pause | affinity | env
 *   prog_rank exit RANK CODE      rank RANK exits CODE, the others wait
 *   prog_rank kill RANK           rank RANK kills itself with SIGKILL
 *   prog_rank stubborn RANK CODE  every rank ignores SIGTERM; RANK exits CODE
 *
 * Every rank first creates a segment "JOB.RANK.extra" and its endpoint segment
 * "JOB.RANK" (backend from SHMAM_SHM, default posix) and never removes them:
 * that is the launcher's job.
 * It prints one line (one write, so lines from several ranks never mix)
 *   rank R pid PID job JOB ready
 * and release-stores a ready flag in the first word of its segment.  Once every
 * rank's flag is set (so every segment exists and every line is out) it does
 * what the mode says.  Waiting ranks pause until signalled.
 */
#include <atomic_ops.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "segment.h"

static const char *job;
static int rank, nprocs;
static enum am_shm backend = AM_SHM_POSIX;

static void die(const char *what)
{
    dprintf(2, "prog_rank %d: %s\n", rank, what);
    exit(99);
}

static void read_env(void)
{
    const char *r = getenv(SHMAM_RANK), *n = getenv(SHMAM_NPROCS);
    const char *shm = getenv(SHMAM_SHM);

    job = getenv(SHMAM_JOB);
    if (!job || !r || !n)
        die("not started by shmamrun");
    rank = atoi(r);
    nprocs = atoi(n);
    if (shm && am__shm_parse(shm, &backend) != 0)
        die("bad SHMAM_SHM");
}

/* Whether rank r is ready: its flag, acquire-loaded, pairs with the release
 * store in create_and_gather. */
static int is_ready(int r)
{
    char name[AM_MAX_NAME + 1];
    struct am_segment s;

    if (am__job_ep_name(job, r, name, sizeof name) != 0)
        die("bad job name");
    if (am__segment_open(backend, name, &s) != 0)
        return 0;
    int ready = AO_load_acquire((AO_t *)s.base) == 1;
    am__segment_unmap(&s);
    return ready;
}

/* The name of rank r's extra segment, "JOB.R.extra", in buf. */
static int extra_name(int r, char *buf, size_t n)
{
    char name[AM_MAX_NAME + 1];
    int len;

    if (am__job_ep_name(job, r, name, sizeof name) != 0)
        return -1;
    len = snprintf(buf, n, "%s.extra", name);
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* Create this rank's extra segment (as a benchmark's endpoint per algorithm
 * is named under the job), then its own, say so, then wait (up to 10 s) for
 * everybody. */
static void create_and_gather(void)
{
    char name[AM_MAX_NAME + 1], xname[AM_MAX_NAME + 1];
    struct am_segment s, x;
    struct timespec ms = {0, 1000000};

    if (am__job_ep_name(job, rank, name, sizeof name) != 0)
        die("bad job name");
    if (extra_name(rank, xname, sizeof xname) != 0 ||
        am__segment_create(backend, xname, 4096, &x) != 0)
        die("cannot create my extra segment");
    am__segment_unmap(&x);
    if (am__segment_create(backend, name, 4096, &s) != 0)
        die("cannot create my segment");
    dprintf(1, "rank %d pid %ld job %s ready\n", rank, (long)getpid(), job);
    AO_store_release((AO_t *)s.base, 1);
    for (int r = 0, tries = 0; r < nprocs; tries++) {
        if (is_ready(r))
            r++;
        else if (tries > 10000)
            die("peers never became ready");
        else
            nanosleep(&ms, NULL);
    }
}

static void print_affinity(void)
{
    cpu_set_t set;
    char buf[512];
    int len = snprintf(buf, sizeof buf, "rank %d cpus", rank);

    if (sched_getaffinity(0, sizeof set, &set) != 0)
        die("sched_getaffinity");
    for (int c = 0; c < CPU_SETSIZE && len < (int)sizeof buf - 8; c++)
        if (CPU_ISSET(c, &set))
            len += snprintf(buf + len, sizeof buf - (size_t)len, " %d", c);
    dprintf(1, "%s\n", buf);
}

static const char *env_or(const char *name)
{
    const char *v = getenv(name);

    return v ? v : "-";
}

static void print_env(void)
{
    dprintf(1, "rank %d env claim=%s shm=%s packets=%s bulk=%s\n", rank,
            env_or(SHMAM_CLAIM), env_or(SHMAM_SHM), env_or(SHMAM_PACKETS),
            env_or(SHMAM_BULK));
}

static int arg_int(int argc, char **argv, int k)
{
    if (k >= argc)
        die("missing argument");
    return atoi(argv[k]);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";

    read_env();
    if (strcmp(mode, "stubborn") == 0)
        signal(SIGTERM, SIG_IGN);
    create_and_gather();
    if (strcmp(mode, "affinity") == 0)
        print_affinity();
    else if (strcmp(mode, "env") == 0)
        print_env();
    else if (strcmp(mode, "kill") == 0 && rank == arg_int(argc, argv, 2))
        raise(SIGKILL);
    else if ((strcmp(mode, "exit") == 0 || strcmp(mode, "stubborn") == 0) &&
             rank == arg_int(argc, argv, 2))
        return arg_int(argc, argv, 3);
    if (strcmp(mode, "ok") == 0 || strcmp(mode, "affinity") == 0 ||
        strcmp(mode, "env") == 0)
        return 0;
    for (;;)
        pause();
}
