/*
 * check_segment.c - the segment layer (segment.h) on both backends: round trips,
 * sharing across processes, exclusive creation, permissions, unlink semantics,
 * and that nothing is ever left behind.  Every test loops over the backends and
 * names the backend in each failure message.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "segment.h"
#include "testutil.h"

#define SIZE 10000 /* not a multiple of the page size, on purpose */

/* Every test names its segment PREFIX-TAG-BACKEND, with PREFIX unique to this
 * run (so parallel runs never collide) and TAG from this list, so that main can
 * remove whatever a failed test left behind. */
static char prefix[32];
static const char *const tags[] = {"rt",   "fork", "dup",  "race",  "none",
                                   "mode", "unl",  "huge", "nomap", NULL};

static void test_name(char *buf, size_t n, const char *tag, enum am_shm b)
{
    snprintf(buf, n, "%s-%s-%s", prefix, tag, am__shm_name(b));
}

/* Nothing of this name exists any more in backend b. */
static void assert_gone(enum am_shm b, const char *name)
{
    char path[128];
    struct stat st;

    snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
    ck_assert_msg(stat(path, &st) != 0 && errno == ENOENT, "%s: %s left behind",
                  am__shm_name(b), path);
    ck_assert_msg(shmget(am__segment_key(name), 0, 0) < 0 && errno == ENOENT,
                  "%s: System V key of %s left behind", am__shm_name(b), name);
}

static void create_ok(enum am_shm b, const char *name, size_t size, struct am_segment *s)
{
    int rc = am__segment_create(b, name, size, s);

    ck_assert_msg(rc == 0, "%s: create %s: %s", am__shm_name(b), name, strerror(-rc));
    ck_assert_msg(s->base && s->size == size && s->backend == b,
                  "%s: create %s: bad segment", am__shm_name(b), name);
}

START_TEST(parse_names)
{
    enum am_shm b = AM_SHM_SYSV;

    ck_assert_int_eq(am__shm_parse("posix", &b), 0);
    ck_assert_int_eq(b, AM_SHM_POSIX);
    ck_assert_int_eq(am__shm_parse("sysv", &b), 0);
    ck_assert_int_eq(b, AM_SHM_SYSV);
    ck_assert_int_eq(am__shm_parse("SysV", &b), -EINVAL);
    ck_assert_int_eq(am__shm_parse("", &b), -EINVAL);
    ck_assert_int_eq(am__shm_parse(NULL, &b), -EINVAL);
    ck_assert_str_eq(am__shm_name(AM_SHM_POSIX), "posix");
    ck_assert_str_eq(am__shm_name(AM_SHM_SYSV), "sysv");
    ck_assert_int_ne(am__segment_key(""), IPC_PRIVATE);
    ck_assert_int_ne(am__segment_key("a.0"), am__segment_key("a.1"));
    ck_assert_int_eq(am__segment_key("job.3"), am__segment_key("job.3"));
}
END_TEST

START_TEST(round_trip)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    struct am_segment s, t;
    char name[64];

    test_name(name, sizeof name, "rt", b);
    create_ok(b, name, SIZE, &s);
    for (size_t k = 0; k < SIZE; k++)
        ck_assert_msg(((unsigned char *)s.base)[k] == 0, "%s: byte %zu not zero", bn, k);
    memset(s.base, 0x5a, SIZE);
    int rc = am__segment_open(b, name, &t);
    ck_assert_msg(rc == 0, "%s: open: %s", bn, strerror(-rc));
    ck_assert_msg(t.size == SIZE && t.backend == b, "%s: open size %zu", bn, t.size);
    ck_assert_msg(t.base != s.base, "%s: open reused the mapping", bn);
    ck_assert_msg(((unsigned char *)t.base)[SIZE - 1] == 0x5a, "%s: data not shared", bn);
    ((char *)t.base)[0] = 1;
    ck_assert_msg(((char *)s.base)[0] == 1, "%s: write through open not seen", bn);
    am__segment_unmap(&t);
    ck_assert_msg(t.base == NULL, "%s: unmap left base", bn);
    am__segment_unmap(&t); /* idempotent */
    am__segment_unmap(&s);
    ck_assert_msg(am__segment_unlink(b, name) == 0, "%s: unlink", bn);
    ck_assert_msg(am__segment_unlink(b, name) == -ENOENT, "%s: second unlink", bn);
    assert_gone(b, name);
}
END_TEST

