/*
 * check_rendezvous.c - services for other users through a Unix socket
 * (am_ep_listen, am_ep_connect, am_token_cred): real processes of real
 * unprivileged uids (a server as NOBODY, callers as CALLER and OTHER), none
 * dumpable, so nothing of it may go through /proc or /dev/shm.
 *
 *   other_user_calls   a caller of an allowed uid connects to an abstract
 *                      socket and calls; every reply is its own, and the
 *                      handler's am_token_cred is the caller's uid, gid, pid
 *   refused_no_fd      a caller of a uid not allowed is -EACCES at connect,
 *                      and no descriptor reaches it (its descriptor table
 *                      is the same before and after)
 *   env_lists          SHMAM_LISTEN and SHMAM_ALLOW_UIDS (a name and a
 *                      number) for a listener given neither where nor opts
 *   cred_not_forged    a caller that writes a false pid into every pid field
 *                      of the memory it maps still shows its own pid
 *   cred_same_user     a same-user peer that mapped the server by name:
 *                      -ENODATA; a same-user caller through a path socket:
 *                      its own pid
 *   sleeping_server    a server asleep in am_wait(ep, -1) is woken by a
 *                      caller's connect and by each of its calls
 *   fd_server          the same with a server asleep in poll(2) on am_ep_fd
 *   stat_lists_socket  shmamstat lists a listener's socket and its caller
 *   bench_runs         bench/rdvbench runs and prints its rows
 *   hostile_caller     a caller of another uid writing random bytes into
 *                      everything it maps changes no reply of another
 *                      caller, and stalls nor crashes the server
 *   namespaces         a caller in its own mount, IPC and PID namespaces
 *                      (unshare -m -i -p -f, as syscalls) calls through the
 *                      socket
 *   caller_killed      a caller SIGKILLed: its door ends (a listener that
 *                      takes one caller takes the next)
 *   server_killed      a server SIGKILLed: its caller's call is -EPIPE,
 *                      and a new connect at the index reaches the server
 *                      restarted; nothing is left (no socket, no segment); a new
 *                      server at a stale path socket replaces it, and a
 *                      destroyed one removes it
 *   random_kills       callers that connect, call and leave SIGKILLed at
 *                      random points cost a listener of two callers
 *                      nothing (both rooms come back); servers SIGKILLed
 *                      at random points end every call of their caller
 *                      with its reply or -EPIPE, and leave no socket
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "shmam.h"
#include "testutil.h"

enum { H_WHO = 1 };
enum { NOBODY = 65534, CALLER = 65533, OTHER = 65532, STRANGER = 65531 };

#define CALLS 200
#define CALL_MS 20000 /* a call that takes this long has stalled */

struct shared {
    char where[108];
    AO_t up, stop, done, killed;
    AO_t served;       /* calls the server answered */
    AO_t scribbled;    /* hostile callers done */
    AO_t again;        /* server_killed: a new server listens */
    unsigned hostiles; /* good callers call until they are done */
    unsigned max;      /* the listener's max_callers */
    int allow_all;     /* allow OTHER and STRANGER too */
    int named;         /* the server's endpoint is named (tu_ep_name) */
    int wait_ms;       /* the server's am_wait; 0: 50 */
    int fd_mode;       /* the server waits in poll(2) on am_ep_fd, for ever */
    int from_env;      /* the server's where and lists from the environment */
    char name[64];
    struct tu_errors err;
};
static struct shared *sh;

static const char *what = "rendezvous";

static void setup(void)
{
    tu_test_init();
    sh = tu_shared_alloc(sizeof *sh);
    char p[64];
    tu_test_prefix(p, sizeof p);
    snprintf(sh->where, sizeof sh->where, "@shmam-test-%srdv", p);
}

static void teardown(void)
{
    tu_shared_free(sh, sizeof *sh);
}

/* Become uid (and its gid, no other groups), dying with the test. */
static void become(uid_t uid)
{
    if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0)
        _exit(3);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a change of uid cleared it */
}

/* Fork a helper that runs fn as uid (0: as we are). */
static pid_t as_user(uid_t uid, void (*fn)(void))
{
    pid_t p = fork();
    if (p == 0) {
        if (uid)
            become(uid);
        fn();
        _exit(0);
    }
    return p;
}

static am_ep_t *caller(int *rc_out);

