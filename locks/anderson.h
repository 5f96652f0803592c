/*
 * anderson.h - Anderson array-based queue lock, one turn line per waiter; tickets
 * name their takers so that a waiter with a watch can pass a dead participant's
 * turn on.
 * Design and memory ordering in anderson.c.
 * The verbs follow lock.h; `l` points at anderson_lock_size(max_procs) bytes of shared
 * memory aligned to LOCK_ALIGN.
 */
#ifndef SHMAM_ANDERSON_H
#define SHMAM_ANDERSON_H

#include "lock.h"

size_t anderson_lock_size(unsigned max_procs);
int anderson_lock_init(void *l, unsigned max_procs);
int anderson_lock_lock(void *l, struct lock_ctx *c);
int anderson_lock_trylock(void *l, struct lock_ctx *c);
void anderson_lock_unlock(void *l, struct lock_ctx *c);
int anderson_lock_locked(void *l);

extern const struct lock_ops anderson_lock_ops;

#endif
