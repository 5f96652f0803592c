/*
 * cmdline.h - what every application's command line shares, shmam's and the
 * MPICH versions alike: the request for help.
 *
 * Each program asks cmdline_asks_help() first thing in main, before sc_init or
 * MPI_Init (which start or join a job), and then prints its usage on stdout
 * and exits 0; a bad command line prints the same usage on stderr and exits 2.
 */
#ifndef APPS_COMMON_CMDLINE_H
#define APPS_COMMON_CMDLINE_H

/* Is --help or -h among argv[1 .. argc-1]? */
int cmdline_asks_help(int argc, char **argv);

#endif