/* caller(), or the error recorded and _exit(2). */
static am_ep_t *connected(const char *who)
{
    int rc = -1;
    am_ep_t *ep = caller(&rc);
    if (!ep) {
        tu_error(&sh->err, "%s: connect: %s", who, am_strerror(rc));
        _exit(2);
    }
    return ep;
}

static int need_root(void)
{
    if (geteuid() == 0)
        return 1;
    printf("%s: skipped: needs root to act as several users\n", what);
    return 0;
}

/* The server's handler: its args back, and what am_token_cred says. */
static void h_who(am_token_t *tok, const uint32_t *a, int n, void *d, size_t len)
{
    struct am_cred c = {0, 0, 0};
    int rc = am_token_cred(tok, &c);
    uint32_t sum = 0;
    for (size_t i = 0; i < len; i++)
        sum = sum * 31 + ((const unsigned char *)d)[i];
    uint32_t r[8] = {n > 0 ? a[0] : 0, n > 1 ? a[1] : 0, (uint32_t)rc, c.uid, c.gid,
                     (uint32_t)c.pid,  (uint32_t)len,    sum};
    am_reply(tok, 0, r, 8);
    AO_fetch_and_add1(&sh->served);
}

/* The server: listens at sh->where until sh->stop. */
static void server(void)
{
    am_ep_t *ep;
    uid_t uids[] = {CALLER, OTHER, STRANGER};
    struct am_listen_opts lo = {
        .allow_uids = uids, .n_uids = sh->allow_all ? 3 : 1, .max_callers = sh->max};
    int rc = am_ep_create(sh->named ? sh->name : NULL, NULL, &ep);
    if (rc == 0)
        rc = am_set_handler(ep, H_WHO, h_who);
    if (sh->from_env) {
        char uids_s[32];
        snprintf(uids_s, sizeof uids_s, "nobody,%d", CALLER); /* a name, a number */
        setenv("SHMAM_ALLOW_UIDS", uids_s, 1);
        setenv("SHMAM_LISTEN", sh->where, 1);
    }
    if (rc == 0)
        rc = sh->from_env ? am_ep_listen(ep, NULL, NULL) : am_ep_listen(ep, sh->where, &lo);
    if (rc < 0) {
        tu_error(&sh->err, "server: %s", am_strerror(rc));
        _exit(2);
    }
    int fd = sh->fd_mode ? am_ep_fd(ep) : 0;
    if (fd < 0) {
        tu_error(&sh->err, "server: am_ep_fd: %s", am_strerror(fd));
        _exit(2);
    }
    AO_store_release(&sh->up, 1);
    double end = tu_now_s() + 120;
    while (!AO_load_acquire(&sh->stop) && tu_now_s() < end) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (!sh->fd_mode)
            am_wait(ep, sh->wait_ms ? sh->wait_ms : 50); /* -1: ended by SIGUSR1 */
        else if (poll(&pf, 1, -1) >= 0)
            while (am_poll(ep) > 0)
                ;
    }
    rc = am_ep_destroy(ep);
    if (rc < 0)
        tu_error(&sh->err, "server: destroy: %s", am_strerror(rc));
}

static void on_usr1(int sig)
{
}

static pid_t start_server(uid_t uid)
{
    struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: -EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    pid_t p = as_user(uid, server);
    tu_assert_flag(&sh->up, 1, 30, "the server", what, &sh->err);
    return p;
}

static void stop_server(pid_t p);

/* A server as NOBODY, one helper fn as uid, its exit 0 within secs. */
static void serve_one(uid_t uid, void (*fn)(void), const char *role, int secs)
{
    if (!need_root())
        return;
    pid_t s = start_server(NOBODY);
    pid_t c = as_user(uid, fn);
    tu_assert_exit0(tu_reap(c, secs), role, what, &sh->err);
    stop_server(s);
    tu_assert_no_errors(what, &sh->err);
}

static void stop_server(pid_t p)
{
    AO_store_release(&sh->stop, 1);
    /* A signal may land before the server's next wait begins: again and
     * again, until it has gone. */
    int st = -1;
    for (double end = tu_now_s() + 60; sh->wait_ms < 0 && tu_now_s() < end; usleep(50000))
        if (kill(p, SIGUSR1) != 0 || waitpid(p, &st, WNOHANG) == p)
            break;
    tu_assert_exit0(st != -1 ? st : tu_reap(p, 60), "server", what, &sh->err);
}

