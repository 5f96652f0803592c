/*
 * shmam.h - shared-memory Active Messages.  The one header a user includes.
 *
 * Each process owns an endpoint: a shared segment holding a request queue and a
 * reply queue.  A process maps peers' endpoints to small indices, registers
 * handlers by id (0..255), and sends short messages (0..8 32-bit arguments), bulk
 * messages (up to AM_MAX_BULK bytes) or long messages (up to the destination's
 * long_max, 1 MiB by default) to a peer's handler.  The owner of an endpoint
 * runs handlers when it polls.  A request handler may reply once to its source;
 * reply handlers do not send.  Messages from one sender to one queue are delivered
 * in the order they were sent, exactly once.
 *
 * Every fallible call returns 0 (or a count) on success and a negative errno-style
 * code on failure; am_strerror() gives its text.
 *
 * Inside a job started by shmamrun, am_init() creates this rank's endpoint and maps
 * every rank r as index r.  Stand-alone processes create named endpoints and map
 * each other by name; a receiver learns from each message how to reply.
 *
 * Synchronization.  An endpoint belongs to the thread that created it ("the
 * owner"), which must live as long as the endpoint (peers judge it alive by
 * that thread's lifeline).  Until the owner calls am_ep_share, only the
 * owner may call on it (another thread gets -EPERM); once shared, any thread
 * of the process may make the calls marked "any" (see Threads below).
 *
 *   call                       may call                    blocks
 *   am_ep_create, _destroy,    the owner, not in a handler no (destroy drains
 *     am_set_handler,                                      first; -EBUSY while
 *     am_region_create, _share                             other threads use it)
 *   am_ep_map, _remap          owner/any, not in a handler no
 *   am_request, _bulk, _long,  owner/any, not in a handler while the queue (or
 *     _long_at                                             heap) is full
 *   am_reply, _bulk, _long,    the handler's thread, in a  while the queue (or
 *     _long_at, am_token_keep  request handler, once       heap) is full; to a
 *                                                          call: never
 *   am_reply_kept              owner/any, once per handle  as am_reply
 *   am_call, am_call_start,    owner/any, not in a handler until the call ends;
 *     _try, _test, _wait,                                  _start: for room;
 *     _cancel                                              _try, _test,
 *                                                          _cancel: no
 *   am_poll                    owner/any, not in a handler no
 *   am_wait                    owner/any, not in a handler until a message, a
 *                                                          call's end, a signal,
 *                                                          am_ep_wake or the
 *                                                          timeout
 *   am_ep_fd                   owner/any                   no
 *   am_barrier, am_finalize    the owner (a job's rank)    until every rank arrives
 *   am_ep_wake, am_ep_probe,   any thread                  no
 *     am_strerror, am_err_name,
 *     getters
 * ("owner/any": the owner, or any thread once the endpoint is shared.)
 *
 * Processes.  Ownership is the process and the thread: a child made by
 * fork() (without exec) owns none of its parent's endpoints, shared or not.
 * Every call of the table above on them returns -EPERM in the child, and
 * changes nothing: am_ep_destroy too (the parent's endpoint stays live,
 * named and served); a token of a handler the parent was running when it
 * forked is -EINVAL; am_ep_wake is -EPERM too (it would wake the parent's
 * waits for nothing).  Getters read the child's copy.  A child may only let
 * its copies be: they go with it when it execs or exits, which changes
 * nothing of the parent's (the copies' memory stays mapped in the child
 * until then).  A child forked inside a
 * handler must exec or _exit, never return from the handler.  The child
 * creates endpoints of its own as any process does.
 *
 * Ordering: a send releases and the poll that runs its handler acquires, so
 * everything the sender wrote before the send (to any memory) is visible to
 * the handler.  Handlers run on the thread that polls, inside am_poll or
 * am_wait (or a send's backoff, which polls): one at a time on an owned
 * endpoint, one per serving thread on a shared one.  A blocked send polls its
 * own endpoint meanwhile (requests: both queues; replies: the reply queue), so
 * two endpoints sending to each other never deadlock.
 */
#ifndef SHMAM_H
#define SHMAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AM_MAX_ARGS 8
#define AM_MAX_BULK 8192
#define AM_MAX_MEDIUM 448 /* bulk bytes that travel inline, in the packet's slot */
#define AM_MAX_HANDLERS 256
#define AM_MAX_NAME 40 /* characters of an endpoint name */

typedef struct am_ep am_ep_t;
typedef struct am_token am_token_t;
typedef void (*am_handler_t)(am_token_t *tok, const uint32_t *args, int nargs, void *data,
                             size_t len);

