/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_title.h - what a PostgreSQL process says about itself in its process
 * title ("postgres: 15/main: alice shop [local] idle"): backend type as
 * pg_stat_activity.backend_type spells it, user and database.
 */
#ifndef PGOFF_PG_TITLE_H
#define PGOFF_PG_TITLE_H

struct pg_title {
	char cluster_name[64];	/* "" when cluster_name is not set */
	char backend_type[64];	/* "client backend", "checkpointer", … */
	char user[64];		/* client backends and walsenders */
	char database[64];	/* client backends */
};

/*
 * Parse a title. A postmaster keeps its command line as title: it gets
 * backend_type "postmaster". Returns 0, or -EINVAL for an empty title.
 */
int pg_title_parse(const char *title, struct pg_title *out);

#endif