/* A caller's endpoint connected at index 0, or NULL (the error recorded). */
static am_ep_t *caller(int *rc_out)
{
    am_ep_t *ep;
    int rc = am_ep_create(NULL, NULL, &ep);
    if (rc < 0) {
        tu_error(&sh->err, "caller: create: %s", am_strerror(rc));
        return NULL;
    }
    double end = tu_now_s() + 30; /* -EUSERS: a departed caller's room comes
                                   * back once the server has seen it go */
    while ((rc = am_ep_connect(ep, sh->where, 0)) == -EUSERS && tu_now_s() < end)
        usleep(10000);
    if (rc_out)
        *rc_out = rc;
    if (rc < 0) {
        am_ep_destroy(ep);
        return NULL;
    }
    return ep;
}

/* n calls, each checked to be answered with its own arguments and the
 * kernel's word on us; 0 or the first error. */
/* Every fourth call carries a long request (LONG_DATA bytes, more than a bulk
 * block), which must fit as it does to a named endpoint. */
#define LONG_DATA (3 * AM_MAX_BULK)
static int calls(am_ep_t *ep, int n, uint32_t tag)
{
    static unsigned char data[LONG_DATA];
    for (int i = 0; i < n; i++) {
        uint32_t a[2] = {tag, (uint32_t)i}, sum = 0;
        size_t len = i % 4 == 0 ? LONG_DATA : 0;
        for (size_t k = 0; k < len; k++)
            data[k] = (unsigned char)(k * 7 + i + tag), sum = sum * 31 + data[k];
        struct am_result res = {0};
        int rc = am_call(ep, 0, H_WHO, a, 2, data, len, &res, CALL_MS);
        if (rc < 0)
            return rc;
        if (res.nargs != 8 || res.args[6] != len || res.args[7] != sum) {
            tu_error(&sh->err, "call %d of %u: %zu bytes sent, %u with sum %u came", i, tag,
                     len, res.args[6], res.args[7]);
            return -EPROTO;
        }
        if (res.args[0] != tag || res.args[1] != (uint32_t)i) {
            tu_error(&sh->err, "call %d of %u: the reply of another call (%u %u)", i, tag,
                     res.args[0], res.args[1]);
            return -EPROTO;
        }
        if (res.args[2] != 0 || res.args[3] != getuid() || res.args[4] != getgid() ||
            res.args[5] != (uint32_t)getpid()) {
            tu_error(&sh->err, "cred: rc %d uid %u gid %u pid %u, not %u %u %u",
                     (int)res.args[2], res.args[3], res.args[4], res.args[5], getuid(),
                     getgid(), getpid());
            return -EPROTO;
        }
    }
    return 0;
}

static void good_caller(void)
{
    int rc = 0;
    am_ep_t *ep = connected("caller");
    rc = calls(ep, CALLS * tu_stress_factor(), getuid());
    for (double end = tu_now_s() + 60; rc == 0 && sh->hostiles &&
                                       AO_load_acquire(&sh->scribbled) < sh->hostiles &&
                                       tu_now_s() < end;)
        rc = calls(ep, 10, getuid()); /* as long as the hostile ones scribble */
    if (rc < 0)
        tu_error(&sh->err, "caller %u: call: %s", getuid(), am_strerror(rc));
    am_ep_destroy(ep);
    AO_fetch_and_add1(&sh->done);
    _exit(rc < 0 ? 2 : 0);
}

START_TEST(other_user_calls)
{
    serve_one(CALLER, good_caller, "caller", 120);
}
END_TEST

/* Calls apart, each finding the server asleep. */
static void slow_caller(void)
{
    int rc = 0;
    am_ep_t *ep = connected("slow caller");
    for (int i = 0; i < 10 && rc == 0; i++) {
        usleep(20000);
        rc = calls(ep, 1, 11);
    }
    if (rc < 0)
        tu_error(&sh->err, "slow caller: call: %s", am_strerror(rc));
    am_ep_destroy(ep);
    _exit(rc < 0 ? 2 : 0);
}

START_TEST(sleeping_server)
{
    sh->wait_ms = -1;
    serve_one(CALLER, slow_caller, "slow caller", 120);
}
END_TEST