/* Endpoint options; a NULL field or 0 means "from the environment, else default":
 *   claim       one of am_claim_names, default lockfree           (SHMAM_CLAIM)
 *   shm         posix | sysv                                      (SHMAM_SHM)
 *   packets     packets per queue, power of two, default 128      (SHMAM_PACKETS)
 *   bulk_blocks 8 KB blocks per queue, power of two, default 16   (SHMAM_BULK)
 *   max_senders endpoints that may map this one at once, default 64, up to 1024
 *                                                                 (SHMAM_MAX_SENDERS)
 *   (an anonymous endpoint's defaults differ: see am_ep_create)
 *   abandon_ms  the longest am_wait sleeps while a queue waits on a claim whose
 *               sender may have died: a dead sender's claim is skipped within
 *               this bound, default 100, 1..60000                 (SHMAM_ABANDON_MS)
 *   long_max    the longest long message this endpoint takes, in bytes,
 *               4096 .. 2^30, default 1 MiB (1048576); each queue keeps a
 *               shared heap that holds two of them at once    (SHMAM_LONG_MAX)
 *   queue       one of am_queue_names, default mpsc: the shared queues, or a
 *               channel per sender (packets and bulk_blocks then per channel,
 *               defaults 64 and 4)                                (SHMAM_QUEUE)
 *   send_timeout_ms  the longest a send waits for room in a full queue (or
 *               heap) before it fails with -ETIMEDOUT; -1 (the default): no
 *               limit, else 1 .. 2^31-1               (SHMAM_SEND_TIMEOUT_MS)
 * Fields are only ever added at the end (the struct's layout is ABI).
 */
struct am_ep_opts {
    const char *claim;
    const char *shm;
    unsigned packets, bulk_blocks, max_senders;
    unsigned abandon_ms;
    unsigned long_max;
    const char *queue;
    int send_timeout_ms;
};

/* Endpoints.  Names are 1..AM_MAX_NAME (40) characters of [A-Za-z0-9._-].  An endpoint
 * belongs to the thread that created it: its peers judge it alive by a lifeline
 * that thread holds (the kernel marks it when the thread dies), so create and
 * destroy an endpoint in the same thread, and keep that thread for its life
 * (maps: the owner's, or any thread's once shared: see am_ep_map below).
 * am_ep_create reclaims a name whose owner has gone (closed, died, or died while
 * creating it); -EEXIST if a live endpoint has it.
 *
 * Anonymous endpoints, for clients: am_ep_create(NULL, opts, &ep) makes one
 * with no name in /dev/shm nor a System V key, so nothing of it survives its
 * process however it ends (SIGKILL, _exit, exec: peers then see it gone, as
 * for any death).  am_ep_name gives its address, which starts with '@' (no
 * name does): "@p<pid>.f<fd>.<nonce>" (POSIX: a memfd the endpoint keeps open
 * as descriptor fd; do not close it) or "@s<id>.<nonce>" (System V: a segment
 * marked for removal at once).  A server learns it from each request, as it
 * learns a name; a peer of the same user may also am_ep_map or am_ep_probe
 * it (-ENOENT once the endpoint has gone, even if its pid, descriptor or id
 * now holds another: the random nonce tells them apart; -EACCES for another
 * user's, or a process whose files are closed to us, e.g. not dumpable).  A
 * child forked without exec shares the segment until it execs or ends.  Its
 * defaults are a client's: 32 packets and 2 bulk blocks per queue (1 with a
 * per-sender kind), 8 senders, long_max 64 KiB, and its request queue has no
 * heap: it takes replies, and short or bulk requests, but a long request to
 * it fails with -EMSGSIZE; it has no one-copy region (-EINVAL).  220 KB in
 * all with the default queue kind (a named endpoint's defaults: 5.1 MB).
 *
 * am_ep_map maps a peer, by name or address, at an index (-EUSERS if the
 * peer's sender table is full of live senders: try again later, -EPIPE if its
 * owner has gone).  The owner maps; once the endpoint is shared, any thread
 * may, whether peers were mapped before am_ep_share or after (whichever
 * thread maps, a peer's lifeline in its table is let go by the thread that
 * took it: the owner, or the shared endpoint's own thread).
 *
 * Reconnecting.  An index whose peer has closed or died stays mapped to it:
 * every send and call to it ends with -EPIPE, every time, until it is
 * mapped again.  am_ep_remap(ep, index) maps it again by the name (or
 * address) it has: 0 once a live endpoint has that name (0 at once if the
 * peer there is alive), else -EPIPE (the name is still its dead owner's) or
 * -ENOENT (no endpoint has it yet), or the other errors of am_ep_map; -EINVAL
 * for an index never mapped.  A failed remap, or a failed am_ep_map of a
 * gone peer's index, leaves the index as it was (still -EPIPE).  So a
 * client of a server that may restart handles a call's -EPIPE by calling
 * am_ep_remap until it returns 0 (sleeping a little between tries), then
 * calls again: calls made before the restart are not resent (each ended,
 * with -EPIPE or its reply).
 *
 * A destroyed endpoint is poisoned: calls
 * on it return -EINVAL (or NULL / 0 for getters) until am_ep_create reuses the
 * handle.  Errors: -EINVAL (bad name, option or index), -EEXIST, -ENOSPC (no
 * room in /dev/shm, named on stderr), -EUSERS, -ENOENT, -EACCES
 * (another user's segment), -EPROTO (not a segment of this build), -ENOMEM;
 * -EDEADLK inside a handler (for am_ep_create, a handler of any endpoint of
 * this thread), changing nothing.  am_set_handler: -EINVAL for an id over 255
 * or a destroyed endpoint, -EDEADLK inside a handler of the endpoint. */
