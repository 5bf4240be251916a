// SPDX-License-Identifier: GPL-2.0-only
/* stats_view.c - stats replies into top tables, JSON and Prometheus text. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "client/stats_view.h"
#include "protocol/protocol.h"
#include "common/units.h"
#include "common/utf8.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

static void copy_str(json_object *o, const char *key, char *dst, size_t len)
{
	const char *s;

	dst[0] = '\0';
	if (pgoff_get_string(o, key, &s))
		snprintf(dst, len, "%s", s);
}

static bool get_u64(json_object *o, const char *key, uint64_t *out)
{
	int64_t v;

	if (!pgoff_get_int64(o, key, &v) || v < 0)
		return false;
	*out = (uint64_t)v;
	return true;
}

/* "cluster_id", "owner", "container" (PROTOCOL.md); what is missing or
 * of another type is not known. */
static void parse_ident(json_object *o, struct sv_ident *id)
{
	json_object *co;
	int64_t owner;

	copy_str(o, "cluster_id", id->cluster_id, sizeof(id->cluster_id));
	id->owner = pgoff_get_int64(o, "owner", &owner) && owner >= 0 &&
		    owner <= UINT32_MAX ? owner : -1;
	if (!json_object_object_get_ex(o, "container", &co) ||
	    !json_object_is_type(co, json_type_object))
		return;
	copy_str(co, "runtime", id->runtime, sizeof(id->runtime));
	copy_str(co, "id", id->container, sizeof(id->container));
	copy_str(co, "pod_uid", id->pod_uid, sizeof(id->pod_uid));
}

void sv_parse_cluster(json_object *o, struct sv_row *r)
{
	copy_str(o, "data_dir", r->data_dir, sizeof(r->data_dir));
	parse_ident(o, &r->ident);
}

static int parse_row(json_object *o, struct sv_row *r, char *err, size_t errlen)
{
	json_object *hist, *known;
	uint64_t pid = 0;
	const char *id;

	memset(r, 0, sizeof(*r));
	if (!json_object_is_type(o, json_type_object))
		return fail(err, errlen, "a row is not an object");
	if (json_object_object_get_ex(o, "pid", NULL) &&
	    (!get_u64(o, "pid", &pid) || pid > UINT32_MAX))
		return fail(err, errlen, "a row has a bad pid");
	r->pid = (uint32_t)pid;
	if (json_object_object_get_ex(o, "wait_event_info", NULL)) {
		uint64_t info;

		if (!get_u64(o, "wait_event_info", &info) || info > UINT32_MAX)
			return fail(err, errlen,
				    "a row has a bad wait_event_info");
		r->wait_event_info = (uint32_t)info;
	}
	r->pg_known = true;
	if (json_object_object_get_ex(o, "pg_known", &known))
		r->pg_known = json_object_get_boolean(known);
	if (json_object_object_get_ex(o, "query_id", NULL) &&
	    (!pgoff_get_string(o, "query_id", &id) ||
	     pgoff_parse_query_id(id, &r->query_id)))
		return fail(err, errlen, "a row has a bad query_id");
	if (json_object_object_get_ex(o, "query_folded", &known))
		r->query_folded = json_object_get_boolean(known);
	if (json_object_object_get_ex(o, "idle", &known))
		r->idle = json_object_get_boolean(known);
	copy_str(o, "state", r->state, sizeof(r->state));
	if (!get_u64(o, "count", &r->count) || !get_u64(o, "time_ns", &r->time_ns))
		return fail(err, errlen, "a row has no count or time_ns");
	sv_parse_cluster(o, r);
	copy_str(o, "backend_type", r->backend_type, sizeof(r->backend_type));
	copy_str(o, "database", r->database, sizeof(r->database));
	copy_str(o, "user", r->user, sizeof(r->user));
	copy_str(o, "wait_event_type", r->wait_event_type,
		 sizeof(r->wait_event_type));
	copy_str(o, "wait_event", r->wait_event, sizeof(r->wait_event));
	copy_str(o, "wait", r->wait, sizeof(r->wait));
	if (json_object_object_get_ex(o, "hist", &hist)) {
		size_t n;

		if (!json_object_is_type(hist, json_type_array) ||
		    (n = json_object_array_length(hist)) > SV_BUCKETS)
			return fail(err, errlen, "a row has a bad histogram");
		for (size_t i = 0; i < n; i++) {
			json_object *v = json_object_array_get_idx(hist, i);
			int64_t c;

			if (!json_object_is_type(v, json_type_int) ||
			    (c = json_object_get_int64(v)) < 0)
				return fail(err, errlen,
					    "a row has a bad histogram");
			r->hist[i] = (uint64_t)c;
		}
	}
	return 0;
}