START_TEST(fd_server)
{
    sh->wait_ms = -1;
    sh->fd_mode = 1;
    serve_one(CALLER, slow_caller, "slow caller", 120);
}
END_TEST

/* How many descriptors this process has open. */
static int fds_open(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own */
}

static void refused_caller(void)
{
    am_ep_t *ep;
    if (am_ep_create(NULL, NULL, &ep) < 0)
        _exit(4);
    int before = fds_open();
    int rc = am_ep_connect(ep, sh->where, 0);
    int after = fds_open();
    if (rc != -EACCES || before != after)
        tu_error(&sh->err, "a stranger's connect: %s, descriptors %d then %d",
                 am_strerror(rc), before, after);
    am_ep_destroy(ep);
    _exit(rc == -EACCES && before == after ? 0 : 2);
}

START_TEST(refused_no_fd)
{
    serve_one(STRANGER, refused_caller, "stranger", 60);
}
END_TEST

START_TEST(env_lists)
{
    if (!need_root())
        return;
    sh->from_env = 1;
    pid_t s = start_server(NOBODY);
    pid_t c = as_user(CALLER, good_caller);
    tu_assert_exit0(tu_reap(c, 120), "caller", what, &sh->err);
    c = as_user(STRANGER, refused_caller);
    tu_assert_exit0(tu_reap(c, 60), "stranger", what, &sh->err);
    stop_server(s);
    tu_assert_no_errors(what, &sh->err);
}
END_TEST

/* fn(p, size, arg) for every memfd this process holds, mapped read-write
 * whole (its own segment, its doors). */
static void each_memfd(void (*fn)(unsigned char *p, size_t size, void *arg), void *arg)
{
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0 || (link[n] = 0, strncmp(link, "/memfd:", 7) != 0))
            continue;
        int fd = atoi(e->d_name);
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_size < 2 * 4096)
            continue;
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            continue;
        fn(p, (size_t)st.st_size, arg);
        munmap(p, (size_t)st.st_size);
    }
    if (d)
        closedir(d);
}

/* Its header's owner_pid and its first sender entry's pid: *arg. */
static void forge_one(unsigned char *p, size_t size, void *arg)
{
    uint32_t pid = *(uint32_t *)arg;
    ((struct am_seg_header *)p)->owner_pid = pid;
    ((struct am_sender *)(p + 4096))->pid = pid;
}

/* Write pid into every pid field of every memfd this process holds: its
 * own segment's header, the door's sender entry. */
static void forge_pids(uint32_t pid)
{
    each_memfd(forge_one, &pid);
}

static void forging_caller(void)
{
    int rc = 0;
    am_ep_t *ep = connected("forger");
    forge_pids(1);
    rc = calls(ep, 20, 7);
    forge_pids((uint32_t)getppid());
    if (rc == 0)
        rc = calls(ep, 20, 8);
    if (rc < 0)
        tu_error(&sh->err, "forger: %s", am_strerror(rc));
    am_ep_destroy(ep);
    _exit(rc < 0 ? 2 : 0);
}

START_TEST(cred_not_forged)
{
    serve_one(CALLER, forging_caller, "forger", 120);
}
END_TEST

static void same_user_mapper(void)
{
    am_ep_t *ep;
    int rc = am_ep_create(NULL, NULL, &ep);
    if (rc == 0)
        rc = am_ep_map(ep, 0, sh->name);
    uint32_t a[2] = {5, 0};
    struct am_result res = {0};
    if (rc == 0)
        rc = am_call(ep, 0, H_WHO, a, 2, NULL, 0, &res, CALL_MS);
    if (rc < 0 || res.nargs != 8 || (int)res.args[2] != -ENODATA)
        tu_error(&sh->err, "same user by name: %s, cred %d", am_strerror(rc),
                 (int)res.args[2]);
    am_ep_destroy(ep);
}

