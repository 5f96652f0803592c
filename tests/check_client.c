/*
 * check_client.c - clients that are cheap and leave nothing: anonymous
 * endpoints (am_ep_create(NULL, ...)), how peers reach them by address, what
 * they cost, and what is left when they end (nothing).
 *
 *   round_trips            per backend and queue kind (mpsc, lamport): an
 *                          anonymous client calls a named server with short,
 *                          bulk and long requests and gets each back, up to a
 *                          64 KB long reply; its name is an address ('@'),
 *                          which no am_ep_create takes; the server maps the
 *                          client by that address and sends it a request; a
 *                          long request to a client is -EMSGSIZE.
 *   killed_clients_leave_nothing  per backend: 200 anonymous clients, 8 at a
 *                          time, each SIGKILLed at a random moment or parked
 *                          at a hook (segment made and not sealed, laid out
 *                          and not LIVE, registering, filling a packet, a long
 *                          message staged); after each wave a new client gets
 *                          its answers (the server has 16 sender entries: the
 *                          dead clients' are reclaimed).  Nothing is left:
 *                          POSIX, no file in a private /dev/shm but the
 *                          server's; System V, no segment that a client made.
 *   exec_and_exit_leave_nothing  per backend: a client that exec()s (its pid
 *                          lives on as sleep) and one that _exit()s without
 *                          am_ep_destroy: at once no peer sees either alive
 *                          (am_ep_probe), the exec'ed process holds no memfd
 *                          of shmam, and once one new client has called, the
 *                          server maps neither's segment (its /proc maps: it
 *                          let go of both, not just of the one whose index
 *                          the newcomer took) and none is left.
 *   sysv_debris_swept      a System V client killed between its segment's
 *                          shmget and its mark for removal (hook ANON_MADE)
 *                          leaves a blank segment; the next anonymous System
 *                          V endpoint made removes it, also while another
 *                          process has it attached (as shmamstat or a
 *                          leftover check, reading every segment, may).
 *   forged_addresses       per backend: a wrong nonce, another endpoint's pid
 *                          and fd (or id), a reused fd, an fd or id that is
 *                          no anonymous endpoint, a process gone: -ENOENT; a
 *                          malformed address -EINVAL; another user's
 *                          anonymous endpoint (real unprivileged uids, as
 *                          check_hostile's) -EACCES.
 *   anon_segment_size      an anonymous endpoint with the defaults takes at
 *                          most 256 KB (POSIX: the memfd's allocated blocks;
 *                          System V: its size); every option still applies;
 *                          it has no region.
 *   full_table_vs_full_shm in a private 1.5 MB /dev/shm: a full sender table
 *                          is -EUSERS ("EUSERS"), a segment that does not fit
 *                          /dev/shm -ENOSPC, and an anonymous client, which
 *                          takes nothing there, is made all the same.
 *
 * The private /dev/shm is a tmpfs in a mount namespace of the test's own
 * process (Check forks one per test); where that is not permitted, the
 * POSIX checks fall back to the names this test made.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

enum { H_ECHO = 1, H_ANSWER, H_TELL, H_PING };

#define WAVE 8            /* clients killed at once */
#define CLIENTS 200       /* per backend */
#define SERVER_SENDERS 16 /* the server's table: fewer than the clients */
#define LONG_LEN 20000u   /* a long call's request and reply */
#define ANON_BUDGET (256u << 10)
/* How /proc names an anonymous client's segment: a memfd of shmam's (its fd's
 * link, a mapping's path), or a System V segment (a mapping's path). */
#define MEMFD_PATH "/memfd:shmam"
#define SYSV_PATH "/SYSV"
#define NOBODY 65534 /* two unprivileged uids, as check_hostile's */
#define VICTIM 65533

struct shared {
    struct tu_errors err;
    AO_t ready, stop, pinged, parked[WAVE], addr_set;
    AO_t calls;                   /* calls the doomed clients completed */
    AO_t go;                      /* the ending clients: end now */
    int b, queue;                 /* backend; am_queue_names[queue] */
    unsigned max_senders;         /* the server's */
    int strict;                   /* a reply the server cannot send is an error */
    int hook[WAVE];               /* where doomed client k parks, or -1: killed at random */
    int map_rc, ping_rc, long_rc; /* the server's map of a client's address, ... */
    char srv[AM_NAME_MAX];
    char addr[AM_ADDR_MAX];
};

static struct shared *sh;
static char what[160];
static int private_shm; /* /dev/shm is this test's own tmpfs */

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
}

static void teardown(void)
{
    tu_shared_free(sh, sizeof *sh);
}

/* A tmpfs of `size` on /dev/shm, seen by this process and its children only.
 * 1 if done, 0 if not permitted here. */
static int own_dev_shm(const char *size)
{
    char opts[32];
    snprintf(opts, sizeof opts, "size=%s", size);
    return unshare(CLONE_NEWNS) == 0 &&
           mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
           mount("tmpfs", "/dev/shm", "tmpfs", 0, opts) == 0;
}

