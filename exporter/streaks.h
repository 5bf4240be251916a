/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * streaks.h - how long one backend has been in one PostgreSQL wait,
 * from pgoffd's stats by pid at successive scrapes (no pid label leaves
 * the exporter: the gauge is the longest per wait event).
 *
 * A process whose off-CPU time under one wait event (every kernel wait
 * type summed) covers at least 99 % of the time between two snapshots
 * was in that wait throughout: its streak goes on, or starts at the
 * earlier snapshot. Anything less ends it. A lock wait that PostgreSQL's
 * deadlock check splits into 1 s intervals is one streak, which the
 * kernel's interval histogram cannot show; the length is known to the
 * scrape interval (a streak starts at the first snapshot that sees it).
 */
#ifndef PGOFF_EXPORTER_STREAKS_H
#define PGOFF_EXPORTER_STREAKS_H

#include <stdint.h>
#include <stdio.h>
#include "client/stats_view.h"

struct streak {
	uint32_t pid;
	char data_dir[256];	/* its cluster, as sv_row has it */
	struct sv_ident ident;
	char wait_event_type[32], wait_event[64];
	uint64_t since_ns;	/* the broker's CLOCK_MONOTONIC */
};

struct streaks {
	struct streak *v;
	size_t n;
	uint64_t now_ns;	/* of the last snapshot */
};

/* Update from the snapshots by pid prev and cur (cur later). Returns 0 or
 * -ENOMEM (s is then empty). */
int streaks_update(struct streaks *s, const struct sv_snapshot *prev,
		   const struct sv_snapshot *cur);
void streaks_reset(struct streaks *s);

/* pgoff_wait_longest_seconds: per cluster and wait event, the longest
 * streak. Returns 0 or -ENOMEM. */
int streaks_render(FILE *out, const struct streaks *s);

#endif
