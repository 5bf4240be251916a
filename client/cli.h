/* SPDX-License-Identifier: GPL-2.0-only */
/* cli.h - what pgoffctl's commands share (pgoffctl.c) and the commands
 * that live in their own files. */
#ifndef PGOFF_CLI_H
#define PGOFF_CLI_H

#include <stdint.h>
#include "protocol/protocol.h"

/* The options of a subscription filter, in a getopt_long table. */
#define FILTER_OPTIONS \
	{ "pid", required_argument, NULL, 'p' }, \
	{ "type", required_argument, NULL, 'T' }, \
	{ "pg-wait", required_argument, NULL, 'W' }, \
	{ "db", required_argument, NULL, 'D' }, \
	{ "backend-type", required_argument, NULL, 'B' }, \
	{ "min", required_argument, NULL, 'm' }, \
	{ "user-stack", no_argument, NULL, 'U' }

/*
 * One of FILTER_OPTIONS into f: 1 when taken, 0 when opt is not one of
 * them, -1 after saying what is wrong with arg (a usage error).
 */
int filter_option(int opt, const char *arg, struct pgoff_filter *f);

/* --socket, else $PGOFF_SOCKET, else the default. */
const char *socket_path(const char *opt);
/* Flush stdout; a closed pipe (| head) exits 0, another error exits 1. */
void check_stdout(void);
int64_t now_ms(void);

int cmd_top(int argc, char **argv, const char *sock);	/* top.c */
int cmd_metrics(int argc, char **argv, const char *sock);	/* top.c */
int cmd_flame(int argc, char **argv, const char *sock);	/* flame_cmd.c */

#endif
