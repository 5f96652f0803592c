/*
 * check_examples.c - the documentation's examples are the API's: each file of
 * examples/ runs as its page says, and the pages show the files.
 *
 *   docs_show_the_files    every C or Python block of README.md and docs/ is
 *                          a file of examples/, byte for byte (scripts/docs.py
 *                          --examples): editing one without the other fails.
 *   docs_links_resolve     every relative link of README.md and docs/ leads to
 *                          a file of the tree, and an #anchor to a heading
 *                          (scripts/docs.py --links).
 *   c_job                  shmamrun -n 2 build/examples/hello_job: rank 0
 *                          prints the square its request got back.
 *   c_server_and_client    echo_server NAME answers echo_client NAME's call
 *                          with its bytes and arguments; SIGTERM ends the
 *                          server with 0 and nothing left.
 *   c_call_deadline        echo_client's call to a stopped echo_server ends
 *                          with "timed out" (am_call's 1 s deadline) and
 *                          exit 1; the server, let go, still answers.
 *   c_service              service_server @NAME answers service_client @NAME
 *                          through the socket with the uid and pid the
 *                          kernel gave it for the client.
 *   c_epoll_loop           epoll_loop NAME serves epoll_loop NAME client N:
 *                          every sum right, then QUIT ends the server.
 *   py_server_and_client   echo_server.py answers echo_client.py and the C
 *                          client; the Python client calls the C server too.
 *   py_job                 shmamrun -n 2 /usr/bin/python3 examples/hello_job.py
 *                          prints the square.
 *
 * The Python examples run with PYTHONPATH=python and this build's
 * libshmam.so.1, and are skipped in a sanitized build (an instrumented
 * library cannot be loaded into Debian's interpreter: check-python skips too).
 * Every program is bounded by a generous deadline; none is timed.
 *
 * Run from the repository root (run-tests.sh does).
 */
#include <check.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define LIMIT_S 120 /* any one program, on a machine as busy as it gets */

static struct tu_output out, srv;
static char lib_env[PATH_MAX + 16];
static const char *py_env[] = {"PYTHONPATH=python", lib_env, NULL};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* The path of build program rel, failing the test if it is not built. */
static const char *program(char *buf, size_t n, const char *rel)
{
    ck_assert_msg(tu_program(buf, n, rel), "%s is not built (make check-build)", buf);
    return buf;
}

static void docs_py(const char *what)
{
    const char *argv[] = {"/usr/bin/python3", "scripts/docs.py", what, NULL};
    int rc = tu_run_capture(argv, NULL, TU_ERR_MERGED, LIMIT_S, &out);
    ck_assert_msg(rc == 0, "scripts/docs.py %s: exit %d:\n%s", what, rc, out.out);
}

START_TEST(docs_show_the_files)
{
    docs_py("--examples");
}
END_TEST

START_TEST(docs_links_resolve)
{
    docs_py("--links");
}
END_TEST

/* Runs argv to its end: exit 0, and its output holds `want`. */
static void runs_saying(const char *const *argv, const char *const *env, const char *want)
{
    int rc = tu_run_capture(argv, env, TU_ERR_MERGED, LIMIT_S, &out);
    ck_assert_msg(rc == 0 && strstr(out.out, want), "%s %s: exit %d, not \"%s\":\n%s",
                  argv[0], argv[1] ? argv[1] : "", rc, want, out.out);
}

START_TEST(c_job)
{
    char run[PATH_MAX], prog[PATH_MAX];
    const char *argv[] = {program(run, sizeof run, "bin/shmamrun"), "-n", "2",
                          program(prog, sizeof prog, "examples/hello_job"), NULL};
    runs_saying(argv, NULL, "rank 0: 7 squared is 49\n");
}
END_TEST

/* Starts a server (argv) and reads its output until it says `ready`. */
static pid_t start_server(const char *const *argv, const char *const *env,
                          const char *ready)
{
    pid_t pid = tu_start(argv, env, TU_ERR_MERGED, LIMIT_S, &srv);
    while (!strstr(srv.out, ready) && tu_read_some(&srv) > 0)
        ;
    ck_assert_msg(strstr(srv.out, ready), "%s did not say \"%s\":\n%s", argv[0], ready,
                  srv.out);
    return pid;
}

/* SIGTERM to the server: it ends with 0, leaving nothing of the test. */
static void stop_server(pid_t pid, const char *who)
{
    kill(pid, SIGTERM);
    int rc = tu_finish(&srv);
    ck_assert_msg(rc == 0, "%s: exit %d after SIGTERM:\n%s", who, rc, srv.out);
    tu_assert_clean(who);
}

START_TEST(c_server_and_client)
{
    char server[PATH_MAX], client[PATH_MAX], name[AM_MAX_NAME + 1];
    tu_ep_name(name, sizeof name, "echo", -1, 0);
    const char *sv[] = {program(server, sizeof server, "examples/echo_server"), name, NULL};
    const char *cl[] = {program(client, sizeof client, "examples/echo_client"), name,
                        "a call", NULL};
    pid_t pid = start_server(sv, NULL, "echo_server: serving");
    runs_saying(cl, NULL, "echo_client: a call, args 6 7\n");
    stop_server(pid, "echo_server");
}
END_TEST