/* A child opens the segment by name (its own mapping) and writes; the parent,
 * then a second child, see the data. */
START_TEST(across_processes)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    struct am_segment s;
    char name[64];
    int st;

    test_name(name, sizeof name, "fork", b);
    create_ok(b, name, SIZE, &s);
    pid_t p = fork();
    if (p == 0) {
        struct am_segment t;
        if (am__segment_open(b, name, &t) != 0 || t.size != SIZE)
            _exit(1);
        strcpy((char *)t.base + 100, "hello from the child");
        am__segment_unmap(&t);
        _exit(0);
    }
    ck_assert_msg(p > 0 && waitpid(p, &st, 0) == p, "%s: fork/wait", bn);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child failed", bn);
    ck_assert_msg(strcmp((char *)s.base + 100, "hello from the child") == 0,
                  "%s: child's write not visible", bn);
    am__segment_unmap(&s);
    am__segment_unlink(b, name);
    assert_gone(b, name);
}
END_TEST

START_TEST(double_create)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    struct am_segment s, t = {0};
    char name[64];

    test_name(name, sizeof name, "dup", b);
    create_ok(b, name, SIZE, &s);
    int rc = am__segment_create(b, name, SIZE, &t);
    ck_assert_msg(rc == -EEXIST, "%s: second create gave %d, not -EEXIST", bn, rc);
    ck_assert_msg(t.base == NULL, "%s: failed create filled the segment", bn);
    rc = am__segment_create(b, name, 2 * SIZE, &t);
    ck_assert_msg(rc == -EEXIST, "%s: create with other size gave %d", bn, rc);
    am__segment_unmap(&s);
    am__segment_unlink(b, name);
    assert_gone(b, name);
}
END_TEST

/* Several processes race to create one name: exactly one wins, every time.
 * One attempt proves nothing if the creators happened to run one after the
 * other (a loaded machine, or a creation shorter than the gate's skew), so
 * the attempt is repeated until two creations overlapped in time, up to
 * RACE_ATTEMPTS times or RACE_SECONDS; the test fails only if none did.  SHMAM_VERBOSE=1
 * prints how many attempts it took. */
/* racing_create: the creators' start gate and when each attempt ran. */
struct race {
    struct tu_gate gate;
    double start[8], end[8];
};

#define RACE_CREATORS 6
#define RACE_ATTEMPTS 200
#define RACE_SECONDS 10.0 /* well inside the tcase's timeout */

/* Did two of the n attempts overlap in time (the race was run, not queued)? */
static int overlapped(const struct race *r, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (r->start[i] < r->end[j] && r->start[j] < r->end[i])
                return 1;
    return 0;
}

/* One attempt: RACE_CREATORS processes, pinned across the CPUs and released
 * together, each create `name` in b; exactly one may win, the others must be
 * told -EEXIST.  The segment is removed after.  Returns whether two creations
 * overlapped. */
static int race_once(enum am_shm b, const char *name, struct race *r)
{
    const char *bn = am__shm_name(b);
    pid_t pid[RACE_CREATORS];
    int wins = 0, st;

    memset(r, 0, sizeof *r);
    tu_gate_init(&r->gate, RACE_CREATORS);
    for (int k = 0; k < RACE_CREATORS; k++) {
        pid[k] = fork();
        if (pid[k] == 0) {
            struct am_segment s;
            tu_pin(k % 2);
            tu_gate_wait(&r->gate);
            r->start[k] = tu_now_s();
            int rc = am__segment_create(b, name, SIZE, &s);
            r->end[k] = tu_now_s();
            _exit(rc == 0 ? 0 : rc == -EEXIST ? 1 : 2);
        }
        ck_assert_msg(pid[k] > 0, "%s: fork", bn);
    }
    for (int k = 0; k < RACE_CREATORS; k++) {
        ck_assert_msg(waitpid(pid[k], &st, 0) == pid[k] && WIFEXITED(st), "%s: wait", bn);
        ck_assert_msg(WEXITSTATUS(st) < 2, "%s: create failed oddly", bn);
        wins += WEXITSTATUS(st) == 0;
    }
    ck_assert_msg(wins == 1, "%s: %d creators won", bn, wins);
    ck_assert_msg(am__segment_unlink(b, name) == 0, "%s: unlink", bn);
    assert_gone(b, name);
    return overlapped(r, RACE_CREATORS);
}