int am_ep_create(const char *name, const struct am_ep_opts *opts, am_ep_t **ep);
int am_ep_destroy(am_ep_t *ep);
int am_ep_map(am_ep_t *ep, unsigned index, const char *peer_name);
int am_ep_remap(am_ep_t *ep, unsigned index);
int am_set_handler(am_ep_t *ep, unsigned id, am_handler_t fn);

/* Is the endpoint of this name owned by a live process?  1 yes, 0 no (its owner
 * closed it or died: a leftover that the next am_ep_create of the name, or a
 * cleanup tool, may remove), -ENOENT if there is none, -EACCES if it is not
 * ours.  For tools that list or clean up segments.  An address works too. */
int am_ep_probe(const char *name);

/* Requests and replies.  A send blocks (polling this endpoint) while the
 * destination queue is full, up to the endpoint's send_timeout_ms (then
 * -ETIMEDOUT, nothing sent); it fails with -EPIPE if the destination has closed
 * or its owner died (the first send after the death, and any send waiting then,
 * even if its poll meanwhile gave the index to a new sender: the message never
 * goes to another endpoint; likewise a reply goes to the sender its request
 * came from only, -EPIPE once that sender has gone, even if a new one has its
 * index by then), -EDEADLK for a request from inside a handler or a
 * reply from a reply handler, -EALREADY for a second reply to one request,
 * -EMSGSIZE for more than 8 arguments or 8192 bytes, -EINVAL for a NULL or
 * destroyed endpoint, or a token outside its handler (after it returned, or
 * on another thread: keep it with am_token_keep to reply later), -EPERM from
 * a thread other than the owner of an endpoint not shared.  A bulk message
 * of up to AM_MAX_MEDIUM bytes travels inline, in the payload area of its
 * packet's own slot, with no bulk block to claim or give back. */
int am_request(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
               int nargs);
int am_request_bulk(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs);
int am_reply(am_token_t *tok, unsigned handler, const uint32_t *args, int nargs);
int am_reply_bulk(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs);

/* Batches.  am_request_batch sends msgs[0 .. n-1] to dest's request queue, in
 * order, as the same messages sent one by one with am_request (len 0) and
 * am_request_bulk (len 1 .. AM_MAX_BULK; up to AM_MAX_MEDIUM inline) would
 * go: each exactly once, one sender's messages in the order of its sends,
 * batched or not; but the endpoint and destination are checked once, and
 * several messages share a claim of the queue (one tail move or lock hold
 * for a run of slots, one publish of a channel's ring) and one wake of the
 * receiver.  Every message is checked before any is sent: a bad one
 * anywhere (-EINVAL: a handler over 255, NULL data with len > 0, NULL args
 * with nargs > 0; -EMSGSIZE: more than 8 arguments or AM_MAX_BULK bytes;
 * long messages are not batched) sends none and returns its error; n <= 0
 * or msgs NULL is -EINVAL.  While the queue is full the batch waits (and
 * polls) as am_request does, publishing what it has claimed first.
 * Returns how many messages were sent: n, or fewer if an error
 * (-EPIPE; -ETIMEDOUT once the batch has waited send_timeout_ms in all) ended it
 * after a prefix was sent; that prefix went, the rest did not; a negative
 * error if none went.  From the owner, outside handlers (-EDEADLK), as
 * am_request; an endpoint shared by threads, and a remote (MPI) peer, send
 * the messages one by one, with the same result. */
struct am_out {
    unsigned handler;
    const uint32_t *args;
    int nargs;
    const void *data; /* len bytes, or NULL with len 0: a short message */
    size_t len;
};
int am_request_batch(am_ep_t *ep, unsigned dest, const struct am_out *msgs, int n);

/* Long messages, of 0 .. long_max bytes (the destination's option).  The data
 * is copied into a block of the destination queue's shared heap, allocated
 * before the packet is claimed, and the handler gets a pointer to it in place
 * (valid until it returns) and its length, as for bulk.  One sender's short,
 * bulk and long messages to a queue arrive in the order sent.  A heap that is
 * full now makes the send back off and poll, as a full queue does (dead
 * senders' blocks are taken back); -EMSGSIZE for more than long_max bytes.
 * Otherwise the errors of am_request_bulk; data may be NULL when len is 0. */
