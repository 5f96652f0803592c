/*
 * testutil.c - helpers for multi-process tests; see testutil.h.
 *
 * The gate is a sense-reversing barrier: the last arrival of a round resets the
 * count, then release-stores generation + 1; the others wait for the generation
 * to change with acquire loads, so what each process wrote before the gate is
 * visible to all after it.
 *
 * The run's name prefix and CPU set are set once in main, before any test forks;
 * the test's pid in each test's process: children inherit them.
 *
 * A program run by tu_start() writes into pipes that the test reads with poll()
 * until every writer (the program and whatever it started) has closed them, so
 * the program never blocks on a full pipe; only then is it reaped.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "segment.h"
#include "spin.h"
#include "testutil.h"

#if !defined(AO_HAVE_fetch_and_add1_full) || !defined(AO_HAVE_fetch_and_add1) ||           \
    !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "testutil needs AO_fetch_and_add1(_full), AO_load_acquire, AO_store_release"
#endif

static char run_prefix[32]; /* "<tag><pid of main>." */
static long test_pid;       /* the process running the current test */
static cpu_set_t run_cpus;  /* where this run may run: tu_spawn's helpers */
static int have_run_cpus;

void *tu_shared_alloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        perror("tu_shared_alloc: mmap");
        abort();
    }
    return p; /* anonymous mappings are zero-filled */
}

void tu_shared_free(void *p, size_t size)
{
    if (p)
        munmap(p, size);
}

int tu_pin(int cpu)
{
    cpu_set_t allowed, one;
    int k, n;

    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return -errno;
    n = CPU_COUNT(&allowed);
    k = (cpu % n + n) % n;
    for (cpu = 0; k > 0 || !CPU_ISSET(cpu, &allowed); cpu++)
        if (CPU_ISSET(cpu, &allowed))
            k--;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
}

/* Before the processes that will use it start. */
void tu_gate_init(struct tu_gate *g, unsigned n)
{
    memset(g, 0, sizeof(*g));
    g->n = n;
}

/* By each of the n processes, once per round. */
void tu_gate_wait(struct tu_gate *g)
{
    AO_t gen = AO_load_acquire(&g->generation);
    struct spin s = SPIN_INIT;

    if (AO_fetch_and_add1_full(&g->count) + 1 == AO_load(&g->n)) {
        AO_store(&g->count, 0);
        AO_store_release(&g->generation, gen + 1);
        return;
    }
    while (AO_load_acquire(&g->generation) == gen)
        spin_wait(&s);
}