START_TEST(racing_create)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    char name[64];
    int attempts = 0, raced = 0;
    struct race *r = tu_shared_alloc(sizeof *r);
    double until = tu_now_s() + RACE_SECONDS;

    test_name(name, sizeof name, "race", b);
    while (!raced && attempts < RACE_ATTEMPTS && (attempts == 0 || tu_now_s() < until)) {
        raced = race_once(b, name, r);
        attempts++;
    }
    tu_shared_free(r, sizeof *r);
    if (getenv("SHMAM_VERBOSE")) {
        printf("segment: racing_create (%s): %s after %d attempt(s)\n", bn,
               raced ? "two creations overlapped" : "no overlap", attempts);
        fflush(stdout);
    }
    ck_assert_msg(raced, "%s: no two creations overlapped in %d attempts: no race was run",
                  bn, attempts);
}
END_TEST

START_TEST(missing)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    struct am_segment s = {0};
    char name[64];

    test_name(name, sizeof name, "none", b);
    int rc = am__segment_open(b, name, &s);
    ck_assert_msg(rc == -ENOENT, "%s: open of a missing name gave %d", bn, rc);
    ck_assert_msg(s.base == NULL, "%s: failed open filled the segment", bn);
    rc = am__segment_unlink(b, name);
    ck_assert_msg(rc == -ENOENT, "%s: unlink of a missing name gave %d", bn, rc);
    rc = am__segment_create(b, name, 0, &s);
    ck_assert_msg(rc == -EINVAL, "%s: create of size 0 gave %d", bn, rc);
    assert_gone(b, name);
}
END_TEST

/* The permission bits of the named segment, from the system. */
static unsigned mode_of(enum am_shm b, const char *name)
{
    if (b == AM_SHM_POSIX) {
        char path[128];
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
        ck_assert_msg(stat(path, &st) == 0, "posix: stat %s", path);
        return st.st_mode & 0777;
    }
    struct shmid_ds ds;
    int id = shmget(am__segment_key(name), 0, 0);
    ck_assert_msg(id >= 0 && shmctl(id, IPC_STAT, &ds) == 0, "sysv: IPC_STAT %s", name);
    return ds.shm_perm.mode & 0777;
}

/* 0600 whatever the umask. */
START_TEST(mode_0600)
{
    enum am_shm b = (enum am_shm)_i;
    const mode_t masks[] = {022, 0, 077, 0277};
    struct am_segment s;
    char name[64];

    test_name(name, sizeof name, "mode", b);
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
        umask(masks[k]);
        create_ok(b, name, SIZE, &s);
        unsigned m = mode_of(b, name);
        ck_assert_msg(m == 0600, "%s: mode %o under umask %o", am__shm_name(b), m,
                      (unsigned)masks[k]);
        am__segment_unmap(&s);
        am__segment_unlink(b, name);
    }
    assert_gone(b, name);
}
END_TEST

/* After unlink nobody can open the name, but mappings stay valid, in this process
 * and in a child that inherited one; the name can be created afresh. */
START_TEST(unlink_keeps_mapping)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    struct am_segment s, t;
    char name[64];
    int st;

    test_name(name, sizeof name, "unl", b);
    create_ok(b, name, SIZE, &s);
    ck_assert_msg(am__segment_unlink(b, name) == 0, "%s: unlink", bn);
    int rc = am__segment_open(b, name, &t);
    ck_assert_msg(rc == -ENOENT, "%s: open after unlink gave %d", bn, rc);
    volatile uint32_t *w = s.base;
    w[SIZE / 4 - 1] = 0xfeedface;
    pid_t p = fork();
    if (p == 0) {
        if (w[SIZE / 4 - 1] != 0xfeedface)
            _exit(1);
        w[0] = 7;
        _exit(0);
    }
    ck_assert_msg(p > 0 && waitpid(p, &st, 0) == p, "%s: fork/wait", bn);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child lost the data", bn);
    ck_assert_msg(w[0] == 7, "%s: child's write after unlink not seen", bn);
    create_ok(b, name, SIZE, &t);
    ck_assert_msg(((uint32_t *)t.base)[0] == 0, "%s: new segment shares the old", bn);
    am__segment_unmap(&t);
    am__segment_unlink(b, name);
    am__segment_unmap(&s);
    assert_gone(b, name);
}
END_TEST