START_TEST(c_service)
{
    char server[PATH_MAX], client[PATH_MAX], sock[AM_MAX_NAME + 2], want[128];
    snprintf(sock, sizeof sock, "@");
    tu_ep_name(sock + 1, sizeof sock - 1, "svc", -1, 0);
    const char *sv[] = {program(server, sizeof server, "examples/service_server"), sock,
                        NULL};
    const char *cl[] = {program(client, sizeof client, "examples/service_client"), sock,
                        NULL};
    pid_t pid = start_server(sv, NULL, "service_server: listening on");
    int rc = tu_run_capture(cl, NULL, TU_ERR_MERGED, LIMIT_S, &out);
    snprintf(want, sizeof want, "the server sees uid %u pid ", (unsigned)getuid());
    unsigned seen_pid = 0, mine = 1;
    const char *at = strstr(out.out, want);
    ck_assert_msg(rc == 0 && at, "service_client: exit %d:\n%s", rc, out.out);
    ck_assert_msg(sscanf(at + strlen(want), "%u (mine: %*u %u)", &seen_pid, &mine) == 2 &&
                      seen_pid == mine,
                  "service_client: the kernel's pid is not the client's:\n%s", out.out);
    stop_server(pid, "service_server");
}
END_TEST

START_TEST(c_call_deadline)
{
    char server[PATH_MAX], client[PATH_MAX], name[AM_MAX_NAME + 1];
    tu_ep_name(name, sizeof name, "late", -1, 0);
    const char *sv[] = {program(server, sizeof server, "examples/echo_server"), name, NULL};
    const char *cl[] = {program(client, sizeof client, "examples/echo_client"), name, NULL};
    pid_t pid = start_server(sv, NULL, "echo_server: serving");
    kill(pid, SIGSTOP);
    int rc = tu_run_capture(cl, NULL, TU_ERR_MERGED, LIMIT_S, &out);
    kill(pid, SIGCONT);
    ck_assert_msg(rc == 1 && strstr(out.out, "echo_client: call: timed out"),
                  "echo_client to a stopped server: exit %d:\n%s", rc, out.out);
    runs_saying(cl, NULL, "echo_client: hello, args 6 7\n");
    stop_server(pid, "echo_server");
}
END_TEST

START_TEST(c_epoll_loop)
{
    char prog[PATH_MAX], name[AM_MAX_NAME + 1];
    tu_ep_name(name, sizeof name, "ep", -1, 0);
    const char *sv[] = {program(prog, sizeof prog, "examples/epoll_loop"), name, NULL};
    const char *cl[] = {prog, name, "client", "200", NULL};
    start_server(sv, NULL, "serving ");
    runs_saying(cl, NULL, "200 requests answered\n");
    int rc = tu_finish(&srv);
    ck_assert_msg(rc == 0 && strstr(srv.out, "served 200 requests\n"),
                  "epoll_loop server: exit %d:\n%s", rc, srv.out);
    tu_assert_clean("epoll_loop");
}
END_TEST

START_TEST(py_server_and_client)
{
    if (SANITIZED)
        return;
    char client[PATH_MAX], server[PATH_MAX], name[AM_MAX_NAME + 1];
    tu_ep_name(name, sizeof name, "py", -1, 0);
    const char *sv[] = {"/usr/bin/python3", "examples/echo_server.py", name, NULL};
    const char *cl[] = {"/usr/bin/python3", "examples/echo_client.py", name, "from python",
                        NULL};
    const char *ccl[] = {program(client, sizeof client, "examples/echo_client"), name,
                         NULL};
    pid_t pid = start_server(sv, py_env, "echo_server: serving");
    runs_saying(cl, py_env, "echo_client: from python, args 6 7\n");
    runs_saying(ccl, NULL, "echo_client: hello, args 6 7\n");
    stop_server(pid, "echo_server.py");

    const char *csv[] = {program(server, sizeof server, "examples/echo_server"), name,
                         NULL};
    pid = start_server(csv, NULL, "echo_server: serving");
    runs_saying(cl, py_env, "echo_client: from python, args 6 7\n");
    stop_server(pid, "echo_server");
}
END_TEST

START_TEST(py_job)
{
    if (SANITIZED)
        return;
    char run[PATH_MAX];
    const char *argv[] = {program(run, sizeof run, "bin/shmamrun"),
                          "-n",
                          "2",
                          "/usr/bin/python3",
                          "examples/hello_job.py",
                          NULL};
    runs_saying(argv, py_env, "rank 0: 7 squared is 49\n");
}
END_TEST

static Suite *examples_suite(void)
{
    char lib[PATH_MAX];
    tu_program(lib, sizeof lib, "lib/libshmam.so.1");
    snprintf(lib_env, sizeof lib_env, "SHMAM_LIBRARY=%s", lib);
    Suite *s = suite_create("examples");
    TCase *tc = tu_tcase(s, "docs", 120);
    tcase_add_test(tc, docs_show_the_files);
    tcase_add_test(tc, docs_links_resolve);
    tc = tu_tcase(s, "c", 300);
    tcase_add_checked_fixture(tc, tu_test_init, NULL);
    tcase_add_test(tc, c_job);
    tcase_add_test(tc, c_server_and_client);
    tcase_add_test(tc, c_call_deadline);
    tcase_add_test(tc, c_service);
    tcase_add_test(tc, c_epoll_loop);
    tc = tu_tcase(s, "python", 300);
    tcase_add_checked_fixture(tc, tu_test_init, NULL);
    tcase_add_test(tc, py_server_and_client);
    tcase_add_test(tc, py_job);
    return s;
}

int main(void)
{
    tu_run_init("ex");
    return tu_run_suite(examples_suite(), "check_examples");
}