START_TEST(cred_same_user)
{
    char dir[] = "/tmp/shmam-rdv-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sh->where, sizeof sh->where, "%s/srv.sock", dir);
    tu_ep_name(sh->name, sizeof sh->name, "srv", -1, 0);
    sh->named = 1;
    pid_t s = start_server(0);
    pid_t m = as_user(0, same_user_mapper);
    tu_assert_exit0(tu_reap(m, 60), "mapper", what, &sh->err);
    pid_t c = as_user(0, good_caller);
    tu_assert_exit0(tu_reap(c, 120), "caller", what, &sh->err);
    stop_server(s);
    struct stat st;
    ck_assert_msg(lstat(sh->where, &st) != 0, "%s: the socket outlived its server", what);
    rmdir(dir);
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* 4096 random bytes at random places of p (the xorshift state: *arg). */
static void scribble_one(unsigned char *p, size_t size, void *arg)
{
    uint64_t *x = arg;
    for (int k = 0; k < 4096; k++) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        p[*x % size] = (unsigned char)(*x >> 32);
    }
}

/* Random bytes into every memfd this process holds, for secs. */
static void scribble(double secs)
{
    uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
    for (double end = tu_now_s() + secs; tu_now_s() < end;)
        each_memfd(scribble_one, &x);
}

static void hostile(void)
{
    am_ep_t *ep = connected("hostile");
    AO_fetch_and_add1(&sh->up);
    for (int round = 0; round < 6; round++) {
        scribble(0.5);
        uint32_t a[2] = {99, 0};
        struct am_result res = {0};
        am_call(ep, 0, H_WHO, a, 2, NULL, 0, &res, 200); /* whatever it gets */
        am_poll(ep);
    }
    AO_fetch_and_add1(&sh->scribbled);
    _exit(0); /* no destroy: the mess is left to the kernel */
}

/* A caller that passes an unsealed copy of its segment (dup2'd over its
 * own descriptor) and would shrink it under the server's mapping: the
 * server refuses it (-EPROTO), or, if it took it, a reply would fault. */
static void unsealed(void)
{
    am_ep_t *ep;
    if (am_ep_create(NULL, NULL, &ep) < 0)
        _exit(4);
    int own = -1, copy = memfd_create("shmam", MFD_CLOEXEC);
    sscanf(am_ep_name(ep), "@p%*d.f%d.", &own);
    struct stat st;
    if (own < 0 || copy < 0 || fstat(own, &st) != 0 || ftruncate(copy, st.st_size) != 0)
        _exit(5);
    void *src = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, own, 0);
    void *dst = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, copy, 0);
    if (src == MAP_FAILED || dst == MAP_FAILED)
        _exit(6);
    memcpy(dst, src, (size_t)st.st_size);
    dup2(copy, own);
    int rc = am_ep_connect(ep, sh->where, 0);
    AO_fetch_and_add1(&sh->up);
    if (rc == 0) {
        uint32_t a[2] = {98, 0};
        struct am_result res = {0};
        am_call(ep, 0, H_WHO, a, 2, NULL, 0, &res, 200); /* the server maps it */
        if (ftruncate(copy, 0) != 0)
            _exit(7);
        for (int i = 0; i < 20; i++)
            am_call(ep, 0, H_WHO, a, 2, NULL, 0, &res, 200);
    } else if (rc != -EPROTO)
        tu_error(&sh->err, "an unsealed segment's connect: %s", am_strerror(rc));
    AO_fetch_and_add1(&sh->scribbled);
    _exit(0);
}

START_TEST(hostile_caller)
{
    if (!need_root())
        return;
    sh->allow_all = 1;
    sh->hostiles = 3;
    pid_t s = start_server(NOBODY);
    pid_t h[3] = {as_user(OTHER, hostile), as_user(STRANGER, hostile),
                  as_user(STRANGER, unsealed)};
    tu_assert_flag(&sh->up, 4, 30, "the hostile callers' connects", what, &sh->err);
    pid_t c = as_user(CALLER, good_caller);
    tu_assert_exit0(tu_reap(c, 180), "caller", what, &sh->err);
    for (int i = 0; i < 3; i++)
        tu_assert_exit0(tu_reap(h[i], 60), "hostile", what, &sh->err);
    /* The server still serves a newcomer, and was never killed. */
    c = as_user(CALLER, good_caller);
    tu_assert_exit0(tu_reap(c, 180), "caller after", what, &sh->err);
    stop_server(s);
    tu_assert_no_errors(what, &sh->err);
}
END_TEST