/* A create that fails (here: too big to map or to commit) leaves nothing. */
START_TEST(failed_create_leaves_nothing)
{
    enum am_shm b = (enum am_shm)_i;
    struct am_segment s = {0};
    char name[64];

    test_name(name, sizeof name, "huge", b);
    int rc = am__segment_create(b, name, (size_t)1 << 62, &s);
    ck_assert_msg(rc < 0, "%s: a 4 EiB segment was created", am__shm_name(b));
    ck_assert_msg(s.base == NULL, "%s: failed create filled the segment", am__shm_name(b));
    assert_gone(b, name);
}
END_TEST

/* Bytes of address space this process uses now. */
static size_t vm_size(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* The segment is created but cannot be mapped (the address space is capped in a
 * child): the create must undo itself.  Exit 0 if it did, 1 if it did not fail,
 * 2 if something remains. */
static int create_unmappable(enum am_shm b, const char *name)
{
    struct rlimit rl;
    struct am_segment s;
    struct stat st;
    char path[128];

    rl.rlim_cur = rl.rlim_max = vm_size() + (4u << 20);
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 3;
    if (am__segment_create(b, name, 64u << 20, &s) != -ENOMEM)
        return 1;
    snprintf(path, sizeof path, "/dev/shm/shmam-%s", name);
    if (stat(path, &st) == 0 || shmget(am__segment_key(name), 0, 0) >= 0)
        return 2;
    return 0;
}

START_TEST(failed_map_leaves_nothing)
{
    enum am_shm b = (enum am_shm)_i;
    char name[64];
    int st;

    test_name(name, sizeof name, "nomap", b);
    pid_t p = fork();
    if (p == 0)
        _exit(create_unmappable(b, name));
    ck_assert_msg(p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st), "%s: child",
                  am__shm_name(b));
    ck_assert_msg(WEXITSTATUS(st) == 0, "%s: unmappable create: case %d", am__shm_name(b),
                  WEXITSTATUS(st));
    assert_gone(b, name);
}
END_TEST

/* PREFIX followed by x's, 399 characters in all. */
static void long_test_name(char *buf, size_t n)
{
    size_t len = strlen(prefix);

    memcpy(buf, prefix, len);
    memset(buf + len, 'x', n - 1 - len);
    buf[n - 1] = '\0';
}

/* Long names fail cleanly instead of being truncated (System V segments carry
 * their whole name too). */
START_TEST(long_name)
{
    enum am_shm b = (enum am_shm)_i;
    struct am_segment s;
    char name[400];

    long_test_name(name, sizeof name);
    int rc = am__segment_create(b, name, SIZE, &s);
    ck_assert_msg(rc == -ENAMETOOLONG, "%s: long name gave %d", am__shm_name(b), rc);
    assert_gone(b, name);
}
END_TEST

/* Two names with the same System V key (found here by brute force: FNV-1a is
 * 32 bits, so about 2^16 names suffice): each is created, opened and removed
 * as itself; removing one never removes the other.  The table's slot is the
 * top of key * 2^32/phi, which every bit of the key moves: the low bits alone
 * (key % N) depend only on the names' low bits, and for 3 in 400 pids of the
 * names' prefix they hid every collision of 2^22 names. */
static void colliding_names(char *a, char *b, size_t n)
{
    enum { N = 1 << 18 }; /* slots: (k * 2654435761u) >> 14 is below 2^18 */
    static uint32_t seen[N];
    static int id[N];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < (1 << 22); i++) {
        char name[64];
        test_name(name, sizeof name, "k", AM_SHM_SYSV);
        snprintf(name + strlen(name), sizeof name - strlen(name), "%d", i);
        uint32_t k = (uint32_t)am__segment_key(name), slot = (k * 2654435761u) >> 14;
        if (seen[slot] == k && id[slot] != i) {
            test_name(a, n, "k", AM_SHM_SYSV);
            snprintf(a + strlen(a), n - strlen(a), "%d", id[slot]);
            snprintf(b, n, "%s", name);
            return;
        }
        seen[slot] = k;
        id[slot] = i;
    }
    ck_abort_msg("sysv: no two names with one key in 2^22 tries");
}

