/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * monotonic.h - counters that never go back while one pgoffd runs.
 *
 * pgoffd's rows by labels can lose part of their count between two
 * replies: a backend whose process title was not read yet counts under
 * empty labels, then its whole row moves to its database's labels. To
 * Prometheus a counter that goes down is a reset, and rate() would count
 * the whole remaining value again. So each series (rows with the same
 * labels, summed) is held at the highest count, time and buckets it had:
 * a move shows at once in the new series and slowly in the old one, and
 * every decrease held back is counted (exported, never silent).
 * Forget the state when pgoffd restarts: that is a real reset.
 */
#ifndef PGOFF_EXPORTER_MONOTONIC_H
#define PGOFF_EXPORTER_MONOTONIC_H

#include <stdint.h>
#include "client/stats_view.h"

struct mono_state {
	struct sv_row *rows;	/* sorted by labels */
	size_t n;
	uint64_t decreases;	/* values held back, since the exporter started */
};

/*
 * Sum s's rows with the same labels (pid, idle and statement included),
 * then raise each value to the highest seen for its labels. Series
 * missing from s are remembered only if s->truncated (the reply left
 * them out). Returns 0 or -ENOMEM (m is then as it was; s's rows may be
 * sorted and merged, which changes no sum).
 */
int mono_apply(struct mono_state *m, struct sv_snapshot *s);
/* Forget every series (pgoffd restarted); decreases stays counted. */
void mono_reset(struct mono_state *m);

#endif
