/*
 * prog_pypeer.c - the C side of the Python package's tests (python/tests):
 *
 *   prog_pypeer server NAME          an endpoint NAME serving until handler 6:
 *       1 ECHO   replies to handler 2 with the same arguments and bytes (short,
 *                bulk or long by size, as the Python package chooses)
 *       4 HANG   never returns (a server to kill in the middle of a call)
 *       5 SLEEP  sleeps args[0] ms, then replies as ECHO (a call to time out)
 *       6 STOP   replies, then the server exits 0
 *   prog_pypeer client NAME SERVER N an endpoint NAME sends N requests to
 *       SERVER's handler 1 (short, bulk, long in turn, each checked when its
 *       reply comes to handler 2), one at a time; prints "ok N", exit 0
 *   prog_pypeer hang NAME SERVER     sends one request to SERVER's handler 4,
 *       prints "sent", then waits for a reply for ever (a client to kill)
 *
 * Each mode prints "ready" once its endpoint exists.  Exit 1 on any error,
 * naming it on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shmam.h"

enum { H_ECHO = 1, H_REPLY = 2, H_HANG = 4, H_SLEEP = 5, H_STOP = 6 };

static int stop, replies, bad;
static uint32_t want_args[2];
static unsigned char *want_data;
static size_t want_len;

static void die(const char *what, int rc)
{
    fprintf(stderr, "prog_pypeer: %s: %s\n", what, am_strerror(rc));
    exit(1);
}

static int reply_as_sent(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    if (len == 0)
        return am_reply(t, H_REPLY, a, n);
    if (len <= AM_MAX_BULK)
        return am_reply_bulk(t, H_REPLY, d, len, a, n);
    return am_reply_long(t, H_REPLY, d, len, a, n);
}

static void on_echo(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    int rc = reply_as_sent(t, a, n, d, len);
    if (rc < 0)
        fprintf(stderr, "prog_pypeer: echo reply: %s\n", am_strerror(rc));
}

static void on_hang(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    for (;;)
        pause();
}

static void on_sleep(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    long ms = n > 0 ? a[0] : 0;
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
    nanosleep(&ts, NULL);
    reply_as_sent(t, a, n, d, len);
}

static void on_stop(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    am_reply(t, H_REPLY, NULL, 0);
    stop = 1;
}

static void on_reply(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    replies++;
    if (n != 2 || a[0] != want_args[0] || a[1] != want_args[1] || len != want_len ||
        (len && memcmp(d, want_data, len) != 0))
        bad++;
}

static am_ep_t *make(const char *name)
{
    am_ep_t *ep;
    int rc = am_ep_create(name, NULL, &ep);
    if (rc < 0)
        die("am_ep_create", rc);
    return ep;
}

static void ready(void)
{
    printf("ready\n");
    fflush(stdout);
}

static int serve(const char *name)
{
    am_ep_t *ep = make(name);
    am_set_handler(ep, H_ECHO, on_echo);
    am_set_handler(ep, H_HANG, on_hang);
    am_set_handler(ep, H_SLEEP, on_sleep);
    am_set_handler(ep, H_STOP, on_stop);
    ready();
    while (!stop) {
        int rc = am_wait(ep, 1000);
        if (rc < 0 && rc != -EINTR)
            die("am_wait", rc);
    }
    return am_ep_destroy(ep) < 0;
}

/* Send request i (short, bulk or long by i % 3) and wait for its reply. */
static void one(am_ep_t *ep, unsigned i)
{
    want_args[0] = i, want_args[1] = i ^ 0xdeadbeefu;
    want_len = i % 3 == 0 ? 0 : i % 3 == 1 ? 1 + i % AM_MAX_BULK : 20000 + i;
    for (size_t k = 0; k < want_len; k++)
        want_data[k] = (unsigned char)(k * 7 + i);
    int rc = want_len == 0 ? am_request(ep, 0, H_ECHO, want_args, 2)
             : i % 3 == 1
                 ? am_request_bulk(ep, 0, H_ECHO, want_data, want_len, want_args, 2)
                 : am_request_long(ep, 0, H_ECHO, want_data, want_len, want_args, 2);
    if (rc < 0)
        die("request", rc);
    for (int waited = 0; replies <= (int)i; waited++) {
        if (waited >= 30)
            die("no reply in 30 s", 0);
        rc = am_wait(ep, 1000);
        if (rc < 0)
            die("am_wait", rc);
    }
}

static int client(const char *name, const char *server, unsigned n)
{
    am_ep_t *ep = make(name);
    am_set_handler(ep, H_REPLY, on_reply);
    int rc = am_ep_map(ep, 0, server);
    if (rc < 0)
        die("am_ep_map", rc);
    want_data = malloc(20000 + n);
    ready();
    for (unsigned i = 0; i < n; i++)
        one(ep, i);
    if (bad) {
        fprintf(stderr, "prog_pypeer: %d of %u replies wrong\n", bad, n);
        return 1;
    }
    printf("ok %u\n", n);
    free(want_data);
    return am_ep_destroy(ep) < 0;
}

static int hang(const char *name, const char *server)
{
    am_ep_t *ep = make(name);
    int rc = am_ep_map(ep, 0, server);
    if (rc < 0)
        die("am_ep_map", rc);
    ready();
    rc = am_request(ep, 0, H_HANG, NULL, 0);
    if (rc < 0)
        die("am_request", rc);
    printf("sent\n");
    fflush(stdout);
    for (;;)
        am_wait(ep, -1);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return serve(argv[2]);
    if (argc == 5 && strcmp(argv[1], "client") == 0)
        return client(argv[2], argv[3], (unsigned)atoi(argv[4]));
    if (argc == 4 && strcmp(argv[1], "hang") == 0)
        return hang(argv[2], argv[3]);
    fprintf(stderr,
            "usage: prog_pypeer server NAME | client NAME SERVER N | hang NAME SERVER\n");
    return 2;
}
