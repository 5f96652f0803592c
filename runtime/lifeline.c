/*
 * lifeline.c - robust-mutex lifelines (see lifeline.h).
 *
 * The futex word of a glibc mutex is its first int (__data.__lock).  For a robust
 * mutex it holds the owner's thread id, with FUTEX_OWNER_DIED set by the kernel
 * when the owner died holding it (linux/futex.h, Documentation/robust-futexes);
 * 0 when unlocked.  Reading it is the one place shmam looks inside a pthread
 * type, hence the checks below.
 *
 * A lifeline lives on a page only its holder maps writable (layout.h), but the
 * segment's creator wrote it first and any process of the user could open the
 * segment file anew and write it.  Before a pthread call on one not held, its
 * kind is checked (am_lock_mutex_robust_ok): glibc may crash on a mutex of a
 * kind it was not made as.  A garbled lifeline is never taken (its entry is
 * skipped) and reads as gone.  A held one is recorded when taken and mended
 * before it is let go (locks/held.c, as the mutex claim lock is): glibc
 * follows its robust-list links on unlock, and a raw writer may have
 * rewritten them.
 *
 * Memory ordering: none is needed.  Liveness is a fact about the holder, not a
 * message from it; everything a dead holder wrote is read as possibly half done.
 */
#include "lifeline.h"
#include "lock.h"

#include <atomic_ops.h>
#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <string.h>

#ifndef __GLIBC__
#error "lifelines read glibc's robust mutex word (__data.__lock)"
#endif
#ifndef AO_HAVE_int_load
#error "lifelines need AO_int_load"
#endif
_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0, "futex word first");

int am__lifeline_init(struct am_lifeline *l)
{
    memset(l, 0, sizeof *l);
    return am_lock_mutex_robust_init(&l->m);
}

int am__lifeline_take(struct am_lifeline *l)
{
    if (!am_lock_mutex_robust_ok(&l->m))
        return -EBUSY; /* overwritten by a peer: unusable, never touched */
    int r = pthread_mutex_trylock(&l->m);
    if (r == EOWNERDEAD)
        r = pthread_mutex_consistent(&l->m);
    if (r != 0)
        return -EBUSY; /* EBUSY; ENOTRECOVERABLE is never made by shmam */
    am_lock_mutex_keep(&l->m);
    return 0;
}

void am__lifeline_release(struct am_lifeline *l)
{
    if (am_lock_mutex_mend(&l->m) || am_lock_mutex_robust_ok(&l->m))
        pthread_mutex_unlock(&l->m);
}
