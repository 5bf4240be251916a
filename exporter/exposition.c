// SPDX-License-Identifier: GPL-2.0-only
/* exposition.c - a scrape's page in the Prometheus text format. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/exposition.h"
#include "exporter/histogram.h"
#include "exporter/streaks.h"
#include "protocol/protocol.h"
#include "common/units.h"

/* A label value as the text format wants it: \\, \" and \n escaped. */
void ex_put_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void head(FILE *out, const char *name, const char *type,
		 const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gauge(FILE *out, const char *name, const char *help, double v)
{
	head(out, name, "gauge", help);
	fprintf(out, "%s %.15g\n", name, v);
}

static void counter(FILE *out, const char *name, const char *help,
		    uint64_t v)
{
	head(out, name, "counter", help);
	fprintf(out, "%s %" PRIu64 "\n", name, v);
}

static bool get_count(json_object *o, const char *key, uint64_t *v)
{
	int64_t i;

	if (!o || !pgoff_get_int64(o, key, &i) || i < 0)
		return false;
	*v = (uint64_t)i;
	return true;
}

/* A gauge from a non-negative integer field of status, if it has one. */
static void status_gauge(FILE *out, json_object *st, const char *key,
			 const char *name, const char *help)
{
	uint64_t v;

	if (get_count(st, key, &v))
		gauge(out, name, help, (double)v);
}

/* Counters of status's "counters" with one label, those present only. */
struct labelled { const char *field, *value; };

static void status_counters(FILE *out, json_object *counters, const char *name,
			    const char *help, const char *label,
			    const struct labelled *l, size_t n)
{
	bool headed = false;
	uint64_t v;

	for (size_t i = 0; i < n; i++) {
		if (!get_count(counters, l[i].field, &v))
			continue;
		if (!headed)
			head(out, name, "counter", help);
		headed = true;
		fprintf(out, "%s{%s=\"%s\"} %" PRIu64 "\n", name, label,
			l[i].value, v);
	}
}

static void render_broker(FILE *out, const struct ex_scrape *s)
{
	static const struct labelled lost[] = {
		{ "ringbuf_full", "ringbuf_full" },
		{ "start_map_full", "start_map_full" },
		{ "aggregate_map_full", "aggregate_map_full" },
		{ "aggregate_busy", "aggregate_busy" },
		{ "client_queue_full", "client_queue_full" },
		{ "switch_in_lost", "switch_in_lost" },
	};
	static const struct labelled degraded[] = {
		{ "stack_failed", "stack" },
		{ "pg_read_failed", "pg_wait_event" },
		{ "query_failed", "query" },
		{ "user_stack_failed", "user_stack" },
		{ "usdt_lwlock_paused", "lwlock_bounds" },
		{ "switch_in_unseen", "switch_in" },
	};
	json_object *st = s->status, *counters = NULL, *v;
	const char *broker = NULL, *hook = NULL;
	uint64_t n;

	if (st && json_object_object_get_ex(st, "counters", &v) &&
	    json_object_is_type(v, json_type_object))
		counters = v;
	if (pgoff_get_string(st, "broker", &broker) &&
	    pgoff_get_string(st, "hook", &hook)) {
		head(out, "pgoff_broker_info", "gauge",
		     "pgoffd's version and the sched_switch hook its BPF programs "
		     "are attached to (tp_btf, or raw_tp: no stacks), as value 1.");
		fputs("pgoff_broker_info{version=\"", out);
		ex_put_value(out, strncmp(broker, "pgoffd ", 7) ? broker : broker + 7);
		fputs("\",hook=\"", out);
		ex_put_value(out, hook);
		fputs("\"} 1\n", out);
	}
	if (get_count(st, "uptime_s", &n) && s->wall_now > (double)n)
		gauge(out, "pgoff_broker_start_time_seconds",
		      "When pgoffd started, in seconds since the epoch (to the "
		      "second).", (double)(uint64_t)(s->wall_now - (double)n));
	status_gauge(out, st, "clusters", "pgoff_clusters",
		     "PostgreSQL clusters pgoffd traces.");
	status_gauge(out, st, "traced_processes", "pgoff_traced_processes",
		     "PostgreSQL processes pgoffd traces.");
	status_gauge(out, st, "bpf_programs_attached", "pgoff_bpf_programs_attached",
		     "BPF programs pgoffd has attached to the scheduler's "
		     "tracepoints (5 when it traces; fewer: an alert).");
	status_gauge(out, st, "clients", "pgoff_broker_clients",
		     "Connections to pgoffd, this exporter's included.");
	status_gauge(out, st, "subscribers", "pgoff_broker_subscribers",
		     "Connections to pgoffd with an event subscription.");
	status_gauge(out, st, "usdt_lwlock_paused_clusters",
		     "pgoff_usdt_lwlock_paused_clusters",
		     "Clusters whose LWLock wait probes pgoffd does not read "
		     "(over usdt-max-rate): their LWLock episodes are inferred.");
	if (get_count(st, "kernel_min_duration_ns", &n))
		gauge(out, "pgoff_kernel_min_duration_seconds",
		      "Shortest interval the kernel sends as an event (absent: "
		      "no subscriber, none are sent).", (double)n / 1e9);
	if (get_count(counters, "switches", &n))
		counter(out, "pgoff_context_switches_total",
			"Switches of traced PostgreSQL threads off the CPU.", n);
	if (get_count(counters, "events", &n))
		counter(out, "pgoff_kernel_events_total",
			"Off-CPU interval records the kernel sent to pgoffd.", n);
	if (get_count(counters, "episodes", &n))
		counter(out, "pgoff_kernel_episodes_total",
			"Wait episode records the kernel sent to pgoffd.", n);
	status_counters(out, counters, "pgoff_lost_events_total",
			"Events or intervals pgoffd lost, by cause.", "cause",
			lost, sizeof(lost) / sizeof(lost[0]));
	status_counters(out, counters, "pgoff_degraded_events_total",
			"Events sent without a field that could not be read, "
			"by field.", "missing", degraded,
			sizeof(degraded) / sizeof(degraded[0]));
}

static void render_stats_health(FILE *out, const struct ex_scrape *s)
{
	head(out, "pgoff_stats_truncated", "gauge",
	     "1 when pgoffd's stats reply was cut short (the least busy series "
	     "are missing), by grouping: labels (the counters and histogram), "
	     "pid (backends waiting, longest waits).");
	fprintf(out, "pgoff_stats_truncated{by=\"labels\"} %d\n",
		s->labels->truncated ? 1 : 0);
	if (s->pids)
		fprintf(out, "pgoff_stats_truncated{by=\"pid\"} %d\n",
			s->pids->truncated ? 1 : 0);
}

/* A cluster's labels (sv_cluster_labels) as text for a series. */
struct cluster_text {
	char t[SV_CLUSTER_LABELS];
};

static void cluster_text(const struct sv_row *r, struct cluster_text *c)
{
	size_t len = 0;

	/* (sv_row's sizes always fit: a row that did not would be left
	 * without its cluster's labels, never given another's) */
	if (!sv_cluster_labels(c->t, sizeof(c->t), &len, r))
		c->t[0] = '\0';
}

struct hgroup {
	const struct sv_row *key;
	struct cluster_text cluster;
	uint64_t count, time_ns, hist[SV_BUCKETS];
};

static int cmp_hgroup(const void *a, const void *b)
{
	const struct hgroup *x = a, *y = b;
	int c = strcmp(x->cluster.t, y->cluster.t);

	if (!c)
		c = strcmp(x->key->wait, y->key->wait);
	return c ? c : strcmp(x->key->wait_event_type, y->key->wait_event_type);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void hist_labels(FILE *out, const struct hgroup *g)
{
	fprintf(out, "{%s,wait=\"", g->cluster.t);
	ex_put_value(out, g->key->wait);
	fputs("\",wait_event_type=\"", out);
	ex_put_value(out, g->key->wait_event_type);
	fputc('"', out);
}

int ex_render_histogram(FILE *out, const struct sv_snapshot *rows)
{
	struct hgroup *g = calloc(rows->n ? rows->n : 1, sizeof(*g));
	char le[EXH_BUCKETS][32], secs[32];
	size_t ng = 0;

	if (!g)
		return -ENOMEM;
	for (size_t b = 0; b < EXH_BUCKETS; b++) {
		if (exh_le(b, rows->hist_unit_ns, le[b], sizeof(le[b]))) {
			free(g);
			return -ERANGE;
		}
	}
	for (size_t i = 0; i < rows->n; i++) {
		const struct sv_row *r = &rows->rows[i];
		struct hgroup *x = NULL;

		if (sv_row_on_cpu(r))	/* time, but no interval */
			continue;
		for (size_t k = 0; k < ng && !x; k++)
			if (strcmp(g[k].key->wait, r->wait) == 0 &&
			    strcmp(g[k].key->wait_event_type,
				   r->wait_event_type) == 0 &&
			    sv_same_cluster(g[k].key, r))
				x = &g[k];
		if (!x) {
			x = &g[ng++];
			x->key = r;
			cluster_text(r, &x->cluster);
		}
		x->time_ns = sat_add(x->time_ns, r->time_ns);
		for (size_t b = 0; b < SV_BUCKETS; b++)
			x->hist[b] = sat_add(x->hist[b], r->hist[b]);
	}
	qsort(g, ng, sizeof(*g), cmp_hgroup);
	head(out, "pgoff_wait_duration_seconds", "histogram",
	     "Off-CPU intervals of PostgreSQL processes by length, by cluster, "
	     "kernel wait type and PostgreSQL wait event type; le bounds are "
	     "the kernel's log2 buckets, exact; _sum also has the time of "
	     "intervals not over yet.");
	for (size_t k = 0; k < ng; k++) {
		uint64_t cum[EXH_BUCKETS];

		exh_cumulate(g[k].hist, cum);
		for (size_t b = 0; b < EXH_BUCKETS; b++) {
			fputs("pgoff_wait_duration_seconds_bucket", out);
			hist_labels(out, &g[k]);
			fprintf(out, ",le=\"%s\"} %" PRIu64 "\n", le[b], cum[b]);
		}
		exh_seconds(g[k].time_ns, secs, sizeof(secs));
		fputs("pgoff_wait_duration_seconds_sum", out);
		hist_labels(out, &g[k]);
		fprintf(out, "} %s\n", secs);
		fputs("pgoff_wait_duration_seconds_count", out);
		hist_labels(out, &g[k]);
		fprintf(out, "} %" PRIu64 "\n", cum[EXH_BUCKETS - 1]);
	}
	free(g);
	return 0;
}

/* Groups by cluster and wait, in the order of their labels' text. */
struct wait_series {
	const struct sv_group *g;
	struct cluster_text cluster;
};

static int cmp_wait_series(const void *a, const void *b)
{
	const struct wait_series *xs = a, *ys = b;
	const struct sv_row *x = &xs->g->key, *y = &ys->g->key;
	int c;

	if ((c = strcmp(xs->cluster.t, ys->cluster.t)) ||
	    (c = strcmp(x->wait_event_type, y->wait_event_type)) ||
	    (c = strcmp(x->wait_event, y->wait_event)))
		return c;
	return strcmp(x->wait, y->wait);
}

static bool same_cluster_wait(const struct sv_row *x, const struct sv_row *y)
{
	return sv_same_cluster(x, y) &&
	       strcmp(x->wait_event_type, y->wait_event_type) == 0 &&
	       strcmp(x->wait_event, y->wait_event) == 0 &&
	       strcmp(x->wait, y->wait) == 0;
}

/* Statements by time, longest first (the query ids' order breaks ties). */
static int cmp_query_time(const void *a, const void *b)
{
	const struct sv_group *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	return x->key.query_id < y->key.query_id ? -1 : x->key.query_id > y->key.query_id;
}

int ex_render_top_queries(FILE *out, const struct sv_snapshot *rows, size_t n)
{
	struct sv_snapshot s = *rows;
	struct sv_group *g;
	char id[PGOFF_QUERY_ID_BUFSZ];
	size_t keep = 0;
	int ng;

	/* statements only: a row without a query id is no statement's;
	 * time off the CPU only, as the name says */
	s.rows = calloc(rows->n ? rows->n : 1, sizeof(*s.rows));
	if (!s.rows)
		return -ENOMEM;
	for (size_t i = 0; i < rows->n; i++)
		if (rows->rows[i].query_id && !sv_row_on_cpu(&rows->rows[i]))
			s.rows[keep++] = rows->rows[i];
	s.n = keep;
	ng = sv_group(&s, SV_BY_QUERY, &g);
	free(s.rows);
	if (ng < 0)
		return -ENOMEM;
	qsort(g, (size_t)ng, sizeof(*g), cmp_query_time);
	head(out, "pgoff_query_offcpu_seconds_total", "counter",
	     "Time the statements with the most of it (--metrics.top-queries) "
	     "spent off the CPU, by query id as pg_stat_statements names it.");
	for (size_t i = 0; i < (size_t)ng && i < n; i++) {
		struct cluster_text c;
		char secs[32];

		cluster_text(&g[i].key, &c);
		fprintf(out, "pgoff_query_offcpu_seconds_total{%s,database=\"", c.t);
		ex_put_value(out, g[i].key.database);
		fprintf(out, "\",query_id=\"%s\"} ",
			pgoff_format_query_id(g[i].key.query_id, id, sizeof(id)));
		exh_seconds(g[i].time_ns, secs, sizeof(secs));
		fprintf(out, "%s\n", secs);
	}
	free(g);
	return 0;
}

/* Idle rows out of s: AAS counts active sessions, as top does. */
static void drop_idle(struct sv_snapshot *s)
{
	size_t keep = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!s->rows[i].idle)
			s->rows[keep++] = s->rows[i];
	s->n = keep;
}

/* Each cluster in cur with its idle time in d, for pgoff_backends_idle. */
struct idle_of {
	const struct sv_row *key;
	struct cluster_text cluster;
	uint64_t ns;
};

static int cmp_idle_of(const void *a, const void *b)
{
	return strcmp(((const struct idle_of *)a)->cluster.t,
		      ((const struct idle_of *)b)->cluster.t);
}

static int render_idle(FILE *out, const struct sv_snapshot *d,
		       const struct sv_snapshot *cur, uint64_t window)
{
	struct idle_of *c = calloc(cur->n ? cur->n : 1, sizeof(*c));
	size_t nc = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < cur->n; i++) {
		size_t k;

		for (k = 0; k < nc && !sv_same_cluster(c[k].key, &cur->rows[i]); k++)
			;
		if (k == nc) {
			c[nc].key = &cur->rows[i];
			cluster_text(&cur->rows[i], &c[nc++].cluster);
		}
	}
	for (size_t i = 0; i < d->n; i++)
		for (size_t k = 0; d->rows[i].idle && k < nc; k++)
			if (sv_same_cluster(c[k].key, &d->rows[i]))
				c[k].ns = sat_add(c[k].ns, d->rows[i].time_ns);
	qsort(c, nc, sizeof(*c), cmp_idle_of);
	head(out, "pgoff_backends_idle", "gauge",
	     "Average PostgreSQL processes of the cluster idle since the "
	     "previous scrape: waiting for work (Activity waits, the "
	     "postmaster) or clients between statements, left out of "
	     "pgoff_backends_waiting.");
	for (size_t k = 0; k < nc; k++)
		fprintf(out, "pgoff_backends_idle{%s} %.6g\n", c[k].cluster.t,
			(double)c[k].ns / (double)window);
	free(c);
	return 0;
}

