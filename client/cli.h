/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli.h - pgoffctl's command layer (cli.c): the command table, the options
 * every command shares, the socket path and stdout; and the commands that
 * live in their own files.
 */
#ifndef PGOFF_CLI_H
#define PGOFF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "protocol/protocol.h"

/* The options of a subscription filter, in a getopt_long table. */
#define FILTER_OPTIONS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "type", required_argument, NULL, 'T' }, \
	{ "pg-wait", required_argument, NULL, 'W' }, \
	{ "db", required_argument, NULL, 'D' }, \
	{ "backend-type", required_argument, NULL, 'B' }, \
	{ "query-id", required_argument, NULL, 'Q' }, \
	{ "container", required_argument, NULL, 'C' }, \
	{ "min", required_argument, NULL, 'm' }, \
	{ "user-stack", no_argument, NULL, 'U' }

/* The options every command takes (see cli_option), in a getopt_long table. */
#define CLI_OPTIONS \
	{ "socket", required_argument, NULL, 's' }, \
	{ "help", no_argument, NULL, 'h' }

/*
 * One of FILTER_OPTIONS into f: 1 when taken, 0 when opt is not one of
 * them, -1 after saying what is wrong with arg (a usage error).
 */
int filter_option(int opt, const char *arg, struct pgoff_filter *f);

/*
 * What a command's option parser returns besides EXIT_OK (go on) and an
 * exit code: --help was printed, the command is done and pgoffctl exits
 * 0. cli_run turns it into EXIT_OK; a parser never exits.
 */
#define CLI_HELP (-10)
/* cli_option took an option: the parser goes on. */
#define CLI_NEXT (-11)

/*
 * The options every command shares, for what getopt_long returned that
 * the command's own options did not take: --socket (into *sock: CLI_NEXT),
 * --help (usage to stdout: CLI_HELP), anything else (usage to stderr:
 * EXIT_USAGE).
 */
int cli_option(int opt, const char *arg, const char **sock,
	       void (*usage)(FILE *f));
/* After getopt_long: EXIT_OK, or EXIT_USAGE after naming the first
 * argument left (commands take options only). */
int cli_no_args(const char *cmd, int argc, char **argv);

/*
 * A time argument (--since, --at, --diff's start): a duration ago such as
 * 10m, a local time of day such as 02:50 (the latest one that is not in
 * the future), or an RFC 3339 time, into wall-clock ns. 0, or -1 after
 * saying why, naming opt.
 */
int cli_parse_when(const char *opt, const char *arg, int64_t *ns);
/* The end of a window (--until, --diff's end): as cli_parse_when, but a
 * time of day is the first one after since_ns ("--since 23:50 --until
 * 00:10" spans midnight). */
int cli_parse_until(const char *opt, const char *arg, int64_t since_ns,
		    int64_t *ns);
/* A local time of day (seconds since midnight) near ref_ns: the latest at
 * or before it, or with after the first after it. */
int64_t cli_clock_time(int secs, int64_t ref_ns, bool after);
/*
 * A past window: --since (required) and --until (NULL: *until_ns is left
 * as it is, now) into wall-clock ns, --until after --since. 0, or -1
 * after saying why, naming cmd.
 */
int cli_parse_window(const char *cmd, const char *since, const char *until,
		     int64_t *since_ns, int64_t *until_ns);

/* A command: its name, what runs it, and one line for pgoffctl --help. */
struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv, const char *sock);
	const char *summary;
};

/*
 * Run the command argv[0] of the table (ended by a NULL name) with its
 * arguments; getopt starts afresh. Returns its exit code (EXIT_OK after
 * its --help), or EXIT_USAGE for a command not in the table.
 */
int cli_run(const struct cli_cmd *cmds, int argc, char **argv,
	    const char *sock);
/* The table's commands and summaries, as pgoffctl --help lists them. */
void cli_list(FILE *f, const struct cli_cmd *cmds);

#define DEFAULT_SOCKET "/run/pgoff/pgoffd.sock"
/* --socket, else $PGOFF_SOCKET, else DEFAULT_SOCKET. */
const char *socket_path(const char *opt);
/* Flush stdout; a closed pipe (| head) exits 0, another error exits 1. */
void check_stdout(void);

int cmd_top(int argc, char **argv, const char *sock);	/* top.c */
int cmd_metrics(int argc, char **argv, const char *sock);	/* top.c */
int cmd_flame(int argc, char **argv, const char *sock);	/* flame_cmd.c */

#endif
