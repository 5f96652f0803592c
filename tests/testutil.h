/*
 * testutil.h - helpers shared by every multi-process test (libc, libatomic_ops
 * and the runtime; no Check, so children may use them freely, except for the
 * last sections, which are for the process that runs the test).
 *
 * A typical test allocates its shared state with tu_shared_alloc() before
 * forking (children inherit the mapping at the same address), puts a tu_gate in
 * it, and runs its workers with tu_run_procs(): each worker is a forked child,
 * pinned to a core, that waits at the gate so all start together, does its work
 * with tu_widen() between the steps of any claim or critical section, records
 * what it saw in shared memory and returns.  The parent then checks the totals
 * (with Check, in the parent only: a child reports failure by abort() or a
 * nonzero exit, never with ck_assert).  Iteration counts are multiplied by
 * tu_stress_factor() so `make stress` runs longer; it multiplies every tcase's
 * timeout as well (Check's CK_TIMEOUT_MULTIPLIER), so no test scales its own.
 *
 * Tests that make endpoints loop over every claim algorithm and both backends
 * (tu_combos(), tu_combo_of()) and give them names that start with this run's
 * prefix (tu_run_init() in main, tu_name(), tu_ep_name()), so that each test can
 * check with tu_leftovers() that it left nothing in /dev/shm or among the System V
 * segments, and main can remove what a failed test left (tu_remove_leftovers()).
 * A test whose helpers are forked one by one (tu_spawn(), tu_reap()) collects
 * their errors in a struct tu_errors in shared memory.
 *
 * A test that runs programs (the launcher, applications, benchmarks) finds them
 * in the build directory with tu_program() and runs each with tu_run_capture(),
 * which collects its exit status and what it printed; tu_start(),
 * tu_read_some() and tu_finish() are the same in steps, for a test that acts
 * while the program runs.
 */
#ifndef SHMAM_TESTUTIL_H
#define SHMAM_TESTUTIL_H

#include <atomic_ops.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shmam.h"

/* Zeroed memory shared with children forked later (MAP_SHARED|MAP_ANONYMOUS),
 * page-aligned.  Aborts on failure. */
void *tu_shared_alloc(size_t size);

/* Unmaps what tu_shared_alloc(size) returned. */
void tu_shared_free(void *p, size_t size);

/* Binds the calling process to one CPU: the (cpu % n)-th of the n CPUs it may run
 * on now.  Returns 0 or -errno. */
int tu_pin(int cpu);

/* A reusable start gate (barrier) in shared memory for n processes: each call of
 * tu_gate_wait() returns once all n have called it, so they leave together.  The
 * wait spins, backing off to sched_yield(). */
struct tu_gate {
    AO_t n;          /* processes per round */
    AO_t count;      /* arrivals in this round */
    AO_t generation; /* rounds completed */
};
void tu_gate_init(struct tu_gate *g, unsigned n);
void tu_gate_wait(struct tu_gate *g);

/* Forks n children; child idx (0 .. n-1) pins itself with tu_pin(idx), runs
 * fn(idx, arg) and exits 0.  A child fails by exiting nonzero or by a signal
 * (abort()).  Waits for all; after timeout_s seconds kills the rest with SIGKILL.
 * Returns the number of children that failed or timed out, having printed
 * which to stderr. */
int tu_run_procs(int n, void (*fn)(int idx, void *arg), void *arg, int timeout_s);

/* tu_run_procs, killing the children only once *progress (a counter in shared
 * memory they advance, with release stores or atomic increments) has not
 * changed for stall_s seconds: children that go on slowly, on a loaded
 * machine, are left to finish (the tcase's timeout bounds the whole). */
int tu_run_procs_moving(int n, void (*fn)(int idx, void *arg), void *arg,
                        volatile AO_t *progress, int stall_s);

/* SHMAM_STRESS from the environment as a positive int, else 1.  Multiply
 * iteration counts by it. */
int tu_stress_factor(void);

