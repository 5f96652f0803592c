/* service_client.c - calls service_server through its socket, with a 1 s
 * deadline, and prints who the server says it is.
 * Run it as: service_client SOCKET */
#include <shmam.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return fprintf(stderr, "usage: service_client SOCKET\n"), 2;
    am_ep_t *ep;
    struct am_result res = {0};
    int rc = am_ep_create(NULL, NULL, &ep); /* anonymous, POSIX */
    if (rc == 0)
        rc = am_ep_connect(ep, argv[1], 0); /* -EACCES: not let in */
    if (rc == 0)
        rc = am_call(ep, 0, 1, NULL, 0, NULL, 0, &res, 1000);
    if (rc < 0)
        return fprintf(stderr, "service_client: %s\n", am_strerror(rc)), 1;
    printf("service_client: the server sees uid %u pid %u (mine: %u %u)\n", res.args[0],
           res.args[1], (unsigned)getuid(), (unsigned)getpid());
    return am_ep_destroy(ep) < 0;
}