/* Files in /dev/shm other than `except` (NULL: none); the first into first. */
static int dev_shm_files(const char *except, char *first, size_t n)
{
    DIR *d = opendir("/dev/shm");
    int count = 0;
    const struct dirent *e;
    char keep[AM_NAME_MAX + 8];
    snprintf(keep, sizeof keep, "shmam-%s", except ? except : "");
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || (except && strcmp(e->d_name, keep) == 0))
            continue;
        if (!private_shm && !strchr(e->d_name, '@'))
            continue; /* the shared /dev/shm: only what an address names */
        if (count++ == 0)
            snprintf(first, n, "%s", e->d_name);
    }
    if (d)
        closedir(d);
    return count;
}

static void assert_dev_shm_clean(const char *except)
{
    char first[300] = "";
    int n = dev_shm_files(except, first, sizeof first);
    ck_assert_msg(n == 0, "%s: %d file(s) in /dev/shm%s, e.g. %s", what, n,
                  except ? " but the server's" : "", first);
    if (!except)
        tu_assert_clean(what);
}

/* While the server runs: its file, nothing else. */
static void assert_only_server(void)
{
    assert_dev_shm_clean(sh->srv);
}

/* System V segments still there whose creator is one of pids[0..n-1] (the
 * kernel's shm_cpid): those not marked for removal, or with marked_too all of
 * them; the last one's id in *shmid and record in *last.  A marked one is gone
 * for everybody (it has no key, and nobody will give out its id): it lives on
 * only while a process is attached, such as another program that reads every
 * segment (shmamstat, a test's leftover check). */
static int sysv_made_by(const pid_t *pids, int n, int marked_too, int *shmid,
                        struct shmid_ds *last)
{
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&info), count = 0;
    for (int i = 0; i <= max; i++) {
        struct shmid_ds ds;
        int id = shmctl(i, SHM_STAT, &ds);
        int seen = id >= 0 && (marked_too || !(ds.shm_perm.mode & SHM_DEST));
        for (int k = 0; seen && k < n; k++)
            if (ds.shm_cpid == pids[k]) {
                *shmid = id;
                *last = ds;
                count++;
            }
    }
    return count;
}

static void assert_sysv_clean(const pid_t *pids, int n)
{
    struct shmid_ds ds = {0};
    int id = -1, left = sysv_made_by(pids, n, 0, &id, &ds);
    ck_assert_msg(left == 0,
                  "%s: %d System V segment(s) of the clients left (id %d, %lu attached, "
                  "made %lld s ago)",
                  what, left, id, (unsigned long)ds.shm_nattch,
                  (long long)(time(NULL) - ds.shm_ctime));
}

/* ---- the server ---- */

static char told[AM_ADDR_MAX]; /* the server: an address a client told it */

static void on_echo(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    int rc = len > AM_MAX_BULK ? am_reply_long(t, H_ANSWER, d, len, a, n)
             : len             ? am_reply_bulk(t, H_ANSWER, d, len, a, n)
                               : am_reply(t, H_ANSWER, a, n);
    if (rc < 0 && sh->strict)
        tu_error(&sh->err, "server: reply of %zu bytes: %s", len, am_strerror(rc));
}

static void on_tell(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    if (len > 0 && len < sizeof told) {
        memcpy(told, d, len);
        told[len] = '\0';
    }
}

/* Maps the client that told us its address, sends it a request, and tries a
 * long one; results into sh. */
static void ping_told(am_ep_t *ep)
{
    uint32_t x = 41;
    sh->map_rc = am_ep_map(ep, 100, told);
    sh->ping_rc = sh->map_rc ? sh->map_rc : am_request(ep, 100, H_PING, &x, 1);
    sh->long_rc =
        sh->map_rc ? sh->map_rc : am_request_long(ep, 100, H_PING, told, 8, &x, 1);
    told[0] = '\0';
    AO_store_release(&sh->pinged, 1);
}

static void server(void *arg)
{
    struct am_ep_opts o = {.shm = tu_backend_name(sh->b),
                           .queue = am_queue_names[sh->queue],
                           .max_senders = sh->max_senders};
    am_ep_t *ep = NULL;
    int rc = am_ep_create(sh->srv, &o, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "server: create: %s", am_strerror(rc));
        _exit(2);
    }
    am_set_handler(ep, H_ECHO, on_echo);
    am_set_handler(ep, H_TELL, on_tell);
    AO_store_release(&sh->ready, 1);
    while (!AO_load_acquire(&sh->stop)) {
        am_wait(ep, 10);
        if (told[0])
            ping_told(ep);
    }
    am_ep_destroy(ep);
}

