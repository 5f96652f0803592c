/*
 * mutex.h - process-shared, robust pthread mutex behind the lock.h verbs; the
 * kernel hands a dead holder's lock on, and a waiter with a watch can give up.
 * Design in mutex.c.
 * The verbs follow lock.h; `l` points at mutex_lock_size(max_procs) bytes of shared
 * memory aligned to LOCK_ALIGN.
 */
#ifndef SHMAM_MUTEX_H
#define SHMAM_MUTEX_H

#include <pthread.h>

#include "lock.h"

/* Initialise a bare pthread mutex as this lock's is: process-shared and robust.
 * For other robust words in shared memory (the runtime's lifelines).  0 or
 * -errno. */
int mutex_robust_init(pthread_mutex_t *m);

/* 1 if a mutex in shared memory is still of the kind mutex_robust_init makes.
 * glibc's calls on a mutex whose bytes a peer overwrote may take another
 * kind's path (lock elision, say) and crash: check this first. */
int mutex_robust_ok(const pthread_mutex_t *m);

/* How many times this thread found a mutex it held changed by someone else
 * when it came to unlock it (and put it back: mutex.c). */
unsigned long mutex_links_mended(void);

size_t mutex_lock_size(unsigned max_procs);
int mutex_lock_init(void *l, unsigned max_procs);
int mutex_lock_lock(void *l, struct lock_ctx *c);
int mutex_lock_trylock(void *l, struct lock_ctx *c);
void mutex_lock_unlock(void *l, struct lock_ctx *c);
int mutex_lock_locked(void *l);

extern const struct lock_ops mutex_lock_ops;

#endif