/* Debris at name's key: an unnamed segment whose creator is gone; its id. */
static int make_debris(const char *name)
{
    pid_t p = fork(); /* the creator, gone before anyone looks */
    if (p == 0)
        _exit(shmget(am__segment_key(name), 8192, IPC_CREAT | IPC_EXCL | 0600) < 0);
    int st;
    ck_assert_msg(waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "sysv: make debris");
    return shmget(am__segment_key(name), 0, 0);
}

/* A creator killed between shmget and naming its segment leaves an unnamed
 * segment nobody has attached: unlinking the name (as a launcher's sweep does)
 * removes it too, and never a named segment of another name. */
START_TEST(sysv_debris_unlinked)
{
    char name[64];
    test_name(name, sizeof name, "debris", AM_SHM_SYSV);
    int id = make_debris(name);
    int rc = am__segment_unlink(AM_SHM_SYSV, name);
    int left = shmget(am__segment_key(name), 0, 0) >= 0;
    int again = am__segment_unlink(AM_SHM_SYSV, name);
    shmctl(id, IPC_RMID, NULL); /* before asserting: unnamed debris is invisible to
                                   the suite's leftover check */
    ck_assert_msg(rc == 0 && !left, "sysv: unlink of debris gave %d, %s", rc,
                  left ? "the debris is still there" : "but it is gone");
    ck_assert_msg(again == -ENOENT, "sysv: unlink twice gave %d", again);
}
END_TEST

/* The same while another process has the debris attached for a moment (a
 * probe: shmamstat, a suite's leftover check): the unlink waits for the probe
 * to let go, and removes it (before, a young blank segment attached by
 * anyone counted as being made, and the unlink gave -ENOENT). */
START_TEST(sysv_debris_unlinked_while_probed)
{
    char name[64];
    test_name(name, sizeof name, "probed", AM_SHM_SYSV);
    int id = make_debris(name);
    AO_t *held = tu_shared_alloc(sizeof *held);
    pid_t probe = fork(); /* holds it 0.2 s, then lets go */
    if (probe == 0) {
        void *a = shmat(id, NULL, SHM_RDONLY);
        AO_store_release(held, 1);
        tu_sleep_ms(200);
        _exit(a == (void *)-1 || shmdt(a) != 0);
    }
    tu_wait_flag(held, 1, 10);
    int rc = am__segment_unlink(AM_SHM_SYSV, name);
    int left = shmget(am__segment_key(name), 0, 0) >= 0;
    shmctl(id, IPC_RMID, NULL);
    tu_assert_exit0(tu_reap(probe, 10), "probe", "sysv", NULL);
    ck_assert_msg(rc == 0 && !left, "sysv: unlink of probed debris gave %d, %s", rc,
                  left ? "the debris is still there" : "but it is gone");
}
END_TEST

/* A segment made at the name's key by a process that lives on and never
 * attaches it (a creator stopped between shmget and its attach, or debris
 * whose creator's pid another process now has) holds a creator of the name
 * only until it has stood unattached a couple of seconds: then it is debris,
 * removed, and the create succeeds at that very key (before, the create
 * waited for it for ever).  The maker is alive throughout. */