static pid_t start_server(int b, int queue, unsigned max_senders)
{
    sh->b = b;
    sh->queue = queue;
    sh->max_senders = max_senders;
    tu_ep_name(sh->srv, sizeof sh->srv, "srv", -1, b);
    pid_t p = tu_spawn(server, NULL, 1);
    tu_assert_flag(&sh->ready, 1, 10, "the server", what, &sh->err);
    return p;
}

static void stop_server(pid_t p)
{
    AO_store_release(&sh->stop, 1);
    tu_assert_exit0(tu_reap(p, 20), "server", what, &sh->err);
}

/* ---- a client's calls ---- */

static struct {
    int n;
    size_t len;
    uint32_t x, sum;
} got;
static AO_t pings;

static void on_answer(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    got.n++;
    got.len = len;
    got.x = n > 0 ? a[0] : 0;
    got.sum = len ? tu_fnv1a(d, len) : 0;
}

static void on_ping(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    AO_fetch_and_add1(&pings);
}

static am_ep_t *anon_client(int b, const char *queue)
{
    struct am_ep_opts o = {.shm = tu_backend_name(b), .queue = queue};
    am_ep_t *ep = NULL;
    if (am_ep_create(NULL, &o, &ep) < 0)
        return NULL;
    am_set_handler(ep, H_ANSWER, on_answer);
    am_set_handler(ep, H_PING, on_ping);
    return ep;
}

/* One echo call of len pattern bytes keyed x: 0, a send error, -ETIMEDOUT,
 * or -EPROTO for a wrong answer. */
static int call(am_ep_t *ep, uint32_t x, size_t len, double secs)
{
    static uint8_t buf[64 << 10];
    tu_pattern(buf, x, len);
    int before = got.n;
    int rc = len > AM_MAX_BULK ? am_request_long(ep, 0, H_ECHO, buf, len, &x, 1)
             : len             ? am_request_bulk(ep, 0, H_ECHO, buf, len, &x, 1)
                               : am_request(ep, 0, H_ECHO, &x, 1);
    double end = tu_now_s() + secs;
    while (rc == 0 && got.n == before && tu_now_s() < end)
        rc = am_wait(ep, 10) < 0 ? -EPROTO : 0;
    if (rc == 0 && got.n == before)
        return -ETIMEDOUT;
    if (rc == 0 &&
        (got.len != len || got.x != x || got.sum != (len ? tu_fnv1a(buf, len) : 0)))
        return -EPROTO;
    return rc;
}

/* A client's whole life, forked: create, map, a short, a bulk and a long
 * call, destroy.  Exits 2 on any failure, recorded. */
static void good_client(void *arg)
{
    am_ep_t *ep = anon_client(sh->b, NULL);
    int rc = ep ? am_ep_map(ep, 0, sh->srv) : -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < 3; i++)
        rc = call(ep, 1000 + i, i == 0 ? 0 : i == 1 ? 3000 : LONG_LEN, 10);
    if (rc < 0) {
        tu_error(&sh->err, "a new client: %s", am_strerror(rc));
        _exit(2);
    }
    am_ep_destroy(ep);
}

static void assert_good_client(const char *when)
{
    pid_t p = tu_spawn(good_client, NULL, 0);
    tu_assert_exit0(tu_reap(p, 30), when, what, &sh->err);
}

/* ---- round_trips ---- */

START_TEST(round_trips)
{
    int b = _i % 2, queue = _i / 2 ? AM_QUEUE_LAMPORT : AM_QUEUE_MPSC;
    snprintf(what, sizeof what, "%s/%s: anonymous client", tu_backend_name(b),
             am_queue_names[queue]);
    sh->strict = 1;
    pid_t srv = start_server(b, queue, 0);
    am_ep_t *ep = anon_client(b, am_queue_names[queue]), *other = NULL;
    ck_assert_msg(ep != NULL, "%s: create", what);
    const char *addr = am_ep_name(ep);
    ck_assert_msg(addr && addr[0] == '@', "%s: its name '%s' is no address", what, addr);
    ck_assert_msg(am_ep_create(addr, NULL, &other) == -EINVAL,
                  "%s: an address taken as a name", what);
    int rc = am_ep_map(ep, 0, sh->srv);
    ck_assert_msg(rc == 0, "%s: map the server: %s", what, am_strerror(rc));
    static const size_t lens[] = {0,        1,    3000, AM_MAX_BULK, AM_MAX_BULK + 1,
                                  LONG_LEN, 65536};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            rc = call(ep, (uint32_t)(round * 100 + i), lens[i], 10);
            ck_assert_msg(rc == 0, "%s: a call of %zu bytes: %s", what, lens[i],
                          am_strerror(rc));
        }
    /* The server maps the client by its address and sends it a request. */
    AO_store(&sh->pinged, 0);
    rc = am_request_bulk(ep, 0, H_TELL, addr, strlen(addr), NULL, 0);
    ck_assert_msg(rc == 0, "%s: tell: %s", what, am_strerror(rc));
    double end = tu_now_s() + 10;
    while ((!AO_load_acquire(&sh->pinged) || AO_load(&pings) == 0) && tu_now_s() < end)
        am_wait(ep, 10);
    ck_assert_msg(AO_load_acquire(&sh->pinged), "%s: the server never pinged", what);
    ck_assert_msg(sh->map_rc == 0 && sh->ping_rc == 0,
                  "%s: the server's map: %s, request: %s", what, am_strerror(sh->map_rc),
                  am_strerror(sh->ping_rc));
    ck_assert_msg(AO_load(&pings) == 1, "%s: %lu pings arrived", what,
                  (unsigned long)AO_load(&pings));
    ck_assert_msg(sh->long_rc == -EMSGSIZE, "%s: a long request to a client: %s", what,
                  am_strerror(sh->long_rc));
    ck_assert_msg(am_ep_destroy(ep) == 0, "%s: destroy", what);
    stop_server(srv);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* ---- killed_clients_leave_nothing ---- */