int ex_render_aas(FILE *out, const struct sv_snapshot *prev,
		  const struct sv_snapshot *cur)
{
	struct sv_snapshot d, busy_rows, seen;
	struct sv_group *all = NULL, *busy = NULL;
	struct wait_series *v = NULL;
	uint64_t window;
	int na, nb, ret = 0;

	if (cur->now_ns <= prev->now_ns)
		return 0;	/* no time between them: nothing to say */
	window = cur->now_ns - prev->now_ns;
	if (sv_delta(prev, cur, &d))
		return -ENOMEM;
	if (sv_delta(NULL, &d, &busy_rows)) {	/* a copy, to drop idle from */
		sv_free(&d);
		return -ENOMEM;
	}
	drop_idle(&busy_rows);
	nb = sv_group(&busy_rows, SV_BY_CLUSTER_WAIT, &busy);
	sv_free(&busy_rows);
	/* every active wait seen: 0 or more */
	if (sv_delta(NULL, cur, &seen)) {
		sv_free(&d);
		free(busy);
		return -ENOMEM;
	}
	drop_idle(&seen);
	na = sv_group(&seen, SV_BY_CLUSTER_WAIT, &all);
	sv_free(&seen);
	v = calloc(na > 0 ? (size_t)na : 1, sizeof(*v));
	if (na < 0 || nb < 0 || !v) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < na; i++) {
		v[i].g = &all[i];
		cluster_text(&all[i].key, &v[i].cluster);
	}
	qsort(v, (size_t)na, sizeof(*v), cmp_wait_series);
	head(out, "pgoff_backends_waiting", "gauge",
	     "Average active PostgreSQL sessions of the cluster in this wait "
	     "since the previous scrape (AAS, as pgoffctl top --by wait shows "
	     "it; idle time is in pgoff_backends_idle).");
	for (int i = 0; i < na; i++) {
		const struct sv_row *k = &v[i].g->key;
		double aas = 0;

		for (int j = 0; j < nb; j++)
			if (same_cluster_wait(k, &busy[j].key))
				aas = (double)busy[j].time_ns / (double)window;
		fprintf(out, "pgoff_backends_waiting{%s,wait_event_type=\"",
			v[i].cluster.t);
		ex_put_value(out, k->wait_event_type);
		fputs("\",wait_event=\"", out);
		ex_put_value(out, k->wait_event);
		fputs("\",wait=\"", out);
		ex_put_value(out, k->wait);
		fprintf(out, "\"} %.6g\n", aas);
	}
	ret = render_idle(out, &d, cur, window);
	if (!ret)
		gauge(out, "pgoff_backends_waiting_window_seconds",
		      "The time pgoff_backends_waiting averages over.",
		      (double)window / 1e9);
