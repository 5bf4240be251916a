/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exposition.h - one scrape's page in the Prometheus text format: what
 * pgoffd said (status, the kernel's aggregation), as counters, a
 * histogram and gauges, and the exporter's own health. Pure: no I/O but
 * the FILE * given. Metric names and labels are listed in
 * man/pgoff_exporter.1 and docs/MONITORING.md.
 */
#ifndef PGOFF_EXPORTER_EXPOSITION_H
#define PGOFF_EXPORTER_EXPOSITION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include "client/stats_view.h"

struct streaks;

/* The exporter process itself (process_* metrics); from /proc/self. */
struct ex_process {
	double cpu_seconds;
	uint64_t resident_bytes;
	double start_time_seconds;	/* since the epoch */
	uint64_t open_fds;
};

/* What the HTTP server refused, since the exporter started. */
struct ex_http {
	uint64_t auth_missing;		/* 401: no credentials */
	uint64_t auth_wrong;		/* 401: wrong user or password */
	uint64_t auth_rate_limited;	/* 429: not checked (auth_limit.h) */
	/* connections closed: no whole request by the header deadline; the
	 * oldest without one, for a new one past the soft limits; at once,
	 * past libmicrohttpd's */
	uint64_t header_timeouts, crowded_out, connections_refused;
	/* pprof profile requests: answered, refused (too many at once: 503),
	 * failed (pgoffd could not give one: 503), with a bad seconds (400) */
	uint64_t profiles_served, profiles_busy, profiles_failed, profiles_bad;
};

struct ex_scrape {
	const char *version, *revision;	/* pgoff_build_info */
	bool up;			/* pgoffd answered every request */
	/* when up (borrowed): */
	json_object *status;		/* the status reply */
	json_object *ps;		/* the ps reply: the clusters */
	const struct sv_snapshot *labels;	/* stats by labels */
	/* stats by pid now and at the previous scrape (pids_prev NULL when
	 * there is none to compare with): backends waiting, as top --by wait */
	const struct sv_snapshot *pids_prev, *pids;
	bool per_pid;			/* the counters by pid, from pids */
	/* stats by statement (--metrics.top-queries): the top_queries
	 * statements with the most off-CPU time; NULL: not asked */
	const struct sv_snapshot *queries;
	size_t top_queries;
	const struct streaks *streaks;	/* NULL: none yet */
	double wall_now;		/* seconds since the epoch */
	/* the exporter's own health */
	double fetch_seconds;		/* asking pgoffd, this scrape */
	uint64_t broker_connects;	/* successful connections to pgoffd */
	uint64_t broker_errors;		/* scrapes pgoffd did not answer */
	uint64_t counter_decreases;	/* see monotonic.h */
	const struct ex_process *self;	/* NULL: not known */
	const struct ex_http *http;	/* NULL: not known */
};

/* The whole page. Returns 0, -ENOMEM, -ERANGE (a bucket bound that does
 * not fit: a hist_unit_ns no pgoffd sends) or -EIO (writing failed). */
int ex_render(FILE *out, const struct ex_scrape *s);

/*
 * Histogram series from rows: grouped by cluster (its labels: cluster,
 * cluster_id, owner, container, pod_uid), kernel wait type and
 * PostgreSQL wait event type, summed. Exposed for the tests. Returns 0,
 * -ENOMEM or -ERANGE.
 */
int ex_render_histogram(FILE *out, const struct sv_snapshot *rows);

/* The AAS gauge: each cluster's per-wait share of the time between prev
 * and cur; and its idle time. */
int ex_render_aas(FILE *out, const struct sv_snapshot *prev,
		  const struct sv_snapshot *cur);

/*
 * pgoff_query_offcpu_seconds_total: the n statements (query ids) of rows
 * by query with the most off-CPU time, summed over their waits, by
 * cluster (its labels), database and query_id. Returns 0 or -ENOMEM.
 */
/*
 * pgoff_cluster_info (1 for each cluster pgoffd traces, with its labels
 * and its runtime, unit, version and port) and pgoff_cluster_path_shared
 * (how many other clusters traced have its data directory's path), from
 * the ps reply's clusters. Returns 0 or -ENOMEM.
 */
int ex_render_clusters(FILE *out, json_object *ps);
int ex_render_top_queries(FILE *out, const struct sv_snapshot *rows, size_t n);

/* A label value as the text format wants it: \\, \" and \n escaped. */
void ex_put_value(FILE *out, const char *v);

#endif