static int slot;  /* a doomed client's index in its wave */
static int armed; /* its hook is armed */

static void park_hook(enum am_hook where)
{
    if (!armed || (int)where != sh->hook[slot])
        return;
    armed = 0;
    AO_store_release(&sh->parked[slot], 1);
    for (;;)
        pause();
}

/* Arms the hook if it is one of `a` or `b`. */
static void arm_at(int a, int b)
{
    armed = sh->hook[slot] == a || sh->hook[slot] == b;
}

/* Creates, maps, and calls until killed: long, bulk and short calls, parked
 * at its hook if it has one (arming it only before the step it is in). */
static void doomed_client(void *arg)
{
    slot = (int)(intptr_t)arg;
    am__claim_stall_hook = park_hook;
    arm_at(AM_HOOK_ANON_MADE, AM_HOOK_CREATING);
    am_ep_t *ep = anon_client(sh->b, NULL);
    if (!ep)
        _exit(2);
    arm_at(AM_HOOK_REGISTERING, -1);
    if (am_ep_map(ep, 0, sh->srv) < 0)
        _exit(2);
    /* The first send parks: a parked live claim holds the server's queue up
     * (a live sender is waited for), so no parked client may wait for an
     * answer first. */
    arm_at(AM_HOOK_FILLING, AM_HOOK_LONG_STAGED);
    for (uint32_t i = 0;; i++)
        if (call(ep, i, i % 3 == 0 ? LONG_LEN : i % 3 == 1 ? 3000 : 0, 10) == 0)
            AO_fetch_and_add1(&sh->calls);
}

static const int hooks[] = {-1,
                            AM_HOOK_ANON_MADE,
                            AM_HOOK_CREATING,
                            AM_HOOK_REGISTERING,
                            AM_HOOK_FILLING,
                            AM_HOOK_LONG_STAGED};
#define NHOOKS ((int)(sizeof hooks / sizeof hooks[0]))

/* One wave: WAVE clients, the hooked ones parked first, all killed; their
 * pids appended to pids[*n]. */
static void wave(int w, pid_t *pids, int *n)
{
    pid_t p[WAVE];
    for (int k = 0; k < WAVE; k++) {
        sh->hook[k] = hooks[(w + k) % NHOOKS];
        AO_store(&sh->parked[k], 0);
        p[k] = tu_spawn(doomed_client, (void *)(intptr_t)k, k);
    }
    for (int k = 0; k < WAVE; k++)
        if (sh->hook[k] >= 0 && !tu_wait_flag(&sh->parked[k], 1, 10))
            ck_abort_msg("%s: wave %d: client %d did not park at hook %d (%s)", what, w, k,
                         sh->hook[k], tu_first_error(&sh->err, "no error"));
    usleep((useconds_t)(rand() % 4000));
    for (int k = 0; k < WAVE; k++) {
        kill(p[k], SIGKILL);
        waitpid(p[k], NULL, 0);
        pids[(*n)++] = p[k];
    }
}

START_TEST(killed_clients_leave_nothing)
{
    int b = _i;
    snprintf(what, sizeof what, "%s: %d clients killed, %d at a time", tu_backend_name(b),
             CLIENTS, WAVE);
    private_shm = own_dev_shm("64m");
    pid_t srv = start_server(b, AM_QUEUE_MPSC, SERVER_SENDERS);
    static pid_t pids[CLIENTS + CLIENTS / WAVE];
    int n = 0;
    srand((unsigned)getpid());
    for (int w = 0; w < CLIENTS / WAVE; w++) {
        wave(w, pids, &n);
        assert_good_client("a client after a wave");
    }
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: %lu calls answered before the kills\n", what,
               (unsigned long)AO_load(&sh->calls));
    assert_only_server();
    stop_server(srv);
    if (b == AM_SHM_SYSV) { /* the next anonymous System V endpoint sweeps */
        am_ep_t *next = anon_client(b, NULL);
        ck_assert_msg(next != NULL, "%s: the next client", what);
        am_ep_destroy(next);
    }
    assert_sysv_clean(pids, n);
    assert_dev_shm_clean(NULL);
}
END_TEST

