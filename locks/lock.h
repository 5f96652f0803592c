/*
 * lock.h - the verbs every process-shared lock in locks/ provides, and the table
 * of operations that lets the runtime, tests and benchmarks loop over all of them.
 *
 * A lock lives in memory shared between processes (a segment mapped at a different
 * address in each of them), so its state holds no pointers: participants are named
 * by a small id `self` (0 .. AM_LOCK_MAX_SELF) chosen by the caller, unique among the
 * processes that may hold or wait for this lock at once.  Every lock records the
 * id of its holder (and the FIFO locks the id behind every ticket), so that a
 * waiter can tell when the holder has died and take the lock over.  max_procs
 * sizes the arrays of the FIFO locks (rounded up to a power of two).
 *
 * Dead participants.  A caller that passes a `struct am_lock_watch` lets the lock ask
 * two questions while it waits, only once spinning has failed and it yields,
 * spins at the cap or parks (wait.h; so the questions cost an uncontended
 * acquisition nothing):
 *   dead(arg, who)  has participant `who` died?  Must be final (once dead, always
 *                   dead) and must never call a live participant dead: a slow or
 *                   stopped holder keeps the lock however long it takes.
 *   give_up(arg)    should this waiter stop waiting (e.g. the process that drains
 *                   the queue this lock guards has died)?
 * A waiter that finds the holder dead takes the lock over (tas, ttas), or passes
 * the dead participant's turn on to the next ticket (ticket, anderson), or takes
 * the lock once every ticket before its own is over or a dead or gone
 * participant's (mcs, clh, hemlock, hapax), or the kernel hands it on (mutex:
 * EOWNERDEAD).  The
 * lock knows nothing of what it guards: state a dead holder left half changed
 * must be repairable by the next holder (the runtime's claim is).  Without a
 * watch a lock waits forever.
 *
 * The state starts at a AM_LOCK_ALIGN-aligned address (the caller's duty), and its
 * size is a multiple of AM_LOCK_ALIGN, so nothing placed after it shares its lines.
 * The lock must be initialised once, by one process, before any other uses it.
 *
 * Every lock gives acquire ordering on lock/trylock success and release ordering
 * on unlock: stores made inside the critical section are visible to the next holder.
 * A take-over orders nothing the dead holder wrote: the next holder must read the
 * guarded state as possibly half written.  Under the default waiting policy
 * every spin falls back to sched_yield() once spinning has clearly failed (see
 * spin.h), so that more processes than cores still make progress; a caller
 * may choose another (ctx->wait, below).
 *
 * Queue nodes.  mcs, clh and hemlock give participant `self` the queue node
 * self mod n (n: max_procs rounded up to a power of two), a line in the
 * lock's own state: mcs waits on its own node, clh and hemlock on its
 * predecessor's (and a hemlock holder on its own, for its grant's taking);
 * hapax's waiter for ticket k waits on node (k - 1) mod n instead.
 * Ids that differ modulo n keep every waiter on a line of its own; ids that
 * share a node stay correct (more participants than max_procs wait for
 * room, as the FIFO locks' do).
 *
 * Verbs (the same for each algorithm ALG in tas, ttas, ticket, anderson, mutex,
 * mcs, clh, hemlock, hapax;
 * static in ALG.c, reached through am_lock_ALG):
 *   size_t ALG_lock_size(unsigned max_procs)          bytes of shared state
 *   int    ALG_lock_init(void *l, unsigned max_procs)  0 or -errno; by one process
 *   int    ALG_lock_lock(void *l, struct am_lock_ctx *c)  0 held; AM_LOCK_GAVE_UP if the
 *                                                      watch's give_up said so;
 *                                                      AM_LOCK_BROKEN (mutex, ticket,
 *                                                      anderson, mcs, clh,
 *                                                      hemlock, hapax) if its
 *                                                      state is garbage
 *   int    ALG_lock_trylock(void *l, struct am_lock_ctx *c)  1 acquired, 0 busy
 *   void   ALG_lock_unlock(void *l, struct am_lock_ctx *c)
 *   int    ALG_lock_locked(void *l)                    1 if held now (a snapshot)
 */
#ifndef SHMAM_LOCK_H
#define SHMAM_LOCK_H

#include <pthread.h>
#include <stddef.h>

/* Participant ids: 0 .. AM_LOCK_MAX_SELF (they are stored as self + 1 in 24 bits;
 * the all-ones id is the queue locks' mark of a released ticket, qnode.h). */
#define AM_LOCK_ID_BITS 24
#define AM_LOCK_MAX_SELF ((1u << AM_LOCK_ID_BITS) - 3u)

/* lock()'s result when the watch's give_up() asked the waiter to stop. */
#define AM_LOCK_GAVE_UP (-1)

/* lock()'s result when the shared state is unusable (a peer wrote garbage into
 * it): the mutex when its kind or pthread says so; the FIFO locks (ticket,
 * anderson, mcs, clh, hemlock, hapax) at a watch tick that finds their words in a state no
 * run of the lock reaches (a ticket far from the one served, a turn past a
 * live waiter's), which no pass could ever end.  tas and ttas treat garbage as a
 * dead holder's. */
