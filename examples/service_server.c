/* service_server.c - a service other users may call: it listens on a Unix
 * socket, lets in the uids named on its command line (and its own), and
 * answers handler 1 with the caller's uid and pid as the kernel told them.
 * Ends on SIGTERM or SIGINT.
 * Run it as: service_server SOCKET [UID...]   (SOCKET: a path, or @name) */
#include <shmam.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static am_ep_t *ep;
static volatile sig_atomic_t stop;

static void whoami(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    struct am_cred c;
    if (am_token_cred(t, &c) < 0) /* -ENODATA: a same-user peer mapped by name */
        c.uid = c.pid = 0;
    uint32_t r[2] = {(uint32_t)c.uid, (uint32_t)c.pid};
    am_reply(t, 0, r, 2);
}

static void on_signal(int sig)
{
    stop = 1;
    am_ep_wake(ep);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "usage: service_server SOCKET [UID...]\n"), 2;
    uid_t uids[16];
    int n = 0;
    for (int i = 2; i < argc && n < 16; i++)
        uids[n++] = (uid_t)strtoul(argv[i], NULL, 10);
    struct am_listen_opts lo = {.allow_uids = uids, .n_uids = n};
    int rc = am_ep_create(NULL, NULL, &ep); /* anonymous: nothing in /dev/shm */
    if (rc == 0)
        rc = am_set_handler(ep, 1, whoami);
    if (rc == 0)
        rc = am_ep_listen(ep, argv[1], &lo);
    if (rc < 0)
        return fprintf(stderr, "service_server: %s: %s\n", argv[1], am_strerror(rc)), 1;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("service_server: listening on %s\n", argv[1]);
    fflush(stdout);
    while (!stop)
        am_wait(ep, -1); /* serves the socket too: no thread of ours */
    return am_ep_destroy(ep) < 0; /* removes a path socket */
}
