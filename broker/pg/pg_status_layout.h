/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_status_layout.h - what pgoff reads of a backend's own status entry
 * (PgBackendStatus, through the exported MyBEEntry, PostgreSQL 14 and
 * later), per major: byte offsets and the values of BackendState.
 *
 * A backend writes its entry at every statement's start and end
 * (st_changecount grows by 2 at each write): the entry tells which
 * statement a wait is in (st_query_id, as pg_stat_statements names it),
 * whether one runs (st_state), and, between two waits on one event,
 * whether a statement ended (st_changecount moved). The rows are
 * generated from each major's own headers (pg_status_layout_data.c);
 * a major without one is not read.
 */
#ifndef PGOFF_PG_STATUS_LAYOUT_H
#define PGOFF_PG_STATUS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct pg_status_layout {
	int major;
	int changecount, procpid, state;	/* byte offsets */
	int query_id;			/* byte offset; -1: none (13) */
	int query_id_size;		/* 8 */
	/* BackendState's values; -1: not in this major */
	int idle, running, idle_in_xact, fastpath, idle_in_xact_aborted,
	    disabled, starting;
};

extern const struct pg_status_layout pg_status_layouts[];
extern const size_t pg_status_layouts_n;

/* The layout of a major; NULL if none was generated for it. */
const struct pg_status_layout *pg_status_layout(int major);

struct pgoff_target;

/*
 * What the kernel needs to read a backend's entry (the target's status_*
 * fields): the entry's pointer variable at status_ptr (MyBEEntry), laid
 * out as major's. With no layout, or status_ptr 0, it reads nothing.
 */
void pg_status_target(int major, uint64_t status_ptr, struct pgoff_target *t);

/* What a backend in state (a raw st_state) is doing, as
 * pg_stat_activity.state names it; NULL when unknown. */
const char *pg_status_state_name(const struct pg_status_layout *l, int state);

/* Whether state is a statement running (active, fastpath function call). */
int pg_status_state_active(const struct pg_status_layout *l, int state);

#endif
