// SPDX-License-Identifier: GPL-2.0-only
/* replies.c - what pgoffd answers to status, ps, stats (live and over the
 * past) and history, from its parts' state; see broker.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "broker/broker.h"
#include "broker/kernel/json_fields.h"
#include "broker/pg/pg_registry.h"
#include "broker/pg/pg_wait_names.h"
#include "broker/priv/usdt.h"
#include "broker/pg/usyms.h"
#include "common/clock.h"
#include "common/log.h"

/* Names in status replies, by enum pgoff_counter (see PROTOCOL.md). */
static const char *const counter_names[PGOFF_CNT__COUNT] = {
	[PGOFF_CNT_SWITCHES] = "switches",
	[PGOFF_CNT_EVENTS] = "events",
	[PGOFF_CNT_RINGBUF_FULL] = "ringbuf_full",
	[PGOFF_CNT_START_FULL] = "start_map_full",
	[PGOFF_CNT_STACK_FAIL] = "stack_failed",
	[PGOFF_CNT_PG_READ_FAIL] = "pg_read_failed",
	[PGOFF_CNT_QUERY_FAIL] = "query_failed",
	[PGOFF_CNT_EPISODES] = "episodes",
	[PGOFF_CNT_AGG_FULL] = "aggregate_map_full",
	[PGOFF_CNT_QUOTA_FULL] = "quota_full",
	[PGOFF_CNT_TARGET_FULL] = "target_map_full",
	[PGOFF_CNT_NOT_OWNER] = "not_owner",
	[PGOFF_CNT_USTACK_FAIL] = "user_stack_failed",
	[PGOFF_CNT_USDT_LOCK_START] = "usdt_lock_wait_start",
	[PGOFF_CNT_USDT_LOCK_DONE] = "usdt_lock_wait_done",
	[PGOFF_CNT_USDT_LWLOCK_START] = "usdt_lwlock_wait_start",
	[PGOFF_CNT_USDT_LWLOCK_DONE] = "usdt_lwlock_wait_done",
	[PGOFF_CNT_AGG_QUERY_FOLDED] = "aggregate_query_folded",
	[PGOFF_CNT_USDT_LWLOCK_PAUSED] = "usdt_lwlock_paused",
	[PGOFF_CNT_SWITCH_IN_UNSEEN] = "switch_in_unseen",
	[PGOFF_CNT_SWITCH_IN_LOST] = "switch_in_lost",
	[PGOFF_CNT_ON_CPU_SAMPLES] = "on_cpu_samples",
	[PGOFF_CNT_AGG_BUSY] = "aggregate_busy",
};

/* Which tables name a cluster's wait events, or why none do. */
static void add_names_source(json_object *o, const struct pg_cluster *c)
{
	const char *src = pg_wait_names_source(c->info.major);
	char why[64];

	json_object_object_add(o, "wait_names", src ?
			       json_object_new_string(src) : NULL);
	if (event_names_missing(c, why, sizeof(why)))
		json_object_object_add(o, "wait_names_missing",
				       json_object_new_string(why));
}

/* The wait events a cluster's server named at run time that ps lists
 * ("Extension:DblinkGetResult"); the rest are only counted. */
#define PS_RUN_NAMES 64

/* Why a cluster has no run-time names; NULL when it has them read. */
static const char *run_names_missing(const struct pg_cluster *c)
{
	if (c->names.status)
		return c->names.why;
	return c->names.read ? NULL : "not read yet";
}

/* A cluster's run-time names into o: how many, and (list) which. */
static void add_run_names(json_object *o, const struct pg_cluster *c, bool list)
{
	const char *why = run_names_missing(c);
	json_object *arr;

	json_object_object_add(o, "run_time_names",
			       json_object_new_int64(c->names.n));
	if (why)
		json_add_text(o, "run_time_names_missing", why,
			      sizeof(c->names.why));
	if (c->names.truncated)
		json_object_object_add(o, "run_time_names_truncated",
				       json_object_new_boolean(true));
	if (!list)
		return;
	arr = json_object_new_array();
	for (uint32_t i = 0; i < c->names.n && i < PS_RUN_NAMES; i++) {
		const struct pg_run_name *n = &c->names.v[i];
		const char *type = pg_wait_event_type(c->info.major,
						      n->wait_event_info);
		char buf[PG_RUN_NAME_LEN + 32];

		snprintf(buf, sizeof(buf), "%s:%s", type ? type : "?", n->name);
		json_object_array_add(arr, json_object_new_string(buf));
	}
	json_object_object_add(o, "run_time_wait_events", arr);
}