/* The statements' texts pgoffd gave (members of the query group): a
 * "queries" object, query id to normalized text. */
static void add_texts(json_object *reply, struct sv_snapshot *s)
{
	char id[PGOFF_QUERY_ID_BUFSZ];
	json_object *texts, *t;

	if (!json_object_object_get_ex(reply, "queries", &texts) ||
	    !json_object_is_type(texts, json_type_object))
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct sv_row *r = &s->rows[i];

		if (r->query_id &&
		    json_object_object_get_ex(texts, pgoff_format_query_id(
				r->query_id, id, sizeof(id)), &t) &&
		    json_object_is_type(t, json_type_string))
			snprintf(r->query, sizeof(r->query), "%s",
				 json_object_get_string(t));
	}
}

int sv_parse(json_object *reply, struct sv_snapshot *out, char *err,
	     size_t errlen)
{
	json_object *rows, *v;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!json_object_object_get_ex(reply, "rows", &rows) ||
	    !json_object_is_type(rows, json_type_array) ||
	    !get_u64(reply, "now_ns", &out->now_ns))
		return fail(err, errlen, "the stats reply has no rows or now_ns");
	out->hist_unit_ns = PGOFF_AGG_UNIT_NS;	/* a pgoffd that does not say */
	if (json_object_object_get_ex(reply, "hist_unit_ns", NULL) &&
	    (!get_u64(reply, "hist_unit_ns", &out->hist_unit_ns) ||
	     !out->hist_unit_ns || out->hist_unit_ns > 1000000000))
		return fail(err, errlen, "the stats reply has a bad hist_unit_ns");
	if (json_object_object_get_ex(reply, "truncated", &v))
		out->truncated = json_object_get_boolean(v);
	n = json_object_array_length(rows);
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (!out->rows)
		return (void)fail(err, errlen, "out of memory"), -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (parse_row(json_object_array_get_idx(rows, i),
			      &out->rows[out->n], err, errlen)) {
			sv_free(out);
			return -EPROTO;
		}
		out->n++;
	}
	add_texts(reply, out);
	return 0;
}

void sv_free(struct sv_snapshot *s)
{
	free(s->rows);
	s->rows = NULL;
	s->n = 0;
}

bool sv_same_ident(const struct sv_ident *a, const struct sv_ident *b)
{
	return strcmp(a->cluster_id, b->cluster_id) == 0 &&
	       a->owner == b->owner && strcmp(a->runtime, b->runtime) == 0 &&
	       strcmp(a->container, b->container) == 0 &&
	       strcmp(a->pod_uid, b->pod_uid) == 0;
}

bool sv_row_on_cpu(const struct sv_row *r)
{
	return strcmp(r->wait, "on_cpu") == 0;
}

bool sv_same_cluster(const struct sv_row *a, const struct sv_row *b)
{
	return sv_same_ident(&a->ident, &b->ident) &&
	       strcmp(a->data_dir, b->data_dir) == 0;
}

bool sv_in_container(const struct sv_row *r, const char *prefix)
{
	return pgoff_container_matches(r->ident.container, prefix);
}

static bool same_row(const struct sv_row *a, const struct sv_row *b)
{
	return a->pid == b->pid && a->query_id == b->query_id &&
	       a->query_folded == b->query_folded && a->idle == b->idle &&
	       strcmp(a->state, b->state) == 0 &&
	       strcmp(a->wait, b->wait) == 0 &&
	       a->wait_event_info == b->wait_event_info &&
	       a->pg_known == b->pg_known &&
	       strcmp(a->wait_event_type, b->wait_event_type) == 0 &&
	       strcmp(a->wait_event, b->wait_event) == 0 &&
	       sv_same_cluster(a, b) &&
	       strcmp(a->database, b->database) == 0 &&
	       strcmp(a->backend_type, b->backend_type) == 0;
}

/* cur - prev, or false when prev is not an earlier state of cur (the
 * count or a bucket went down, or an on_cpu row's time, which has no
 * count: another process with the same pid). */
static bool subtract(struct sv_row *d, const struct sv_row *prev)
{
	if (d->count < prev->count ||
	    (sv_row_on_cpu(d) && d->time_ns < prev->time_ns))
		return false;
	for (size_t i = 0; i < SV_BUCKETS; i++)
		if (d->hist[i] < prev->hist[i])
			return false;
	d->count -= prev->count;
	d->time_ns = d->time_ns > prev->time_ns ? d->time_ns - prev->time_ns : 0;
	for (size_t i = 0; i < SV_BUCKETS; i++)
		d->hist[i] -= prev->hist[i];
	return true;
}

