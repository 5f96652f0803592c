/*
 * cmdline.c - the request for help on every application's command line (see
 * cmdline.h).
 */
#include <string.h>

#include "common/cmdline.h"

int cmdline_asks_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}