double tu_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tu_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* 1 (and a line on stderr) if child idx ended badly with wait status st. */
static int report(int idx, pid_t pid, int st)
{
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFEXITED(st))
        fprintf(stderr, "tu_run_procs: child %d (pid %d) exited with %d\n", idx, (int)pid,
                WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        fprintf(stderr, "tu_run_procs: child %d (pid %d) killed by signal %d (%s)\n", idx,
                (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
    return 1;
}

/* Kills and reaps every child still running; returns how many there were. */
static int kill_rest(pid_t *pid, int n, const char *why)
{
    int killed = 0, st;

    for (int i = 0; i < n; i++) {
        if (pid[i] <= 0)
            continue;
        kill(pid[i], SIGKILL);
        waitpid(pid[i], &st, 0);
        fprintf(stderr, "tu_run_procs: child %d (pid %d) killed: %s\n", i, (int)pid[i],
                why);
        pid[i] = 0;
        killed++;
    }
    return killed;
}

/* Reaps the n children in pid[] (entries <= 0 are done), polling every
 * millisecond until the deadline, timeout_s from now or, with progress, from
 * the last change of *progress seen.  Returns how many failed. */
static int reap(pid_t *pid, int n, int timeout_s, volatile AO_t *progress)
{
    double deadline = tu_now_s() + timeout_s;
    int live = n, failed = 0, st;
    struct timespec ms = {0, 1000000};
    AO_t seen = progress ? AO_load_acquire(progress) : 0;

    while (live > 0 && tu_now_s() < deadline) {
        if (progress && AO_load_acquire(progress) != seen) {
            seen = AO_load_acquire(progress);
            deadline = tu_now_s() + timeout_s;
        }
        for (int i = 0; i < n; i++) {
            if (pid[i] <= 0 || waitpid(pid[i], &st, WNOHANG) != pid[i])
                continue;
            failed += report(i, pid[i], st);
            pid[i] = 0;
            live--;
        }
        if (live > 0)
            nanosleep(&ms, NULL);
    }
    return failed + kill_rest(pid, n, "timed out");
}

static void child(int idx, void (*fn)(int, void *), void *arg)
{
    int r = tu_pin(idx);

    if (r != 0)
        fprintf(stderr, "tu_run_procs: child %d: tu_pin: %s\n", idx, strerror(-r));
    fn(idx, arg);
    _exit(0);
}

/* tu_run_procs and tu_run_procs_moving: progress NULL for a fixed timeout. */
static int run_procs(int n, void (*fn)(int idx, void *arg), void *arg, int timeout_s,
                     volatile AO_t *progress)
{
    pid_t *pid = calloc((size_t)n, sizeof(*pid));
    int failed;

    if (!pid)
        abort();
    fflush(NULL); /* or children would flush the parent's buffered output again */
    for (int i = 0; i < n; i++) {
        pid[i] = fork();
        if (pid[i] == 0)
            child(i, fn, arg);
        if (pid[i] < 0) {
            perror("tu_run_procs: fork");
            failed = kill_rest(pid, i, "fork failed") + n - i;
            free(pid);
            return failed;
        }
    }
    failed = reap(pid, n, timeout_s, progress);
    free(pid);
    return failed;
}

int tu_run_procs(int n, void (*fn)(int idx, void *arg), void *arg, int timeout_s)
{
    return run_procs(n, fn, arg, timeout_s, NULL);
}

int tu_run_procs_moving(int n, void (*fn)(int idx, void *arg), void *arg,
                        volatile AO_t *progress, int stall_s)
{
    return run_procs(n, fn, arg, stall_s, progress);
}

int tu_stress_factor(void)
{
    const char *s = getenv("SHMAM_STRESS");
    int f = s ? atoi(s) : 1;

    return f > 0 ? f : 1;
}

/* A yield that took over YIELD_SLOW_S gave the CPU to another process for a
 * time slice: the window was widened by a real preemption, far more than a
 * yield does on an idle CPU.  The next YIELD_SKIP yields are pauses instead,
 * or beside a CPU-bound process every yield would cost a slice and a test
 * run many times as long (seen: a stream of check_spsc 23 times). */
#define YIELD_SLOW_S 500e-6
#define YIELD_SKIP 64

void tu_yield(void)
{
    static unsigned skip; /* per process: yields left to turn into pauses */

    if (skip > 0) {
        skip--;
        for (unsigned i = 0; i < 64; i++)
            spin_cpu_relax();
        return;
    }
    double t0 = tu_now_s();
    sched_yield();
    if (tu_now_s() - t0 > YIELD_SLOW_S)
        skip = YIELD_SKIP;
}

void tu_widen(unsigned seed_counter)
{
    unsigned h = seed_counter * 2654435761u; /* Knuth's multiplicative hash */

    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    if ((h & 7u) == 0)
        tu_yield();
    else if ((h & 3u) == 1)
        for (unsigned i = (h >> 8) & 63u; i > 0; i--)
            spin_cpu_relax();
}

void tu_stall(uint32_t h)
{
    if ((h & 3u) == 0)
        tu_yield();
    else if ((h & 63u) == 1)
        usleep(20 + (h >> 8) % 200);
    else if ((h & 7u) == 2)
        for (unsigned i = (h >> 8) & 255u; i > 0; i--)
            spin_cpu_relax();
}

/* ---- payloads ---- */

uint32_t tu_mix32(uint32_t a, uint32_t b)
{
    uint32_t h = a * 0x9e3779b9u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu;

    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    return h ^ (h >> 16);
}

uint8_t tu_pattern_byte(uint32_t key, size_t i)
{
    return (uint8_t)(tu_mix32(key, (uint32_t)(i >> 2)) >> (8 * (i & 3)));
}

void tu_pattern(void *buf, uint32_t key, size_t len)
{
    uint8_t *p = buf;

    for (size_t i = 0; i < len; i++)
        p[i] = tu_pattern_byte(key, i);
}

uint32_t tu_fnv1a(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* ---- algorithms x backends ---- */

int tu_n_algs(void)
{
    int n = 0;

    while (am_claim_names[n])
        n++;
    return n;
}

/* With SHMAM_QUEUE naming a per-sender channel kind, every endpoint a test
 * makes without naming its queue has channels, which no claim algorithm
 * touches: the loops run one algorithm (lockfree) on both backends. */
int tu_combos(void)
{
    const char *q = getenv("SHMAM_QUEUE");
    return q && *q && strcmp(q, "mpsc") != 0 ? 2 : 2 * tu_n_algs();
}

struct tu_combo tu_combo_of(int i)
{
    struct tu_combo c = {i / 2, i % 2, am_claim_names[i / 2], tu_backend_name(i % 2)};

    return c;
}

const char *tu_backend_name(int backend)
{
    return am__shm_name((enum am_shm)backend);
}

/* ---- endpoint names, leftovers ---- */

void tu_run_init(const char *tag)
{
    snprintf(run_prefix, sizeof run_prefix, "%s%ld.", tag, (long)getpid());
    have_run_cpus = sched_getaffinity(0, sizeof run_cpus, &run_cpus) == 0;
}

void tu_name(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    int k = snprintf(buf, n, "%s", run_prefix);

    if (k < 0 || (size_t)k >= n)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + k, n - (size_t)k, fmt, ap);
    va_end(ap);
}

void tu_test_init(void)
{
    test_pid = (long)getpid();
}

void tu_test_prefix(char *buf, size_t n)
{
    tu_name(buf, n, "%ld-", test_pid);
}

void tu_ep_name(char *buf, size_t n, const char *role, int alg, int backend)
{
    tu_name(buf, n, "%ld-%s-%s-%c", test_pid, role, alg >= 0 ? am_claim_names[alg] : "x",
            tu_backend_name(backend)[0]);
}

/* The POSIX half of tu_leftovers: files /dev/shm/shmam-PREFIX*.  `found`: how
 * many were found before (the first one is described); returns the new total. */
static int posix_leftovers(const char *prefix, int remove, char *first, size_t n, int found)
{
    size_t pl = strlen(prefix);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;

    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "shmam-", 6) != 0 || strncmp(e->d_name + 6, prefix, pl) != 0)
            continue;
        if (found++ == 0)
            snprintf(first, n, "/dev/shm/%.100s", e->d_name);
        if (remove)
            am__segment_unlink(AM_SHM_POSIX, e->d_name + 6);
    }
    if (d)
        closedir(d);
    return found;
}

