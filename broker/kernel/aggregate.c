// SPDX-License-Identifier: GPL-2.0-only
/* aggregate.c - kernel aggregation rows: label, merge, retire, encode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/kernel/aggregate.h"
#include "broker/kernel/json_fields.h"
#include "broker/pg/pg_registry.h"
#include "broker/pg/pg_status_layout.h"

void agg_row_make(struct agg_row *row, const struct pgoff_agg_key *k,
		  const struct pgoff_agg *v, const struct pg_proc *p,
		  const struct pg_cluster *c)
{
	enum pgoff_wait kernel = pgoff_classify_syscall(k->syscall, k->state);

	memset(row, 0, sizeof(*row));
	row->pid = k->tgid;
	row->cluster = k->cluster;
	row->pg_known = k->flags & PGOFF_AGG_F_PG_WAIT;
	row->pg_wait_event_info = row->pg_known ? k->pg_wait_event_info : 0;
	row->wait = pgoff_wait_refine(kernel, row->pg_wait_event_info,
				      k->flags & PGOFF_AGG_F_IN_STATEMENT);
	row->query_id = k->query_id;
	row->query_folded = k->flags & PGOFF_AGG_F_QUERY_FOLDED;
	row->pg_status = k->flags & PGOFF_AGG_F_PG_STATUS;
	row->pg_state = (k->flags >> PGOFF_AGG_PG_STATE_SHIFT) &
			PGOFF_AGG_PG_STATE_MASK;
	if (c) {
		const char *run = row->pg_wait_event_info ?
			pg_names_find(&c->names, row->pg_wait_event_info) : NULL;

		if (run)
			snprintf(row->pg_wait_name, sizeof(row->pg_wait_name),
				 "%s", run);
		row->pg_major = c->info.major;
		memcpy(row->data_dir, c->info.data_dir, sizeof(row->data_dir));
		row->data_dir[sizeof(row->data_dir) - 1] = '\0';
		row->ident = c->ident;
	}
	if (p && p->titled)
		row->title = p->title;
	row->idle = pgoff_wait_idle(p && p->titled ? p->title.backend_type : NULL,
				    row->pg_wait_event_info,
				    row->pg_known || row->pg_status,
				    k->flags & PGOFF_AGG_F_IN_STATEMENT);
	row->count = v->count;
	row->total_ns = v->total_ns;
	memcpy(row->hist, v->hist, sizeof(row->hist));
}

void agg_row_to_labels(struct agg_row *row)
{
	row->pid = 0;
	memset(row->title.user, 0, sizeof(row->title.user));
	row->query_id = 0;
	row->query_folded = false;
}

void agg_row_to_query(struct agg_row *row)
{
	row->pid = 0;
	memset(row->title.user, 0, sizeof(row->title.user));
	memset(row->title.backend_type, 0, sizeof(row->title.backend_type));
}

void agg_row_to(struct agg_row *row, enum pgoff_stats_by by)
{
	if (by == PGOFF_STATS_BY_LABELS)
		agg_row_to_labels(row);
	else if (by == PGOFF_STATS_BY_QUERY)
		agg_row_to_query(row);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* One cluster: its identity (two at one path differ) and its path (a
 * cluster moved keeps its id, and its series before the move are the
 * path's). */
static int cmp_cluster(const struct agg_row *a, const struct agg_row *b)
{
	int d = cluster_ident_cmp(&a->ident, &b->ident);

	return d ? d : strcmp(a->data_dir, b->data_dir);
}

/* Identity of a row: what two rows must share to be one. */
static int cmp_identity(const struct agg_row *a, const struct agg_row *b,
			enum pgoff_stats_by by)
{
	int d;

	if (by == PGOFF_STATS_BY_PID) {
		if ((d = cmp_u32(a->pid, b->pid)))
			return d;
		/* pid 0: (other) rows, one a cluster (agg_rows_keep) */
		if (!a->pid && (d = cmp_cluster(a, b)))
			return d;
		/* which statement: top by query reads rows by pid */
		if ((d = cmp_u64(a->query_id, b->query_id)) ||
		    (d = cmp_u32(a->query_folded, b->query_folded)))
			return d;
	} else {
		if ((d = cmp_cluster(a, b)) ||
		    (d = strcmp(a->title.database, b->title.database)) ||
		    (d = strcmp(a->title.backend_type, b->title.backend_type)) ||
		    (d = a->pg_major - b->pg_major))
			return d;
		if (by == PGOFF_STATS_BY_QUERY &&
		    ((d = cmp_u64(a->query_id, b->query_id)) ||
		     (d = cmp_u32(a->query_folded, b->query_folded))))
			return d;
	}
	if ((d = cmp_u32(a->pg_known, b->pg_known)) ||
	    (d = cmp_u32(a->pg_wait_event_info, b->pg_wait_event_info)) ||
	    (d = cmp_u32(a->idle, b->idle)))
		return d;
	/* an idle row's state (idle, idle in transaction) is its own row */
	if (a->idle && ((d = cmp_u32(a->pg_status, b->pg_status)) ||
			(d = cmp_u32(a->pg_state, b->pg_state))))
		return d;
	return cmp_u32(a->wait, b->wait);
}