/* Yields the processor; but after a yield that lost it for a time slice (over
 * 0.5 ms: a busy machine, where that preemption widened the window already)
 * the next 64 calls pause the core instead, so that a test beside a CPU-bound
 * process does not give it a slice at every call. */
void tu_yield(void);

/* Widens a race window: depending on a hash of `seed_counter` (pass something that
 * changes every call, e.g. iteration * procs + idx), yields the processor
 * (tu_yield, 1 call in 8), pauses the core for up to 63 pause instructions (1 in 4)
 * or returns at once. */
void tu_widen(unsigned seed_counter);

/* Widens a window wider, by h (a hash that changes every call): tu_yield 1 call
 * in 4, a sleep of 20-220 us 1 in 64, a spin of up to 255 pauses 1 in 8. */
void tu_stall(uint32_t h);

/* ---- time ---- */

/* CLOCK_MONOTONIC in seconds. */
double tu_now_s(void);

/* Sleeps ms milliseconds (nanosleep; a signal cuts it short). */
void tu_sleep_ms(int ms);

/* ---- payloads ---- */

/* A well-mixed 32-bit hash of (a, b) (a murmur3-style finaliser), for check
 * words, lengths and data derived from message numbers. */
uint32_t tu_mix32(uint32_t a, uint32_t b);

/* Byte i of the pseudo-random pattern named `key`: byte i % 4 of
 * tu_mix32(key, i / 4). */
uint8_t tu_pattern_byte(uint32_t key, size_t i);

/* Fills buf[0 .. len-1] with the pattern named `key`. */
void tu_pattern(void *buf, uint32_t key, size_t len);

/* FNV-1a, 32 bits, of len bytes at p. */
uint32_t tu_fnv1a(const void *p, size_t len);

/* ---- algorithms x backends ---- */

/* The number of claim algorithms (entries of am_claim_names[]). */
int tu_n_algs(void);

/* Loop tests run over every claim algorithm on both backends:
 * tcase_add_loop_test(tc, test, 0, tu_combos()); loop index i is algorithm
 * i / 2 on backend i % 2 (enum am_shm: 0 posix, 1 sysv).  Under SHMAM_QUEUE
 * naming a per-sender channel kind (scripts/run-tests.sh's KIND:suite), the
 * claim algorithm is unused, and the loop runs lockfree only. */
int tu_combos(void);
struct tu_combo {
    int alg;                  /* index into am_claim_names[] */
    int backend;              /* enum am_shm */
    const char *alg_name;     /* am_claim_names[alg] */
    const char *backend_name; /* "posix" or "sysv" */
};
struct tu_combo tu_combo_of(int i);

/* "posix" for 0 (AM_SHM_POSIX), "sysv" for 1 (AM_SHM_SYSV). */
const char *tu_backend_name(int backend);

/* ---- endpoint names, leftovers ---- */

/* First thing in main: every name this run makes (tu_name) starts with
 * "<tag><pid>." (tag: two letters naming the suite), and helpers of tu_spawn()
 * may run on every CPU this process may run on now. */
void tu_run_init(const char *tag);