/* ---- exec_and_exit_leave_nothing ---- */

/* Calls once, says where it lives, then execs sleep (exec = 1) or _exits. */
static void ending_client(int exec)
{
    am_ep_t *ep = anon_client(sh->b, NULL);
    if (!ep || am_ep_map(ep, 0, sh->srv) < 0 || call(ep, 7, LONG_LEN, 10) < 0)
        _exit(2);
    snprintf(sh->addr, sizeof sh->addr, "%s", am_ep_name(ep));
    AO_store_release(&sh->addr_set, 1);
    tu_wait_flag(&sh->go, 1, 30);
    if (exec)
        execl("/bin/sleep", "sleep", "30", (char *)NULL);
    _exit(exec ? 3 : 0);
}

/* Has process p exec'ed sleep? */
static int is_sleep(pid_t p)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)p);
    FILE *f = fopen(path, "r");
    if (f && !fgets(comm, sizeof comm, f))
        comm[0] = '\0';
    if (f)
        fclose(f);
    return strcmp(comm, "sleep\n") == 0;
}

/* Descriptors of p that are shmam's memfds; the last one's inode in *ino. */
static int memfds_of(pid_t p, ino_t *ino)
{
    char dir[64], path[64 + 256 + 2], link[128];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)p);
    DIR *d = opendir(dir);
    int n = 0;
    const struct dirent *e;
    struct stat st;
    while (d && (e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len > 0) {
            link[len] = '\0';
            if (strncmp(link, MEMFD_PATH, strlen(MEMFD_PATH)) == 0 &&
                stat(path, &st) == 0) {
                *ino = st.st_ino;
                n++;
            }
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* The inode of the segment anonymous client p made: its memfd's, or (System
 * V) its segment's id, which the kernel gives the segment's inode.  Fails the
 * test if p has not exactly one. */
static ino_t client_segment(pid_t p, int b)
{
    ino_t ino = 0;
    int id = -1, n = 0;
    struct shmid_ds ds;
    if (b == AM_SHM_SYSV && (n = sysv_made_by(&p, 1, 1, &id, &ds)) == 1)
        ino = (ino_t)id;
    else if (b == AM_SHM_POSIX)
        n = memfds_of(p, &ino);
    ck_assert_msg(n == 1, "%s: client %d made %d segments, not 1", what, (int)p, n);
    return ino;
}

/* Does p map a segment of backend b (a memfd of shmam's, or System V) whose
 * inode is ino? */
static int maps_segment(pid_t p, int b, ino_t ino)
{
    const char *kind = b == AM_SHM_SYSV ? SYSV_PATH : MEMFD_PATH;
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)p);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: open %s: %s", what, path, strerror(errno));
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long at;
        char name[256] = "";
        found = sscanf(line, "%*s %*s %*s %*s %llu %255s", &at, name) == 2 &&
                (ino_t)at == ino && strncmp(name, kind, strlen(kind)) == 0;
    }
    fclose(f);
    return found;
}

START_TEST(exec_and_exit_leave_nothing)
{
    int b = _i;
    snprintf(what, sizeof what, "%s: a client that execs, one that _exits",
             tu_backend_name(b));
    private_shm = own_dev_shm("64m");
    pid_t srv = start_server(b, AM_QUEUE_MPSC, 0), p[2];
    char addr[2][AM_ADDR_MAX];
    ino_t seg[2];
    for (int exec = 1; exec >= 0; exec--) { /* both served, both alive */
        AO_store(&sh->addr_set, 0);
        fflush(NULL);
        if ((p[exec] = fork()) == 0)
            ending_client(exec);
        tu_assert_flag(&sh->addr_set, 1, 10, "the client's call", what, &sh->err);
        snprintf(addr[exec], sizeof addr[exec], "%s", sh->addr);
        seg[exec] = client_segment(p[exec], b);
        ck_assert_msg(maps_segment(srv, b, seg[exec]),
                      "%s: the server does not map a client it served (test broken)", what);
    }
    AO_store_release(&sh->go, 1);
    int st = 0;
    double end = tu_now_s() + 10;
    while (!is_sleep(p[1]) && tu_now_s() < end)
        tu_sleep_ms(1);
    ck_assert_msg(is_sleep(p[1]), "%s: the client did not exec", what);
    waitpid(p[0], &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the client did not exit",
                  what);
    for (int exec = 0; exec < 2; exec++) {
        int alive = am_ep_probe(addr[exec]);
        ck_assert_msg(alive == 0 || alive == -ENOENT, "%s: after %s the probe says %s",
                      what, exec ? "exec" : "_exit",
                      alive == 1 ? "alive" : am_strerror(alive));
    }
    ino_t ino;
    ck_assert_msg(memfds_of(p[1], &ino) == 0, "%s: the exec'ed process holds a memfd",
                  what);
    /* Two departed, one newcomer: the server lets go of both, of the one
     * whose sender index the newcomer does not take too. */
    assert_good_client("the next client");
    for (int exec = 0; exec < 2; exec++)
        ck_assert_msg(!maps_segment(srv, b, seg[exec]),
                      "%s: the server still maps the client that %s", what,
                      exec ? "exec'ed" : "_exited");
    assert_sysv_clean(p, 2);
    kill(p[1], SIGKILL);
    waitpid(p[1], NULL, 0);
    assert_only_server();
    stop_server(srv);
    assert_dev_shm_clean(NULL);
}
END_TEST