/* The System V half, likewise: every segment of this user that is not marked
 * for removal is attached read-only, and counts if its name trailer (segment.h:
 * written at its shmget, before any header) or its endpoint header starts with
 * `prefix`, whatever its mode: a creator killed before writing the header
 * leaves a named segment with a blank one.  A marked one has lost its name
 * and lives on only while a process is attached, which may be another
 * program reading every segment just then (shmamstat, this very check). */
static int sysv_leftovers(const char *prefix, int remove, char *first, size_t n, int found)
{
    size_t pl = strlen(prefix);
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info);

    for (int i = 0; i <= max; i++) {
        struct shmid_ds ds;
        int id = shmctl(i, SHM_STAT, &ds);

        if (id < 0 || ds.shm_perm.uid != geteuid() || (ds.shm_perm.mode & SHM_DEST) ||
            ds.shm_segsz < sizeof(struct am_seg_header))
            continue;
        const struct am_seg_header *h = shmat(id, NULL, SHM_RDONLY);
        if (h == (void *)-1)
            continue;
        const char *tag = ds.shm_segsz >= sizeof *h + AM_SYSV_TAG
                              ? (const char *)h + ds.shm_segsz - AM_SYSV_TAG
                              : "";
        const char *name = strncmp(tag, prefix, pl) == 0 ? tag
                           : h->magic == AM_MAGIC && strncmp(h->name, prefix, pl) == 0
                               ? h->name
                               : NULL;
        if (name) {
            if (found++ == 0)
                snprintf(first, n, "System V id %d (%.48s)", id, name);
            if (remove)
                shmctl(id, IPC_RMID, NULL);
        }
        shmdt(h);
    }
    return found;
}

