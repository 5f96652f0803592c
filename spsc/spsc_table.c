/*
 * spsc_table.c - every SPSC ring shmam knows, for the runtime, tests and
 * benchmarks to loop over or pick by name.  The order is the issue's: lamport,
 * fastforward, mcring, bqueue.
 */
#include <string.h>

#include "spsc.h"

const struct am_spsc_ops *const am_spsc_table[] = {
    &am_spsc_lamport, &am_spsc_fastforward, &am_spsc_mcring, &am_spsc_bqueue, NULL,
};

const struct am_spsc_ops *am_spsc_find(const char *name)
{
    for (const struct am_spsc_ops *const *o = am_spsc_table; *o; o++)
        if (strcmp((*o)->name, name) == 0)
            return *o;
    return NULL;
}
