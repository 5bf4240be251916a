/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_registry.h - the PostgreSQL clusters and processes pgoffd traces.
 *
 * Clusters are found by scanning /proc for processes named postgres
 * whose parent is not: would-be postmasters, which the prober then
 * checks (prober.h; pgoffd asks without waiting, one at a time, taking
 * users in turn so that no user's processes delay another's). The
 * kernel is the authority on which processes are traced: the prober
 * puts a cluster's processes into its table (and lists them in its
 * answer), the kernel adds what they fork and drops what exits or execs.
 * The registry learns them from those answers and from what the kernel
 * sends (records, titles, the thread and aggregation tables, each naming
 * the cluster) — pgoffd holds no descriptor to ask the table itself —
 * and reads their labels from their titles.
 */
#ifndef PGOFF_PG_REGISTRY_H
#define PGOFF_PG_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/pg/pg_names.h"
#include "broker/pg/cluster_ident.h"
#include "broker/priv/pg_probe.h"
#include "broker/pg/pg_title.h"

struct pg_cluster {
	uint32_t id;			/* the prober's; never reused while pgoffd runs */
	uint64_t start;			/* the postmaster's start time (/proc/PID/stat) */
	struct pg_cluster_info info;	/* what the prober found */
	struct pg_names names;		/* what its server named at run time */
	/* what tells it from every other cluster, across restarts (its id
	 * from the prober's facts, its owner, and the container its
	 * postmaster's cgroup names, read when it was found) */
	struct cluster_ident ident;
	char unit[CONTAINER_UNIT_LEN];	/* its systemd service; "" */
};

struct pg_proc {
	uint32_t pid;
	uint32_t cluster;
	bool titled;			/* title parsed for good */
	uint8_t missed;			/* scans since /proc last showed it */
	struct pg_title title;
};

/* A process named postgres that is not traced, and why (ps, the log). */
struct pg_refusal {
	uint32_t pid;
	uint32_t uid;
	int32_t status;			/* -errno, as pg_probe_cluster's */
	bool logged;
	int64_t retry_ms;		/* ask again from then; 0: never */
	uint32_t backoff_ms;
	uint32_t tries;			/* answers "still starting" so far */
	uint64_t start;			/* the process's start time */
	uint32_t account;		/* -EUSERS: the user whose clusters
					 * are as many as allowed */
	char why[160];
};

struct pg_registry;

int pg_registry_new(struct pg_registry **out, const char *proc_root,
		    uint32_t max_clusters_per_uid);
void pg_registry_free(struct pg_registry *r);
/* SIGHUP: a new max-clusters-per-user. */
void pg_registry_set_limit(struct pg_registry *r, uint32_t max_clusters_per_uid);

/*
 * Find would-be postmasters to ask about, read the titles of processes
 * still untitled, forget dead ones. now_ms: CLOCK_MONOTONIC. 0 or -errno.
 */
int pg_registry_scan(struct pg_registry *r, int64_t now_ms);
/* The next postmaster to ask the prober about, users in turn; false: none. */
bool pg_registry_next_probe(struct pg_registry *r, int64_t now_ms,
			    uint32_t *pid);
/* The prober's answer, with the pids it traced. Returns the new
 * cluster, or NULL. */
const struct pg_cluster *pg_registry_probed(struct pg_registry *r,
					    const struct pg_cluster_info *info,
					    const uint32_t *pids, size_t npids,
					    int64_t now_ms);
/* The kernel traces pid in cluster (it said so in a record or a table). */
const struct pg_proc *pg_registry_learn(struct pg_registry *r, uint32_t pid,
					uint32_t cluster);
/* A forked process's title, as the kernel read it from its memory. */
void pg_registry_title(struct pg_registry *r, uint32_t pid, uint32_t cluster,
		       const char *title);

/*
 * Run-time names (pg_names.h). A cluster found is read at once; a name
 * that may have appeared since (pg_names_may_appear) asks for a read
 * again, as does ps (names_wanted: all clusters). next_names: the next
 * cluster to read, none more than once in PG_NAMES_REFRESH_MS (or its
 * back-off after failed reads), in turn;
 * false: none is due. names_answer: what the prober read (ignored if
 * the cluster is gone or its postmaster is another).
 */
void pg_registry_names_wanted(struct pg_registry *r, uint32_t cluster);
/* info was seen in cluster without a run-time name: a read is due if its
 * server may have named it since (pg_names_may_appear). */
void pg_registry_name_unknown(struct pg_registry *r, uint32_t cluster,
			      uint32_t info);
void pg_registry_names_wanted_all(struct pg_registry *r);
bool pg_registry_next_names(struct pg_registry *r, int64_t now_ms,
			    uint32_t *cluster, uint32_t *pid);
void pg_registry_names_answer(struct pg_registry *r, uint32_t cluster,
			      uint32_t pid, const struct pg_run_names *names);

/* A traced process, its title read if not yet; NULL if not known. */
const struct pg_proc *pg_registry_proc(struct pg_registry *r, uint32_t pid);
const struct pg_cluster *pg_registry_cluster(const struct pg_registry *r,
					     uint32_t id);
/*
 * The other clusters traced now whose data directory has c's path (a
 * container's, a look-alike's): up to max of them into others; how many
 * there are.
 */
size_t pg_registry_same_path(const struct pg_registry *r,
			     const struct pg_cluster *c,
			     const struct pg_cluster **others, size_t max);
size_t pg_registry_proc_count(const struct pg_registry *r);
/* All known processes, by pid; valid until the next scan or lookup. */
const struct pg_proc *pg_registry_procs(const struct pg_registry *r,
					size_t *n);
size_t pg_registry_cluster_count(const struct pg_registry *r);
/* Processes named postgres that are not traced, and why, oldest first:
 * at most 4096 are kept, 512 of a user; unkept: how many more were turned
 * away (not kept, or not asked about) between the last two scans. */
const struct pg_refusal *pg_registry_refusals(const struct pg_registry *r,
					      size_t *n);
size_t pg_registry_refusals_unkept(const struct pg_registry *r);

#endif
