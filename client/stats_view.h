/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stats_view.h - pgoffd's stats replies as pgoffctl top and metrics show
 * them: parsed (nothing from the broker is trusted), differenced between
 * two snapshots, grouped, and rendered as a table, JSON or the Prometheus
 * text format. Pure: no I/O but the FILE * given.
 */
#ifndef PGOFF_STATS_VIEW_H
#define PGOFF_STATS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#define SV_BUCKETS 32		/* as the kernel's log2 histogram */

/* A cluster's identity as pgoffd tells it (PROTOCOL.md, stats). */
struct sv_ident {
	char cluster_id[24];	/* "" when pgoffd did not know the cluster */
	int64_t owner;		/* its uid; -1: not told */
	char runtime[16];	/* its container's; "" on the host */
	char container[72];	/* the container's id */
	char pod_uid[48];	/* the Kubernetes pod's UID */
};

struct sv_row {
	uint32_t pid;		/* 0 in rows by labels */
	char data_dir[256];
	struct sv_ident ident;
	char backend_type[64];
	char database[64];
	char user[64];
	char wait_event_type[32];	/* "" outside any PostgreSQL wait */
	char wait_event[64];
	char wait[16];		/* kernel wait type */
	uint32_t wait_event_info;
	bool pg_known;		/* false: the backend's memory was unreadable */
	uint64_t query_id;	/* the statement's; 0: none */
	bool query_folded;	/* a statement's whose id pgoffd could not keep */
	bool idle;		/* idle time: no active session's (pgoffd says) */
	char query[160];	/* the statement's normalized text, for members
				 * of the query group; "" (cut to fit) */
	char state[32];		/* an idle row's pg_stat_activity.state; "" */
	uint64_t count;
	uint64_t time_ns;
	uint64_t hist[SV_BUCKETS];
};

struct sv_snapshot {
	uint64_t now_ns;	/* the broker's CLOCK_MONOTONIC */
	uint64_t hist_unit_ns;
	bool truncated;
	struct sv_row *rows;
	size_t n;
};

/* A stats reply into a snapshot. Returns 0, or -EPROTO/-ENOMEM with err. */
int sv_parse(json_object *reply, struct sv_snapshot *out, char *err,
	     size_t errlen);
void sv_free(struct sv_snapshot *s);

/*
 * What happened between prev and cur: matching rows (same pid and waits)
 * subtracted; a row new in cur (a new process or wait) counts whole,
 * unless prev was cut short (truncated: the row may just have been left
 * out, and counts nothing); a row whose count went down (its pid was
 * reused) counts whole; time that went down alone (read while an
 * interval ended) counts nothing.
 */
int sv_delta(const struct sv_snapshot *prev, const struct sv_snapshot *cur,
	     struct sv_snapshot *out);

/* SV_BY_QUERY: one row per statement (query id); SV_BY_QUERY_WAIT: per
 * statement and wait; SV_BY_CLUSTER_WAIT (no top view: the exporter's
 * gauges) per cluster and wait. */
enum sv_by { SV_BY_BACKEND, SV_BY_WAIT, SV_BY_DATABASE, SV_BY_QUERY,
	     SV_BY_QUERY_WAIT, SV_BY_CLUSTER_WAIT };

struct sv_group {
	struct sv_row key;	/* the fields the grouping keeps */
	uint64_t time_ns, count, hist[SV_BUCKETS];
	size_t backends;	/* distinct pids in it */
	char top_wait[128];	/* for SV_BY_BACKEND: the wait with most time */
	uint64_t top_wait_ns;
};

/* Group rows, longest time first. Returns the number, or -ENOMEM. */
int sv_group(const struct sv_snapshot *d, enum sv_by by,
	     struct sv_group **out);

/*
 * Upper bound of the bucket holding quantile q (0 < q <= 1) of the
 * histogram, in ns; 0 when empty; UINT64_MAX in the open last bucket.
 */
uint64_t sv_quantile_ns(const uint64_t hist[SV_BUCKETS], uint64_t unit_ns,
			double q);

/* The top table; limit rows at most (0: all). */
void sv_render_top(FILE *out, const struct sv_group *g, size_t n,
		   enum sv_by by, uint64_t interval_ns, uint64_t unit_ns,
		   size_t limit);
/* The same as one JSON object (a reference for the caller). */
json_object *sv_top_json(const struct sv_group *g, size_t n, enum sv_by by,
			 uint64_t interval_ns, uint64_t unit_ns, size_t limit);

/* A cluster as pgoffd describes it (a ps reply's cluster, a stats row):
 * its data directory and identity into r (the rest left as it is). */
void sv_parse_cluster(json_object *o, struct sv_row *r);
/* Whether a row is time on a CPU inside a wait (sampled, wait "on_cpu"),
 * not off it: its count and histogram are empty. */
bool sv_row_on_cpu(const struct sv_row *r);
/* Whether two rows are of one cluster: its identity and data directory. */
bool sv_same_cluster(const struct sv_row *a, const struct sv_row *b);
bool sv_same_ident(const struct sv_ident *a, const struct sv_ident *b);
/* Whether row's container id starts with prefix (pgoff_container_matches). */
bool sv_in_container(const struct sv_row *r, const char *prefix);

/*
 * A cluster's labels, as every per-cluster series carries them: cluster
 * (the data directory), cluster_id, owner, container and pod_uid
 * (empty on the host), escaped for the text format and made printable;
 * into buf (size bytes, at least SV_CLUSTER_LABELS), after len bytes of
 * labels already there (a comma between). False when they do not fit.
 */
#define SV_CLUSTER_LABELS (2 * (sizeof(((struct sv_row *)0)->data_dir) + \
				sizeof(struct sv_ident)) + 96)
bool sv_cluster_labels(char *buf, size_t size, size_t *len,
		       const struct sv_row *r);
/* One more label, escaped the same way. */
bool sv_label(char *buf, size_t size, size_t *len, const char *name,
	      const char *v);

/*
 * Prometheus text format from a snapshot (by labels, or by pid with
 * per_pid) and a status reply (loss counters, gauges; may be NULL).
 * Series with the same labels are summed: a restarted cluster keeps its
 * identity and its data directory. Returns 0, or -ENOMEM.
 */
int sv_render_metrics(FILE *out, const struct sv_snapshot *s,
		      json_object *status, bool per_pid);

const char *sv_by_name(enum sv_by by);
int sv_by_parse(const char *name, enum sv_by *out);

#endif
