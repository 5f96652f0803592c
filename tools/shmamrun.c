/*
 * shmamrun.c - the job launcher, in the habit of mpiexec:
 *
 *   shmamrun -n P [-a ALG|--claim ALG] [--queue KIND] [--shm posix|sysv] [--bind]
 *            [--packets Q] [--bulk B] [--long-max BYTES] [--timeout SECONDS]
 *            program args...
 *
 * Lifecycle of a job:
 *   1. Parse and validate the options; bad input exits 2 before anything starts.
 *      An option given on the command line is exported over the inherited
 *      environment variable (job.h names them); an inherited value is validated
 *      too, and an empty one is removed.
 *   2. Make a fresh job name "j<launcher pid>-<8 random hex digits>" and export
 *      SHMAM_JOB and SHMAM_NPROCS.
 *   3. Block SIGCHLD, SIGINT, SIGTERM and SIGHUP, then fork the guardian (guardian.c),
 *      connected to the launcher by a socket pair.
 *   4. Fork P ranks.  Each rank sets SHMAM_RANK, asks to be killed if the
 *      launcher dies, optionally pins itself to one CPU, restores the signal
 *      mask and execs the program.  Ranks stay in the launcher's process group,
 *      so a terminal's ^C and ^Z reach them directly and rank 0 can read the
 *      terminal; the launcher therefore signals ranks by pid, never by group.
 *      After forking each rank the launcher sends the guardian a pidfd of it
 *      (SCM_RIGHTS); the rank is not reaped yet, so its pid cannot be reused.
 *   5. Wait for signals with sigtimedwait (no handlers, no sleeping loops).  The
 *      first rank that exits nonzero or by a signal decides the exit status and
 *      stops the others: SIGTERM, then SIGKILL after a grace period.  A signal to
 *      the launcher is forwarded the same way (a second one kills at once), and
 *      --timeout stops the job with status 124.
 *   6. Once every rank is reaped, unlink every rank's endpoint segment and
 *      one-copy region, and every other segment named under the job
 *      ("JOB.RANK.anything": an endpoint a rank made beside its own, and its
 *      region), in both backends (ENOENT is expected and ignored),
 *      so nothing outlives the job even
 *      if ranks were SIGKILLed; tell the guardian "done" and reap it; then exit
 *      with the decided status (0 if every rank exited 0, its exit code or
 *      128+signal otherwise).
 *
 * The guardian (guardian.c) removes the job's names if the launcher dies
 * before step 6.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "options.h" /* am__claim_locked */
#include "job.h"
#include "layout.h"
#include "segment.h"
#include "shmamrun.h"

#define GRACE_NS 1000000000LL /* between SIGTERM and SIGKILL */
#define EXIT_USAGE 2
#define EXIT_TIMEOUT 124
#define EXIT_NOSTART 127 /* a rank could not be started */

/* An endpoint option: where it comes from and what a good value looks like. */
struct setting {
    const char *env, *flag, *expect;
    int (*valid)(const char *v);
};

/* The names of a NULL-terminated list (am_claim_names, am_queue_names: the
 * one list of each) joined by `sep`, into buf. */
static const char *joined(const char *const *list, const char *sep, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *const *c = list; *c && n < size; c++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", c == list ? "" : sep, *c);
    return buf;
}

static const char *claims(const char *sep)
{
    static char buf[256];
    return joined(am_claim_names, sep, buf, sizeof buf);
}

static const char *queues(const char *sep)
{
    static char buf[256];
    return joined(am_queue_names, sep, buf, sizeof buf);
}

static int listed(const char *const *list, const char *v)
{
    for (const char *const *c = list; *c; c++)
        if (strcmp(v, *c) == 0)
            return 1;
    return 0;
}

static int valid_claim(const char *v)
{
    return listed(am_claim_names, v);
}

static int valid_queue(const char *v)
{
    return listed(am_queue_names, v);
}

static int valid_shm(const char *v)
{
    enum am_shm b;

    return am__shm_parse(v, &b) == 0;
}

/* A decimal number in min..max. */
static int number_within(const char *v, unsigned long min, unsigned long max)
{
    char *end;

    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    return errno == 0 && end != v && *end == '\0' && v[0] != '-' && x >= min && x <= max;
}

