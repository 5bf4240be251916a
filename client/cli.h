/* SPDX-License-Identifier: GPL-2.0-only */
/* cli.h - what pgoffctl's commands share (pgoffctl.c) and the commands
 * that live in their own files. */
#ifndef PGOFF_CLI_H
#define PGOFF_CLI_H

#include <stdint.h>

/* --socket, else $PGOFF_SOCKET, else the default. */
const char *socket_path(const char *opt);
/* Flush stdout; a closed pipe (| head) exits 0, another error exits 1. */
void check_stdout(void);
int64_t now_ms(void);

int cmd_top(int argc, char **argv, const char *sock);	/* top.c */
int cmd_metrics(int argc, char **argv, const char *sock);	/* top.c */

#endif