int am_request_long(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                    size_t len, const uint32_t *args, int nargs);
int am_reply_long(am_token_t *tok, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs);

/* One-copy long messages (GASNet's AMLong).  am_region_create, by the owner
 * once per endpoint, makes `bytes` (1 .. 2^40) of shared memory that peers may
 * write into, and sets *base to it: e.g. a Split-C spread array.  It lives as
 * long as the endpoint.  -EEXIST for a second region, -ENOSPC, -ENOMEM, -EINVAL.
 * am_request_long_at / am_reply_long_at copy len bytes of data straight into
 * the destination's region at `offset`, then the handler runs with a pointer to
 * them there (data = region + offset, len).  -ENXIO if the destination has no
 * region, -EMSGSIZE if offset + len passes its end or len is over 2^32 - 1
 * (4 GiB - 1, what a packet's length holds: send a larger span as several
 * messages; the receiver checks against its own record too: a packet naming
 * bytes outside is dropped as corrupt).  The sender writes the region before
 * the handler runs; when two senders write the same bytes, the application
 * orders them. */
int am_region_create(am_ep_t *ep, size_t bytes, void **base);
int am_request_long_at(am_ep_t *ep, unsigned dest, unsigned handler, const void *data,
                       size_t len, size_t offset, const uint32_t *args, int nargs);
int am_reply_long_at(am_token_t *tok, unsigned handler, const void *data, size_t len,
                     size_t offset, const uint32_t *args, int nargs);

/* Direct load/store into a peer's region (GASNet's RMA on one machine).
 * am_region_map maps the region that the peer at index dest made with
 * am_region_create (read-write, as for one-copy sends) and sets *base to it
 * in this process and *len to its size; the same mapping on every call.  It
 * is checked as every attach is: the segment must be this user's with mode
 * 0600 (-EACCES otherwise) and carry the mark naming that peer and the size
 * its endpoint published (-EPROTO otherwise; -ENXIO if the peer has no
 * region).  -EPIPE once the peer's owner has gone (closed or died): no new
 * map is given, though a mapping given before stays valid memory until the
 * index is mapped again (am_ep_map, am_ep_remap) or ep is destroyed, which
 * unmap it.  -EINVAL for an index never mapped, -EDEADLK in a handler,
 * -EPERM from a thread not allowed on ep.  Ordering: plain stores to the
 * mapping are visible to the owner once it has run a handler of a message
 * sent after them (the send releases, the poll acquires), e.g. a put then
 * an AM to the target; to see the owner's stores, receive a message it
 * sent after them.  Two writers of the same bytes order themselves. */
int am_region_map(am_ep_t *ep, unsigned dest, void **base, size_t *len);

/* Sends that never wait (GASNet's IMMEDIATE).  am_request_try and
 * am_reply_try send one message of the kind named (AM_MSG_SHORT: no data;
 * AM_MSG_BULK: up to AM_MAX_BULK bytes; AM_MSG_LONG: into the destination's
 * heap; AM_MSG_LONG_AT: into its region at `offset`, which the other kinds
 * ignore) as the calls above do, except that where those would wait for room
 * (a full queue, or a full heap) these return -EAGAIN at once, nothing sent
 * and the token still unreplied.  They never poll: no handler runs inside
 * them.  A one-copy message's bytes may have been written into the region
 * though -EAGAIN says its message was not sent (the handler never ran for
 * them).  Otherwise the errors of the call of that kind; -EINVAL for an
 * unknown kind. */
enum am_msg_kind { AM_MSG_SHORT, AM_MSG_BULK, AM_MSG_LONG, AM_MSG_LONG_AT };
int am_request_try(am_ep_t *ep, unsigned dest, enum am_msg_kind kind, unsigned handler,
                   const void *data, size_t len, size_t offset, const uint32_t *args,
                   int nargs);
int am_reply_try(am_token_t *tok, enum am_msg_kind kind, unsigned handler, const void *data,
                 size_t len, size_t offset, const uint32_t *args, int nargs);