/* The run prefix followed by the printf-style fmt, into buf (n bytes). */
void tu_name(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* In a test's fixture, in the process that runs the test: from now on
 * tu_test_prefix() and tu_ep_name() name this test. */
void tu_test_init(void);

/* "<run prefix><test pid>-": the prefix of every name the current test makes. */
void tu_test_prefix(char *buf, size_t n);

/* "<test prefix>ROLE-ALG-B": unique per run, test, role, algorithm (its name, or
 * "x" for alg < 0) and backend (its initial). */
void tu_ep_name(char *buf, size_t n, const char *role, int alg, int backend);

/* Counts the segments of either backend whose endpoint name starts with
 * `prefix` (POSIX: /dev/shm/shmam-PREFIX*; System V: segments of this user
 * whose endpoint header has the magic and such a name), and removes them if
 * `remove`.  The first one found is described in first[0 .. n-1] (left as it
 * was if there is none). */
int tu_leftovers(const char *prefix, int remove, char *first, size_t n);

/* Gives the segment named `name` of backend b (0 POSIX, 1 System V) mode
 * `mode` and owner uid (chmod and chown, or IPC_SET); 0 or -errno. */
int tu_set_perm(int b, const char *name, mode_t mode, uid_t uid);

/* Last thing in main: removes whatever this run left (the leftovers of the run
 * prefix) and says so on stderr as "PROG: removed ...".  Returns how many there
 * were: a run that left any should fail. */
int tu_remove_leftovers(const char *prog);

/* ---- helper processes of a Check test ---- */

/* How many errors the helper processes of a test saw, and the first one's
 * text, in memory shared with them (tu_shared_alloc), or a process's own. */
struct tu_errors {
    AO_t n;
    char first[256];
};

/* Records an error (printf-style); only the first one's text is kept.  Any
 * process may call it concurrently.  The count goes up before the text is
 * written: read the text once the helpers have finished or signalled. */
void tu_error(struct tu_errors *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The first error's text, or `none` if there was none. */
const char *tu_first_error(const struct tu_errors *e, const char *none);

/* Forks a helper that dies with the calling process (PR_SET_PDEATHSIG), may run
 * on the CPUs of tu_run_init() (the test process may have pinned itself), pins
 * itself with tu_pin(cpu), runs fn(arg) and exits 0.  Returns its pid, or -1 if
 * fork failed. */
pid_t tu_spawn(void (*fn)(void *arg), void *arg, int cpu);

/* Waits up to secs seconds for child p to end, then kills it.  Returns its wait
 * status, -1 if it had to be killed, or -2 if it could not be waited for. */
int tu_reap(pid_t p, double secs);

/* Is process p (a child of ours) blocked in the futex system call?  1 or 0;
 * -1 if /proc/PID/syscall cannot tell (a kernel without it). */
int tu_in_futex(pid_t p);

/* Waits (sleeping a millisecond at a time) up to secs seconds until *f >= v,
 * with acquire loads that pair with the release store that set it.  Returns 1
 * if it is, 0 if time ran out. */
int tu_wait_flag(volatile AO_t *f, AO_t v, double secs);

/* Maps endpoint `name` as peer idx of ep, trying again while it does not exist
 * yet or is being created (-ENOENT, -EAGAIN) for up to secs seconds.  Returns
 * am_ep_map's last result. */
int tu_map_when_there(am_ep_t *ep, unsigned idx, const char *name, double secs);

/* ---- Check, in the test process only ---- */

/* A Check suite (check.h's Suite). */
struct Suite;

/* All of main after tu_run_init(): runs suite s, each test in a process of its
 * own (unless CK_FORK=no says otherwise, to debug a test), then removes and
 * reports what the run left (tu_remove_leftovers(prog)).  Returns main's exit
 * status: EXIT_SUCCESS if every test passed and nothing was left. */
int tu_run_suite(struct Suite *s, const char *prog);

/* A tcase named `name` with a timeout of timeout_s seconds (times Check's
 * CK_TIMEOUT_MULTIPLIER), added to s: one per kind of test, so each kind runs
 * alone under CK_RUN_CASE. */
struct TCase;
struct TCase *tu_tcase(struct Suite *s, const char *name, int timeout_s);

/* One test or one tcase of a suite, by name (make check T=suite:name): with
 * SHMAM_TEST set, a suite keeps only the tests whose function, or whose tcase,
 * has that name.  Check's CK_RUN_CASE picks a tcase only; this picks either.
 * Every suite goes through it unchanged: with check.h included first, the
 * macros below route tcase_create and every tcase_add_*test through these. */
#ifdef CHECK_H
TCase *tu_tcase_create(const char *name);
void tu_add_test(TCase *tc, const TTest *tt, int signal, int exit_value, int start,
                 int end);
#define tcase_create(name) tu_tcase_create(name)
#define _tcase_add_test(tc, tt, sig, ex, s, e) tu_add_test(tc, tt, sig, ex, s, e)
#endif

/* ---- programs run by a test ---- */

/* B/rel into buf (n bytes), B being the build directory that holds this test
 * binary (the parent of its directory: build, build-asan, ...), so that a test
 * finds the programs it runs whatever the current directory.  Returns 1 if that
 * is an executable file, else 0.  Aborts if /proc/self/exe cannot be read. */
int tu_program(char *buf, size_t n, const char *rel);

/* "ASAN_OPTIONS=<the inherited options>:detect_leaks=0", an entry for the env
 * of tu_run_capture(): in a sanitizer build (make asan) LeakSanitizer would fail
 * every MPI run for MPICH's own allocations, which are not ours to free.  The
 * string is static: the next call overwrites it. */
const char *tu_env_no_leak_check(void);

/* Where a program's stderr goes: into out, interleaved with stdout as it was
 * written, or into err. */
enum tu_stderr { TU_ERR_MERGED, TU_ERR_APART };

#define TU_OUT_MAX (256 * 1024)
#define TU_ERR_MAX (16 * 1024)

/* How a program ended and what it printed, NUL-terminated; what does not fit
 * is read and dropped, so the program never blocks on a full pipe.  The last
 * three fields are tu_start()'s, for tu_read_some() and tu_finish(). */
struct tu_output {
    int status;           /* exit code, 128 + signal, or -1 if killed at the deadline */
    int signal;           /* the signal that ended it, 0 if it exited */
    size_t len, err_len;  /* bytes in out and err */
    char out[TU_OUT_MAX]; /* stdout, and stderr with TU_ERR_MERGED */
    char err[TU_ERR_MAX]; /* stderr with TU_ERR_APART, else "" */
    pid_t pid;            /* the program */
    int fd[2];            /* read ends of its stdout and stderr pipes, or -1 */
    double deadline;      /* tu_now_s() at which it is killed, or 0 for never */
};

/* Starts argv (NULL-terminated; argv[0] is looked up in PATH unless it holds a
 * slash) with stdout, and stderr as `err` says, going to o, which it clears.
 * Its pid is appended to the file named by TU_PIDS_FILE, if set: a launcher
 * started so names its jobs j<pid>-... (SHMAM_JOB_PREFIX unset), and
 * scripts/run-tests.sh looks for what those jobs left.
 * env ("NAME=VALUE" to set, "NAME" to unset, NULL-terminated; may be NULL)
 * changes the program's environment only.  The program gets SIGTERM if the
 * test process dies (a launcher then stops its job and cleans up).  With
 * timeout_s > 0 it runs in a process group of its own, all of which is killed
 * with SIGKILL timeout_s seconds from now.  Returns its pid; fails the test if
 * it cannot fork. */
pid_t tu_start(const char *const *argv, const char *const *env, enum tu_stderr err,
               double timeout_s, struct tu_output *o);

/* Waits for more output of the program tu_start()ed into o and appends it.
 * Returns how many bytes came, or 0 once all its output has ended or the
 * deadline has passed. */
ssize_t tu_read_some(struct tu_output *o);

/* Reads the rest of the output, waits for the program to end (killing it at
 * the deadline) and sets o->status and o->signal.  Returns o->status. */
int tu_finish(struct tu_output *o);

/* tu_start() then tu_finish(): runs argv to its end.  Returns o->status. */
int tu_run_capture(const char *const *argv, const char *const *env, enum tu_stderr err,
                   double timeout_s, struct tu_output *o);

/* ---- assertions ----
 * Each fails the test with a message that starts with `what`, the test's
 * description naming its algorithm and backend; e (NULL if none) adds the
 * first error of its helpers. */

/* Nothing of the current test (tu_test_prefix) is left in either backend. */
void tu_assert_clean(const char *what);

/* Wait status st (from tu_reap) is helper `who`'s exit 0. */
void tu_assert_exit0(int st, const char *who, const char *what, const struct tu_errors *e);

/* The helpers recorded no error. */
void tu_assert_no_errors(const char *what, const struct tu_errors *e);

/* tu_wait_flag(f, v, secs) succeeds; `why` names what was waited for. */
void tu_assert_flag(volatile AO_t *f, AO_t v, double secs, const char *why,
                    const char *what, const struct tu_errors *e);

#endif