int sv_delta(const struct sv_snapshot *prev, const struct sv_snapshot *cur,
	     struct sv_snapshot *out)
{
	*out = *cur;
	out->n = 0;
	out->rows = calloc(cur->n ? cur->n : 1, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	for (size_t i = 0; i < cur->n; i++) {
		struct sv_row d = cur->rows[i];
		bool found = false;

		for (size_t j = 0; prev && j < prev->n && !found; j++) {
			if (same_row(&cur->rows[i], &prev->rows[j])) {
				found = true;
				if (!subtract(&d, &prev->rows[j]))
					d = cur->rows[i];
			}
		}
		if (!found && prev && prev->truncated)
			continue;	/* its earlier value is unknown */
		if (d.count || d.time_ns)
			out->rows[out->n++] = d;
	}
	return 0;
}

const char *sv_by_name(enum sv_by by)
{
	switch (by) {
	case SV_BY_WAIT:
		return "wait";
	case SV_BY_DATABASE:
		return "database";
	case SV_BY_QUERY:
		return "query";
	case SV_BY_QUERY_WAIT:
		return "query,wait";
	case SV_BY_CLUSTER_WAIT:
		return "cluster,wait";
	default:
		return "backend";
	}
}

int sv_by_parse(const char *name, enum sv_by *out)
{
	static const enum sv_by all[] = { SV_BY_BACKEND, SV_BY_WAIT,
					  SV_BY_DATABASE, SV_BY_QUERY,
					  SV_BY_QUERY_WAIT };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(name, sv_by_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -EINVAL;
}

/* "Lock:transactionid", or "-" outside any PostgreSQL wait; an idle
 * row's with its state: "Client:ClientRead (idle in transaction)". */
static void pg_wait_label(const struct sv_row *r, char *buf, size_t len)
{
	char idle[48] = "";

	if (r->idle)
		snprintf(idle, sizeof(idle), " (%s)", r->state[0] ? r->state : "idle");
	if (!r->wait_event_type[0])
		snprintf(buf, len, "-%s", idle);
	else
		snprintf(buf, len, "%s:%s%s", r->wait_event_type, r->wait_event, idle);
}

static bool same_wait(const struct sv_row *k, const struct sv_row *r)
{
	return k->idle == r->idle && strcmp(k->state, r->state) == 0 &&
	       strcmp(k->wait, r->wait) == 0 &&
	       strcmp(k->wait_event_type, r->wait_event_type) == 0 &&
	       strcmp(k->wait_event, r->wait_event) == 0;
}

/* One statement: its query id in its cluster (ids are per cluster as
 * pg_stat_statements keeps them), or the folded ones, or none. */
static bool same_query(const struct sv_row *k, const struct sv_row *r)
{
	return k->query_id == r->query_id &&
	       k->query_folded == r->query_folded && sv_same_cluster(k, r);
}

static bool same_group(const struct sv_row *k, const struct sv_row *r,
		       enum sv_by by)
{
	switch (by) {
	case SV_BY_BACKEND:
		return k->pid == r->pid && sv_same_cluster(k, r);
	case SV_BY_WAIT:
		return same_wait(k, r);
	case SV_BY_DATABASE:
		return strcmp(k->database, r->database) == 0 &&
		       sv_same_cluster(k, r);
	case SV_BY_QUERY:
		return same_query(k, r);
	case SV_BY_QUERY_WAIT:
		return same_query(k, r) && same_wait(k, r);
	case SV_BY_CLUSTER_WAIT:
		return sv_same_cluster(k, r) && same_wait(k, r);
	}
	return false;
}

/* A statement's cell: its query id, or why it has none. */
static const char *query_label(const struct sv_row *r, char *buf, size_t len)
{
	if (r->query_id)
		return pgoff_format_query_id(r->query_id, buf, len);
	if (r->query_folded)
		return "(other statements)";
	/* pgoffd's catch-all row, past the statements it keeps */
	return strcmp(r->backend_type, "(other)") == 0 ? "(other)" : "-";
}

static int cmp_pid(const void *a, const void *b)
{
	const struct sv_row *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_group_time(const void *a, const void *b)
{
	const struct sv_group *x = a, *y = b;

	return x->time_ns < y->time_ns ? 1 : x->time_ns > y->time_ns ? -1 : 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int sv_group(const struct sv_snapshot *d, enum sv_by by,
	     struct sv_group **out)
{
	struct sv_row *rows = calloc(d->n ? d->n : 1, sizeof(*rows));
	struct sv_group *g = calloc(d->n ? d->n : 1, sizeof(*g));
	uint32_t *last_pid = calloc(d->n ? d->n : 1, sizeof(*last_pid));
	size_t ng = 0;

	if (!rows || !g || !last_pid) {
		free(rows), free(g), free(last_pid);
		return -ENOMEM;
	}
	/* by pid, so that each group sees a pid's rows one after another */
	if (d->n)
		memcpy(rows, d->rows, d->n * sizeof(*rows));
	qsort(rows, d->n, sizeof(*rows), cmp_pid);
	for (size_t i = 0; i < d->n; i++) {
		const struct sv_row *r = &rows[i];
		size_t k;

		/* a backend's OFF% is time off the CPU; AAS is time in waits,
		 * on a CPU too */
		if (by == SV_BY_BACKEND && sv_row_on_cpu(r))
			continue;
		for (k = 0; k < ng; k++)
			if (same_group(&g[k].key, r, by))
				break;
		if (k == ng) {
			g[ng].key = *r;
			last_pid[ng] = r->pid + 1;	/* differs from r->pid */
			ng++;
		}
		g[k].time_ns = sat_add(g[k].time_ns, r->time_ns);
		g[k].count = sat_add(g[k].count, r->count);
		for (size_t b = 0; b < SV_BUCKETS; b++)
			g[k].hist[b] = sat_add(g[k].hist[b], r->hist[b]);
		if (last_pid[k] != r->pid) {
			g[k].backends++;
			last_pid[k] = r->pid;
		}
		if (r->time_ns >= g[k].top_wait_ns) {
			char pg[100];

			pg_wait_label(r, pg, sizeof(pg));
			g[k].top_wait_ns = r->time_ns;
			snprintf(g[k].top_wait, sizeof(g[k].top_wait), "%s %s",
				 r->wait, pg);
		}
	}
	qsort(g, ng, sizeof(*g), cmp_group_time);
	free(rows);
	free(last_pid);
	*out = g;
	return (int)ng;
}

uint64_t sv_quantile_ns(const uint64_t hist[SV_BUCKETS], uint64_t unit_ns,
			double q)
{
	uint64_t total = 0, cum = 0, want;

	for (size_t b = 0; b < SV_BUCKETS; b++)
		total = sat_add(total, hist[b]);
	if (!total)
		return 0;
	want = (uint64_t)(q * (double)total);	/* rounded up: */
	if ((double)want < q * (double)total)
		want++;
	if (want < 1)
		want = 1;
	for (size_t b = 0; b < SV_BUCKETS; b++) {
		cum = sat_add(cum, hist[b]);
		if (cum >= want)
			return b == SV_BUCKETS - 1 ? UINT64_MAX :
			       unit_ns << b;	/* bucket b ends at 2^b units */
	}
	return UINT64_MAX;
}

/* A duration cell into buf: "-" for a quantile of no finished interval,
 * "long" for the open last bucket. */
static void fmt_dur(uint64_t ns, char *buf, size_t len)
{
	if (ns == 0)
		snprintf(buf, len, "-");
	else if (ns == UINT64_MAX)
		snprintf(buf, len, "long");
	else
		pgoff_format_duration(ns, buf, len);
}

/*
 * Text from the broker in one cell of the table, at most width bytes
 * (0: no limit but the buffer's), made safe by pgoff_utf8_cell: no
 * control character, no bad UTF-8, no character cut in two.
 */
static void put_cell(FILE *out, const char *fmt, size_t width, const char *s)
{
	char clean[256];

	pgoff_utf8_cell(s, clean, width && width < sizeof(clean) ? width + 1 :
			sizeof(clean), NULL);
	fprintf(out, fmt, clean);
}

/* The cluster's cells: its id, and its container's first 12 digits (as
 * docker ps shows them) when a row of the table has one. */
static void cluster_heads(FILE *out, bool containers)
{
	fprintf(out, "%-16s ", "CLUSTER");
	if (containers)
		fprintf(out, "%-12s ", "CONTAINER");
}

static void cluster_cells(FILE *out, const struct sv_row *k, bool containers)
{
	put_cell(out, "%-16s ", 16, k->ident.cluster_id[0] ?
		 k->ident.cluster_id : "-");
	if (containers)
		put_cell(out, "%-12s ", 12, k->ident.container[0] ?
			 k->ident.container : "-");
}

void sv_render_top(FILE *out, const struct sv_group *g, size_t n,
		   enum sv_by by, uint64_t interval_ns, uint64_t unit_ns,
		   size_t limit)
{
	double secs = interval_ns ? (double)interval_ns / 1e9 : 1.0;
	char b1[32], b2[32], b3[32], pg[100], qid[PGOFF_QUERY_ID_BUFSZ];
	bool containers = false;

	for (size_t i = 0; i < n && (!limit || i < limit); i++)
		containers |= g[i].key.ident.container[0] != '\0';
	if (by == SV_BY_QUERY) {
		fprintf(out, "%-20s ", "QUERY ID");
		cluster_heads(out, containers);
		fprintf(out, "%-14s %6s %9s %7s %8s %8s  %-32s %s\n",
			"DATABASE", "AAS", "TIME", "COUNT", "P50", "P99",
			"TOP WAIT", "QUERY");
	} else if (by == SV_BY_QUERY_WAIT) {
		fprintf(out, "%-20s ", "QUERY ID");
		cluster_heads(out, containers);
		fprintf(out, "%-34s %-6s %6s %9s %7s %8s %8s\n",
			"PG WAIT EVENT", "WAIT", "AAS", "TIME", "COUNT",
			"P50", "P99");
	} else if (by == SV_BY_BACKEND) {
		fprintf(out, "%7s ", "PID");
		cluster_heads(out, containers);
		fprintf(out, "%-14s %-12s %-20s %6s %9s %7s %8s %8s  %s\n",
			"DATABASE", "USER", "BACKEND", "OFF%", "OFF-CPU",
			"COUNT", "P50", "P99", "TOP WAIT");
	} else if (by == SV_BY_WAIT || by == SV_BY_CLUSTER_WAIT) {
		if (by == SV_BY_CLUSTER_WAIT)
			cluster_heads(out, containers);
		fprintf(out, "%-34s %-6s %6s %9s %7s %8s %8s %8s\n",
			"PG WAIT EVENT", "WAIT", "AAS", "TIME", "COUNT",
			"P50", "P99", "BACKENDS");
	} else {
		cluster_heads(out, containers);
		fprintf(out, "%-20s %6s %9s %7s %8s %8s %8s\n", "DATABASE",
			"AAS", "TIME", "COUNT", "P50", "P99", "BACKENDS");
	}
	for (size_t i = 0; i < n && (!limit || i < limit); i++) {
		const struct sv_group *x = &g[i];
		double share = (double)x->time_ns / 1e9 / secs;

		fmt_dur(x->time_ns, b1, sizeof(b1));
		fmt_dur(sv_quantile_ns(x->hist, unit_ns, 0.5), b2, sizeof(b2));
		fmt_dur(sv_quantile_ns(x->hist, unit_ns, 0.99), b3, sizeof(b3));
		if (by == SV_BY_BACKEND) {
			fprintf(out, "%7" PRIu32 " ", x->key.pid);
			cluster_cells(out, &x->key, containers);
			put_cell(out, "%-14s ", 14, x->key.database[0] ?
				 x->key.database : "-");
			put_cell(out, "%-12s ", 12, x->key.user[0] ?
				 x->key.user : "-");
			put_cell(out, "%-20s ", 20, x->key.backend_type[0] ?
				 x->key.backend_type : "?");
			fprintf(out, "%5.1f%% %9s %7" PRIu64 " %8s %8s  ",
				100 * share, b1, x->count, b2, b3);
			put_cell(out, "%s\n", 0, x->top_wait);
		} else if (by == SV_BY_QUERY) {
			fprintf(out, "%-20s ", query_label(&x->key, qid, sizeof(qid)));
			cluster_cells(out, &x->key, containers);
			put_cell(out, "%-14s ", 14, x->key.database[0] ?
				 x->key.database : "-");
			fprintf(out, "%6.2f %9s %7" PRIu64 " %8s %8s  ",
				share, b1, x->count, b2, b3);
			put_cell(out, "%-32s ", 32, x->top_wait);
			/* the text only members of the query group get */
			put_cell(out, "%s\n", 100, x->key.query[0] ?
				 x->key.query : "-");
		} else if (by == SV_BY_WAIT || by == SV_BY_QUERY_WAIT ||
			   by == SV_BY_CLUSTER_WAIT) {
			if (by == SV_BY_QUERY_WAIT)
				fprintf(out, "%-20s ", query_label(&x->key, qid,
								    sizeof(qid)));
			if (by != SV_BY_WAIT)
				cluster_cells(out, &x->key, containers);
			pg_wait_label(&x->key, pg, sizeof(pg));
			put_cell(out, "%-34s ", 34, pg);
			put_cell(out, "%-6s ", 0, x->key.wait);
			fprintf(out, "%6.2f %9s %7" PRIu64 " %8s %8s", share, b1,
				x->count, b2, b3);
			if (by != SV_BY_QUERY_WAIT)	/* rows by query have no pid */
				fprintf(out, " %8zu", x->backends);
			fputc('\n', out);
		} else {
			cluster_cells(out, &x->key, containers);
			put_cell(out, "%-20s ", 20, x->key.database[0] ?
				 x->key.database : "(no database)");
			fprintf(out, "%6.2f %9s %7" PRIu64 " %8s %8s %8zu\n",
				share, b1, x->count, b2, b3, x->backends);
		}
	}
}

static void add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v[0] ? json_object_new_string(v) : NULL);
}

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, v > INT64_MAX ? NULL :
			       json_object_new_int64((int64_t)v));
}