/* Copy-free sends (a loan: GASNet-EX's negotiated payload).  am_request_prepare
 * lends the caller room for up to len bytes in dest's request queue and sets
 * *buf to it: the queue's next bulk block for up to AM_MAX_BULK bytes, else a
 * block of its heap (a long message's, up to its long_max).  Write the data
 * there, then am_request_commit sends it (len at most the prepared len; the
 * arguments as for am_request_bulk) to handler, as a bulk or long message
 * whose data the handler finds where it was written; or am_request_cancel
 * gives the room back.  Prepare waits for room as a send does (the
 * endpoint's send_timeout_ms); the commit then only waits for a packet.  A
 * loan never holds up the queue for other senders: the message takes its
 * place in the queue at commit, so one sender's messages arrive in the
 * order of their sends and commits.  One loan per thread at a time (-EBUSY
 * for a second prepare); a commit or cancel of none is -EINVAL; a commit's
 * -EINVAL (handler, arguments) or -EMSGSIZE (len, nargs) leave the loan
 * out, any other end ends it (-EPIPE if dest died meanwhile).  Polls and
 * other sends may come between prepare and commit, but a bulk send of this
 * thread to the same queue that would need the block the loan holds (after
 * B - 1 others, B its bulk blocks) is refused with -EBUSY, not waited for;
 * *buf stays writable until the loan ends, even if dest dies.  A shared endpoint's loans, a
 * remote rank's and a call's reply are a private buffer that the commit
 * copies.  A process that dies holding a loan loses nothing but its
 * message: the receiver takes the room back as for a send dying midway.
 * am_ep_destroy gives back this thread's loan of the endpoint.
 * The reply forms, in a request handler (-EDEADLK in a reply handler,
 * -EALREADY once replied): the room is in the reply queue of the request's
 * sender; a loan not committed when the handler returns is given back and
 * the request left unreplied.  Otherwise the errors of the send of that
 * kind. */
int am_request_prepare(am_ep_t *ep, unsigned dest, size_t len, void **buf);
int am_request_commit(am_ep_t *ep, unsigned handler, size_t len, const uint32_t *args,
                      int nargs);
int am_request_cancel(am_ep_t *ep);
int am_reply_prepare(am_token_t *tok, size_t len, void **buf);
int am_reply_commit(am_token_t *tok, unsigned handler, size_t len, const uint32_t *args,
                    int nargs);
int am_reply_cancel(am_token_t *tok);

/* Threads.  An endpoint is owned by the thread that created it until that
 * thread calls am_ep_share (outside handlers; not for an endpoint of a job
 * spanning nodes: -ENOTSUP); from then on every thread of the process may
 * send, reply (through kept handles), poll and wait on it at once.  What
 * holds then:
 *  - one thread's messages to one destination queue keep their order;
 *  - W threads in am_poll / am_wait take each message exactly once, and per
 *    sender in the order sent (a thread never sees a sender's message before
 *    an earlier one it also runs); their handlers run at once, on the threads
 *    that took them.  With a per-sender queue kind one sender's channel is
 *    drained by one thread at a time;
 *  - am_set_handler, am_region_create, am_ep_destroy stay the owner's (set
 *    the handlers before other threads serve); am_ep_destroy returns -EBUSY,
 *    changing nothing, while another thread sends, polls or waits on it, and
 *    no thread may start a call on it once it has begun;
 *  - any thread may make calls (am_call, am_call_start/test/wait/cancel) at
 *    once; each call's reply reaches that call's struct am_result whichever
 *    thread's poll takes it, and a thread waiting for its call is woken when
 *    another thread ends it; the limit of calls outstanding is the
 *    endpoint's, shared by its threads (a start waits for room as alone);
 *    an id may be tested, waited for or cancelled from any thread, and its
 *    end is collected once (then -EINVAL).  A shared endpoint serves calls
 *    too (its handlers' replies, direct or kept, end them).
 * Any call on an endpoint that is not shared, from a thread other than its
 * owner, returns -EPERM. */
int am_ep_share(am_ep_t *ep);

/* Replies from any thread.  A request handler may keep its reply for later:
 * am_token_keep gives a handle valid after the handler returns (-EINVAL for
 * a token outside its handler, -EDEADLK for a reply's token, -EALREADY if it
 * was replied or kept already, -ENOMEM).  am_reply_kept answers through it
 * once, from any thread of a shared endpoint (the owner's only, otherwise),
 * with data of len bytes sent as the kind that fits (none: short; up to
 * AM_MAX_BULK: bulk; else long), and releases it: a second use is -EALREADY;
 * -EPIPE if the caller has gone (never a new peer at its index: every reply,
 * a call's too, its bytes and its end, goes to the caller it answers, named
 * by its index and the peer's identity there, or to no one); -EMSGSIZE
 * (the handle stays usable) if the caller takes no message that long.  A
 * handle never used is released by am_ep_destroy; one used after that is
 * -EINVAL (until 256 more handles have been released, after which it may
 * name another). */
typedef struct am_kept am_kept_t;
int am_token_keep(am_token_t *tok, am_kept_t **kept);
int am_reply_kept(am_kept_t *kept, unsigned handler, const void *data, size_t len,
                  const uint32_t *args, int nargs);