/* Each cluster's run-time names, for status: how many, or why none. */
static json_object *run_names_status(const struct broker *b, bool *truncated)
{
	json_object *arr = json_object_new_array();
	size_t n, used = 0;
	const struct pg_proc *p = pg_registry_procs(b->registry, &n);

	*truncated = false;
	for (size_t i = 0; i < n; i++) {
		const struct pg_cluster *c = pg_registry_cluster(b->registry,
								 p[i].cluster);
		json_object *o;

		if (!c || c->info.postmaster_pid != p[i].pid)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int64(c->id));
		add_run_names(o, c, false);
		used += strlen(pgoff_json_line(o, NULL)) + 1;
		if (used > PGOFF_MAX_LINE / 8) {
			json_object_put(o);
			*truncated = true;
			break;
		}
		json_object_array_add(arr, o);
	}
	return arr;
}

/* Look-alikes: the other clusters traced at this one's path. */
#define SAME_PATH_SHOWN 8

/* What a cluster's id is made of, and the clusters it could be taken
 * for, for ps. */
static void add_identity_facts(const struct broker *b, json_object *o,
			       const struct pg_cluster *c)
{
	const struct pg_cluster *others[SAME_PATH_SHOWN];
	size_t n = pg_registry_same_path(b->registry, c, others,
					 SAME_PATH_SHOWN);
	char sysid[24];

	json_object_object_add(o, "account_uid", json_object_new_int64(
				       c->info.account_uid));
	if (c->info.account_missing[0])
		json_add_text(o, "account_uid_missing", c->info.account_missing,
			      sizeof(c->info.account_missing));
	if (c->info.has_sysid) {
		snprintf(sysid, sizeof(sysid), "%" PRIu64,
			 c->info.system_identifier);
		json_object_object_add(o, "system_identifier",
				       json_object_new_string(sysid));
	} else {
		json_object_object_add(o, "system_identifier", NULL);
		json_add_text(o, "system_identifier_missing",
			      c->info.sysid_missing,
			      sizeof(c->info.sysid_missing));
	}
	if (n) {
		json_object *arr = json_object_new_array();

		json_object_object_add(o, "path_shared",
				       json_object_new_int64((int64_t)n));
		for (size_t i = 0; i < n && i < SAME_PATH_SHOWN; i++)
			json_object_array_add(arr, json_object_new_string(
						      others[i]->ident.id));
		json_object_object_add(o, "path_shared_with", arr);
	}
}

/* Clusters whose wait events cannot be named, for status. */
static json_object *unnamed_clusters(const struct broker *b)
{
	json_object *arr = json_object_new_array();
	size_t n;
	const struct pg_proc *p = pg_registry_procs(b->registry, &n);

	for (size_t i = 0; i < n; i++) {
		const struct pg_cluster *c = pg_registry_cluster(b->registry,
								 p[i].cluster);
		char why[64];
		json_object *o;

		if (!c || c->info.postmaster_pid != p[i].pid ||
		    !event_names_missing(c, why, sizeof(why)))
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int64(c->id));
		json_object_object_add(o, "version",
				       json_object_new_string(c->info.version));
		json_object_object_add(o, "why", json_object_new_string(why));
		json_object_array_add(arr, o);
	}
	return arr;
}

