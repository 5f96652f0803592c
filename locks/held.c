/*
 * held.c - this thread's record of the robust mutexes it holds in shared
 * memory (the mutex claim lock's, mutex.c, and the runtime's lifelines), and
 * the mending of each before it is unlocked.
 *
 * Why.  glibc links the robust mutexes a thread holds into a list through
 * pointers kept inside the mutexes (__data.__list), headed by the thread's
 * robust_head, in private memory.  On unlock it reads the mutex's two links
 * and writes through them into its neighbours; it also reads the owner, kind,
 * count and lock word.  A mutex in shared memory can be rewritten by another
 * process (every sender writes the claim lock; a process that maps a segment
 * file itself can write a lifeline), and then the unlock writes wherever the
 * garbage points, or fails and leaves a mutex of a segment about to be
 * unmapped on the list.  So every such mutex is recorded here when locked,
 * and before it is unlocked the words glibc's unlock reads are put back
 * (am_lock_mutex_mend): the owner, kind, count and lock word from a private
 * copy taken right after locking, and the links from the record itself.
 *
 * The record.  glibc pushes a newly locked mutex at the head of the list and
 * unlinks an unlocked one from wherever it is, so the list, newest first, is
 * the record's entries in reverse order of locking: entry i's __prev points at
 * the __list.__next of entry i + 1 (the newest's at robust_head), its __next
 * at that of entry i - 1 (the oldest's at robust_head).  Those values are
 * computed from addresses this thread knows, never read back from the shared
 * mutexes, so however long a lifeline is held and whatever is locked and
 * unlocked meanwhile, its links are known.  (A copy of the links taken at
 * lock time would not do: they change when a neighbour comes or goes.)
 *
 * Contract.  While this thread holds a recorded mutex, every robust mutex it
 * locks or unlocks goes through am_lock_mutex_keep and am_lock_mutex_mend.
 * One that does not would make the record wrong; that is caught where glibc's
 * private head tells (at keep: the new mutex's __next must be the record's
 * newest; at mend: the head must be the record's newest), and from then on,
 * until the record is empty, nothing is mended (as if it were not recorded).
 * The mend shrinks a writer's window to the few instructions of glibc's
 * unlock; it cannot close it.  After fork the child holds none of its
 * parent's mutexes (glibc empties its robust list), and the record is emptied
 * too.  Private to the thread: no ordering is needed, but for the lock word,
 * which waiters change atomically (see put_back).
 */
#include <atomic_ops.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

#ifndef __GLIBC__
#error "held.c mends glibc's robust mutex fields"
#endif

struct held {
    pthread_mutex_t *m;
    pthread_mutex_t copy; /* as glibc left it right after locking */
};

static __thread struct held *held; /* oldest first */
static __thread unsigned held_n, held_cap;
static __thread int held_unsure;               /* the record may not be glibc's list */
static __thread struct robust_list_head *head; /* glibc's, for this thread */
static __thread unsigned long links_mended;    /* mutexes found changed at unlock */

/* The record's buffer outlives an empty record (no allocation per lock of a
 * bare mutex) and is freed when its thread exits (held_key's destructor). */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t held_key;

static void forget_all(void)
{
    held_n = 0;
    held_unsure = 0;
}

static void init_once(void)
{
    pthread_key_create(&held_key, free);
    pthread_atfork(NULL, NULL, forget_all);
}

/* What glibc stores in a link to mutex m. */
static void *link_to(pthread_mutex_t *m)
{
    return &m->__data.__list.__next;
}

/* Entry i's links as glibc keeps them while the record is its list. */
static void *prev_of(unsigned i)
{
    return i + 1 == held_n ? (void *)head : link_to(held[i + 1].m);
}

static void *next_of(unsigned i)
{
    return i == 0 ? (void *)head : link_to(held[i - 1].m);
}

/* Is glibc's newest robust mutex of this thread the record's newest?  The
 * head is private memory: a plain read. */
static int newest_is(const pthread_mutex_t *m)
{
    return ((uintptr_t)head->list.next & ~(uintptr_t)1) == (uintptr_t)link_to((void *)m);
}

static int grow(void)
{
    if (held_n < held_cap)
        return 1;
    unsigned cap = held_cap ? 2 * held_cap : 8;
    struct held *h = realloc(held, cap * sizeof *h);
    if (!h)
        return 0;
    held = h, held_cap = cap;
    pthread_setspecific(held_key, h);
    return 1;
}

void am_lock_mutex_keep(pthread_mutex_t *m)
{
    pthread_once(&once, init_once);
    if (!head) {
        size_t len;
        if (syscall(SYS_get_robust_list, 0, &head, &len) != 0)
            head = NULL;
    }
    if (!head || !grow()) {
        held_unsure = 1;
        return;
    }
    held[held_n].m = m;
    memcpy(&held[held_n].copy, m, sizeof *m);
    held_n++;
    /* glibc just set m's __next from its private head: the record's newest
     * before m.  Otherwise a robust mutex came or went unrecorded. */
    if (held[held_n - 1].copy.__data.__list.__next != next_of(held_n - 1) || !newest_is(m))
        held_unsure = 1;
}

/* Did someone change what the holder alone writes while it held m, entry i?
 * The lock word's flags are left out: waiters set FUTEX_WAITERS in it,
 * atomically. */
static int changed(const pthread_mutex_t *m, unsigned i)
{
    const volatile struct __pthread_mutex_s *d = &m->__data;
    const struct __pthread_mutex_s *c = &held[i].copy.__data;
    return d->__owner != c->__owner || d->__kind != c->__kind || d->__count != c->__count ||
           d->__list.__prev != prev_of(i) || d->__list.__next != next_of(i) ||
           ((unsigned)d->__lock & FUTEX_TID_MASK) != ((unsigned)c->__lock & FUTEX_TID_MASK);
}

/* Put back entry i's words.  The lock word is put back too, our thread id
 * with FUTEX_WAITERS set (a writer may have cleared a waiter's flag: one
 * futex wake too many costs nothing), with an atomic store: waiters only ever
 * add that flag to it meanwhile. */
static void put_back(pthread_mutex_t *m, unsigned i)
{
    volatile struct __pthread_mutex_s *d = &m->__data;
    const struct __pthread_mutex_s *c = &held[i].copy.__data;
    d->__owner = c->__owner;
    d->__kind = c->__kind;
    d->__count = c->__count;
    d->__list.__prev = prev_of(i);
    d->__list.__next = next_of(i);
    unsigned mine = ((unsigned)c->__lock & FUTEX_TID_MASK) | FUTEX_WAITERS;
    AO_int_store((volatile unsigned *)(void *)&m->__data.__lock, mine);
    links_mended++;
}

int am_lock_mutex_mend(pthread_mutex_t *m)
{
    unsigned i = held_n;
    while (i > 0 && held[i - 1].m != m)
        i--;
    if (i-- == 0)
        return 0;
    int sure = !held_unsure && held_n && newest_is(held[held_n - 1].m);
    if (sure && changed(m, i))
        put_back(m, i);
    memmove(&held[i], &held[i + 1], (held_n - i - 1) * sizeof *held);
    if (--held_n == 0)
        held_unsure = 0;
    return sure;
}

unsigned long am_lock_mutex_mended(void)
{
    return links_mended;
}