/* A decimal power of two in min..max. */
static int pow2_within(const char *v, unsigned long min, unsigned long max)
{
    unsigned long x = strtoul(v, NULL, 10);
    return number_within(v, min, max) && (x & (x - 1)) == 0;
}

static int valid_packets(const char *v)
{
    return pow2_within(v, 2, AM_MAX_PACKETS);
}
static int valid_bulk(const char *v)
{
    return pow2_within(v, 1, AM_MAX_BULK_BLOCKS);
}
static int valid_long(const char *v)
{
    return number_within(v, AM_MIN_LONG, AM_MAX_LONG);
}

enum { SET_CLAIM, SET_QUEUE, SET_SHM, SET_PACKETS, SET_BULK, SET_LONG, NSETTINGS };
static const struct setting settings[NSETTINGS] = {
    [SET_CLAIM] = {SHMAM_CLAIM, "--claim", NULL /* claims(", ") */, valid_claim},
    [SET_QUEUE] = {SHMAM_QUEUE, "--queue", NULL /* queues(", ") */, valid_queue},
    [SET_SHM] = {SHMAM_SHM, "--shm", "posix or sysv", valid_shm},
    [SET_PACKETS] = {SHMAM_PACKETS, "--packets", "a power of two, 2..65536", valid_packets},
    [SET_BULK] = {SHMAM_BULK, "--bulk", "a power of two, 1..4096", valid_bulk},
    [SET_LONG] = {SHMAM_LONG_MAX, "--long-max", "bytes, 4096..1073741824", valid_long},
};

struct opts {
    int nprocs;
    int bind;
    double timeout;               /* seconds; 0: none */
    const char *value[NSETTINGS]; /* from the command line, or NULL */
    char **argv;                  /* the program and its arguments */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: shmamrun -n P [options] program [args...]\n"
            "Start P ranks of program as one shmam job and wait for them.\n"
            "  -n P                 number of ranks (1..%u)\n"
            "  -a, --claim ALG      claim algorithm: %s\n"
            "      --queue KIND     queue kind: %s\n"
            "                       (mpsc: shared queues; the others: a channel per\n"
            "                       sender, --packets and --bulk then per channel)\n"
            "      --shm KIND       segment backend: posix or sysv\n"
            "      --bind           pin rank r to the (r %% ncpus)-th allowed CPU\n"
            "      --packets Q      packets per queue, a power of two\n"
            "      --bulk B         8 KB bulk blocks per queue, a power of two\n"
            "      --long-max BYTES the longest long message (default 1 MiB)\n"
            "      --timeout SECS   stop the job after SECS seconds (exit status 124)\n"
            "      --list-claims    print the claim algorithms, one a line with\n"
            "                       locked or lock-free after a tab, and exit\n"
            "      --list-queues    print the queue kinds, one a line, and exit\n"
            "  -h, --help           print this help\n"
            "Options override SHMAM_CLAIM, SHMAM_QUEUE, SHMAM_SHM, SHMAM_PACKETS,\n"
            "SHMAM_BULK, SHMAM_LONG_MAX.\n"
            "Job names (and so segment names) start with SHMAM_JOB_PREFIX, default j.\n"
            "Exit status: 0 if every rank exits 0, else the first failure's status\n"
            "(its exit code or 128+signal); 124 on timeout; 2 on bad usage.\n",
            AM_MAX_SENDERS, claims(" "), queues(" "));
}

/* Bad input: say what was wrong and exit 2 before anything has started. */
static _Noreturn __attribute__((format(printf, 1, 2))) void bad_usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("shmamrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'shmamrun --help'.\n", stderr);
    va_end(ap);
    exit(EXIT_USAGE);
}

static int parse_nprocs(const char *v)
{
    char *end;

    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > (long)AM_MAX_SENDERS)
        bad_usage("bad -n '%s': expected a number of ranks, 1..%u", v, AM_MAX_SENDERS);
    return (int)n;
}

static double parse_timeout(const char *v)
{
    char *end;

    errno = 0;
    double t = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(t) || t <= 0 || t > 1e7)
        bad_usage("bad --timeout '%s': expected a positive number of seconds", v);
    return t;
}