START_TEST(sysv_stalled_creator)
{
    char name[64];
    struct am_segment s;
    test_name(name, sizeof name, "stalled", AM_SHM_SYSV);
    key_t k = am__segment_key(name);
    int *made = tu_shared_alloc(sizeof *made);
    pid_t p = fork(); /* made it, alive, never attaches */
    if (p == 0) {
        *made = shmget(k, 8192, IPC_CREAT | IPC_EXCL | 0600) >= 0 ? 1 : -1;
        for (;;)
            pause();
    }
    while (!*made)
        usleep(1000);
    double t0 = tu_now_s();
    int id = shmget(k, 0, 0);
    int rc = am__segment_create(AM_SHM_SYSV, name, SIZE, &s);
    double took = tu_now_s() - t0;
    int gone = shmctl(id, IPC_STAT, &(struct shmid_ds){0}) != 0, same_key = 0;
    if (rc == 0)
        same_key = shmget(k, 0, 0) >= 0 && shmget(k, 0, 0) != id;
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
    if (!gone)
        shmctl(id, IPC_RMID, NULL);
    if (rc == 0) {
        am__segment_unmap(&s);
        am__segment_unlink(AM_SHM_SYSV, name);
    }
    ck_assert_msg(*made == 1, "sysv: the maker could not make its segment");
    ck_assert_msg(rc == 0, "sysv: create past an unattached segment gave %d after %.1f s",
                  rc, took);
    ck_assert_msg(gone && same_key,
                  "sysv: the unattached segment %s, the new one %s its key (%.1f s)",
                  gone ? "was removed" : "is still there",
                  same_key ? "took" : "did not take", took);
}
END_TEST

/* Open the named segment as it now is: open's result (unmapping what it gave). */
static int try_open(enum am_shm b, const char *name)
{
    struct am_segment t;
    int rc = am__segment_open(b, name, &t);
    if (rc == 0)
        am__segment_unmap(&t);
    return rc;
}

/* A segment at the name that group or others may open, or (as root) one given
 * to another user, is refused with -EACCES, never mapped; the same segment,
 * ours and 0600 again, opens. */
START_TEST(not_ours_refused)
{
    enum am_shm b = (enum am_shm)_i;
    const char *bn = am__shm_name(b);
    const mode_t modes[] = {0640, 0604, 0660, 0606, 0620, 0602};
    enum { NM = sizeof modes / sizeof modes[0] };
    int got[NM + 1], set = 0;
    struct am_segment s;
    char name[64];
    test_name(name, sizeof name, "notours", b);
    create_ok(b, name, SIZE, &s);
    for (int k = 0; k < NM; k++) {
        set |= tu_set_perm(b, name, modes[k], geteuid());
        got[k] = try_open(b, name);
    }
    got[NM] = -EACCES;
    if (geteuid() == 0) { /* chown and IPC_SET to another uid need root */
        set |= tu_set_perm(b, name, 0600, 65534);
        got[NM] = try_open(b, name);
    }
    set |= tu_set_perm(b, name, 0600, geteuid());
    int back = try_open(b, name);
    am__segment_unmap(&s);
    am__segment_unlink(b, name);
    ck_assert_msg(set == 0, "%s: could not change the segment's mode or owner", bn);
    for (int k = 0; k < NM; k++)
        ck_assert_msg(got[k] == -EACCES, "%s: open of a mode %o segment gave %s", bn,
                      (unsigned)modes[k], strerror(-got[k]));
    ck_assert_msg(got[NM] == -EACCES, "%s: open of a segment given to uid 65534 gave %s",
                  bn, strerror(-got[NM]));
    ck_assert_msg(back == 0, "%s: open of the segment ours again gave %s", bn,
                  strerror(-back));
    assert_gone(b, name);
}
END_TEST

enum { FAULTED = 7 }; /* write_at's child's exit code when its write faulted */

static void exit_faulted(int sig)
{
    _exit(FAULTED);
}

/* Does a write of a byte at p fault?  Tried in a child (which may catch the
 * fault itself, whatever a sanitizer does with SIGSEGV): 1 if it faulted, 0
 * if the byte was written, -1 if the child ended otherwise. */