int tu_leftovers(const char *prefix, int remove, char *first, size_t n)
{
    int found = posix_leftovers(prefix, remove, first, n, 0);

    return sysv_leftovers(prefix, remove, first, n, found);
}

int tu_remove_leftovers(const char *prog)
{
    char first[128] = "";
    if (!run_prefix[0]) { /* no tu_run_init: every shmam segment would match */
        fprintf(stderr, "%s: no run prefix (tu_run_init), removed nothing\n", prog);
        return 1;
    }
    int left = tu_leftovers(run_prefix, 1, first, sizeof first);

    if (left)
        fprintf(stderr, "%s: removed %d leftover segment(s), e.g. %s\n", prog, left, first);
    return left;
}

/* ---- helper processes of a Check test ---- */

void tu_error(struct tu_errors *e, const char *fmt, ...)
{
    va_list ap;

    if (AO_fetch_and_add1(&e->n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(e->first, sizeof e->first, fmt, ap);
    va_end(ap);
}

const char *tu_first_error(const struct tu_errors *e, const char *none)
{
    return e && AO_load(&e->n) ? e->first : none;
}

pid_t tu_spawn(void (*fn)(void *arg), void *arg, int cpu)
{
    pid_t parent = getpid(), p;

    fflush(NULL); /* or the child would flush the parent's buffered output again */
    p = fork();
    if (p != 0)
        return p;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent died before the line above */
        _exit(97);
    if (have_run_cpus)
        sched_setaffinity(0, sizeof run_cpus, &run_cpus);
    tu_pin(cpu);
    fn(arg);
    _exit(0);
}

int tu_reap(pid_t p, double secs)
{
    double end = tu_now_s() + secs;
    int st;

    while (tu_now_s() < end) {
        pid_t r = waitpid(p, &st, WNOHANG);

        if (r == p)
            return st;
        if (r < 0)
            return -2;
        tu_sleep_ms(1);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    return -1;
}

/* 1 if wait status st (from tu_reap) is a normal exit 0; else 0, with what
 * happened in why[0 .. n-1]. */
static int exit_ok(int st, char *why, size_t n)
{
    if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 1;
    if (st < 0)
        snprintf(why, n, "%s", st == -1 ? "timed out (killed)" : "lost");
    else if (WIFEXITED(st))
        snprintf(why, n, "ended with exit %d", WEXITSTATUS(st));
    else
        snprintf(why, n, "ended with signal %d", WTERMSIG(st));
    return 0;
}

int tu_in_futex(pid_t p)
{
    char path[64];
    long nr = -1;
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)p);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int got = fscanf(f, "%ld", &nr); /* "running" when it is not blocked */
    fclose(f);
    return got == 1 && nr == SYS_futex;
}

int tu_wait_flag(volatile AO_t *f, AO_t v, double secs)
{
    double end = tu_now_s() + secs;

    while (AO_load_acquire(f) < v && tu_now_s() < end)
        tu_sleep_ms(1);
    return AO_load_acquire(f) >= v;
}

int tu_map_when_there(am_ep_t *ep, unsigned idx, const char *name, double secs)
{
    double end = tu_now_s() + secs;
    int rc;

    while (((rc = am_ep_map(ep, idx, name)) == -ENOENT || rc == -EAGAIN) &&
           tu_now_s() < end)
        tu_sleep_ms(1);
    return rc;
}

/* ---- Check, in the test process only ---- */

TCase *tu_tcase(Suite *s, const char *name, int timeout_s)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, timeout_s);
    suite_add_tcase(s, tc);
    return tc;
}