enum {
    OPT_SHM = 256,
    OPT_BIND,
    OPT_PACKETS,
    OPT_BULK,
    OPT_LONG,
    OPT_TIMEOUT,
    OPT_LIST_CLAIMS,
    OPT_QUEUE,
    OPT_LIST_QUEUES
};
static const struct option long_opts[] = {
    {"claim", required_argument, NULL, 'a'},
    {"shm", required_argument, NULL, OPT_SHM},
    {"bind", no_argument, NULL, OPT_BIND},
    {"packets", required_argument, NULL, OPT_PACKETS},
    {"bulk", required_argument, NULL, OPT_BULK},
    {"long-max", required_argument, NULL, OPT_LONG},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"list-claims", no_argument, NULL, OPT_LIST_CLAIMS},
    {"queue", required_argument, NULL, OPT_QUEUE},
    {"list-queues", no_argument, NULL, OPT_LIST_QUEUES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One option; returns 0, or -1 for an option getopt refused (and explained). */
static int take_option(int c, struct opts *o)
{
    switch (c) {
    case 'n':
        o->nprocs = parse_nprocs(optarg);
        break;
    case 'a':
        o->value[SET_CLAIM] = optarg;
        break;
    case OPT_SHM:
        o->value[SET_SHM] = optarg;
        break;
    case OPT_BIND:
        o->bind = 1;
        break;
    case OPT_PACKETS:
        o->value[SET_PACKETS] = optarg;
        break;
    case OPT_BULK:
        o->value[SET_BULK] = optarg;
        break;
    case OPT_LONG:
        o->value[SET_LONG] = optarg;
        break;
    case OPT_TIMEOUT:
        o->timeout = parse_timeout(optarg);
        break;
    case OPT_QUEUE:
        o->value[SET_QUEUE] = optarg;
        break;
    case OPT_LIST_CLAIMS: /* NAME<TAB>locked or lock-free: options.c's claim table */
        for (int i = 0; i < AM_CLAIM_COUNT; i++)
            printf("%s\t%s\n", am_claim_names[i],
                   am__claim_locked((enum am_claim)i) ? "locked" : "lock-free");
        exit(0);
    case OPT_LIST_QUEUES:
        for (const char *const *a = am_queue_names; *a; a++)
            puts(*a);
        exit(0);
    case 'h':
        usage(stdout);
        exit(0);
    default:
        return -1;
    }
    return 0;
}

/* "+" stops at the program name, so its own options pass through untouched. */
static void parse_args(int argc, char **argv, struct opts *o)
{
    int c;

    while ((c = getopt_long(argc, argv, "+n:a:h", long_opts, NULL)) != -1)
        if (take_option(c, o) != 0) {
            usage(stderr);
            exit(EXIT_USAGE);
        }
    if (o->nprocs == 0)
        bad_usage("-n P is required");
    if (optind >= argc)
        bad_usage("no program to run");
    o->argv = argv + optind;
}

/* Validate each option, command line first, and export it for the ranks. */
static void export_settings(const struct opts *o)
{
    for (int i = 0; i < NSETTINGS; i++) {
        const struct setting *s = &settings[i];
        const char *v = o->value[i], *env = getenv(s->env);
        const char *expect = s->expect        ? s->expect
                             : i == SET_QUEUE ? queues(", ")
                                              : claims(", ");
        if (v && !s->valid(v))
            bad_usage("bad %s '%s': expected %s", s->flag, v, expect);
        if (v)
            setenv(s->env, v, 1);
        else if (env && !*env)
            unsetenv(s->env);
        else if (env && !s->valid(env))
            bad_usage("bad %s='%s' in the environment: expected %s", s->env, env, expect);
    }
}

/* SHMAM_JOB_PREFIX if set (checked: 1 to AM_JOB_PREFIX_MAX of [a-z0-9]), else
 * "j".  Exits 2 on a bad value, before anything has started. */
static const char *job_prefix(void)
{
    const char *p = getenv(SHMAM_JOB_PREFIX);
    if (!p || !*p)
        return "j";
    size_t n = strlen(p);
    if (n > AM_JOB_PREFIX_MAX || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789") != n)
        bad_usage("bad %s='%s' in the environment: expected 1 to %d of [a-z0-9]",
                  SHMAM_JOB_PREFIX, p, AM_JOB_PREFIX_MAX);
    return p;
}

/* A job name unlikely to be reused: the prefix, the launcher's pid and 32
 * random bits (at most 8 + 7 + 1 + 8 = AM_JOB_NAME_MAX characters). */
static void make_job_name(struct job *job)
{
    uint32_t r;

    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u;
    }
    snprintf(job->name, sizeof job->name, "%s%ld-%08x", job_prefix(), (long)getpid(),
             (unsigned)r);
}

int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* In a rank: pin to the (rank % n)-th CPU this process may run on. */
static int bind_rank(int rank)
{
    cpu_set_t allowed, one;

    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    int want = rank % CPU_COUNT(&allowed), cpu = -1;
    while (want >= 0)
        if (CPU_ISSET(++cpu, &allowed))
            want--;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one);
}