static void status_hook(void *ctx, json_object *r)
{
	struct broker *b = ctx;
	uint64_t cnt[PGOFF_CNT__COUNT] = { 0 };
	struct usyms_stats us;
	json_object *c = json_object_new_object();
	uint64_t min = tracer_min_duration(b->tracer);
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);

	tracer_counters(b->tracer, cnt);
	json_object_object_add(r, "broker", json_object_new_string(
				       "pgoffd " PGOFF_VERSION));
	json_object_object_add(r, "version",
			       json_object_new_int(PGOFF_PROTO_VERSION));
	json_object_object_add(r, "uptime_s",
			       json_object_new_int64(now.tv_sec - b->started.tv_sec));
	json_object_object_add(r, "hook", json_object_new_string(
				       tracer_hook(b->tracer)));
	json_object_object_add(r, "bpf_programs_attached", json_object_new_int64(
				       tracer_attached_programs(b->tracer)));
	/* the on-CPU sampler: its period (0: off) and CPUs */
	json_object_object_add(r, "on_cpu_sample_us", json_object_new_int64(
		tracer_on_cpu_cpus(b->tracer) ?
		(int64_t)(b->cfg.on_cpu_sample_ns / 1000) : 0));
	json_object_object_add(r, "on_cpu_sample_cpus", json_object_new_int64(
				       tracer_on_cpu_cpus(b->tracer)));
	json_object_object_add(r, "clients", json_object_new_int64(
				       (int64_t)server_client_count(b->server)));
	json_object_object_add(r, "subscribers", json_object_new_int64(
				       (int64_t)server_subscriber_count(b->server)));
	json_object_object_add(r, "clusters", json_object_new_int64(
		(int64_t)pg_registry_cluster_count(b->registry)));
	json_object_object_add(r, "clusters_unnamed", unnamed_clusters(b));
	{
		bool truncated;

		json_object_object_add(r, "run_time_names",
				       run_names_status(b, &truncated));
		if (truncated)
			json_object_object_add(r, "run_time_names_truncated",
					       json_object_new_boolean(true));
	}
	json_object_object_add(r, "usdt_binaries", usdt_status(b->usdt));
	json_object_object_add(r, "usdt_binaries_skipped", json_object_new_int64(
				       usdt_skipped(b->usdt)));
	json_object_object_add(r, "usdt_max_rate", json_object_new_int64(
				       (int64_t)b->cfg.usdt_max_rate));
	json_object_object_add(r, "usdt_quiet_s", json_object_new_int64(
				       (int64_t)(b->cfg.usdt_quiet_ns / 1000000000ULL)));
	json_object_object_add(r, "usdt_lwlock_paused_clusters",
		json_object_new_int64((int64_t)usdt_rate_paused_count(
			tracer_usdt_rates_fd(b->tracer), stats_now_ns(),
			b->cfg.usdt_max_rate)));
	json_object_object_add(r, "usdt_refusals_forgotten", json_object_new_int64(
				       usdt_forgotten(b->usdt)));
	json_object_object_add(r, "traced_processes", json_object_new_int64(
		(int64_t)tracer_target_count(b->tracer)));
	json_object_object_add(r, "kernel_min_duration_ns",
			       min == UINT64_MAX ? NULL :
			       json_object_new_int64((int64_t)min));
	for (size_t i = 0; i < PGOFF_CNT__COUNT; i++)
		json_object_object_add(c, counter_names[i],
				       json_object_new_int64((int64_t)cnt[i]));
	json_object_object_add(c, "client_queue_full", json_object_new_int64(
		(int64_t)server_queue_drops(b->server)));
	json_object_object_add(c, "client_watch_failed", json_object_new_int64(
		(int64_t)server_watch_drops(b->server)));
	json_object_object_add(c, "client_replay_expired", json_object_new_int64(
		(int64_t)server_replay_expired(b->server)));
	usyms_stats(b->events.usyms, &us);
	json_object_object_add(c, "user_symbols_evicted", json_object_new_int64(
		(int64_t)us.evicted));
	json_object_object_add(c, "user_symbols_refused", json_object_new_int64(
		(int64_t)us.refused));
	json_object_object_add(c, "user_symbols_deferred", json_object_new_int64(
		(int64_t)us.deferred));
	json_object_object_add(c, "user_symbols_unopened", json_object_new_int64(
		(int64_t)us.unopened));
	json_object_object_add(c, "user_symbol_files_refused",
		json_object_new_int64((int64_t)b->symbol_files_refused));
	json_object_object_add(c, "user_symbol_files_dropped",
		json_object_new_int64((int64_t)us.files_dropped));
	json_object_object_add(r, "recording", json_object_new_boolean(b->rec != NULL));
	if (b->rec)
		recorder_counters(b->rec, c);
	json_object_object_add(r, "counters", c);
}

/* Room in a ps reply for the process list; the clusters take the rest. */
#define UNTRACED_BUDGET (PGOFF_MAX_LINE / 8)
#define CLUSTERS_BUDGET (PGOFF_MAX_LINE / 4)

/* Processes named postgres that are not traced, and why: the newest
 * that fit, their total in *total. */
static json_object *untraced_json(struct broker *b, size_t *used,
				  size_t *total)
{
	json_object *arr = json_object_new_array();
	size_t n, room = 0;
	const struct pg_refusal *f = pg_registry_refusals(b->registry, &n);

	*total = n;

	for (size_t i = n; i-- > 0;) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "pid", json_object_new_int64(f[i].pid));
		json_object_object_add(o, "uid", json_object_new_int64(f[i].uid));
		json_add_text(o, "why", f[i].why, sizeof(f[i].why));
		room += strlen(pgoff_json_line(o, NULL)) + 1;
		if (room > UNTRACED_BUDGET) {
			json_object_put(o);
			break;
		}
		json_object_array_add(arr, o);
	}
	*used += room;
	return arr;
}

#define PS_BUDGET (PGOFF_MAX_LINE / 2)

