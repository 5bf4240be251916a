/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracer.h - the BPF side as pgoffd sees it: load, attach, push the
 * filter down, feed targets, read records and loss counters.
 */
#ifndef PGOFF_TRACER_H
#define PGOFF_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/serve/filter.h"

struct tracer;

struct tracer_opts {
	size_t ringbuf_bytes;	/* power of two, >= page size */
	bool force_raw_tp;	/* test the fallback on a tp_btf kernel */
	uint64_t on_cpu_sample_ns;	/* sample each CPU's running backend's
					 * wait this often; 0: never */
};

/* Called for each record (an interval or an episode, see offcpu.h). */
typedef void (*tracer_record_fn)(void *ctx, void *data, size_t size);

int tracer_open(struct tracer **out, const struct tracer_opts *opts,
		tracer_record_fn fn, void *ctx);
void tracer_close(struct tracer *t);	/* NULL-safe; detaches everything */

const char *tracer_hook(const struct tracer *t);	/* "tp_btf" / "raw_tp" */
/* How many BPF programs are attached (the links pgoffd holds). */
unsigned int tracer_attached_programs(const struct tracer *t);
/* On how many CPUs the on-CPU sampler runs (0: off). */
int tracer_on_cpu_cpus(const struct tracer *t);
/*
 * Hand at most budget records to the callback; *more says the budget ran
 * out with records left (call again soon). Returns records handled, or -errno.
 */
int tracer_consume(struct tracer *t, int budget, bool *more);

/* The maps the prober fills: traced processes, per-user quotas, and
 * the count of traced processes by slot (see pgoff_target_slot). */
int tracer_targets_fd(const struct tracer *t);
int tracer_quotas_fd(const struct tracer *t);
int tracer_target_slots_fd(const struct tracer *t);
/*
 * From now on this process holds no descriptor of the targets map nor
 * of its slot counters: only the prober, which got its own, adds
 * targets. Returns 0 or -errno.
 */
int tracer_forget_targets(struct tracer *t);
/*
 * The program PostgreSQL's wait probes run (broker/priv/usdt.c links it), and
 * dropping it: whoever holds it may uprobe any file it can name.
 */
int tracer_usdt_prog_fd(const struct tracer *t);	/* < 0: not loaded
							   (Linux < 6.6) */
int tracer_forget_usdt(struct tracer *t);
/* usdt-max-rate: a cluster's LWLock probe hits a second past which they
 * are paused (0: never), until quiet_ns with no second over it;
 * reloadable. */
void tracer_set_usdt_rate(struct tracer *t, uint64_t max_rate,
			  uint64_t quiet_ns);
/* The map of each cluster's rate (struct pgoff_usdt_rate by id). */
int tracer_usdt_rates_fd(const struct tracer *t);
/* Traced processes, as the per-user quotas count them. */
size_t tracer_target_count(const struct tracer *t);

/*
 * Push the union of live subscriptions into the kernel; u: the union of
 * those that want user stacks (a subset of k), NULL if none does.
 */
int tracer_set_filter(struct tracer *t, const struct kernel_filter *k,
		      const struct kernel_filter *u);
/* Stop emitting records (no subscriber). */
void tracer_mute(struct tracer *t);
uint64_t tracer_min_duration(const struct tracer *t);

/* One row of the kernel's aggregation; non-zero stops the walk. */
typedef int (*tracer_agg_fn)(void *ctx, const struct pgoff_agg_key *key,
			     const struct pgoff_agg *val);
int tracer_agg_foreach(struct tracer *t, tracer_agg_fn fn, void *ctx);
int tracer_agg_delete(struct tracer *t, const struct pgoff_agg_key *key);

/* Whether the kernel keeps statements' texts (query_texts.h). 0 or -errno. */
int tracer_set_query_texts(struct tracer *t, bool on);
/* The text kept of statement id of cluster, NUL-terminated in buf, its
 * length in *len. 0, or -ENOENT when none is kept. */
int tracer_query_text(struct tracer *t, uint64_t id, uint32_t cluster,
		      char *buf, size_t size, size_t *len);

/* Each traced thread's start (start_ns 0: on a CPU now); non-zero stops
 * the walk. */
typedef int (*tracer_thread_fn)(void *ctx, uint32_t pid,
				const struct pgoff_start *start);
int tracer_threads_foreach(struct tracer *t, tracer_thread_fn fn, void *ctx);

/* Sum of the per-CPU counters, indexed by enum pgoff_counter. */
int tracer_counters(const struct tracer *t, uint64_t out[PGOFF_CNT__COUNT]);

#endif