/* "query_id" (a string, as pgoffd sends it; null: none), and
 * "query_folded" for the statements pgoffd could not keep apart. */
static void add_query(json_object *o, const struct sv_row *k)
{
	char id[PGOFF_QUERY_ID_BUFSZ];

	json_object_object_add(o, "query_id", k->query_id ?
		json_object_new_string(pgoff_format_query_id(k->query_id, id,
							     sizeof(id))) :
		NULL);
	if (k->query_folded)
		json_object_object_add(o, "query_folded",
				       json_object_new_boolean(true));
}

/* A row's cluster, as pgoffd tells it: "cluster_id" (null: not known),
 * "owner", and "container" when it runs in one. */
static void add_ident(json_object *o, const struct sv_ident *id)
{
	json_object *co;

	add_str(o, "cluster_id", id->cluster_id);
	if (id->owner >= 0)
		json_object_object_add(o, "owner", json_object_new_int64(id->owner));
	if (!id->container[0] && !id->pod_uid[0])
		return;
	co = json_object_new_object();
	if (id->runtime[0])
		add_str(co, "runtime", id->runtime);
	if (id->container[0])
		add_str(co, "id", id->container);
	if (id->pod_uid[0])
		add_str(co, "pod_uid", id->pod_uid);
	json_object_object_add(o, "container", co);
}