out:
	sv_free(&d);
	free(v);
	free(all);
	free(busy);
	return ret;
}

/* One label of a ps reply's cluster, escaped as the others. */
static bool info_label(char *b, size_t size, size_t *len, json_object *c,
		       const char *key, const char *name)
{
	json_object *v;
	const char *s = "";
	char num[24];

	if (json_object_object_get_ex(c, key, &v) && v) {
		if (json_object_is_type(v, json_type_int)) {
			snprintf(num, sizeof(num), "%" PRId64,
				 json_object_get_int64(v));
			s = num;
		} else if (json_object_is_type(v, json_type_string)) {
			s = json_object_get_string(v);
		}
	}
	return sv_label(b, size, len, name, s);
}

int ex_render_clusters(FILE *out, json_object *ps)
{
	json_object *arr, *co;
	size_t n;
	struct cluster_series {
		struct cluster_text cluster;	/* its labels */
		char info[512];		/* and pgoff_cluster_info's */
		int64_t shared;
	} *v;

	if (!ps || !json_object_object_get_ex(ps, "clusters", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return 0;
	n = json_object_array_length(arr);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(arr, i);
		struct sv_row r;
		size_t len = 0;

		memset(&r, 0, sizeof(r));
		sv_parse_cluster(c, &r);
		cluster_text(&r, &v[i].cluster);
		if (!json_object_object_get_ex(c, "container", &co) ||
		    !json_object_is_type(co, json_type_object))
			co = NULL;
		if (!info_label(v[i].info, sizeof(v[i].info), &len, co,
				"runtime", "runtime") ||
		    !info_label(v[i].info, sizeof(v[i].info), &len, c,
				"unit", "unit") ||
		    !info_label(v[i].info, sizeof(v[i].info), &len, c,
				"version", "version") ||
		    !info_label(v[i].info, sizeof(v[i].info), &len, c,
				"port", "port"))
			v[i].cluster.t[0] = '\0';	/* not shown */
		if (!pgoff_get_int64(c, "path_shared", &v[i].shared) ||
		    v[i].shared < 0)
			v[i].shared = 0;
	}
	head(out, "pgoff_cluster_info", "gauge",
	     "1 for each PostgreSQL cluster pgoffd traces: its labels (the data "
	     "directory, its id, owner, container and pod), its container "
	     "runtime, systemd unit, version and port.");
	for (size_t i = 0; i < n; i++)
		if (v[i].cluster.t[0])
			fprintf(out, "pgoff_cluster_info{%s,%s} 1\n",
				v[i].cluster.t, v[i].info);
	head(out, "pgoff_cluster_path_shared", "gauge",
	     "How many other clusters pgoffd traces have this cluster's data "
	     "directory path (other containers', or a look-alike's): their "
	     "series stay their own, told apart by cluster_id and owner.");
	for (size_t i = 0; i < n; i++)
		if (v[i].cluster.t[0])
			fprintf(out, "pgoff_cluster_path_shared{%s} %" PRId64 "\n",
				v[i].cluster.t, v[i].shared);
	free(v);
	return 0;
}

static void render_self(FILE *out, const struct ex_scrape *s)
{
	counter(out, "pgoff_exporter_broker_connects_total",
		"Connections the exporter made to pgoffd (more than one: "
		"pgoffd restarted or the connection broke).", s->broker_connects);
	counter(out, "pgoff_exporter_broker_errors_total",
		"Scrapes that pgoffd did not answer.", s->broker_errors);
	counter(out, "pgoff_exporter_held_values_total",
		"Values pgoffd reported lower than before, held at their "
		"highest so that they do not look like resets.",
		s->counter_decreases);
	gauge(out, "pgoff_exporter_broker_request_seconds",
	      "Time this scrape spent asking pgoffd.", s->fetch_seconds);
	if (s->http) {
		head(out, "pgoff_exporter_http_auth_failures_total", "counter",
		     "Requests refused for their credentials: none (401), a "
		     "wrong user or password (401), or not checked because "
		     "the address sent too many wrong ones (429).");
		fprintf(out, "pgoff_exporter_http_auth_failures_total"
			"{reason=\"missing\"} %" PRIu64 "\n"
			"pgoff_exporter_http_auth_failures_total"
			"{reason=\"wrong\"} %" PRIu64 "\n"
			"pgoff_exporter_http_auth_failures_total"
			"{reason=\"rate_limited\"} %" PRIu64 "\n",
			s->http->auth_missing, s->http->auth_wrong,
			s->http->auth_rate_limited);
		head(out, "pgoff_exporter_http_connections_closed_total",
		     "counter", "Connections the exporter closed: no whole "
		     "request by the header deadline, the oldest without one "
		     "to make room for a new one, or at once past the "
		     "connection limits.");
		fprintf(out, "pgoff_exporter_http_connections_closed_total"
			"{reason=\"header_deadline\"} %" PRIu64 "\n"
			"pgoff_exporter_http_connections_closed_total"
			"{reason=\"crowded_out\"} %" PRIu64 "\n"
			"pgoff_exporter_http_connections_closed_total"
			"{reason=\"limit\"} %" PRIu64 "\n",
			s->http->header_timeouts, s->http->crowded_out,
			s->http->connections_refused);
		head(out, "pgoff_exporter_profile_requests_total", "counter",
		     "Requests for a pprof profile (/debug/pprof/profile): "
		     "served, refused because others were being made (503), "
		     "failed because pgoffd could not give one (503), or with "
		     "a bad seconds (400).");
		fprintf(out, "pgoff_exporter_profile_requests_total"
			"{result=\"served\"} %" PRIu64 "\n"
			"pgoff_exporter_profile_requests_total"
			"{result=\"busy\"} %" PRIu64 "\n"
			"pgoff_exporter_profile_requests_total"
			"{result=\"failed\"} %" PRIu64 "\n"
			"pgoff_exporter_profile_requests_total"
			"{result=\"bad_request\"} %" PRIu64 "\n",
			s->http->profiles_served, s->http->profiles_busy,
			s->http->profiles_failed, s->http->profiles_bad);
	}
	if (!s->self)
		return;
	head(out, "process_cpu_seconds_total", "counter",
	     "User and system CPU time the exporter used, in seconds.");
	fprintf(out, "process_cpu_seconds_total %.2f\n", s->self->cpu_seconds);
	gauge(out, "process_resident_memory_bytes",
	      "Resident memory of the exporter, in bytes.",
	      (double)s->self->resident_bytes);
	gauge(out, "process_start_time_seconds",
	      "When the exporter started, in seconds since the epoch.",
	      s->self->start_time_seconds);
	gauge(out, "process_open_fds", "File descriptors the exporter has open.",
	      (double)s->self->open_fds);
}

int ex_render(FILE *out, const struct ex_scrape *s)
{
	int ret;

	head(out, "pgoff_build_info", "gauge",
	     "The exporter's version and git revision, as value 1.");
	fputs("pgoff_build_info{version=\"", out);
	ex_put_value(out, s->version);
	fputs("\",revision=\"", out);
	ex_put_value(out, s->revision);
	fputs("\"} 1\n", out);
	gauge(out, "pgoff_broker_up",
	      "1 when pgoffd answered this scrape's requests, else 0.",
	      s->up && s->labels ? 1 : 0);
	if (s->up && s->labels) {
		render_broker(out, s);
		render_stats_health(out, s);
		if (s->per_pid && s->pids)
			ret = sv_render_metrics(out, s->pids, NULL, true);
		else
			ret = sv_render_metrics(out, s->labels, NULL, false);
		if (!ret)
			ret = ex_render_histogram(out, s->labels);
		if (!ret && s->pids_prev && s->pids)
			ret = ex_render_aas(out, s->pids_prev, s->pids);
		if (!ret && s->streaks)
			ret = streaks_render(out, s->streaks);
		if (!ret && s->queries)
			ret = ex_render_top_queries(out, s->queries, s->top_queries);
		if (!ret)
			ret = ex_render_clusters(out, s->ps);
		if (ret)
			return ret;
	}
	render_self(out, s);
	return ferror(out) ? -EIO : 0;
}