/* In new mount, IPC and PID namespaces: the caller is pid 1 of its own. */
static void contained_caller(void)
{
    if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID) != 0) {
        tu_error(&sh->err, "unshare: %s", strerror(errno));
        _exit(2);
    }
    pid_t p = fork();
    if (p == 0) {
        become(CALLER);
        int rc = 0;
        am_ep_t *ep = connected("contained caller");
        for (int i = 0; i < 20; i++) {
            uint32_t a[2] = {3, (uint32_t)i};
            struct am_result res = {0};
            rc = am_call(ep, 0, H_WHO, a, 2, NULL, 0, &res, CALL_MS);
            if (rc < 0 || res.args[1] != (uint32_t)i || res.args[3] != CALLER ||
                res.args[5] == 1) { /* the server sees our pid in its namespace */
                tu_error(&sh->err, "contained call: %s, pid %u", am_strerror(rc),
                         res.args[5]);
                _exit(2);
            }
        }
        am_ep_destroy(ep);
        _exit(0);
    }
    int st;
    _exit(p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) ? WEXITSTATUS(st) : 5);
}

START_TEST(namespaces)
{
    serve_one(0, contained_caller, "contained caller", 120);
}
END_TEST

static void doomed_caller(void)
{
    int rc = 0;
    am_ep_t *ep = connected("doomed");
    rc = calls(ep, 5, 1);
    if (rc < 0)
        tu_error(&sh->err, "doomed: %s", am_strerror(rc));
    AO_store_release(&sh->killed, 1);
    for (;;)
        pause();
}

START_TEST(caller_killed)
{
    if (!need_root())
        return;
    sh->max = 1;
    pid_t s = start_server(NOBODY);
    pid_t d = as_user(CALLER, doomed_caller);
    tu_assert_flag(&sh->killed, 1, 60, "the doomed caller's calls", what, &sh->err);
    kill(d, SIGKILL);
    tu_reap(d, 30);
    pid_t c = as_user(CALLER, good_caller); /* the one door: free again */
    tu_assert_exit0(tu_reap(c, 120), "caller after a killed one", what, &sh->err);
    stop_server(s);
    tu_assert_no_errors(what, &sh->err);
}
END_TEST

/* Is the abstract socket sh->where listed by the kernel? */
static int abstract_listed(void)
{
    FILE *f = fopen("/proc/net/unix", "r");
    char line[512];
    int found = 0;
    size_t n = strlen(sh->where);
    while (f && fgets(line, sizeof line, f)) {
        char *at = strstr(line, sh->where);
        found |= at && (at[n] == '\n' || at[n] == ' ' || at[n] == '\0');
    }
    if (f)
        fclose(f);
    return found;
}

static void orphaned_caller(void)
{
    int rc = 0;
    am_ep_t *ep = connected("orphan");
    rc = calls(ep, 5, 2);
    AO_store_release(&sh->killed, 1);
    tu_wait_flag(&sh->done, 1, 60); /* the server's death */
    uint32_t a[2] = {2, 9};
    struct am_result res = {0};
    rc = am_call(ep, 0, H_WHO, a, 2, NULL, 0, &res, CALL_MS);
    if (rc != -EPIPE)
        tu_error(&sh->err, "a call to a killed server: %s", am_strerror(rc));
    tu_wait_flag(&sh->again, 1, 60); /* a restarted server: a new connect */
    int rc2 = am_ep_connect(ep, sh->where, 0);
    if (rc2 == 0)
        rc2 = calls(ep, 5, 3);
    if (rc2 < 0)
        tu_error(&sh->err, "a restarted server, connected again: %s", am_strerror(rc2));
    am_ep_destroy(ep);
    _exit(rc == -EPIPE && rc2 == 0 ? 0 : 2);
}