/* A quantile: null when no interval finished (or in the open bucket). */
static void add_quantile(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, v == 0 || v == UINT64_MAX ? NULL :
			       json_object_new_int64((int64_t)v));
}

/* Four decimals. A value too large to round through an integer (only
 * nonsense input makes one) is kept as it is. */
static double round4(double v)
{
	return v < 1e12 ? (double)(uint64_t)(v * 1e4 + 0.5) / 1e4 : v;
}

json_object *sv_top_json(const struct sv_group *g, size_t n, enum sv_by by,
			 uint64_t interval_ns, uint64_t unit_ns, size_t limit)
{
	json_object *top = json_object_new_object();
	json_object *rows = json_object_new_array();
	double secs = interval_ns ? (double)interval_ns / 1e9 : 1.0;

	json_object_object_add(top, "by", json_object_new_string(sv_by_name(by)));
	add_u64(top, "interval_ns", interval_ns);
	for (size_t i = 0; i < n && (!limit || i < limit); i++) {
		const struct sv_group *x = &g[i];
		json_object *r = json_object_new_object();

		if (by == SV_BY_BACKEND) {
			json_object_object_add(r, "pid",
					       json_object_new_int64(x->key.pid));
			add_str(r, "database", x->key.database);
			add_str(r, "user", x->key.user);
			add_str(r, "backend_type", x->key.backend_type);
			add_str(r, "top_wait", x->top_wait);
		} else if (by == SV_BY_WAIT || by == SV_BY_QUERY_WAIT ||
			   by == SV_BY_CLUSTER_WAIT) {
			if (by == SV_BY_QUERY_WAIT)
				add_query(r, &x->key);
			add_str(r, "wait_event_type", x->key.wait_event_type);
			add_str(r, "wait_event", x->key.wait_event);
			add_str(r, "wait", x->key.wait);
			if (x->key.idle) {	/* with --idle */
				json_object_object_add(r, "idle",
					json_object_new_boolean(true));
				add_str(r, "state", x->key.state);
			}
		} else if (by == SV_BY_QUERY) {
			add_query(r, &x->key);
			add_str(r, "database", x->key.database);
			add_str(r, "top_wait", x->top_wait);
			if (x->key.query[0])
				add_str(r, "query", x->key.query);
		} else {
			add_str(r, "database", x->key.database);
		}
		add_str(r, "data_dir", x->key.data_dir);
		if (by != SV_BY_WAIT)	/* rows of one cluster */
			add_ident(r, &x->key.ident);
		add_u64(r, "time_ns", x->time_ns);
		json_object_object_add(r, "share",
				       json_object_new_double(round4(x->time_ns / 1e9 / secs)));
		add_u64(r, "count", x->count);
		add_quantile(r, "p50_ns", sv_quantile_ns(x->hist, unit_ns, 0.5));
		add_quantile(r, "p99_ns", sv_quantile_ns(x->hist, unit_ns, 0.99));
		if (by != SV_BY_QUERY && by != SV_BY_QUERY_WAIT)
			json_object_object_add(r, "backends",
				json_object_new_int64((int64_t)x->backends));
		json_object_array_add(rows, r);
	}
	json_object_object_add(top, "rows", rows);
	json_object_object_add(top, "total_rows", json_object_new_int64((int64_t)n));
	return top;
}

