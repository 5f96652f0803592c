/*
 * slip.c - temporal slipping: a receiver that keeps a few messages behind a
 * one-way stream instead of polling the line its sender is writing (after
 * FastForward's section 3.4, B-Queue's batches).
 *
 * The two regimes.  A receiver that polls right behind its sender finds one
 * message per look: it reads the head slot while the sender claims, fills and
 * publishes it, so the slot's line moves between the two caches several times
 * per message (and the sender's stores wait for it each time).  A receiver a
 * few messages behind reads lines the sender finished with and frees them in
 * a run, so each line moves once each way.  Which regime a stream falls into
 * is decided at its start and kept (bench/README.md: "Two regimes"): both are
 * stable, since a receiver in lockstep slows its sender down to its own pace.
 *
 * The detector, per queue, in private memory.  The queue's streak counts
 * its productive drains in a row; AM_SLIP_GAP empty drains end it (what
 * comes next comes alone), and so does a wait that found nothing (the stream
 * is slower than the wait, or over: a stream that stops costs one wait).
 * From AM_SLIP_STREAK on, a drain that has delivered and then finds the
 * queue empty waits AM_SLIP_PAUSES pauses, touching no shared line, and looks
 * again: what came meanwhile is a run, delivered in one pass; it waits again
 * after each run, up to AM_SLIP_ROUNDS times.  Unless we have sent anything
 * since the last productive drain (ep->sends, counted by both senders'
 * halves): a reply from a handler of this drain, a credit, our next request
 * of a round trip.  Then the stream waits for us, and waiting would only
 * delay it.
 *
 * What it does not cost.  A message is never left ready while we wait: the
 * wait comes only after a look that found the queue empty, and the look after
 * it delivers what came meanwhile, in the same poll.  A message that comes
 * alone (after AM_SLIP_GAP empty drains) finds no streak, so the poll that
 * finds it delivers it and returns as before.  Round trips, a server's
 * answered requests, and a requester handling replies between its requests
 * send between drains and never wait.  Nothing here reads or writes shared
 * memory, so it orders nothing and the queues' ordering is unchanged.
 */
#include <limits.h>

#include "internal.h"
#include "spin.h"

#define AM_SLIP_GAP 64    /* empty drains between two productive ones of a stream */
#define AM_SLIP_STREAK 8  /* productive drains in a row before the first wait */
#define AM_SLIP_PAUSES 8  /* pauses per wait (about 25 ns each here) */
#define AM_SLIP_ROUNDS 16 /* waits per drain at most */

int am__slip_wait(am_ep_t *ep, int qid, unsigned round)
{
    struct am_slip *s = &ep->slip[qid];
    if (ep->mt.shared)
        return 0; /* it would wait holding the drain lock other threads want */
    if (round >= AM_SLIP_ROUNDS || s->streak < AM_SLIP_STREAK ||
        AO_load(&ep->sends) != s->sends)
        return 0;
    for (unsigned i = 0; i < AM_SLIP_PAUSES; i++)
        spin_cpu_relax();
    s->waits++;
    return 1;
}

void am__slip_seen(am_ep_t *ep, int qid, int n, int wasted)
{
    struct am_slip *s = &ep->slip[qid];
    if (n == 0) {
        if (s->gap < UINT_MAX && ++s->gap > AM_SLIP_GAP)
            s->streak = 0; /* what comes next comes alone */
        return;
    }
    s->streak = wasted ? 0 : s->streak + (s->streak < UINT_MAX);
    s->gap = 0;
    s->sends = AO_load(&ep->sends);
}
