/*
 * lock_table.c - every lock shmam knows, for the runtime, tests and benchmarks
 * to loop over or pick by name.  The order is fixed (the paper's): tas, ttas,
 * ticket, anderson, mutex.
 */
#include <string.h>

#include "anderson.h"
#include "lock.h"
#include "mutex.h"
#include "tas.h"
#include "ticket.h"
#include "ttas.h"

const struct lock_ops *const lock_table[] = {
    &tas_lock_ops,      &ttas_lock_ops,  &ticket_lock_ops,
    &anderson_lock_ops, &mutex_lock_ops, NULL,
};

const struct lock_ops *lock_find(const char *name)
{
    for (const struct lock_ops *const *o = lock_table; *o; o++)
        if (strcmp((*o)->name, name) == 0)
            return *o;
    return NULL;
}