/*
 * A label value, escaped as the text format wants (\\ \" \n), into the
 * series' label text; every other control character and bad UTF-8 becomes
 * '?' as in a table cell (pgoff_utf8_cell): a textfile collector refuses
 * bad UTF-8, a terminal acts on controls. False when it does not fit (the
 * series is then left out, never cut into something else).
 */
static bool put_label(char *buf, size_t size, size_t *len, const char *name,
		      const char *v)
{
	char part[sizeof(((struct sv_row *)0)->data_dir)], clean[sizeof(part)];
	size_t n = *len;
	int w = snprintf(buf + n, size - n, "%s%s=\"", n ? "," : "", name);

	if (w < 0 || (size_t)w >= size - n)
		return false;
	n += (size_t)w;
	for (const char *line = v; line; ) {
		const char *nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) : strlen(line);

		if (l >= sizeof(part))
			return false;
		memcpy(part, line, l);
		part[l] = '\0';
		pgoff_utf8_cell(part, clean, sizeof(clean), NULL);
		for (const char *c = clean; *c; c++) {
			if (n + 2 + 2 >= size)	/* the character, the closing quote */
				return false;
			if (*c == '\\' || *c == '"')
				buf[n++] = '\\';
			buf[n++] = *c;
		}
		line = nl ? nl + 1 : NULL;
		if (line) {
			if (n + 2 + 2 >= size)
				return false;
			buf[n++] = '\\';
			buf[n++] = 'n';
		}
	}
	buf[n++] = '"';
	buf[n] = '\0';
	*len = n;
	return true;
}