/* In a freshly forked rank: never returns. */
static _Noreturn void run_rank(const struct opts *o, int rank, pid_t launcher,
                               const sigset_t *mask)
{
    char buf[16];

    snprintf(buf, sizeof buf, "%d", rank);
    setenv(SHMAM_RANK, buf, 1);
    /* Die with the launcher rather than outlive it unsupervised. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher)
        _exit(EXIT_NOSTART);
    if (o->bind && bind_rank(rank) != 0) {
        fprintf(stderr, "shmamrun: rank %d: cannot bind: %s\n", rank, strerror(errno));
        _exit(EXIT_NOSTART);
    }
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "shmamrun: rank %d: cannot run %s: %s\n", rank, o->argv[0],
            strerror(errno));
    _exit(EXIT_NOSTART);
}

/* Record the job's exit status if no earlier failure has. */
static void decide(struct job *job, int status)
{
    if (!job->failed) {
        job->failed = 1;
        job->status = status;
    }
}

/* Send sig to every live rank.  The first stop starts the grace period; SIGKILL
 * ends it. */
static void signal_ranks(struct job *job, int sig)
{
    for (int r = 0; r < job->nprocs; r++)
        if (job->pid[r] > 0)
            kill(job->pid[r], sig);
    if (sig == SIGKILL)
        job->kill_at = 0;
    else if (!job->stopping)
        job->kill_at = now_ns() + GRACE_NS;
    job->stopping = 1;
}

static void stop_job(struct job *job)
{
    if (!job->stopping)
        signal_ranks(job, SIGTERM);
}

/* Report a failed removal; ENOENT is expected (someone removed it first). */
static void unlinked(enum am_shm b, const char *name, int rc)
{
    if (rc != 0 && rc != -ENOENT)
        fprintf(stderr, "shmamrun: cannot remove %s segment %s: %s\n", am__shm_name(b),
                name, strerror(-rc));
}

/* am__segment_list callback: unlinks a name under the job ("JOB." and more, an
 * endpoint a rank made beside its own, e.g. one per claim algorithm in the
 * benchmarks); arg is the prefix "JOB.", then the backend. */
struct sweep {
    const char *prefix;
    enum am_shm backend;
};

static int sweep_one(const char *name, void *arg)
{
    const struct sweep *s = arg;
    if (strncmp(name, s->prefix, strlen(s->prefix)) == 0)
        unlinked(s->backend, name, am__segment_unlink(s->backend, name));
    return 0;
}

/* Unlink every rank's segment and region, and every other segment named
 * under the job ("JOB.*", regions JOB.RANK:r included), in both backends; none
 * may outlive the job.  The sweep finds the extra names; the rank names are
 * also unlinked one by one because the System V listing cannot read the name
 * of a segment whose creator died before writing it (ENOENT for the rest is
 * expected). */
void remove_segments(const struct job *job)
{
    char name[AM_MAX_NAME + 1], prefix[AM_MAX_NAME + 2];

    snprintf(prefix, sizeof prefix, "%s.", job->name);
    for (int b = AM_SHM_POSIX; b <= AM_SHM_SYSV; b++) {
        struct sweep s = {prefix, (enum am_shm)b};
        am__segment_list((enum am_shm)b, sweep_one, &s);
    }

    for (int r = 0; r < job->nprocs; r++) {
        if (am__job_ep_name(job->name, r, name, sizeof name) != 0)
            continue;
        for (int b = AM_SHM_POSIX; b <= AM_SHM_SYSV; b++)
            unlinked((enum am_shm)b, name, am__job_names_unlink((enum am_shm)b, name));
    }
}

static int start_ranks(struct job *job, const struct opts *o, const sigset_t *mask)
{
    pid_t self = getpid();

    for (int r = 0; r < job->nprocs; r++) {
        pid_t p = fork();
        if (p == 0) {
            close(job->guard_fd);
            run_rank(o, r, self, mask);
        }
        if (p < 0) {
            perror("shmamrun: fork");
            decide(job, 1);
            return -1;
        }
        guard_rank(job, p);
        job->pid[r] = p;
        job->alive++;
    }
    return 0;
}

static int rank_of(const struct job *job, pid_t p)
{
    for (int r = 0; r < job->nprocs; r++)
        if (job->pid[r] == p)
            return r;
    return -1;
}

/* A rank ended: the first abnormal end decides the status and stops the job. */
static void rank_ended(struct job *job, int rank, int st)
{
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

    if (code == 0 || job->failed || job->stopping)
        return;
    if (WIFEXITED(st))
        fprintf(stderr, "shmamrun: rank %d exited with status %d\n", rank, code);
    else
        fprintf(stderr, "shmamrun: rank %d killed by signal %d\n", rank, WTERMSIG(st));
    decide(job, code);
    stop_job(job);
}

static void reap(struct job *job)
{
    pid_t p;
    int st;

    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        int r = rank_of(job, p);
        if (p == job->guardian)
            job->guardian = 0;
        if (r < 0)
            continue;
        job->pid[r] = 0;
        job->alive--;
        rank_ended(job, r, st);
    }
}