START_TEST(server_killed)
{
    if (!need_root())
        return;
    pid_t s = start_server(NOBODY);
    ck_assert_msg(abstract_listed(), "%s: %s not listed", what, sh->where);
    pid_t c = as_user(CALLER, orphaned_caller);
    tu_assert_flag(&sh->killed, 1, 60, "the caller's calls", what, &sh->err);
    kill(s, SIGKILL);
    tu_reap(s, 30);
    AO_store_release(&sh->done, 1);
    ck_assert_msg(!abstract_listed(), "%s: %s outlived its server", what, sh->where);
    AO_store(&sh->up, 0);
    s = start_server(NOBODY); /* the same socket, a new server */
    AO_store_release(&sh->again, 1);
    tu_assert_exit0(tu_reap(c, 60), "caller", what, &sh->err);
    stop_server(s);
    AO_store(&sh->stop, 0);
    /* A path socket a killed server left is replaced by the next server. */
    char dir[] = "/tmp/shmam-rdv-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0777);
    snprintf(sh->where, sizeof sh->where, "%s/srv.sock", dir);
    AO_store(&sh->up, 0);
    s = start_server(NOBODY);
    kill(s, SIGKILL);
    tu_reap(s, 30);
    struct stat st;
    ck_assert_msg(lstat(sh->where, &st) == 0, "%s: no stale socket to replace", what);
    AO_store(&sh->up, 0);
    s = start_server(NOBODY);
    c = as_user(CALLER, good_caller);
    tu_assert_exit0(tu_reap(c, 120), "caller of the new server", what, &sh->err);
    stop_server(s);
    ck_assert_msg(lstat(sh->where, &st) != 0, "%s: destroy left the socket", what);
    rmdir(dir);
    tu_assert_no_errors(what, &sh->err);
}
END_TEST

/* Connects, calls, leaves, again and again, until killed. */
static void churning_caller(void)
{
    for (uint32_t round = 0;; round++) {
        int rc = -1;
        am_ep_t *ep = caller(&rc);
        if (!ep)
            continue; /* -EUSERS for 30 s: the server is slow to see a death */
        rc = calls(ep, 1 + (int)(round % 7), round);
        if (rc < 0)
            tu_error(&sh->err, "churning caller: %s", am_strerror(rc));
        if (round != 5)
            am_ep_destroy(ep);
        else
            _exit(rc < 0 ? 2 : 0); /* a departure without destroy, too */
    }
}

/* Calls until the server dies: every call ends with its reply or -EPIPE. */
static void until_epipe(void)
{
    int rc = -1;
    am_ep_t *ep = caller(&rc);
    if (!ep)
        _exit(rc == -ENOENT || rc == -EPIPE || rc == -ETIMEDOUT ? 0 : 2);
    AO_fetch_and_add1(&sh->killed);
    for (uint32_t i = 0; rc >= 0; i++)
        rc = calls(ep, 1, i);
    if (rc != -EPIPE)
        tu_error(&sh->err, "a call to a server killed at random: %s", am_strerror(rc));
    am_ep_destroy(ep);
    _exit(rc == -EPIPE ? 0 : 2);
}

/* How many memfds process p holds. */
static int memfds_of(pid_t p)
{
    char dir[64];
    int n = 0;
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)p);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[320], link[64];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t m = readlink(path, link, sizeof link - 1);
        n += m > 7 && strncmp(link, "/memfd:", 7) == 0;
    }
    if (d)
        closedir(d);
    return n;
}

START_TEST(random_kills)
{
    if (!need_root())
        return;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(seed);
    sh->max = 2;
    sh->allow_all = 1;
    pid_t s = start_server(NOBODY);
    for (int r = 0; r < 12; r++) {
        pid_t c = as_user(CALLER, churning_caller);
        usleep((useconds_t)(rand() % 30000));
        kill(c, SIGKILL);
        tu_reap(c, 30);
    }
    pid_t c = as_user(CALLER, good_caller); /* both rooms came back */
    pid_t c2 = as_user(OTHER, good_caller);
    tu_assert_exit0(tu_reap(c, 120), "caller after the kills", what, &sh->err);
    tu_assert_exit0(tu_reap(c2, 120), "second caller after the kills", what, &sh->err);
    int held = memfds_of(s);
    for (double end = tu_now_s() + 30; held != 1 && tu_now_s() < end; usleep(10000))
        held = memfds_of(s); /* the last callers' doors go at the server's next serve */
    ck_assert_msg(held == 1, "%s (seed %u): the server holds %d memfds, not its own only",
                  what, seed, held);
    stop_server(s);
    ck_assert_msg(!abstract_listed(), "%s (seed %u): the socket outlived its server", what,
                  seed);
    for (int r = 0; r < 6; r++) {
        AO_store(&sh->up, 0);
        AO_store(&sh->stop, 0);
        AO_store(&sh->killed, 0);
        s = start_server(NOBODY);
        c = as_user(CALLER, until_epipe);
        tu_wait_flag(&sh->killed, 1, 30);
        usleep((useconds_t)(rand() % 20000));
        kill(s, SIGKILL);
        tu_reap(s, 30);
        tu_assert_exit0(tu_reap(c, 60), "caller of a killed server", what, &sh->err);
        ck_assert_msg(!abstract_listed(), "%s (seed %u): a killed server's socket is left",
                      what, seed);
    }
    tu_assert_no_errors(what, &sh->err);
    tu_assert_clean(what);
}
END_TEST

