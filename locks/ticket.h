/*
 * ticket.h - ticket lock, both counters on one line; tickets name their takers
 * so that a waiter with a watch can pass a dead participant's turn on.
 * Design and memory ordering in ticket.c.
 * The verbs follow lock.h; `l` points at ticket_lock_size(max_procs) bytes of shared
 * memory aligned to LOCK_ALIGN.
 */
#ifndef SHMAM_TICKET_H
#define SHMAM_TICKET_H

#include "lock.h"

size_t ticket_lock_size(unsigned max_procs);
int ticket_lock_init(void *l, unsigned max_procs);
int ticket_lock_lock(void *l, struct lock_ctx *c);
int ticket_lock_trylock(void *l, struct lock_ctx *c);
void ticket_lock_unlock(void *l, struct lock_ctx *c);
int ticket_lock_locked(void *l);

extern const struct lock_ops ticket_lock_ops;

#endif