bool sv_label(char *buf, size_t size, size_t *len, const char *name,
	      const char *v)
{
	return put_label(buf, size, len, name, v);
}

bool sv_cluster_labels(char *buf, size_t size, size_t *len,
		       const struct sv_row *r)
{
	char owner[24] = "";

	if (r->ident.owner >= 0)
		snprintf(owner, sizeof(owner), "%" PRId64, r->ident.owner);
	return put_label(buf, size, len, "cluster", r->data_dir) &&
	       put_label(buf, size, len, "cluster_id", r->ident.cluster_id) &&
	       put_label(buf, size, len, "owner", owner) &&
	       put_label(buf, size, len, "container", r->ident.container) &&
	       put_label(buf, size, len, "pod_uid", r->ident.pod_uid);
}

/* Room for every label at its longest, escaped (each byte may double). */
struct series {
	char labels[SV_CLUSTER_LABELS +
		    2 * (sizeof(((struct sv_row *)0)->database) +
			 sizeof(((struct sv_row *)0)->backend_type) +
			 sizeof(((struct sv_row *)0)->wait_event_type) +
			 sizeof(((struct sv_row *)0)->wait_event) +
			 sizeof(((struct sv_row *)0)->wait)) + 128];
	uint64_t time_ns, count;
};

static int cmp_series(const void *a, const void *b)
{
	return strcmp(((const struct series *)a)->labels,
		      ((const struct series *)b)->labels);
}

static void put_counter(FILE *out, json_object *counters, const char *cause)
{
	int64_t v = 0;

	if (counters && pgoff_get_int64(counters, cause, &v) && v >= 0)
		fprintf(out, "pgoff_lost_events_total{cause=\"%s\"} %" PRId64 "\n",
			cause, v);
}