/* Connected, it waits until sh->done. */
static void idle_caller(void)
{
    am_ep_t *ep = connected("idle caller");
    AO_store_release(&sh->killed, 1);
    tu_wait_flag(&sh->done, 1, 60);
    am_ep_destroy(ep);
}

START_TEST(stat_lists_socket)
{
    char prog[4096], want[256];
    ck_assert(tu_program(prog, sizeof prog, "bin/shmamstat"));
    pid_t s = start_server(0);
    pid_t c = as_user(0, idle_caller);
    tu_assert_flag(&sh->killed, 1, 60, "the caller's connect", what, &sh->err);
    struct tu_output *o = malloc(sizeof *o);
    const char *argv[] = {prog, NULL};
    snprintf(want, sizeof want, "SOCKET %s pid %d callers 1\n", sh->where, (int)s);
    double end = tu_now_s() + 30; /* the caller's door is served by now, but
                                   * the accept may still be on its way */
    do
        tu_run_capture(argv, NULL, TU_ERR_APART, 60, o);
    while (!strstr(o->out, want) && tu_now_s() < end && (usleep(100000), 1));
    AO_store_release(&sh->done, 1);
    tu_assert_exit0(tu_reap(c, 60), "caller", what, &sh->err);
    stop_server(s);
    ck_assert_msg(o->status == 0 && strstr(o->out, want),
                  "%s: shmamstat: no \"%s\" in:\n%s", what, want, o->out);
    free(o);
    tu_assert_no_errors(what, &sh->err);
}
END_TEST

/* bench/rdvbench at a tiny size: exit 0 and every row it promises (its
 * figures are not judged: tests assert behaviour, never speed). */
START_TEST(bench_runs)
{
    char prog[4096];
    ck_assert(tu_program(prog, sizeof prog, "bench/rdvbench"));
    const char *argv[] = {prog, "--iters", "60", "--rounds", "1", NULL};
    struct tu_output *o = malloc(sizeof *o);
    tu_run_capture(argv, NULL, TU_ERR_APART, 120, o);
    static const char *const rows[] = {"rdvbench,by_name,posix,2,0,60,rtt_8B,",
                                       "rdvbench,by_socket,posix,2,0,60,rtt_8B,",
                                       "rdvbench,by_name,posix,2,0,240,tput_32,",
                                       "rdvbench,by_socket,posix,2,0,240,tput_32,",
                                       "rdvbench,by_socket,posix,2,0,60,rtt_vs_by_name,",
                                       "rdvbench,connect,posix,2,0,4,connect_us,",
                                       "rdvbench,unix_connect,posix,2,0,4,connect_us,"};
    ck_assert_msg(o->status == 0, "rdvbench: exit %d: %s", o->status, o->err);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        ck_assert_msg(strstr(o->out, rows[i]), "rdvbench: no row %s in:\n%s", rows[i],
                      o->out);
    free(o);
}
END_TEST

static Suite *rendezvous_suite(void)
{
    Suite *s = suite_create("rendezvous");
    TCase *tc = tu_tcase(s, "callers", 240);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, other_user_calls);
    tcase_add_test(tc, refused_no_fd);
    tcase_add_test(tc, env_lists);
    tcase_add_test(tc, cred_not_forged);
    tcase_add_test(tc, cred_same_user);
    tcase_add_test(tc, sleeping_server);
    tcase_add_test(tc, fd_server);
    tcase_add_test(tc, stat_lists_socket);
    tcase_add_test(tc, bench_runs);
    tc = tu_tcase(s, "hostile", 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hostile_caller);
    tc = tu_tcase(s, "containers", 240);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, namespaces);
    tc = tu_tcase(s, "lifetimes", 240);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, caller_killed);
    tcase_add_test(tc, server_killed);
    tcase_add_test(tc, random_kills);
    return s;
}

int main(void)
{
    tu_run_init("rv");
    return tu_run_suite(rendezvous_suite(), "check_rendezvous");
}
