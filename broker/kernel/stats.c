// SPDX-License-Identifier: GPL-2.0-only
/* stats.c - the kernel's aggregation, read for the stats op. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "broker/pg/pg_registry.h"
#include "broker/kernel/stats.h"
#include "broker/kernel/tracer.h"
#include "common/log.h"

/* Room in a stats reply for the rows; the envelope is small. */
#define STATS_BUDGET (PGOFF_MAX_LINE - 4096)

/* Alive, zombie included: EPERM says it exists (pgoffd runs unprivileged). */
static bool process_exists(uint32_t pid)
{
	return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

struct agg_entry {
	struct pgoff_agg_key key;
	struct pgoff_agg val;
};

struct collect {
	struct stats *s;
	bool exited_only;
	struct agg_entry *v;
	size_t n, cap;
};

static int collect_row(void *ctx, const struct pgoff_agg_key *key,
		       const struct pgoff_agg *val)
{
	struct collect *c = ctx;

	/* a row names a traced process and its cluster: learnt while it
	 * lives, its labels stay for the rows it leaves behind */
	pg_registry_learn(c->s->registry, key->tgid, key->cluster);
	if (c->exited_only && process_exists(key->tgid))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		struct agg_entry *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].key = *key;
	c->v[c->n].val = *val;
	c->n++;
	return 0;
}

/* The part of an interval still going on, as a row without a count:
 * cumulative time then grows smoothly and never goes back when the
 * interval ends (it is then in the kernel's row, whole). */
struct ongoing {
	struct collect *c;
	uint64_t now_ns;
};

static int collect_ongoing(void *ctx, uint32_t pid,
			   const struct pgoff_start *s)
{
	struct ongoing *o = ctx;
	struct pgoff_agg_key k = {
		.tgid = s->tgid,
		.cluster = s->cluster,
		.syscall = s->syscall,
		.state = s->state,
		.query_id = s->query_id,
	};
	struct pgoff_agg v = { 0 };

	(void)pid;
	if (!s->tgid || !s->start_ns || o->now_ns <= s->start_ns)	/* on a CPU */
		return 0;
	if (s->flags & PGOFF_F_PG_WAIT) {
		k.flags |= PGOFF_AGG_F_PG_WAIT;
		k.pg_wait_event_info = s->pg_wait_event_info;
	}
	if (s->flags & PGOFF_F_IN_STATEMENT)
		k.flags |= PGOFF_AGG_F_IN_STATEMENT;
	if (s->flags & PGOFF_F_PG_STATUS)
		k.flags |= PGOFF_AGG_F_PG_STATUS |
			   (s->pg_state & PGOFF_AGG_PG_STATE_MASK) <<
			   PGOFF_AGG_PG_STATE_SHIFT;
	v.total_ns = o->now_ns - s->start_ns;
	return collect_row(o->c, &k, &v);
}

static void make_row(struct stats *s, struct agg_row *row,
		     const struct agg_entry *e)
{
	const struct pg_cluster *c = pg_registry_cluster(s->registry,
							 e->key.cluster);
	const struct pg_proc *p = pg_registry_proc(s->registry, e->key.tgid);

	agg_row_make(row, &e->key, &e->val, p, c);
	if (c && row->pg_wait_event_info && !row->pg_wait_name[0])
		pg_registry_name_unknown(s->registry, c->id,
					 row->pg_wait_event_info);
}

void stats_retire_exited(struct stats *s)
{
	struct collect c = { .s = s, .exited_only = true };
	struct agg_row row, q;
	int err = tracer_agg_foreach(s->tracer, collect_row, &c);

	if (err)
		log_warnx("reading the kernel aggregation: %s", strerror(-err));
	for (size_t i = 0; i < c.n; i++) {
		/* deleted first: a row that stays would be retired twice */
		if (tracer_agg_delete(s->tracer, &c.v[i].key))
			continue;
		make_row(s, &row, &c.v[i]);
		q = row;
		agg_row_to_query(&q);
		if (agg_retire(&s->retired_queries, &q, PGOFF_STATS_BY_QUERY))
			s->retire_failed++;
		agg_row_to_labels(&row);
		if (agg_retire(&s->retired, &row, PGOFF_STATS_BY_LABELS))
			s->retire_failed++;
	}
	free(c.v);
}