static int cmp_by_pid(const void *a, const void *b)
{
	return cmp_identity(a, b, PGOFF_STATS_BY_PID);
}

static int cmp_by_labels(const void *a, const void *b)
{
	return cmp_identity(a, b, PGOFF_STATS_BY_LABELS);
}

static int cmp_by_query(const void *a, const void *b)
{
	return cmp_identity(a, b, PGOFF_STATS_BY_QUERY);
}

static int cmp_time_desc(const void *pa, const void *pb)
{
	const struct agg_row *a = pa, *b = pb;

	return a->total_ns < b->total_ns ? 1 : a->total_ns > b->total_ns ? -1 :
	       cmp_by_pid(a, b);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void row_add(struct agg_row *dst, const struct agg_row *src)
{
	dst->count = sat_add(dst->count, src->count);
	dst->total_ns = sat_add(dst->total_ns, src->total_ns);
	for (size_t i = 0; i < PGOFF_AGG_BUCKETS; i++)
		dst->hist[i] = sat_add(dst->hist[i], src->hist[i]);
}

size_t agg_rows_merge(struct agg_row *rows, size_t n, enum pgoff_stats_by by)
{
	size_t out = 0;

	if (!n)
		return 0;
	qsort(rows, n, sizeof(*rows),
	      by == PGOFF_STATS_BY_PID ? cmp_by_pid :
	      by == PGOFF_STATS_BY_QUERY ? cmp_by_query : cmp_by_labels);
	for (size_t i = 1; i < n; i++) {
		if (cmp_identity(&rows[out], &rows[i], by) == 0)
			row_add(&rows[out], &rows[i]);
		else
			rows[++out] = rows[i];
	}
	out++;
	qsort(rows, out, sizeof(*rows), cmp_time_desc);
	return out;
}

static bool is_other(const struct agg_row *row)
{
	return strcmp(row->title.backend_type, AGG_OTHER) == 0;
}

/* The row's labels become the catch-all's; its counts stay. */
static void make_other(struct agg_row *row)
{
	struct agg_row kept = *row;

	memset(row, 0, sizeof(*row));
	strcpy(row->title.backend_type, AGG_OTHER);
	row_add(row, &kept);
}

/* Clusters told apart when rows are kept (agg_rows_keep); rows of more
 * share one more (other) row. */
#define KEEP_CLUSTERS 64

/* A cluster as rows are kept by it: as cmp_cluster tells them apart. */
struct keep_key {
	struct cluster_ident ident;
	char data_dir[256];
};

/* The cluster of row in the table (added if there is room), or the
 * index past the table for all the others. */
static size_t keep_cluster(struct keep_key *keys, size_t *n,
			   const struct agg_row *row)
{
	for (size_t i = 0; i < *n; i++)
		if (!cluster_ident_cmp(&keys[i].ident, &row->ident) &&
		    !strcmp(keys[i].data_dir, row->data_dir))
			return i;
	if (*n == KEEP_CLUSTERS)
		return KEEP_CLUSTERS;
	keys[*n].ident = row->ident;
	memcpy(keys[*n].data_dir, row->data_dir, sizeof(keys[*n].data_dir));
	keys[*n].data_dir[sizeof(keys[*n].data_dir) - 1] = '\0';
	return (*n)++;
}

/* The largest number of rows each cluster may keep within budget, as
 * many as it has if it has fewer (the rest shared by the others). */
static size_t keep_cap(const size_t *count, size_t nc, size_t budget)
{
	size_t lo = 0, hi = budget;

	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2, sum = 0;

		for (size_t i = 0; i < nc; i++)
			sum += count[i] < mid ? count[i] : mid;
		if (sum <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

size_t agg_rows_keep(struct agg_row *rows, size_t n, size_t keep,
		     uint64_t *folded)
{
	size_t count[KEEP_CLUSTERS + 1] = { 0 }, kept[KEEP_CLUSTERS + 1] = { 0 };
	size_t nc = 0, out = 0, cap, budget;
	struct keep_key *keys;
	struct agg_row *other;
	bool *has_other;

	if (n <= keep || keep <= KEEP_CLUSTERS + 1)
		return n;
	keys = calloc(KEEP_CLUSTERS, sizeof(*keys));
	other = calloc(KEEP_CLUSTERS + 1, sizeof(*other));
	has_other = calloc(KEEP_CLUSTERS + 1, sizeof(*has_other));
	if (!keys || !other || !has_other) {
		free(keys);
		free(other);
		free(has_other);
		return n;	/* kept whole: merged again later */
	}
	for (size_t i = 0; i < n; i++)
		count[keep_cluster(keys, &nc, &rows[i])]++;
	/* one place each for the (other) rows */
	budget = keep - (nc + 1);
	cap = keep_cap(count, KEEP_CLUSTERS + 1, budget);
	for (size_t i = 0; i < n; i++) {
		size_t c = keep_cluster(keys, &nc, &rows[i]);

		if (!is_other(&rows[i]) && kept[c] < cap) {
			kept[c]++;
			rows[out++] = rows[i];	/* out <= i */
			continue;
		}
		*folded += !is_other(&rows[i]);
		if (!has_other[c]) {
			other[c] = rows[i];
			make_other(&other[c]);
			if (c < KEEP_CLUSTERS) {	/* its cluster's */
				memcpy(other[c].data_dir, keys[c].data_dir,
				       sizeof(other[c].data_dir));
				other[c].ident = keys[c].ident;
				other[c].cluster = rows[i].cluster;
				other[c].pg_major = rows[i].pg_major;
			}
			has_other[c] = true;
		} else {
			row_add(&other[c], &rows[i]);
		}
	}
	for (size_t c = 0; c <= KEEP_CLUSTERS; c++)
		if (has_other[c])
			rows[out++] = other[c];
	qsort(rows, out, sizeof(*rows), cmp_time_desc);
	free(keys);
	free(other);
	free(has_other);
	return out;
}

/*
 * Append a copy of row to r. Grown by half again, not by one: a row is
 * over a kilobyte, and thousands of label sets copied one realloc at a
 * time cost a quadratic time (a minute under ASan for 4096).
 */
static int append_row(struct agg_label_rows *r, const struct agg_row *row)
{
	if (r->n == r->cap) {
		size_t cap = r->cap < 16 ? 16 : r->cap + r->cap / 2;
		struct agg_row *grown = reallocarray(r->rows, cap,
						     sizeof(*r->rows));

		if (!grown)
			return -ENOMEM;
		r->rows = grown;
		r->cap = cap;
	}
	r->rows[r->n++] = *row;
	return 0;
}

int agg_retire(struct agg_label_rows *r, const struct agg_row *row,
	       enum pgoff_stats_by by)
{
	for (size_t i = 0; i < r->n; i++) {
		if (cmp_identity(&r->rows[i], row, by) == 0) {
			row_add(&r->rows[i], row);
			return 0;
		}
	}
	if (r->n == AGG_MAX_RETIRED) {
		/* the last slot becomes the catch-all: its time and that of
		 * all later label sets are kept, their labels are not */
		struct agg_row *other = &r->rows[r->n - 1];

		if (!is_other(other))
			make_other(other);
		row_add(other, row);
		r->overflowed++;
		return 0;
	}
	return append_row(r, row);
}

static int cmp_labels_key(const void *key, const void *elem)
{
	return cmp_identity(key, elem, PGOFF_STATS_BY_LABELS);
}

/* Hold row against h's entry for its labels, or give it one. */
static int hold(struct agg_label_rows *h, size_t sorted, struct agg_row *row,
		size_t *added)
{
	struct agg_row *m = sorted ? bsearch(row, h->rows, sorted,
					     sizeof(*h->rows),
					     cmp_labels_key) : NULL;

	/* the unsorted tail: entries added during this call (few) */
	for (size_t i = sorted; !m && i < h->n; i++)
		if (cmp_identity(&h->rows[i], row, PGOFF_STATS_BY_LABELS) == 0)
			m = &h->rows[i];
	if (m) {
		if (m->total_ns > row->total_ns)
			row->total_ns = m->total_ns;
		m->total_ns = row->total_ns;
		return 0;
	}
	if (append_row(h, row))	/* past the sorted part */
		return -ENOMEM;
	(*added)++;
	return 0;
}

int agg_hold_highest(struct agg_label_rows *h, struct agg_row *rows, size_t *n)
{
	size_t added = 0, sorted = h->n, folded = 0;
	int err = 0;

	for (size_t i = 0; i < *n && !err; i++) {
		struct agg_row *m = sorted ? bsearch(&rows[i], h->rows, sorted,
						     sizeof(*h->rows),
						     cmp_labels_key) : NULL;

		if (m || is_other(&rows[i])) {
			if (!is_other(&rows[i]))
				err = hold(h, sorted, &rows[i], &added);
			continue;	/* the catch-all: once merged, below */
		}
		/* one place is the catch-all's */
		if (h->n >= AGG_MAX_HELD - 1) {
			make_other(&rows[i]);
			h->overflowed++;
			folded++;
			continue;
		}
		err = hold(h, sorted, &rows[i], &added);
	}
	if (!err && folded)	/* one catch-all row, with the retired one */
		*n = agg_rows_merge(rows, *n, PGOFF_STATS_BY_LABELS);
	for (size_t i = 0; i < *n && !err; i++)
		if (is_other(&rows[i]))
			err = hold(h, sorted, &rows[i], &added);
	if (added)
		qsort(h->rows, h->n, sizeof(*h->rows), cmp_by_labels);
	return err;
}

void agg_label_rows_free(struct agg_label_rows *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

static json_object *encode_row(const struct agg_row *row,
			       enum pgoff_stats_by by)
{
	json_object *o = json_object_new_object();
	json_object *hist = json_object_new_array();
	const struct pg_title *t = &row->title;
	size_t last = 0;

	if (by == PGOFF_STATS_BY_PID)
		json_object_object_add(o, "pid", json_object_new_int64(row->pid));
	json_object_object_add(o, "cluster", json_object_new_int64(row->cluster));
	json_add_ident(o, &row->ident);
	json_add_text(o, "data_dir", row->data_dir, sizeof(row->data_dir));
	if (t->backend_type[0])
		json_add_text(o, "backend_type", t->backend_type,
			       sizeof(t->backend_type));
	else
		json_object_object_add(o, "backend_type", NULL);
	if (t->database[0])
		json_add_text(o, "database", t->database, sizeof(t->database));
	if (by == PGOFF_STATS_BY_PID && t->user[0])
		json_add_text(o, "user", t->user, sizeof(t->user));
	if (row->query_id)
		json_add_query_id(o, row->query_id);
	if (row->query_folded)
		json_object_object_add(o, "query_folded",
				       json_object_new_boolean(true));
	if (row->idle) {
		const char *state = row->pg_status ?
			pg_status_state_name(pg_status_layout(row->pg_major),
					     row->pg_state) : NULL;

		json_object_object_add(o, "idle", json_object_new_boolean(true));
		if (state)
			json_object_object_add(o, "state",
					       json_object_new_string(state));
	}
	json_add_pg_wait(o, row->pg_major, row->pg_wait_event_info,
			 row->pg_wait_name[0] ? row->pg_wait_name : NULL);
	if (!row->pg_known)
		json_object_object_add(o, "pg_known",
				       json_object_new_boolean(false));
	json_object_object_add(o, "wait",
			       json_object_new_string(pgoff_wait_name(row->wait)));
	json_object_object_add(o, "count",
			       json_object_new_int64((int64_t)row->count));
	json_object_object_add(o, "time_ns",
			       json_object_new_int64((int64_t)row->total_ns));
	for (size_t i = 0; i < PGOFF_AGG_BUCKETS; i++)
		if (row->hist[i])
			last = i + 1;
	for (size_t i = 0; i < last; i++)	/* trailing zeros left out */
		json_object_array_add(hist, json_object_new_int64(
					      (int64_t)row->hist[i]));
	json_object_object_add(o, "hist", hist);
	return o;
}

void agg_rows_encode(json_object *reply, const struct agg_row *rows,
		     size_t n, enum pgoff_stats_by by, size_t budget)
{
	json_object *arr = json_object_new_array();
	size_t used = 0, shown = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *o = encode_row(&rows[i], by);

		used += strlen(pgoff_json_line(o, NULL)) + 1;
		if (used > budget) {	/* rows come longest first: the rest is less */
			json_object_put(o);
			break;
		}
		json_object_array_add(arr, o);
		shown++;
	}
	json_object_object_add(reply, "rows", arr);
	json_object_object_add(reply, "total", json_object_new_int64((int64_t)n));
	json_object_object_add(reply, "truncated",
			       json_object_new_boolean(shown < n));
}
