/*
 * prog_dyn.c - a program linked against libshmam.so (check_abi runs it): an
 * endpoint sends itself 3 messages and delivers them, then the program says
 * whether the shared library, not a static copy, did it.  Prints "delivered N
 * from libshmam.so.1" or "delivered N statically"; exit 0 if N is 3.
 * Usage: prog_dyn NAME
 */
#include <stdio.h>
#include <string.h>

#include "shmam.h"

static int got;

static void on_msg(am_token_t *t, const uint32_t *a, int n, void *d, size_t len)
{
    got += n == 1 && a[0] == (uint32_t)got;
}

/* Is libshmam.so.1 mapped into this process? */
static int shared_lib_mapped(void)
{
    char line[512];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "libshmam.so.1") != NULL;
    if (f)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    am_ep_t *ep = NULL;
    if (argc != 2 || am_ep_create(argv[1], NULL, &ep) != 0 ||
        am_set_handler(ep, 1, on_msg) != 0 || am_ep_map(ep, 0, argv[1]) != 0)
        return 1;
    for (uint32_t i = 0; i < 3; i++)
        if (am_request(ep, 0, 1, &i, 1) != 0)
            return 1;
    while (got < 3 && am_poll(ep) >= 0)
        ;
    am_ep_destroy(ep);
    printf("delivered %d %s\n", got,
           shared_lib_mapped() ? "from libshmam.so.1" : "statically");
    return got == 3 ? 0 : 1;
}
