/*
 * loan.h - the copy-free send's calls for the rest of the runtime (loan.c).
 *   drop    at am_ep_destroy: this thread's loan of ep, if any, given back.
 *   given_back  the handler of a loan cancelled in a shared queue (below).
 *   unused  a request handler returned with its reply's loan uncommitted
 *           (tok->lent): the loan is given back, the token left unreplied.
 */
#ifndef SHMAM_LOAN_H
#define SHMAM_LOAN_H

#include "internal.h"

void am__loan_drop(am_ep_t *ep);
/* given_back: the handler of a cancelled loan's message, which runs nothing:
 * its delivery gives the bulk block back as any bulk message's does. */
void am__loan_given_back(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                         size_t len);
void am__loan_unused(am_token_t *tok);

#endif