/* ---- sysv_debris_swept ---- */

START_TEST(sysv_debris_swept)
{
    snprintf(what, sizeof what, "sysv: a client killed before its segment's mark");
    sh->b = AM_SHM_SYSV;
    sh->hook[0] = AM_HOOK_ANON_MADE;
    pid_t p = tu_spawn(doomed_client, (void *)(intptr_t)0, 0);
    tu_assert_flag(&sh->parked[0], 1, 10, "the client to park", what, &sh->err);
    int id = -1;
    struct shmid_ds made;
    ck_assert_msg(sysv_made_by(&p, 1, 0, &id, &made) == 1,
                  "%s: no segment while it is parked", what);
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    struct shmid_ds ds;
    ck_assert_msg(shmctl(id, IPC_STAT, &ds) == 0 && !(ds.shm_perm.mode & SHM_DEST),
                  "%s: the window did not leave debris (test broken)", what);
    /* Attached while the next client sweeps, as by a program reading every
     * segment just then (shmamstat, a leftover check): swept all the same. */
    const void *probe = shmat(id, NULL, SHM_RDONLY);
    ck_assert_msg(probe != (void *)-1, "%s: attach the debris: %s", what, strerror(errno));
    am_ep_t *next = anon_client(AM_SHM_SYSV, NULL);
    shmdt(probe);
    ck_assert_msg(next != NULL, "%s: the next client", what);
    assert_sysv_clean(&p, 1);
    am_ep_destroy(next);
}
END_TEST

/* ---- forged_addresses ---- */

/* The address `a` with its last hex digit changed. */
static void other_nonce(char *out, size_t n, const char *a)
{
    snprintf(out, n, "%s", a);
    char *last = out + strlen(out) - 1;
    *last = *last == '0' ? '1' : '0';
}

/* The nonce of address a: what follows its last '.'. */
static const char *nonce_of(const char *a)
{
    return strrchr(a, '.') + 1;
}

static void map_refused(am_ep_t *ep, const char *addr, int want, const char *why)
{
    int rc = am_ep_map(ep, 1, addr);
    ck_assert_msg(rc == want, "%s: %s (%s): map gave %s, want %s", what, why, addr,
                  am_strerror(rc), am_err_name(want));
}

/* The refusals a process of the same user sees. */
static void forged_same_user(int b)
{
    am_ep_t *me = anon_client(b, NULL), *x = anon_client(b, NULL),
            *y = anon_client(b, NULL);
    ck_assert_msg(me && x && y, "%s: create", what);
    char forged[AM_ADDR_MAX * 2], xa[AM_ADDR_MAX];
    snprintf(xa, sizeof xa, "%s", am_ep_name(x));
    ck_assert_msg(am_ep_map(me, 0, am_ep_name(y)) == 0, "%s: a true address refused", what);
    ck_assert_msg(am_ep_probe(xa) == 1, "%s: probe of a true address", what);
    other_nonce(forged, sizeof forged, xa);
    map_refused(me, forged, -ENOENT, "a wrong nonce");
    ck_assert_msg(am_ep_probe(forged) == -ENOENT, "%s: probe of a wrong nonce", what);
    int pid, fd, id;
    if (b == AM_SHM_POSIX) {
        ck_assert(sscanf(am_ep_name(y), "@p%d.f%d.", &pid, &fd) == 2);
        snprintf(forged, sizeof forged, "@p%d.f%d.%s", pid, fd, nonce_of(xa));
        map_refused(me, forged, -ENOENT, "another endpoint's fd");
        int file = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        snprintf(forged, sizeof forged, "@p%d.f%d.%s", pid, file, nonce_of(xa));
        map_refused(me, forged, -ENOENT, "a file's fd");
        close(file);
        pid_t gone = fork();
        if (gone == 0)
            _exit(0);
        waitpid(gone, NULL, 0);
        snprintf(forged, sizeof forged, "@p%d.f%d.%s", (int)gone, fd, nonce_of(xa));
        map_refused(me, forged, -ENOENT, "a process gone");
    } else {
        ck_assert(sscanf(am_ep_name(y), "@s%d.", &id) == 1);
        snprintf(forged, sizeof forged, "@s%d.%s", id, nonce_of(xa));
        map_refused(me, forged, -ENOENT, "another endpoint's id");
        key_t key = (key_t)(0x5e000000 | (getpid() & 0xffffff));
        int keyed = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0600);
        if (keyed >= 0) {
            snprintf(forged, sizeof forged, "@s%d.%s", keyed, nonce_of(xa));
            map_refused(me, forged, -ENOENT, "a keyed segment's id");
            shmctl(keyed, IPC_RMID, NULL);
        }
    }
    /* A later endpoint at the same fd (POSIX: the lowest free) or id. */
    am_ep_destroy(x);
    am_ep_t *z = anon_client(b, NULL);
    ck_assert_msg(z != NULL, "%s: create again", what);
    map_refused(me, xa, -ENOENT, "an endpoint gone (its fd now another's)");
    static const char *bad[] = {"@",
                                "@p1.f2",
                                "@s1",
                                "@s12.xyz",
                                "@p01.f2.0000000000000000",
                                "@s1.0000000000000000x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        map_refused(me, bad[i], -EINVAL, "malformed");
    am_ep_destroy(z);
    am_ep_destroy(y);
    am_ep_destroy(me);
}