#define AM_LOCK_BROKEN (-2)

/* How often a yielding waiter consults its watch: every AM_LOCK_WATCH_EVERY yields. */
#define AM_LOCK_WATCH_EVERY 16u

/* What a waiter may ask about the other participants (see the file header). */
struct am_lock_watch {
    int (*dead)(const void *arg, unsigned who);
    int (*give_up)(const void *arg);
    const void *arg;
};

/* Per-acquisition context, private to the calling process. */
struct am_lock_ctx {
    unsigned self;                     /* participant id, 0 .. AM_LOCK_MAX_SELF */
    unsigned procs;                    /* max_procs as given to init, from the caller's
                                        * own records: the FIFO locks size their arrays
                                        * from it, never from the shared state, which a
                                        * peer may have changed (0: trust the shared
                                        * record, for a caller without one) */
    unsigned long long held;           /* algorithm's private note between lock and
                                        * unlock (anderson: the ticket held) */
    const struct am_lock_watch *watch; /* NULL: never take over, never give up */
    unsigned wait;                     /* waiting policy, AM_LOCK_WAIT_*: 0 is the
                                        * default, spin then yield (wait.h) */
};

/* Waiting policies (ctx->wait; wait.h says how each waits): spin with
 * backoff, then yield (the default); spin only, never yielding; spin, then
 * sleep on a futex where the lock has a word of the waiter's turn to sleep
 * on (ops->parks), else yield.  The mutex always waits as glibc does. */
enum am_lock_wait {
    AM_LOCK_WAIT_YIELD,
    AM_LOCK_WAIT_SPIN,
    AM_LOCK_WAIT_PARK,
    AM_LOCK_WAITS
};

struct am_lock_ops {
    const char *name;
    size_t (*size)(unsigned max_procs);
    int (*init)(void *l, unsigned max_procs);
    int (*lock)(void *l, struct am_lock_ctx *c);
    int (*trylock)(void *l, struct am_lock_ctx *c);
    void (*unlock)(void *l, struct am_lock_ctx *c);
    int (*locked)(void *l);
    int parks; /* 1 if AM_LOCK_WAIT_PARK sleeps on a futex (else it yields) */
};

/* The algorithms, one operation table each (the per-algorithm functions are
 * static behind them), and every lock shmam knows, in the paper's order (tas,
 * ttas, ticket, anderson, mutex), then the queue locks (mcs, clh, hemlock,
 * hapax);
 * NULL-terminated. */
extern const struct am_lock_ops am_lock_tas, am_lock_ttas, am_lock_ticket, am_lock_anderson,
    am_lock_mutex, am_lock_mcs, am_lock_clh, am_lock_hemlock, am_lock_hapax;
extern const struct am_lock_ops *const am_lock_table[];

/* The lock named `name`, or NULL. */
const struct am_lock_ops *am_lock_find(const char *name);

/* Tests only: when set, the queue locks (qnode.h) call it at these points, so
 * that a test can park a participant there and kill it.  NULL otherwise. */
enum am_lock_hook {
    AM_LOCK_HOOK_ENQUEUED, /* lock(): ticket taken, its wait not begun */
    AM_LOCK_HOOK_HANDING,  /* mcs, hemlock unlock(): successor found, not yet
                            * admitted; hapax: departed, successor not yet
                            * woken */
    AM_LOCK_HOOK_COUNT
};
extern void (*am__lock_hook)(enum am_lock_hook where);

/* Alignment every lock's shared state must be placed at (one destructive line pair). */
#define AM_LOCK_ALIGN 128

/* The mutex's kind, for other robust words in shared memory (the runtime's
 * lifelines, mutex.c).  am_lock_mutex_robust_init makes a bare pthread mutex
 * as this lock's is, process-shared and robust: 0 or -errno.
 * am_lock_mutex_robust_ok says whether a mutex in shared memory is still of
 * that kind: glibc's calls on a mutex whose bytes a peer overwrote may take
 * another kind's path (lock elision, say) and crash, so check first.
 *
 * Robust mutexes in shared memory that this thread holds (held.c): call
 * am_lock_mutex_keep right after locking one (after pthread_mutex_consistent
 * if need be), and am_lock_mutex_mend right before unlocking it, which puts
 * back what glibc's unlock reads and follows (the mutex's own words and its
 * links on this thread's robust list) if someone else changed them, and
 * forgets the mutex: 1 if it did so (the mutex is fit to unlock), 0 if the
 * mutex is not in the record or the record cannot be trusted (then check the
 * kind before unlocking).  Every robust mutex the thread locks or unlocks
 * while it holds a kept one must go through these two.
 * am_lock_mutex_mended counts the times this thread found a mutex it held
 * changed by someone else when it came to unlock it (and put it back). */
int am_lock_mutex_robust_init(pthread_mutex_t *m);
int am_lock_mutex_robust_ok(const pthread_mutex_t *m);
void am_lock_mutex_keep(pthread_mutex_t *m);
int am_lock_mutex_mend(pthread_mutex_t *m);
unsigned long am_lock_mutex_mended(void);

#endif