/* A signal to the launcher: forward it; a second one kills at once. */
static void on_signal(struct job *job, int sig)
{
    if (job->stopping) {
        signal_ranks(job, SIGKILL);
        return;
    }
    fprintf(stderr, "shmamrun: got signal %d, stopping the job\n", sig);
    decide(job, 128 + sig);
    signal_ranks(job, sig);
}

/* The next deadline: the kill after the grace period, else the timeout. */
static int64_t next_deadline(const struct job *job)
{
    return job->stopping ? job->kill_at : job->timeout_at;
}

static void on_deadline(struct job *job, const struct opts *o)
{
    if (job->stopping) {
        signal_ranks(job, SIGKILL);
        return;
    }
    fprintf(stderr, "shmamrun: timeout after %g s, stopping the job\n", o->timeout);
    decide(job, EXIT_TIMEOUT);
    stop_job(job);
}

/* Wait for the first of a signal in set and the deadline (0: none). */
static int wait_signal(const sigset_t *set, int64_t deadline)
{
    if (deadline == 0)
        return sigwaitinfo(set, NULL);
    int64_t left = deadline - now_ns();
    if (left <= 0) {
        errno = EAGAIN;
        return -1;
    }
    struct timespec ts = {.tv_sec = left / 1000000000LL, .tv_nsec = left % 1000000000LL};
    return sigtimedwait(set, NULL, &ts);
}

static void supervise(struct job *job, const struct opts *o, const sigset_t *set)
{
    while (job->alive > 0) {
        int sig = wait_signal(set, next_deadline(job));
        if (sig == SIGCHLD)
            reap(job);
        else if (sig > 0)
            on_signal(job, sig);
        else if (errno == EAGAIN)
            on_deadline(job, o);
    }
}

/* Name the job and export what every rank shares. */
static int new_job(struct job *job, const struct opts *o)
{
    char buf[16];

    make_job_name(job);
    job->nprocs = o->nprocs;
    job->pid = calloc((size_t)o->nprocs, sizeof *job->pid);
    if (!job->pid)
        return -1;
    snprintf(buf, sizeof buf, "%d", o->nprocs);
    setenv(SHMAM_JOB, job->name, 1);
    setenv(SHMAM_NPROCS, buf, 1);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    struct job job = {0};
    sigset_t set, old;

    parse_args(argc, argv, &o);
    export_settings(&o);
    if (new_job(&job, &o) != 0) {
        perror("shmamrun");
        return 1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    if (start_guardian(&job, &old) != 0) {
        perror("shmamrun: cannot start the guardian");
        return 1;
    }
    if (o.timeout > 0)
        job.timeout_at = now_ns() + (int64_t)(o.timeout * 1e9);
    if (start_ranks(&job, &o, &old) != 0)
        stop_job(&job);
    supervise(&job, &o, &set);
    remove_segments(&job);
    dismiss_guardian(&job);
    free(job.pid);
    return job.status;
}