static int write_faults(volatile char *p)
{
    int st;
    pid_t c = fork();
    if (c == 0) {
        struct sigaction sa = {.sa_handler = exit_faulted};
        sigaction(SIGSEGV, &sa, NULL);
        *p = 'x';
        _exit(0);
    }
    ck_assert_msg(c > 0 && waitpid(c, &st, 0) == c, "sysv: fork/wait");
    if (!WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st) == FAULTED ? 1 : WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The name trailer of a System V segment of whole pages (as every endpoint's
 * is) is read-only in every mapping made here, its creator's too: a stray
 * write there faults instead of renaming the segment, which stays found. */
START_TEST(sysv_trailer_read_only)
{
    size_t size = 2 * (size_t)sysconf(_SC_PAGESIZE);
    struct am_segment s, t;
    char name[64];
    test_name(name, sizeof name, "ro", AM_SHM_SYSV);
    create_ok(AM_SHM_SYSV, name, size, &s);
    int rc = am__segment_open(AM_SHM_SYSV, name, &t);
    ck_assert_msg(rc == 0, "sysv: open: %s", strerror(-rc));
    int by_creator = write_faults((char *)s.base + size),
        by_opener = write_faults((char *)t.base + t.size + AM_SYSV_TAG - 1);
    am__segment_unmap(&t);
    rc = try_open(AM_SHM_SYSV, name);
    am__segment_unmap(&s);
    am__segment_unlink(AM_SHM_SYSV, name);
    static const char *const how[] = {"ended oddly", "went through", "faulted"};
    ck_assert_msg(by_creator == 1 && by_opener == 1,
                  "sysv: a write into the trailer through the creator's mapping %s, "
                  "through an opener's %s",
                  how[by_creator + 1], how[by_opener + 1]);
    ck_assert_msg(rc == 0, "sysv: open after the writes: %s", strerror(-rc));
    assert_gone(AM_SHM_SYSV, name);
}
END_TEST

START_TEST(sysv_key_collision)
{
    char a[64], b[64];
    struct am_segment sa, sb, t;
    colliding_names(a, b, sizeof a);
    ck_assert_msg(am__segment_key(a) == am__segment_key(b), "sysv: %s, %s differ", a, b);
    create_ok(AM_SHM_SYSV, a, SIZE, &sa);
    create_ok(AM_SHM_SYSV, b, SIZE, &sb);
    ((char *)sa.base)[0] = 'a';
    ((char *)sb.base)[0] = 'b';
    ck_assert_msg(am__segment_open(AM_SHM_SYSV, b, &t) == 0 && ((char *)t.base)[0] == 'b',
                  "sysv: open of %s found the wrong segment", b);
    am__segment_unmap(&t);
    ck_assert_msg(am__segment_unlink(AM_SHM_SYSV, b) == 0, "sysv: unlink %s", b);
    ck_assert_msg(am__segment_open(AM_SHM_SYSV, a, &t) == 0 && ((char *)t.base)[0] == 'a',
                  "sysv: removing %s removed %s (same key)", b, a);
    am__segment_unmap(&t);
    ck_assert_msg(am__segment_unlink(AM_SHM_SYSV, b) == -ENOENT, "sysv: %s twice", b);
    ck_assert_msg(am__segment_unlink(AM_SHM_SYSV, a) == 0, "sysv: unlink %s", a);
    am__segment_unmap(&sa);
    am__segment_unmap(&sb);
}
END_TEST

static Suite *segment_suite(void)
{
    Suite *s = suite_create("segment");
    TCase *tc = tcase_create("both backends");

    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, parse_names);
    tcase_add_loop_test(tc, round_trip, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, across_processes, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, double_create, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, racing_create, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, missing, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, mode_0600, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, unlink_keeps_mapping, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, failed_create_leaves_nothing, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, failed_map_leaves_nothing, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_loop_test(tc, long_name, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_test(tc, sysv_key_collision);
    tcase_add_test(tc, sysv_debris_unlinked);
    tcase_add_test(tc, sysv_debris_unlinked_while_probed);
    tcase_add_test(tc, sysv_stalled_creator);
    tcase_add_loop_test(tc, not_ours_refused, AM_SHM_POSIX, AM_SHM_SYSV + 1);
    tcase_add_test(tc, sysv_trailer_read_only);
    suite_add_tcase(s, tc);
    return s;
}

/* Remove every name a test may have made, in both backends. */
static void remove_all(void)
{
    char name[400];

    for (int b = AM_SHM_POSIX; b <= AM_SHM_SYSV; b++)
        for (const char *const *t = tags; *t; t++) {
            test_name(name, sizeof name, *t, (enum am_shm)b);
            am__segment_unlink(AM_SHM_POSIX, name);
            am__segment_unlink(AM_SHM_SYSV, name);
        }
    long_test_name(name, sizeof name);
    am__segment_unlink(AM_SHM_SYSV, name);
}

int main(void)
{
    snprintf(prefix, sizeof prefix, "t%ld", (long)getpid());
    SRunner *sr = srunner_create(segment_suite());

    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove_all();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