/* Event loops.  am_ep_fd returns a file descriptor (the owner's, or any
 * thread's once shared; made on first call, closed by am_ep_destroy) for
 * epoll, poll or select: while a message waits and no am_poll runs, it is
 * readable (POLLIN), from the start and as messages arrive from any
 * process, whatever that process's descriptors (none free) or ours (not
 * dumpable, setuid: no sender can open our pipe), and am_ep_wake makes it
 * so too.  It is readable as well when the endpoint has work on a clock,
 * the work its own waits do after a sleep: every 2 ms while a call's reply
 * is kept because its caller's queue was full, and at each outstanding
 * call's deadline and every abandon_ms while calls are outstanding (to see
 * a server's death); the am_poll it prompts does that work (places kept
 * replies, ends such calls: am_call_test then gives their end), so a loop
 * driven by the descriptor alone never stalls a call.  It may be readable
 * with nothing waiting: am_poll then returns 0, and an am_poll that returns
 * 0 leaves it not readable until the next message or such event.  It is a
 * level, not an edge: with level-triggered epoll (the default), poll or
 * select a loop may call am_poll once per readiness, or until it returns
 * 0; with EPOLLET it must call am_poll until it returns 0 at each
 * readiness (a poll that ran messages leaves it readable, which makes no
 * new edge).  Senders signal it without a system call while the owner is
 * awake; once it exists, an empty am_poll costs one read(2), and the
 * process has one more thread per descriptor, which sleeps in the kernel
 * (the relay: it signals for a sender that cannot, and keeps the clock;
 * every signal blocked in it).  Do not read it yourself.  -ENOTSUP for a
 * job endpoint spanning nodes, -EMFILE, -EAGAIN (no thread) etc.
 * am_ep_wake, any thread of the process or a signal handler (it is
 * async-signal-safe: atomics, a futex wake-up and write(2); errno kept):
 * ends every wait on ep in progress, am_wait (it returns what it handled, 0
 * if nothing), am_call_wait and am_call (-EINTR), or if none is in progress
 * the next one to start, and makes the descriptor readable.  A wake is kept
 * until a wait takes it, as a byte in a self-pipe is, so a handler that sets
 * a flag and calls am_ep_wake ends the wait for certain, wherever the
 * signal lands (before the wait, while it spins, while it sleeps): test the
 * flag after each wait, e.g. do am_wait(ep, -1); while (!flag);.  Every
 * wait that returns takes the wakes given before; a wake taken by none
 * makes the next am_wait return at once (am_wait(ep, 0) takes it). */
int am_ep_fd(am_ep_t *ep);
int am_ep_wake(am_ep_t *ep);

/* A token is its handler's only while that handler runs, on its thread: a
 * token kept past its return (even one that points where the next handler's
 * token lies) or used on another thread is -EINVAL in every call taking it,
 * UINT_MAX and NULL here. */
unsigned am_token_source(const am_token_t *tok); /* UINT_MAX if unknown or NULL */
am_ep_t *am_token_ep(const am_token_t *tok);     /* NULL for NULL */

/* Delivery.  am_poll runs every message ready in both queues and returns how many;
 * am_wait waits until at least one message has been handled, or a call of
 * this endpoint ended without one (its server died, its deadline passed), or
 * timeout_ms passes (-1: forever), or am_ep_wake is called; it returns
 * that count, 0 on timeout, or -EINTR if a signal handler ran while it slept
 * (with either timeout; a handler that runs while it polls before sleeping
 * is not seen: to end a wait on a signal, call am_ep_wake from the
 * handler).  It
 * polls first, for a while that adapts to how soon recent waits ended (so a
 * ping-pong costs about what polling does), then sleeps without spinning; an
 * idle wait costs no measurable CPU.  Both return -EDEADLK from inside a
 * handler (the handler still holds its packet) and -EINVAL for a NULL or
 * destroyed endpoint.  A message whose sender died while sending it is
 * skipped and counted (am_ep_abandoned); a sender that is merely slow or
 * stopped is waited for. */
int am_poll(am_ep_t *ep);
int am_wait(am_ep_t *ep, int timeout_ms);

