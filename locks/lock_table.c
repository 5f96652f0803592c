/*
 * am_lock_table.c - every lock shmam knows, for the runtime, tests and benchmarks
 * to loop over or pick by name.  The order is fixed (the paper's): tas, ttas,
 * ticket, anderson, mutex; then the queue locks mcs, clh, hemlock, hapax.
 */
#include <string.h>

#include "lock.h"
#include "wait.h"

const struct am_lock_ops *const am_lock_table[] = {
    &am_lock_tas, &am_lock_ttas, &am_lock_ticket,  &am_lock_anderson, &am_lock_mutex,
    &am_lock_mcs, &am_lock_clh,  &am_lock_hemlock, &am_lock_hapax,    NULL,
};

void (*am__lock_hook)(enum am_lock_hook where);
unsigned long am__lock_parks_woken;

const struct am_lock_ops *am_lock_find(const char *name)
{
    for (const struct am_lock_ops *const *o = am_lock_table; *o; o++)
        if (strcmp((*o)->name, name) == 0)
            return *o;
    return NULL;
}
