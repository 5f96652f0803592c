/*
 * tas.h - test-and-set spin lock on one word naming the holder, so that a waiter
 * with a watch can take a dead holder's lock over.
 * Design and memory ordering in tas.c.
 * The verbs follow lock.h; `l` points at tas_lock_size(max_procs) bytes of shared
 * memory aligned to LOCK_ALIGN.
 */
#ifndef SHMAM_TAS_H
#define SHMAM_TAS_H

#include "lock.h"

size_t tas_lock_size(unsigned max_procs);
int tas_lock_init(void *l, unsigned max_procs);
int tas_lock_lock(void *l, struct lock_ctx *c);
int tas_lock_trylock(void *l, struct lock_ctx *c);
void tas_lock_unlock(void *l, struct lock_ctx *c);
int tas_lock_locked(void *l);

extern const struct lock_ops tas_lock_ops;

#endif