/* Calls: RPC over requests.  A call is a request whose reply goes into the
 * caller's struct am_result instead of to a handler, and that always ends, in
 * exactly one of these ways: 0, its reply came; -ENOENT, the server has no
 * such handler; -EMSGSIZE, the reply was longer than res->cap (the server's
 * am_reply* got -EMSGSIZE too), or the request longer than the server's
 * long_max; -EPIPE, the server died or closed (found within abandon_ms while
 * the caller sleeps, never by a pid); -ETIMEDOUT, timeout_ms passed (-1: no
 * deadline); -ECANCELED, am_call_cancel; or -EINTR (am_call only: a signal
 * arrived while it slept, or am_ep_wake was called, before it or during
 * it; the call is cancelled, or never sent if the wake came before it, on
 * whichever thread of a shared endpoint); or
 * a send error of
 * am_request (-EINVAL, -EOPNOTSUPP for a rank of another node, -EDEADLK in
 * a handler).
 *
 * The server does nothing new: a call arrives as an ordinary request, and its
 * handler replies with am_reply* (the reply's handler id is then ignored;
 * am_reply_long_at's offset too: the data goes to res->data).  A handler that
 * returns without replying to a call sends an empty reply (0 args, 0 bytes).
 *
 * A server never waits for one client.  Room for a call's reply is kept when
 * the call is made: its packet, by the caller keeping no more calls
 * outstanding than its reply queue holds (am_call_start waits, polling,
 * meanwhile); its data, if res->cap is more than 448 bytes, up to res->cap
 * bytes (at most the caller's own long_max) in the caller's reply heap, which
 * the server writes a reply longer than 448 bytes straight into.  A reply of
 * at most 448 bytes travels inline, in its packet's slot, and a call whose
 * res->cap is at most 448 takes no room in the heap.  A reply to a
 * call never blocks the server: if the caller's queue is full of other
 * traffic, it is kept and placed on a later poll.  Only calls have room kept:
 * a plain am_reply still waits for room.
 *
 * am_call blocks until the call ends.  am_call_start starts one: it sends the
 * request (args, and len bytes of data as a short, bulk or long message) and
 * sets *id; its own send and its wait for room end at the call's deadline.
 * res (data, cap: where the reply's bytes go and the most it takes, NULL and
 * 0 for none) must stay valid until the call ends; the reply sets res->len,
 * args, nargs.  am_call_test polls once and returns 0 or the call's error if
 * it has ended, -EINPROGRESS if not.  am_call_wait waits up to timeout_ms for
 * it: its end, -EINPROGRESS if timeout_ms passed first, or -EINTR if a signal
 * came or am_ep_wake was called (the call goes on in these cases: it ends at
 * its own deadline).  am_call_start's own waits (for room) do not end on a
 * signal or a wake: they end at the call's deadline.  am_call_try is
 * am_call_start for event loops: it never waits, nor polls; -EAGAIN
 * (nothing sent, *id not set) when a call record, reply room, or room in the
 * destination's queue (or heap) is not free at once: poll, then try again.
 * am_call_cancel ends it now: -ECANCELED, or the end it had already.  Once
 * test, wait or cancel has returned a call's end, its id is forgotten (then
 * -EINVAL).  Ids are unique for the endpoint's life.  A reply to a cancelled
 * or timed-out call that comes late is dropped and counted
 * (am_ep_late_replies), never given to another call; until it comes (or the
 * server dies) the call's reply room stays reserved.  A hung server cannot
 * take the room calls to other servers need: the rooms of one destination's
 * calls, outstanding or ended with their reply still to come, cost at most
 * half the caller's reply heap (each rounded up to a power of two) beyond
 * the first one; a call to it that would cost more waits for room, up to its
 * deadline, as for a full heap.  A reply is its call's by the call's id,
 * whichever index of the caller its server is mapped at (one server at two
 * indexes; a restarted one mapped at a fresh index, while the dead index
 * stays the dead server's: -EPIPE, until mapped again). */
typedef uint64_t am_call_t;
struct am_result {
    void *data; /* the caller's: where the reply's bytes go */
    size_t cap; /* the caller's: the most bytes they take */
    size_t len; /* the reply's: its bytes */
    uint32_t args[AM_MAX_ARGS];
    int nargs;
};
int am_call(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args, int nargs,
            const void *data, size_t len, struct am_result *res, int timeout_ms);
int am_call_start(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                  int nargs, const void *data, size_t len, struct am_result *res,
                  int timeout_ms, am_call_t *id);
int am_call_try(am_ep_t *ep, unsigned dest, unsigned handler, const uint32_t *args,
                int nargs, const void *data, size_t len, struct am_result *res,
                int timeout_ms, am_call_t *id);
int am_call_test(am_ep_t *ep, am_call_t id);
int am_call_wait(am_ep_t *ep, am_call_t id, int timeout_ms);
int am_call_cancel(am_ep_t *ep, am_call_t id);
unsigned long am_ep_late_replies(const am_ep_t *ep);

/* What error code err (0 or negative) means, and its short name ("EPIPE") for
 * logs; from one table.  Any thread. */
const char *am_strerror(int err);
const char *am_err_name(int err);

/* Introspection. */
const char *am_ep_name(const am_ep_t *ep);
const char *am_ep_claim(const am_ep_t *ep);
const char *am_ep_queue(const am_ep_t *ep); /* its queue kind's name */
unsigned long am_ep_bad_packets(const am_ep_t *ep);
unsigned long am_ep_abandoned(const am_ep_t *ep); /* dead senders' claims skipped */
size_t am_ep_long_max(const am_ep_t *ep);         /* the longest long message it takes */