/* As uid NOBODY: an anonymous endpoint whose address goes into sh->addr; it
 * lives until sh->stop. */
static void nobody_owner(void *arg)
{
    if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
        _exit(3);
    prctl(PR_SET_DUMPABLE, 1); /* a changed uid made it undumpable: not the point */
    am_ep_t *ep = anon_client(sh->b, NULL);
    if (!ep)
        _exit(2);
    snprintf(sh->addr, sizeof sh->addr, "%s", am_ep_name(ep));
    AO_store_release(&sh->addr_set, 1);
    double end = tu_now_s() + 30; /* no death signal after a change of uid */
    while (!AO_load_acquire(&sh->stop) && tu_now_s() < end)
        am_wait(ep, 10);
    am_ep_destroy(ep);
}

/* As uid VICTIM: map and probe NOBODY's endpoint; exit 0 if both are -EACCES. */
static void victim_mapper(void *arg)
{
    if (setgid(VICTIM) != 0 || setuid(VICTIM) != 0)
        _exit(3);
    am_ep_t *ep = anon_client(sh->b, NULL);
    int rc = ep ? am_ep_map(ep, 0, sh->addr) : -ENOMEM, probe = am_ep_probe(sh->addr);
    if (rc != -EACCES || probe != -EACCES)
        tu_error(&sh->err, "another user's address: map %s, probe %s", am_strerror(rc),
                 am_strerror(probe));
    _exit(rc == -EACCES && probe == -EACCES ? 0 : 2);
}

static void forged_other_user(int b)
{
    if (geteuid() != 0) {
        printf("%s: another user: skipped: needs root to act as two users\n", what);
        return;
    }
    sh->b = b;
    pid_t owner = fork(); /* not tu_spawn: a change of uid clears the death signal */
    if (owner == 0) {
        nobody_owner(NULL);
        _exit(0);
    }
    tu_assert_flag(&sh->addr_set, 1, 10, "nobody's endpoint", what, &sh->err);
    pid_t v = fork();
    if (v == 0)
        victim_mapper(NULL);
    int st;
    waitpid(v, &st, 0);
    am_ep_t *me = anon_client(b, NULL); /* root, too: not our uid */
    int rc = me ? am_ep_map(me, 0, sh->addr) : -ENOMEM;
    if (me)
        am_ep_destroy(me);
    AO_store_release(&sh->stop, 1);
    tu_assert_exit0(tu_reap(owner, 10), "nobody's owner", what, &sh->err);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", what,
                  tu_first_error(&sh->err, "the other user's map was not -EACCES"));
    ck_assert_msg(rc == -EACCES, "%s: root's map of nobody's address: %s", what,
                  am_strerror(rc));
}

START_TEST(forged_addresses)
{
    int b = _i;
    snprintf(what, sizeof what, "%s: forged addresses", tu_backend_name(b));
    forged_same_user(b);
    forged_other_user(b);
    tu_assert_no_errors(what, &sh->err);
}
END_TEST

/* ---- anon_segment_size ---- */

/* Bytes of memory the anonymous endpoint ep's segment takes. */
static size_t anon_bytes(const am_ep_t *ep)
{
    int pid, fd, id;
    const char *a = am_ep_name(ep);
    struct stat st;
    struct shmid_ds ds;
    if (sscanf(a, "@p%d.f%d.", &pid, &fd) == 2 && fstat(fd, &st) == 0)
        return (size_t)st.st_blocks * 512 > (size_t)st.st_size ? (size_t)st.st_blocks * 512
                                                               : (size_t)st.st_size;
    if (sscanf(a, "@s%d.", &id) == 1 && shmctl(id, IPC_STAT, &ds) == 0)
        return ds.shm_segsz;
    return SIZE_MAX;
}

