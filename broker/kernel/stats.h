/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stats.h - the stats op: the kernel's aggregation read on request, and
 * the rows of exited processes folded by labels before they are dropped.
 */
#ifndef PGOFF_STATS_H
#define PGOFF_STATS_H

#include <json-c/json.h>
#include "broker/kernel/aggregate.h"
#include "protocol/protocol.h"

struct tracer;
struct pg_registry;

struct stats {
	struct tracer *tracer;
	struct pg_registry *registry;
	struct agg_label_rows retired;
	struct agg_label_rows retired_queries;	/* the same by query */
	uint64_t retire_failed;		/* rows of exited processes not kept */
	struct agg_label_rows highest;	/* by labels: the most time told */
	json_object *cached[PGOFF_STATS__BY];	/* the last reply's fields, by `by` */
	uint64_t cached_at[PGOFF_STATS__BY];
};

/*
 * Once a tick, before the registry's scan forgets them: rows of processes
 * that are gone are folded into the retired rows and deleted from the
 * kernel map (which would otherwise fill up). New processes are looked
 * up, so that short-lived backends get their labels while they live.
 */
void stats_retire_exited(struct stats *s);

/* The clock of the kernel's times: CLOCK_MONOTONIC, in ns. */
uint64_t stats_now_ns(void);

/*
 * The aggregation's rows as a stats reply has them before it is encoded
 * (rows of intervals still going on included, up to now): *rows is
 * malloc'ed (NULL on -ENOMEM). Returns 0, or -errno when some of the
 * kernel's rows could not be read (the rows read are still given).
 */
int stats_rows(struct stats *s, enum pgoff_stats_by by, uint64_t now,
	       struct agg_row **rows, size_t *n);

/* Fill a stats reply (see PROTOCOL.md). */
void stats_answer(struct stats *s, enum pgoff_stats_by by, json_object *reply);

void stats_free(struct stats *s);

#endif