static void ps_hook(void *ctx, json_object *r)
{
	struct broker *b = ctx;

	/* what its servers named since the last read, for the next ps */
	pg_registry_names_wanted_all(b->registry);
	broker_probe_next(b);
	json_object *clusters = json_object_new_array();
	json_object *procs = json_object_new_array();
	size_t n, used = 0, shown = 0, cluster_bytes = 0, untraced_total;
	const struct pg_proc *p = pg_registry_procs(b->registry, &n);
	json_object *untraced;

	for (size_t i = 0; i < n; i++) {
		const struct pg_cluster *c = pg_registry_cluster(b->registry,
								 p[i].cluster);
		json_object *o, *rate;

		if (c && c->info.postmaster_pid == p[i].pid) {
			o = event_encode_cluster(c);
			json_object_object_add(o, "postmaster_pid",
					       json_object_new_int64(c->info.postmaster_pid));
			add_names_source(o, c);
			add_run_names(o, c, true);
			add_identity_facts(b, o, c);
			rate = usdt_rate_json(tracer_usdt_rates_fd(b->tracer),
					      c->id, stats_now_ns(),
					      b->cfg.usdt_max_rate);
			if (rate)
				json_object_object_add(o, "usdt_lwlock", rate);
			cluster_bytes += strlen(pgoff_json_line(o, NULL)) + 1;
			if (cluster_bytes > CLUSTERS_BUDGET)
				json_object_put(o);
			else
				json_object_array_add(clusters, o);
		}
		o = event_encode_proc(&p[i]);
		used += strlen(pgoff_json_line(o, NULL)) + 1;
		if (used > PS_BUDGET) {
			json_object_put(o);
			continue;
		}
		json_object_array_add(procs, o);
		shown++;
	}
	untraced = untraced_json(b, &used, &untraced_total);
	json_object_object_add(r, "clusters", clusters);
	json_object_object_add(r, "processes", procs);
	json_object_object_add(r, "total", json_object_new_int64((int64_t)n));
	json_object_object_add(r, "truncated", json_object_new_boolean(
		shown < n || cluster_bytes > CLUSTERS_BUDGET ||
		json_object_array_length(untraced) < untraced_total));
	json_object_object_add(r, "untraced", untraced);
	json_object_object_add(r, "untraced_total",
			       json_object_new_int64((int64_t)untraced_total));
	json_object_object_add(r, "untraced_unkept", json_object_new_int64(
		(int64_t)pg_registry_refusals_unkept(b->registry)));
}

static void stats_hook(void *ctx, const struct pgoff_request *req,
		       bool sees_query, json_object *r)
{
	struct broker *b = ctx;

	stats_answer(&b->stats, req->stats.by, r);
	/* statements by query id: their texts, for who may see SQL */
	if (sees_query && req->stats.by == PGOFF_STATS_BY_QUERY)
		query_texts_answer(&b->texts, r, monotonic_ms());
}

/* A stats request over the past: the recorder sums it a share a round. */
static void *past_start(void *ctx, const struct pgoff_request *req)
{
	struct broker *b = ctx;
	struct recorder_window *w;
	struct timespec now;
	int64_t until = req->stats.until_ns;

	clock_gettime(CLOCK_REALTIME, &now);
	/* up to now (0): the second not stored yet is read live at the end */
	if (until >= (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec)
		until = 0;
	if (!b->rec || recorder_window_start(b->rec, req->stats.since_ns,
					     until, req->stats.by, &w))
		return NULL;
	return w;
}

static bool past_step(void *ctx, void *job)
{
	struct broker *b = ctx;

	return recorder_window_step(b->rec, job, RECORDER_WINDOW_STEP);
}

static void past_finish(void *ctx, void *job, json_object *r)
{
	struct broker *b = ctx;
	uint64_t mono = stats_now_ns();
	struct agg_row *rows = NULL;
	size_t n = 0;
	int err;

	if (recorder_window_to_now(job))
		stats_rows(&b->stats, PGOFF_STATS_BY_PID, mono, &rows, &n);
	err = recorder_window_reply(b->rec, job, r, PGOFF_MAX_LINE - 4096,
				    rows, n, mono);
	free(rows);
	recorder_window_free(job);
	json_object_object_add(r, "complete", json_object_new_boolean(!err));
	if (err)
		log_warnx("top over the past: %s", strerror(-err));
}

static void past_cancel(void *ctx, void *job)
{
	(void)ctx;
	recorder_window_free(job);
}

static void history_hook(void *ctx, json_object *r)
{
	struct broker *b = ctx;

	if (b->rec)
		recorder_history(b->rec, r);
}

void broker_reply_hooks(struct server_hooks *h)
{
	h->status = status_hook;
	h->ps = ps_hook;
	h->stats = stats_hook;
	h->past_start = past_start;
	h->past_step = past_step;
	h->past_finish = past_finish;
	h->past_cancel = past_cancel;
	h->history = history_hook;
}