/*
 * The series of s's rows, off-CPU time or sampled on-CPU time (on_cpu),
 * into v; their labels sorted, equal ones next to each other. Returns
 * how many.
 */
static size_t metric_series(const struct sv_snapshot *s, bool per_pid,
			    bool on_cpu, struct series *v)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct sv_row *r = &s->rows[i];
		char *b = v[n].labels, pid[16];
		size_t len = 0, size = sizeof(v[n].labels);

		if (sv_row_on_cpu(r) != on_cpu)
			continue;
		snprintf(pid, sizeof(pid), "%" PRIu32, r->pid);
		if (!sv_cluster_labels(b, size, &len, r) ||
		    !put_label(b, size, &len, "database", r->database) ||
		    !put_label(b, size, &len, "backend_type", r->backend_type) ||
		    !put_label(b, size, &len, "wait_event_type",
			       r->wait_event_type) ||
		    !put_label(b, size, &len, "wait_event", r->wait_event) ||
		    (!on_cpu && !put_label(b, size, &len, "wait", r->wait)) ||
		    !put_label(b, size, &len, "idle", r->idle ? "true" : "false") ||
		    (per_pid && !put_label(b, size, &len, "pid", pid)))
			continue;	/* cannot happen with sv_row's sizes */
		v[n].time_ns = r->time_ns;
		v[n].count = r->count;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_series);
	return n;
}

static void put_seconds(FILE *out, const char *name, const struct series *v,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t t = v[i].time_ns;

		while (i + 1 < n && strcmp(v[i].labels, v[i + 1].labels) == 0)
			t = sat_add(t, v[++i].time_ns);
		fprintf(out, "%s{%s} %" PRIu64 ".%09" PRIu64 "\n", name,
			v[i].labels, t / 1000000000, t % 1000000000);
	}
}

int sv_render_metrics(FILE *out, const struct sv_snapshot *s,
		      json_object *status, bool per_pid)
{
	static const char *const causes[] = {
		"ringbuf_full", "start_map_full",
		"aggregate_map_full", "aggregate_busy", "client_queue_full",
		"switch_in_lost",
	};
	struct series *v = calloc(s->n ? s->n : 1, sizeof(*v));
	json_object *counters = NULL;
	size_t n;
	int64_t g;

	if (!v)
		return -ENOMEM;
	n = metric_series(s, per_pid, false, v);
	fprintf(out, "# HELP pgoff_offcpu_seconds_total Time PostgreSQL processes "
		"spent off the CPU, by wait.\n"
		"# TYPE pgoff_offcpu_seconds_total counter\n");
	put_seconds(out, "pgoff_offcpu_seconds_total", v, n);
	fprintf(out, "# HELP pgoff_offcpu_intervals_total Off-CPU intervals of "
		"PostgreSQL processes, by wait.\n"
		"# TYPE pgoff_offcpu_intervals_total counter\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t c = v[i].count;

		while (i + 1 < n && strcmp(v[i].labels, v[i + 1].labels) == 0)
			c = sat_add(c, v[++i].count);
		fprintf(out, "pgoff_offcpu_intervals_total{%s} %" PRIu64 "\n",
			v[i].labels, c);
	}
	n = metric_series(s, per_pid, true, v);
	fprintf(out, "# HELP pgoff_wait_on_cpu_seconds_total Time PostgreSQL "
		"processes spent on a CPU inside a PostgreSQL wait event (its "
		"system call's own work), sampled.\n"
		"# TYPE pgoff_wait_on_cpu_seconds_total counter\n");
	put_seconds(out, "pgoff_wait_on_cpu_seconds_total", v, n);
	free(v);
	if (status && json_object_object_get_ex(status, "counters", &counters) &&
	    json_object_is_type(counters, json_type_object)) {
		fprintf(out, "# HELP pgoff_lost_events_total Events or intervals "
			"pgoffd lost, by cause.\n"
			"# TYPE pgoff_lost_events_total counter\n");
		for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++)
			put_counter(out, counters, causes[i]);
	}
	if (status && pgoff_get_int64(status, "traced_processes", &g))
		fprintf(out, "# HELP pgoff_traced_processes PostgreSQL processes "
			"pgoffd traces.\n# TYPE pgoff_traced_processes gauge\n"
			"pgoff_traced_processes %" PRId64 "\n", g);
	if (status && pgoff_get_int64(status, "clients", &g))
		fprintf(out, "# HELP pgoff_clients Clients connected to pgoffd.\n"
			"# TYPE pgoff_clients gauge\npgoff_clients %" PRId64 "\n", g);
	return ferror(out) ? -EIO : 0;
}
