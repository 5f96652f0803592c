/*
 * waiting.h - sleeping and waking (wait.c; not wait.h, which would hide the
 * system's <wait.h>).  wake: any sender, after its publish (send.c's
 * wake_if_asleep): bumps the futex word and wakes a sleeping owner.
 */
#ifndef SHMAM_WAITING_H
#define SHMAM_WAITING_H

#include "layout.h"

void am__wake(struct am_seg_shared *s);

#endif
