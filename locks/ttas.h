/*
 * ttas.h - test-and-test-and-set spin lock on one word naming the holder, so that
 * a waiter with a watch can take a dead holder's lock over.
 * Design and memory ordering in ttas.c.
 * The verbs follow lock.h; `l` points at ttas_lock_size(max_procs) bytes of shared
 * memory aligned to LOCK_ALIGN.
 */
#ifndef SHMAM_TTAS_H
#define SHMAM_TTAS_H

#include "lock.h"

size_t ttas_lock_size(unsigned max_procs);
int ttas_lock_init(void *l, unsigned max_procs);
int ttas_lock_lock(void *l, struct lock_ctx *c);
int ttas_lock_trylock(void *l, struct lock_ctx *c);
void ttas_lock_unlock(void *l, struct lock_ctx *c);
int ttas_lock_locked(void *l);

extern const struct lock_ops ttas_lock_ops;

#endif