int tu_run_suite(Suite *s, const char *prog)
{
    SRunner *sr = srunner_create(s);
    int failed, left;

    srunner_set_fork_status(sr, getenv("CK_FORK") ? srunner_fork_status(sr) : CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    left = tu_remove_leftovers(prog);
    return failed == 0 && left == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The tcases made so far and their names, for SHMAM_TEST. */
static struct tcase_named {
    TCase *tc;
    const char *name;
} named[64];
static unsigned n_named;

TCase *tu_tcase_create(const char *name)
{
    TCase *tc = (tcase_create)(name);
    if (n_named < sizeof named / sizeof named[0])
        named[n_named++] = (struct tcase_named){tc, name};
    return tc;
}

static const char *name_of(const TCase *tc)
{
    for (unsigned i = 0; i < n_named; i++)
        if (named[i].tc == tc)
            return named[i].name;
    return "";
}

void tu_add_test(TCase *tc, const TTest *tt, int signal, int exit_value, int start, int end)
{
    const char *only = getenv("SHMAM_TEST");
    if (only && *only && strcmp(only, tt->name) != 0 && strcmp(only, name_of(tc)) != 0)
        return;
    (_tcase_add_test)(tc, tt, signal, exit_value, start, end);
}

/* ---- programs run by a test ---- */

int tu_program(char *buf, size_t n, const char *rel)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);

    if (len <= 0)
        abort();
    exe[len] = '\0';
    int k = snprintf(buf, n, "%s/../%s", dirname(exe), rel);
    return k > 0 && (size_t)k < n && access(buf, X_OK) == 0;
}

const char *tu_env_no_leak_check(void)
{
    static char entry[512];
    const char *old = getenv("ASAN_OPTIONS");

    snprintf(entry, sizeof entry, "ASAN_OPTIONS=%s%sdetect_leaks=0", old ? old : "",
             old ? ":" : "");
    return entry;
}

/* The child of tu_start(): out and err are its pipes (err[1] < 0: stderr goes
 * to out too). */