START_TEST(anon_segment_size)
{
    int b = _i;
    snprintf(what, sizeof what, "%s: an anonymous endpoint's size", tu_backend_name(b));
    am_ep_t *ep = anon_client(b, NULL);
    ck_assert_msg(ep != NULL, "%s: create", what);
    size_t bytes = anon_bytes(ep);
    ck_assert_msg(bytes <= ANON_BUDGET, "%s: %zu bytes, over %u", what, bytes, ANON_BUDGET);
    ck_assert_msg(am_ep_long_max(ep) == 64u << 10, "%s: long_max %zu", what,
                  am_ep_long_max(ep));
    void *base;
    ck_assert_msg(am_region_create(ep, 4096, &base) == -EINVAL, "%s: a region", what);
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "named", -1, b);
    am_ep_t *named = NULL;
    struct am_ep_opts o = {.shm = tu_backend_name(b)};
    ck_assert_msg(am_ep_create(name, &o, &named) == 0, "%s: a named one", what);
    if (getenv("SHMAM_VERBOSE"))
        printf("%s: anonymous %zu bytes, named (defaults) %zu bytes\n", what, bytes,
               named->own.seg.size);
    am_ep_destroy(named);
    am_ep_destroy(ep);
    /* Every option applies to it. */
    struct am_ep_opts big = {
        .shm = tu_backend_name(b), .packets = 256, .long_max = 1 << 20};
    ck_assert_msg(am_ep_create(NULL, &big, &ep) == 0, "%s: with options", what);
    ck_assert_msg(am_ep_long_max(ep) == 1u << 20 && ep->own.q[AM_REPLY].packets_n == 256,
                  "%s: options ignored", what);
    ck_assert_msg(anon_bytes(ep) > 2 * ANON_BUDGET, "%s: a 1 MiB long_max took %zu bytes",
                  what, anon_bytes(ep));
    am_ep_destroy(ep);
    tu_assert_clean(what);
}
END_TEST

/* ---- full_table_vs_full_shm ---- */

START_TEST(full_table_vs_full_shm)
{
    snprintf(what, sizeof what, "posix: a full table, a full /dev/shm");
    if (!(private_shm = own_dev_shm("1536k"))) {
        printf("%s: skipped: no private mount namespace here\n", what);
        return;
    }
    char name[AM_NAME_MAX];
    tu_ep_name(name, sizeof name, "one", -1, 0);
    struct am_ep_opts one = {.shm = "posix", .max_senders = 1, .long_max = 4096};
    am_ep_t *srv = NULL, *a = anon_client(AM_SHM_POSIX, NULL),
            *c = anon_client(AM_SHM_POSIX, NULL), *big = NULL;
    int rc = am_ep_create(name, &one, &srv);
    ck_assert_msg(rc == 0 && a && c, "%s: create: %s", what, am_strerror(rc));
    ck_assert_msg(am_ep_map(a, 0, name) == 0, "%s: the first client", what);
    rc = am_ep_map(c, 0, name);
    ck_assert_msg(rc == -EUSERS, "%s: a second client in a table of one: %s", what,
                  am_strerror(rc));
    ck_assert_str_eq(am_err_name(rc), "EUSERS");
    char bigname[AM_NAME_MAX];
    tu_ep_name(bigname, sizeof bigname, "big", -1, 0);
    struct am_ep_opts o = {.shm = "posix"};
    rc = am_ep_create(bigname, &o, &big);
    ck_assert_msg(rc == -ENOSPC, "%s: 5 MB in 1.5 MB of /dev/shm: %s", what,
                  am_strerror(rc));
    am_ep_t *more[4];
    for (int i = 0; i < 4; i++) {
        more[i] = anon_client(AM_SHM_POSIX, NULL);
        ck_assert_msg(more[i] != NULL, "%s: an anonymous client, /dev/shm full", what);
    }
    for (int i = 0; i < 4; i++)
        am_ep_destroy(more[i]);
    am_ep_destroy(a);
    am_ep_destroy(c);
    am_ep_destroy(srv);
    assert_dev_shm_clean(NULL);
}
END_TEST

static Suite *client_suite(void)
{
    Suite *s = suite_create("client");
    TCase *tc = tu_tcase(s, "calls", 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, round_trips, 0, 4);
    tcase_add_loop_test(tc, anon_segment_size, 0, 2);
    tcase_add_test(tc, full_table_vs_full_shm);
    tc = tu_tcase(s, "leave nothing", 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, killed_clients_leave_nothing, 0, 2);
    tcase_add_loop_test(tc, exec_and_exit_leave_nothing, 0, 2);
    tcase_add_test(tc, sysv_debris_swept);
    tc = tu_tcase(s, "addresses", 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, forged_addresses, 0, 2);
    return s;
}

int main(void)
{
    tu_run_init("cl");
    return tu_run_suite(client_suite(), "check_client");
}
