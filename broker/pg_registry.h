/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_registry.h - the PostgreSQL clusters and processes pgoffd traces,
 * found by scanning /proc (new clusters) and by the kernel's fork
 * inheritance (new backends, looked up here when their first event comes).
 */
#ifndef PGOFF_PG_REGISTRY_H
#define PGOFF_PG_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/pg_probe.h"
#include "broker/pg_title.h"

struct pg_cluster {
	uint32_t id;			/* 1, 2, …; never reused while pgoffd runs */
	struct pg_cluster_info info;	/* what the prober found */
};

struct pg_proc {
	uint32_t pid;
	uint32_t cluster;
	bool titled;			/* title parsed for good */
	bool seen;			/* mark for the sweep after a scan */
	struct pg_title title;
};

struct pg_registry;

/* Makes a target known to the kernel side. */
typedef int (*pg_add_target_fn)(void *ctx, uint32_t tgid,
				const struct pgoff_target *target);
/* Asks the privileged prober about a postmaster (see pg_probe.h). */
typedef int (*pg_probe_fn)(void *ctx, uint32_t pid,
			   struct pg_cluster_info *out);

/*
 * Everything the registry reads itself is world-readable (/proc/PID/stat
 * and cmdline): it works in an unprivileged pgoffd.
 */
int pg_registry_new(struct pg_registry **out, const char *proc_root,
		    pg_add_target_fn add, pg_probe_fn probe, void *ctx);
void pg_registry_free(struct pg_registry *r);

/* Find new clusters and processes, forget dead ones. Returns 0 or -errno. */
int pg_registry_scan(struct pg_registry *r);
/* A process, learning about it on a miss; NULL if it is not PostgreSQL. */
const struct pg_proc *pg_registry_proc(struct pg_registry *r, uint32_t pid);
const struct pg_cluster *pg_registry_cluster(const struct pg_registry *r,
					     uint32_t id);
size_t pg_registry_proc_count(const struct pg_registry *r);
/* All known processes, by pid; valid until the next scan or lookup. */
const struct pg_proc *pg_registry_procs(const struct pg_registry *r,
					size_t *n);
size_t pg_registry_cluster_count(const struct pg_registry *r);

#endif
