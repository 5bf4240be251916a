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
 * Parse the title of a process of a PostgreSQL major version (13..19; any
 * other, or 0 for unknown, takes the spellings of every version, newest
 * first). backend_type is spelled as that version's pg_stat_activity
 * spells it: a background worker's title is its bgw_name, its
 * backend_type its bgw_type ("logical replication apply worker for
 * subscription 16398" is a "logical replication worker" in 16, a
 * "logical replication apply worker" from 17 on). A postmaster keeps its
 * command line as title: it gets backend_type "postmaster". Returns 0, or
 * -EINVAL for an empty title.
 */
int pg_title_parse(const char *title, int pg_major, struct pg_title *out);

#endif