uint64_t stats_now_ns(void)
{
	struct timespec now;

	/* the ring buffer's clock: bpf_ktime_get_ns is CLOCK_MONOTONIC */
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
}

/*
 * The reply's fields, computed. The kernel map is read before the starts
 * of threads off the CPU, so an interval that ends between the two reads
 * is in neither (never in both): time can only be short for a moment.
 * Rows by labels (cumulative counters, for Prometheus) are then held at
 * their highest value so far, so that moment never shows as a reset.
 */
int stats_rows(struct stats *s, enum pgoff_stats_by by, uint64_t now,
	       struct agg_row **out, size_t *nout)
{
	struct collect c = { .s = s };
	struct ongoing o = { .c = &c, .now_ns = now };
	const struct agg_label_rows *retired =
		by == PGOFF_STATS_BY_LABELS ? &s->retired :
		by == PGOFF_STATS_BY_QUERY ? &s->retired_queries : NULL;
	struct agg_row *rows;
	size_t n = 0;
	int err;

	err = tracer_agg_foreach(s->tracer, collect_row, &c);
	if (!err)
		err = tracer_threads_foreach(s->tracer, collect_ongoing, &o);
	if (err)
		log_warnx("reading the kernel aggregation: %s", strerror(-err));
	rows = calloc(c.n + (retired ? retired->n : 0) + 1, sizeof(*rows));
	if (rows) {
		for (size_t i = 0; i < c.n; i++) {
			make_row(s, &rows[n], &c.v[i]);
			agg_row_to(&rows[n], by);
			n++;
		}
		if (retired && retired->n) {
			memcpy(rows + n, retired->rows,
			       retired->n * sizeof(*rows));
			n += retired->n;
		}
		n = agg_rows_merge(rows, n, by);
	} else if (!err) {
		err = -ENOMEM;
	}
	free(c.v);
	*out = rows;
	*nout = n;
	return err;
}

static json_object *compute(struct stats *s, enum pgoff_stats_by by,
			    uint64_t now)
{
	json_object *f = json_object_new_object();
	struct agg_row *rows;
	size_t n;
	int err = stats_rows(s, by, now, &rows, &n);

	if (rows && by == PGOFF_STATS_BY_LABELS &&
	    agg_hold_highest(&s->highest, rows, &n))
		err = -ENOMEM;
	json_object_object_add(f, "by", json_object_new_string(
				       pgoff_stats_by_name(by)));
	json_object_object_add(f, "now_ns", json_object_new_int64((int64_t)now));
	json_object_object_add(f, "hist_unit_ns", json_object_new_int64(PGOFF_AGG_UNIT_NS));
	agg_rows_encode(f, rows, n, by, STATS_BUDGET);
	json_object_object_add(f, "retired_overflow", json_object_new_int64(
		(int64_t)(by == PGOFF_STATS_BY_QUERY ?
			  s->retired_queries.overflowed :
			  s->retired.overflowed)));
	json_object_object_add(f, "complete", json_object_new_boolean(
		!err && rows && s->retire_failed == 0));
	free(rows);
	return f;
}

/* Requests closer than this share one reading of the kernel maps: a
 * client asking in a loop cannot keep the event loop walking them. */
#define STATS_REUSE_NS 100000000ULL

void stats_answer(struct stats *s, enum pgoff_stats_by by, json_object *reply)
{
	uint64_t now = stats_now_ns();
	json_object *f = s->cached[by];

	if (!f || now - s->cached_at[by] >= STATS_REUSE_NS) {
		json_object_put(s->cached[by]);
		f = s->cached[by] = compute(s, by, now);
		s->cached_at[by] = now;
	}
	json_object_object_foreach(f, key, val)
		json_object_object_add(reply, key, json_object_get(val));
}

void stats_free(struct stats *s)
{
	agg_label_rows_free(&s->retired);
	agg_label_rows_free(&s->retired_queries);
	agg_label_rows_free(&s->highest);
	for (size_t i = 0; i < PGOFF_STATS__BY; i++)
		json_object_put(s->cached[i]);
}