/* Jobs started by shmamrun.  am_init, by the thread that will own the rank's
 * endpoint, creates it, maps every rank and waits at a barrier for all of
 * them (-EINVAL for a broken job environment, or the errors of am_ep_create /
 * am_ep_map); run outside shmamrun it makes a job of one rank.  Messages that
 * arrive before the user's handlers are set are held and run by the first
 * am_poll.  Then each rank removes its endpoint's name (nothing of a job
 * outlives it); a POSIX rank keeps one descriptor (close-on-exec) of its own
 * segment until am_finalize, through which shmamstat lists it (a System V
 * rank's marked segment is listed as it is).  am_rank and am_nprocs: any
 * thread, after am_init.
 * am_barrier (the owner, not in a handler) blocks until every rank has
 * arrived, -EPIPE if a rank died.  am_finalize: a barrier, then am_ep_destroy. */
int am_init(int *argc, char ***argv, am_ep_t **ep);
int am_rank(void);
int am_nprocs(void);
int am_barrier(am_ep_t *ep);
int am_finalize(am_ep_t *ep);

/* The claim algorithms this build knows, NULL-terminated: the one list of
 * them (shmamrun --list-claims prints it for scripts). */
extern const char *const am_claim_names[];

/* The queue kinds this build knows, NULL-terminated, the one list of them
 * (shmamrun --list-queues): "mpsc", the shared many-to-one queues (the
 * default), and per-sender channels of single-producer/single-consumer rings,
 * "lamport", "fastforward", "mcring", "bqueue".  Chosen at creation (option
 * queue, SHMAM_QUEUE, shmamrun --queue); with a per-sender kind, `packets` and
 * `bulk_blocks` size each sender's channel (defaults 64 and 4) and the claim
 * algorithm is unused. */
extern const char *const am_queue_names[];

/* Services for other users: a rendezvous through a Unix socket
 * (docs/services.md).  am_ep_listen makes the endpoint's owner serve
 * callers that connect to the socket `where`: a path (created with mode
 * opts->mode, default 0666; a stale socket nobody listens on is replaced,
 * a live one is -EEXIST; removed at am_ep_destroy) or "@name", Linux's
 * abstract namespace (nothing on disk; nothing left however the server
 * ends).  The endpoint's own am_poll and am_wait, and am_ep_fd's descriptor,
 * accept and serve callers (internal threads only wake them); callers of the owner's uid,
 * of a uid in allow_uids or of a group (primary or supplementary) in
 * allow_gids are let in, everyone else is refused with -EACCES before any
 * memory is handed over.  The kernel names each caller (SO_PEERCRED).  Each
 * caller gets a segment of its own (a memfd, passed over the socket), in
 * which only its own requests travel; the server runs them with the
 * endpoint's handlers.  Up to max_callers at once (default and most 127):
 * more are -EUSERS.  Only the owner, not in a handler, not shared: 0,
 * -EINVAL, -EEXIST (it listens already, or somebody listens there),
 * -EACCES (the socket's directory), -EPERM, -EDEADLK.  where NULL: the
 * environment's SHMAM_LISTEN; opts NULL: SHMAM_ALLOW_UIDS and
 * SHMAM_ALLOW_GIDS, lists of numbers or names separated by commas
 * (-EINVAL for a name nobody has).
 *
 * am_ep_connect maps the server listening at `where` at index `index` of
 * ep, an anonymous POSIX endpoint (am_ep_create(NULL, ...)): it passes
 * ep's segment and gets its own door to the server over the socket, so it
 * needs no /dev/shm, System V or /proc access to the server (another user,
 * another container).  Then calls and requests to index go as to any peer:
 * -EPIPE once the server has died or closed; a restarted server is reached
 * by a new am_ep_connect at the index.  0, -EACCES (refused, or the
 * socket's permissions), -ENOENT (nobody listens there), -EUSERS, -EINVAL
 * (ep not anonymous POSIX, a bad where or index), -EEXIST (index holds a
 * live peer), -ETIMEDOUT (the server did not answer within 10 s), -EPROTO.
 *
 * am_token_cred: who sent a request, as the kernel told at its connect:
 * uid, gid and pid (the pid as the server's PID namespace sees it; 0 if
 * the caller's is not visible there), never read from shared memory.  From
 * its handler, on its thread: 0; -ENODATA for a sender that did not come
 * through a rendezvous socket (a same-user peer that mapped the server by
 * name), -EINVAL for a token not its handler's. */
struct am_listen_opts {
    const uid_t *allow_uids;
    unsigned n_uids;
    const gid_t *allow_gids;
    unsigned n_gids;
    unsigned mode;        /* a path socket's mode; 0: 0666 */
    unsigned max_callers; /* 0: 127 */
};
struct am_cred {
    uid_t uid;
    gid_t gid;
    pid_t pid;
};
int am_ep_listen(am_ep_t *ep, const char *where, const struct am_listen_opts *opts);
int am_ep_connect(am_ep_t *ep, const char *where, unsigned index);
int am_token_cred(const am_token_t *tok, struct am_cred *cred);

#ifdef __cplusplus
}
#endif
#endif