static _Noreturn void exec_child(const char *const *argv, const char *const *env,
                                 const int *out, const int *err, int own_group)
{
    if (own_group)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dup2(out[1], 1);
    dup2(err[1] >= 0 ? err[1] : out[1], 2);
    for (int i = 0; i < 2; i++) {
        close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    for (; env && *env; env++)
        strchr(*env, '=') ? putenv((char *)*env) : unsetenv(*env);
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "tu_start: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Appends pid to the file TU_PIDS_FILE names, if set (scripts/run-tests.sh sets
 * it, and looks for what the jobs of these programs left).  One write in
 * append mode: concurrent tests do not mix their lines. */
static void note_pid(pid_t pid)
{
    const char *f = getenv("TU_PIDS_FILE");
    int fd = f && *f ? open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;

    if (fd >= 0) {
        dprintf(fd, "%ld\n", (long)pid);
        close(fd);
    }
}

pid_t tu_start(const char *const *argv, const char *const *env, enum tu_stderr err,
               double timeout_s, struct tu_output *o)
{
    int out_pipe[2], err_pipe[2] = {-1, -1};

    memset(o, 0, sizeof *o);
    ck_assert_msg(pipe(out_pipe) == 0 && (err == TU_ERR_MERGED || pipe(err_pipe) == 0),
                  "tu_start: pipe: %s", strerror(errno));
    o->deadline = timeout_s > 0 ? tu_now_s() + timeout_s : 0;
    o->pid = fork();
    ck_assert_msg(o->pid >= 0, "tu_start: fork: %s", strerror(errno));
    if (o->pid == 0)
        exec_child(argv, env, out_pipe, err_pipe, timeout_s > 0);
    note_pid(o->pid);
    close(out_pipe[1]);
    if (err_pipe[1] >= 0)
        close(err_pipe[1]);
    o->fd[0] = out_pipe[0];
    o->fd[1] = err_pipe[0];
    return o->pid;
}

/* One read from pipe i (0 stdout, 1 stderr) of o, kept if it fits and dropped
 * if not; closes the pipe at its end.  Returns the bytes read. */
static size_t read_pipe(struct tu_output *o, int i)
{
    char *buf = i ? o->err : o->out, drop[4096];
    size_t size = i ? sizeof o->err : sizeof o->out, *len = i ? &o->err_len : &o->len;
    int full = *len + 1 >= size;
    ssize_t n = full ? read(o->fd[i], drop, sizeof drop)
                     : read(o->fd[i], buf + *len, size - 1 - *len);

    if (n == 0 || (n < 0 && errno != EINTR)) {
        close(o->fd[i]);
        o->fd[i] = -1;
    }
    if (n > 0 && !full)
        *len += (size_t)n;
    buf[*len] = '\0';
    return n > 0 ? (size_t)n : 0;
}

ssize_t tu_read_some(struct tu_output *o)
{
    while (o->fd[0] >= 0 || o->fd[1] >= 0) {
        double left = o->deadline ? o->deadline - tu_now_s() : 0;
        struct pollfd p[2] = {{o->fd[0], POLLIN, 0}, {o->fd[1], POLLIN, 0}};
        size_t got = 0;

        if (o->deadline && left <= 0)
            return 0;
        if (poll(p, 2, o->deadline ? (int)(left * 1000) + 1 : -1) <= 0)
            continue; /* EINTR, or the deadline (seen above) */
        for (int i = 0; i < 2; i++)
            if (p[i].revents)
                got += read_pipe(o, i);
        if (got > 0)
            return (ssize_t)got;
    }
    return 0;
}

int tu_finish(struct tu_output *o)
{
    pid_t w;
    int st;

    while (tu_read_some(o) > 0)
        ;
    for (int i = 0; i < 2; i++)
        if (o->fd[i] >= 0)
            close(o->fd[i]);
    o->fd[0] = o->fd[1] = -1;
    while ((w = waitpid(o->pid, &st, o->deadline ? WNOHANG : 0)) == 0 &&
           tu_now_s() < o->deadline)
        tu_sleep_ms(10);
    if (w == 0) { /* past the deadline: kill its process group */
        kill(-o->pid, SIGKILL);
        waitpid(o->pid, &st, 0);
        o->signal = SIGKILL;
        return o->status = -1;
    }
    ck_assert_msg(w == o->pid, "tu_finish: waitpid: %s", strerror(errno));
    o->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    o->status = o->signal ? 128 + o->signal : WEXITSTATUS(st);
    return o->status;
}

int tu_run_capture(const char *const *argv, const char *const *env, enum tu_stderr err,
                   double timeout_s, struct tu_output *o)
{
    tu_start(argv, env, err, timeout_s, o);
    return tu_finish(o);
}

void tu_assert_clean(const char *what)
{
    char pfx[64], first[128] = "";
    int n;

    tu_test_prefix(pfx, sizeof pfx);
    n = tu_leftovers(pfx, 0, first, sizeof first);
    ck_assert_msg(n == 0, "%s: %d segment(s) left behind, e.g. %s", what, n, first);
}

void tu_assert_exit0(int st, const char *who, const char *what, const struct tu_errors *e)
{
    char why[64];

    ck_assert_msg(exit_ok(st, why, sizeof why), "%s: %s %s (%s)", what, who, why,
                  tu_first_error(e, "no error recorded"));
}

void tu_assert_no_errors(const char *what, const struct tu_errors *e)
{
    unsigned long n = e ? (unsigned long)AO_load(&e->n) : 0;

    ck_assert_msg(n == 0, "%s: %lu error(s) in helpers, first: %s", what, n,
                  tu_first_error(e, ""));
}

void tu_assert_flag(volatile AO_t *f, AO_t v, double secs, const char *why,
                    const char *what, const struct tu_errors *e)
{
    ck_assert_msg(tu_wait_flag(f, v, secs), "%s: timed out waiting for %s (%s)", what, why,
                  tu_first_error(e, "no helper error"));
}

int tu_set_perm(int b, const char *name, mode_t mode, uid_t uid)
{
    if (b == AM_SHM_POSIX) {
        char path[128];
        snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
        return chmod(path, mode) == 0 && chown(path, uid, (gid_t)-1) == 0 ? 0 : -errno;
    }
    struct shmid_ds ds;
    int id = shmget(am__segment_key(name), 0, 0);
    if (id < 0 || shmctl(id, IPC_STAT, &ds) != 0)
        return -errno;
    ds.shm_perm.mode = mode;
    ds.shm_perm.uid = uid;
    return shmctl(id, IPC_SET, &ds) == 0 ? 0 : -errno;
}
