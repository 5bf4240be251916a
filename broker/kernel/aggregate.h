/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * aggregate.h - the kernel's aggregation (struct pgoff_agg_key/_agg) in
 * PostgreSQL's terms, for the stats op behind pgoffctl top and metrics.
 *
 * Rows of live processes are read from the kernel map on each request;
 * rows of processes that are gone are folded, once, into rows by labels
 * (cluster, database, backend type, wait) kept here, so that cumulative
 * totals never go down while pgoffd runs.
 */
#ifndef PGOFF_AGGREGATE_H
#define PGOFF_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/classify.h"
#include "broker/pg/cluster_ident.h"
#include "broker/priv/pg_shmem_names.h"
#include "broker/pg/pg_title.h"
#include "protocol/protocol.h"

#define AGG_MAX_RETIRED	4096	/* label rows kept for exited processes */
#define AGG_MAX_HELD	4096	/* label sets whose highest time is kept */
#define AGG_OTHER	"(other)"	/* backend type of the catch-all row */

struct pg_proc;
struct pg_cluster;

/* One row of a stats reply. */
struct agg_row {
	uint32_t pid;			/* 0 in rows by labels */
	uint32_t cluster;		/* 0: unknown */
	int pg_major;			/* for the wait event's name */
	uint32_t pg_wait_event_info;
	/* the name its cluster's server made for it at run time (pg_names.h;
	 * "": none); not in the flight record's rows */
	char pg_wait_name[PG_RUN_NAME_LEN];
	bool pg_known;			/* wait_event_info was read */
	enum pgoff_wait wait;		/* kernel wait type, refined */
	uint64_t query_id;		/* the statement's; 0: none (rows by pid) */
	bool query_folded;		/* a statement's, past the kernel's cap of
					 * rows with a query id: query_id unknown */
	bool pg_status;			/* the status entry was read: */
	uint8_t pg_state;		/* st_state, raw */
	bool idle;			/* idle time, not an active session's
					 * (pgoff_wait_idle) */
	char data_dir[256];		/* "" when the cluster is unknown */
	struct cluster_ident ident;	/* its id, owner, container: rows of
					 * two clusters at one path differ */
	struct pg_title title;		/* empty when the process is unknown */
	uint64_t count;
	uint64_t total_ns;
	uint64_t hist[PGOFF_AGG_BUCKETS];
};

/*
 * A row from a kernel key and value, with what is known of its process
 * and cluster (either may be NULL).
 */
void agg_row_make(struct agg_row *row, const struct pgoff_agg_key *k,
		  const struct pgoff_agg *v, const struct pg_proc *p,
		  const struct pg_cluster *c);

/* Drop what rows by labels do not keep: pid, user, query id. */
void agg_row_to_labels(struct agg_row *row);
/* Drop what rows by query do not keep: pid, user, backend type. */
void agg_row_to_query(struct agg_row *row);
/* A row as rows grouped by (by) keep it. */
void agg_row_to(struct agg_row *row, enum pgoff_stats_by by);

/*
 * Sort rows by identity and merge equal ones (same pid and wait, or the
 * same labels: a cluster's are its identity and its data directory);
 * then order by total time, longest first. Returns the number of rows
 * left.
 */
size_t agg_rows_merge(struct agg_row *rows, size_t n, enum pgoff_stats_by by);

/*
 * Rows as agg_rows_merge left them (longest first), at most keep of them
 * kept: each cluster (identity and data directory) keeps its busiest rows, as many as
 * it has up to a cap shared fairly among the clusters, and the rest of
 * each cluster's rows are folded into one row of that cluster with
 * backend type "(other)", their time kept, their labels not (clusters
 * past the 64th share one). So processes that come and go in one cluster
 * never push another cluster's rows into "(other)". *folded grows by the
 * rows folded. Returns the rows left, longest first.
 */
size_t agg_rows_keep(struct agg_row *rows, size_t n, size_t keep,
		     uint64_t *folded);

/* Rows by labels: those of exited processes, or the highest told. */
struct agg_label_rows {
	struct agg_row *rows;
	size_t n;
	size_t cap;		/* rows allocated (grown by half again) */
	uint64_t overflowed;	/* rows folded into the catch-all row */
};

/*
 * Fold a row (already as by keeps it: labels or query) in. Past
 * AGG_MAX_RETIRED distinct rows, the row goes into one catch-all row
 * (backend type "(other)"): its time is kept, its labels are not.
 * Returns 0 or -ENOMEM.
 */
int agg_retire(struct agg_label_rows *r, const struct agg_row *row,
	       enum pgoff_stats_by by);
void agg_label_rows_free(struct agg_label_rows *r);

/*
 * Rows by labels (as agg_rows_merge left them, *n of them), as cumulative
 * counters: each row's time becomes at least the most h has seen for its
 * labels, and h learns it. (Time read from two kernel maps one after the
 * other can be short for a moment; a Prometheus counter must never go
 * back.) h holds at most AGG_MAX_HELD label sets, the catch-all row
 * included: once it is full, a row whose labels it does not hold goes
 * into the catch-all row ("(other)", as agg_retire's), where its time is
 * kept and its labels are not; such rows stay there (h never forgets),
 * so no series jumps between its own row and "(other)". h->overflowed
 * counts rows folded so. *n may shrink. Returns 0 or -ENOMEM.
 */
int agg_hold_highest(struct agg_label_rows *h, struct agg_row *rows, size_t *n);

/*
 * Encode rows into reply: "rows" (at most budget bytes of them, longest
 * first), "total" and "truncated".
 */
void agg_rows_encode(json_object *reply, const struct agg_row *rows,
		     size_t n, enum pgoff_stats_by by, size_t budget);

#endif
