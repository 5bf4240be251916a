// SPDX-License-Identifier: GPL-2.0-only
/*
 * pgoffd - the pgoff broker.
 *
 * setup: arguments -> prober -> kernel symbols -> load and attach BPF ->
 * find PostgreSQL -> record -> socket -> drop root. run: one thread, one
 * epoll loop whose data is each fd's handler (loop.h): the socket and
 * clients (server.c), the prober's answers, a 1 s timer (discovery, loss
 * counters, stuck clients) and a signalfd (SIGHUP: reload; SIGTERM and
 * SIGINT: stop); between rounds, the ring buffer. teardown: tell clients,
 * detach, exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "broker/config.h"
#include "broker/event.h"
#include "broker/holdback.h"
#include "broker/json_fields.h"
#include "broker/ksyms.h"
#include "broker/loop.h"
#include "broker/pg_registry.h"
#include "broker/query_texts.h"
#include "broker/pg_wait_names.h"
#include "broker/privdrop.h"
#include "broker/prober.h"
#include "broker/usdt.h"
#include "broker/recorder.h"
#include "broker/ring_pace.h"
#include "broker/sd_notify.h"
#include "broker/server.h"
#include "broker/stats.h"
#include "broker/tracer.h"
#include "protocol/clock.h"
#include "broker/usyms.h"
#include "protocol/log.h"
#include "protocol/units.h"

struct broker {
	struct tracer *tracer;
	struct pg_registry *registry;
	struct ksyms *ksyms;
	struct ksyms_cache ksyms_cache;	/* the loop's recent lookups */
	struct server *server;
	struct prober *prober;
	struct usdt *usdt;
	struct pgoffd_config cfg;
	struct event_ctx events;
	struct stats stats;
	struct timespec started;		/* CLOCK_MONOTONIC */
	struct ring_pace ring;			/* while someone subscribes */
	struct holdback *held;			/* records awaiting a title */
	struct recorder *rec;			/* NULL: record = no */
	struct query_texts texts;		/* for top --by query */
	uint64_t told[PGOFF_CNT__COUNT];	/* kernel losses already told */
	int epfd, tfd, sfd;			/* the loop's; a 1 s timer; signals */
	struct loop_handler timer_ready, signal_ready, prober_ready;
	bool running;				/* until SIGTERM or SIGINT */
	bool ring_more;				/* records left in the ring: read at once */
	int argc;				/* the command line, read again */
	char **argv;				/* on SIGHUP */
};

/* Records handled per loop round: clients and signals are served between. */
#define RING_BUDGET 512

/* Records of a process whose title is not known yet wait for it this
 * long at most (see holdback.h); this many at most. */
#define HOLDBACK_MS 50
#define HOLDBACK_RECORDS 1024

/* At start, clusters found within this are traced before serving. */
#define SETUP_PROBE_MS 3000

static void usage(FILE *f)
{
	fprintf(f,
"usage: pgoffd [options]\n"
"Trace where PostgreSQL backends spend their time off the CPU and serve\n"
"it to members of a group over a Unix socket. Runs in the foreground.\n"
"\n"
"  --socket PATH        socket to serve (default /run/pgoff/pgoffd.sock)\n"
"  --group NAME         group whose members may connect (default pgoff)\n"
"  --query-group NAME   members (and root) also see the SQL text of queries\n"
"                       (default: nobody but root)\n"
"  --user NAME          run as this user once set up, with no capabilities\n"
"                       (default pgoffd; never nobody)\n"
"  --min-floor DUR      lowest threshold any subscription gets (default 100us)\n"
"  --ringbuf-size BYTES kernel ring buffer, power of two (default 4194304)\n"
"  --max-clients N      concurrent clients (default 64)\n"
"  --max-clients-per-user N  concurrent clients of one uid, root aside\n"
"                       (default 32)\n"
"  --queue-bytes N      output queue per client (default 1048576)\n"
"  --stuck-timeout SEC  cut off a client whose queue stays full, or that\n"
"                       replays the record and reads nothing (default 30)\n"
"  --trust-uids LIST    also trace clusters of these users' own binaries\n"
"  --trust-data-dirs LIST  also trace clusters in these data directories\n"
"                       (default: only root-owned binaries that only root\n"
"                       may write, a distribution's PostgreSQL)\n"
"  --max-clusters-per-user N  clusters traced per user (default 8)\n"
"  --max-processes-per-user N  processes (and threads) traced per user\n"
"                       (default 4096)\n"
"  --record yes|no      keep a flight record of every wait and interval at or\n"
"                       above --record-min, without subscribers (default yes)\n"
"  --state-directory PATH  where the record is kept (default /var/lib/pgoff;\n"
"                       made 0700 and given to --user)\n"
"  --record-min DUR     shortest wait or interval recorded (default 10ms)\n"
"  --record-max-size SIZE  the record's size cap: bytes (K/M/G/T suffixes)\n"
"                       or a share of its file system (10%%); default the\n"
"                       lower of 1G and 10%%\n"
"  --record-keep-free SIZE  free space the record leaves on its file system\n"
"                       (PostgreSQL's, often): its oldest segments go first,\n"
"                       then recording stops; bytes or a share (15%%); default\n"
"                       the lower of 4G and 15%%\n"
"  --record-max-age AGE  records older than this go (default 7d; s, m, h, d)\n"
"  --record-queries off|redacted|full  the SQL text of recorded events: none\n"
"                       (default), literals replaced by $n, or as it is; shown\n"
"                       on replay only to --query-group, as live\n"
"  --record-user-stacks yes|no  keep the user stack of recorded intervals:\n"
"                       walked at every switch-out of a traced process, as\n"
"                       its duration is not known yet (default no)\n"
"  --raw-tp             use the raw_tp programs even where tp_btf works\n"
"  --usdt yes|no        attach PostgreSQL's wait probes: exact lock and\n"
"                       LWLock episodes (default yes)\n"
"  -v, --verbose        debug logging, with libbpf's and the verifier's output\n"
"  -c, --config PATH    settings file (default " PGOFF_CONFIG_PATH ", if present):\n"
"                       'key = value' lines, keys as the long options above;\n"
"                       the command line wins; SIGHUP reloads it\n"
"  -n, --check          check the settings (file, groups, user) and exit\n"
"  -h, --help           this help\n"
"  -V, --version        print the version\n");
}

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

static void probe_next(struct broker *b);

static void ps_hook(void *ctx, json_object *r)
{
	struct broker *b = ctx;

	/* what its servers named since the last read, for the next ps */
	pg_registry_names_wanted_all(b->registry);
	probe_next(b);
	json_object *clusters = json_object_new_array();
	json_object *procs = json_object_new_array();
	size_t n, used = 0, shown = 0, cluster_bytes = 0, untraced_total;
	const struct pg_proc *p = pg_registry_procs(b->registry, &n);
	json_object *untraced;

	for (size_t i = 0; i < n; i++) {
		const struct pg_cluster *c = pg_registry_cluster(b->registry,
								 p[i].cluster);
		json_object *o;

		if (c && c->info.postmaster_pid == p[i].pid) {
			o = event_encode_cluster(c);
			json_object_object_add(o, "postmaster_pid",
					       json_object_new_int64(c->info.postmaster_pid));
			add_names_source(o, c);
			add_run_names(o, c, true);
			add_identity_facts(b, o, c);
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

static void filter_hook(void *ctx)
{
	struct broker *b = ctx;
	struct kernel_filter k, u;
	bool any, any_u, live_query;
	enum record_queries rq = b->rec ? recorder_queries(b->rec) :
					  RECORD_QUERIES_OFF;
	int err;

	b->events.want_query = false;
	b->events.want_redacted = false;
	b->events.want_ustack = false;
	any = server_filter_union(b->server, &k);
	ring_pace_reset(&b->ring, any);
	live_query = k.want_query;
	if (b->rec) {	/* the recorder is a subscriber that never leaves */
		recorder_widen(b->rec, &k);
		any = true;
	}
	if (!any) {
		tracer_mute(b->tracer);
		log_debug("no subscriber: kernel sends nothing");
		return;
	}
	/* the SQL as it is for subscribers who see it and record-queries
	 * full; redacted (only) for record-queries redacted */
	b->events.want_query = live_query || rq == RECORD_QUERIES_FULL;
	b->events.want_redacted = rq == RECORD_QUERIES_REDACTED;
	any_u = server_ustack_union(b->server, &u);
	if (b->rec && recorder_widen_ustack(b->rec, &u))
		any_u = true;
	b->events.want_ustack = any_u;
	err = tracer_set_filter(b->tracer, &k, any_u ? &u : NULL);
	if (err)
		log_warnx("cannot update the kernel filter: %s", strerror(-err));
	else
		log_debug("kernel filter: min %llu ns, %zu pids, cpu %u, "
			  "pg classes %s, queries %s, user stacks %s",
			  (unsigned long long)k.min_duration_ns, k.npids, k.cpu,
			  k.pg_class_filter ? "some" : "all",
			  k.want_query ? "on" : "off", any_u ? "on" : "off");
}

/* A record becomes an event for the subscribers it matches. */
static void publish(void *ctx, const void *data, size_t size)
{
	struct broker *b = ctx;
	struct event_lines lines;
	struct event_meta meta;
	int err = event_encode(&b->events, data, size, &lines, &meta);

	if (err) {
		log_warnx("kernel record of %zu bytes not sent: %s", size,
			  strerror(-err));
		return;
	}
	/* added to the store first: a replay that reaches the store's end
	 * reads it (store_next writes what was added) */
	if (b->rec) {
		recorder_seq_used(b->rec, b->events.seq);
		meta.stored = recorder_record(b->rec, &lines, &meta,
					      b->events.seq);
	}
	server_publish(b->server, &lines, &meta);
}

/* The process an interval or episode record is about, and its
 * cluster; 0 for other records. */
static uint32_t record_tgid(const void *data, size_t size, uint32_t *cluster)
{
	const struct pgoff_record *r = data;
	const struct pgoff_episode *e = data;

	if (size >= sizeof(*r) && r->kind == PGOFF_REC_INTERVAL) {
		*cluster = r->cluster;
		return r->tgid;
	}
	if (size >= sizeof(*e) && e->kind == PGOFF_REC_EPISODE) {
		*cluster = e->cluster;
		return e->tgid;
	}
	return 0;
}

/* A traced process whose title PostgreSQL has not set yet. */
static bool awaits_title(struct broker *b, uint32_t tgid, uint32_t cluster)
{
	const struct pg_proc *p = pg_registry_learn(b->registry, tgid, cluster);

	return p && !p->titled;
}

static void on_record(void *ctx, void *data, size_t size)
{
	struct broker *b = ctx;
	const struct pgoff_title *title = data;
	uint32_t tgid, cluster = 0;

	if (size >= sizeof(*title) && title->kind == PGOFF_REC_TITLE) {
		char text[PGOFF_TITLE_MAX];

		pg_registry_learn(b->registry, title->tgid, title->cluster);
		memcpy(text, title->title, sizeof(text));
		text[sizeof(text) - 1] = '\0';
		pg_registry_title(b->registry, title->tgid, title->cluster, text);
		holdback_release(b->held, title->tgid, publish, b);
		return;
	}
	tgid = record_tgid(data, size, &cluster);
	if (tgid && (holdback_has(b->held, tgid) || awaits_title(b, tgid, cluster)) &&
	    holdback_put(b->held, tgid, data, size, monotonic_ms()) == 0)
		return;
	publish(b, data, size);
}

/*
 * The prober takes one question at a time; the registry says which:
 * first a process that may be a new cluster, then a cluster whose
 * run-time names are due.
 */
static bool ask_probe(struct broker *b, int64_t now)
{
	uint32_t pid;

	if (prober_busy(b->prober) ||
	    !pg_registry_next_probe(b->registry, now, &pid))
		return false;
	if (prober_ask(b->prober, pid))
		log_warn("cannot ask the prober about process %u", pid);
	return true;
}

static void probe_next(struct broker *b)
{
	int64_t now = monotonic_ms();
	uint32_t pid, cluster;

	if (prober_busy(b->prober) || ask_probe(b, now))
		return;
	if (pg_registry_next_names(b->registry, now, &cluster, &pid) &&
	    prober_ask_names(b->prober, cluster, pid))
		log_warn("cannot ask the prober for cluster %u's names", cluster);
}

/* An answer: a new cluster is learnt with its processes at once. */
static void probed(struct broker *b, const struct prober_answer *a)
{
	const struct pg_cluster *c = pg_registry_probed(b->registry, &a->info,
							a->pids, a->npids,
							monotonic_ms());
	char why[64];

	if (a->binary_new)
		usdt_note(b->usdt, &a->usdt);
	if (!c)
		return;
	if (event_names_missing(c, why, sizeof(why)))
		log_warnx("cluster %u (PostgreSQL %s): %s: its wait events "
			  "are shown as raw ids", c->id,
			  c->info.version[0] ? c->info.version : "?", why);
	if (pg_registry_scan(b->registry, monotonic_ms()))
		log_warn("scanning /proc for PostgreSQL");
}

/* The prober answered (or is gone). */
static void on_prober(void *ctx, uint32_t events)
{
	static struct prober_answer a;
	static struct prober_names na;
	struct broker *b = ctx;
	bool names = prober_asked(b->prober) == PROBER_NAMES;
	int err = names ? prober_names_answer(b->prober, &na) :
			  prober_answer(b->prober, &a);

	(void)events;
	if (err == -EAGAIN)
		return;
	if (err)
		log_fatal(0, "the prober is gone: new clusters cannot be "
			  "found; exiting so that the service restarts");
	if (names)
		pg_registry_names_answer(b->registry, na.cluster, na.pid,
					 &na.names);
	else
		probed(b, &a);
	probe_next(b);
}

/* Setup, as root: the clusters running now, before serving. */
static void probe_at_start(struct broker *b)
{
	int64_t until = monotonic_ms() + SETUP_PROBE_MS;
	static struct prober_answer a;

	for (;;) {
		int64_t left = until - monotonic_ms();

		ask_probe(b, monotonic_ms());	/* names once serving */
		if (!prober_busy(b->prober) || left <= 0)
			break;
		if (prober_wait(b->prober, (int)left, &a) == 0)
			probed(b, &a);
	}
	if (prober_busy(b->prober))
		log_info("still asking about some processes named postgres; "
			 "serving meanwhile");
}

/*
 * PostgreSQL's wait probes, as root, in the binaries of the postmasters
 * found and of the majors installed; then the program's fd goes to the
 * prober, which links the binaries of postmasters found later, and
 * pgoffd closes its own (see broker/prober.h).
 */
static void attach_usdt(struct broker *b)
{
	int fd = tracer_usdt_prog_fd(b->tracer), err;
	const struct pg_proc *p;
	size_t n;

	if (usdt_new(&b->usdt))
		log_fatal(ENOMEM, "out of memory");
	if (!b->cfg.usdt) {
		log_info("usdt = no: PostgreSQL's wait probes are not attached; "
			 "lock and LWLock episodes are inferred");
		goto done;
	}
	p = pg_registry_procs(b->registry, &n);
	for (size_t i = 0; i < n; i++) {
		const struct pg_cluster *c = pg_registry_cluster(b->registry,
								 p[i].cluster);
		char exe[64], shown[256];
		ssize_t len;

		if (!c || c->info.postmaster_pid != p[i].pid)
			continue;
		/* its own file, even if an upgrade replaced the path since */
		snprintf(exe, sizeof(exe), "/proc/%u/exe", p[i].pid);
		len = readlink(exe, shown, sizeof(shown) - 1);
		if (len <= 0)
			snprintf(shown, sizeof(shown), "%s", exe);
		else
			shown[len] = '\0';
		usdt_attach(b->usdt, fd, exe, shown);
	}
	usdt_attach_installed(b->usdt, fd);
	if (fd >= 0) {
		err = prober_give_usdt(b->prober, fd, b->usdt);
		if (err)
			log_fatal(-err, "cannot hand the uprobe program to the "
				  "prober");
	}
done:
	err = tracer_forget_usdt(b->tracer);
	if (err)
		log_fatal(-err, "cannot close the uprobe program");
}

/* Kernel-side losses are told to every subscriber as they happen. */
static void report_kernel_losses(struct broker *b)
{
	static const struct {
		enum pgoff_counter counter;
		const char *cause;
	} losses[] = {
		{ PGOFF_CNT_RINGBUF_FULL, PGOFF_DROP_RINGBUF },
		{ PGOFF_CNT_START_FULL, PGOFF_DROP_START_MAP },
	};
	uint64_t cnt[PGOFF_CNT__COUNT];

	if (tracer_counters(b->tracer, cnt))
		return;
	for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++) {
		enum pgoff_counter k = losses[i].counter;

		if (cnt[k] > b->told[k]) {
			log_warnx("kernel lost %llu intervals: %s",
				  (unsigned long long)(cnt[k] - b->told[k]),
				  losses[i].cause);
			server_publish_drop(b->server, losses[i].cause,
					    cnt[k] - b->told[k]);
			b->told[k] = cnt[k];
		}
	}
}

/* Every thread the kernel has seen go off the CPU names its process and
 * cluster: how processes forked since are learnt before an event. */
static int learn_thread(void *ctx, uint32_t pid, const struct pgoff_start *s)
{
	struct broker *b = ctx;

	(void)pid;
	if (s->tgid)
		pg_registry_learn(b->registry, s->tgid, s->cluster);
	/* a wait going on under a name its server may have made since the
	 * last read: read again before the wait ends and is told */
	if (s->start_ns && (s->flags & PGOFF_F_PG_WAIT) && s->pg_wait_event_info)
		pg_registry_name_unknown(b->registry, s->cluster,
					 s->pg_wait_event_info);
	return 0;
}

/* Whether the kernel sends records: only for subscribers' filters. */
static bool ring_in_use(const struct broker *b)
{
	return tracer_min_duration(b->tracer) != UINT64_MAX;
}

/* Once a second; also reads what the last subscriber left in the ring. */
static void on_tick(void *ctx, uint32_t events)
{
	struct broker *b = ctx;
	uint64_t expirations;

	(void)events;
	if (read(b->tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("timerfd");
	tracer_consume(b->tracer, RING_BUDGET, &b->ring_more);	/* records before losses */
	report_kernel_losses(b);
	if (b->rec) {	/* before retiring: an exited process's last second */
		uint64_t now = stats_now_ns();
		struct agg_row *rows;
		size_t n;

		stats_rows(&b->stats, PGOFF_STATS_BY_PID, now, &rows, &n);
		if (rows)
			recorder_aggregate(b->rec, rows, n, now);
	}
	stats_retire_exited(&b->stats);	/* while the registry knows them */
	tracer_threads_foreach(b->tracer, learn_thread, b);
	if (b->rec)
		recorder_tick(b->rec);
	if (pg_registry_scan(b->registry, monotonic_ms()))
		log_warn("scanning /proc for PostgreSQL");
	probe_next(b);
	query_texts_tick(&b->texts, monotonic_ms());
	server_tick(b->server);
}

static void on_signal(void *ctx, uint32_t events);

/* The loop's fds and the broker's own in it: the timer, signals, the
 * prober (the server adds its own). 0 or -errno. */
static int make_fds(struct broker *b)
{
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	sigset_t mask;
	int err;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	sigdelset(&mask, SIGPIPE);
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	b->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (b->epfd < 0 || b->sfd < 0 || b->tfd < 0 ||
	    timerfd_settime(b->tfd, 0, &its, NULL))
		return -errno;
	b->signal_ready = (struct loop_handler){ on_signal, b };
	b->timer_ready = (struct loop_handler){ on_tick, b };
	b->prober_ready = (struct loop_handler){ on_prober, b };
	err = loop_watch(b->epfd, EPOLL_CTL_ADD, b->sfd, EPOLLIN, &b->signal_ready);
	if (!err)
		err = loop_watch(b->epfd, EPOLL_CTL_ADD, b->tfd, EPOLLIN,
				 &b->timer_ready);
	if (!err)
		err = loop_watch(b->epfd, EPOLL_CTL_ADD, prober_fd(b->prober),
				 EPOLLIN, &b->prober_ready);
	return err;
}

static const struct option long_opts[] = {
	{ "socket", required_argument, NULL, 0 },
	{ "group", required_argument, NULL, 0 },
	{ "query-group", required_argument, NULL, 0 },
	{ "user", required_argument, NULL, 0 },
	{ "min-floor", required_argument, NULL, 0 },
	{ "ringbuf-size", required_argument, NULL, 0 },
	{ "max-clients", required_argument, NULL, 0 },
	{ "max-clients-per-user", required_argument, NULL, 0 },
	{ "queue-bytes", required_argument, NULL, 0 },
	{ "stuck-timeout", required_argument, NULL, 0 },
	{ "trust-uids", required_argument, NULL, 0 },
	{ "trust-data-dirs", required_argument, NULL, 0 },
	{ "max-clusters-per-user", required_argument, NULL, 0 },
	{ "max-processes-per-user", required_argument, NULL, 0 },
	{ "record", required_argument, NULL, 0 },
	{ "state-directory", required_argument, NULL, 0 },
	{ "record-min", required_argument, NULL, 0 },
	{ "record-max-size", required_argument, NULL, 0 },
	{ "record-keep-free", required_argument, NULL, 0 },
	{ "record-max-age", required_argument, NULL, 0 },
	{ "record-queries", required_argument, NULL, 0 },
	{ "record-user-stacks", required_argument, NULL, 0 },
	{ "raw-tp", no_argument, NULL, 0 },
	{ "usdt", required_argument, NULL, 0 },
	{ "config", required_argument, NULL, 'c' },
	{ "check", no_argument, NULL, 'n' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 }
};

/* What the command line asks pgoffd to do. */
enum run_mode {
	RUN_SERVE,
	RUN_CHECK,		/* --check: the configuration only */
	RUN_HELP,		/* --help: usage to stdout */
	RUN_VERSION,
	RUN_BAD_OPTION,		/* getopt said why; usage to stderr */
};

/*
 * Defaults, then the config file, then the command line (which wins).
 * Also used on SIGHUP with the same argv. Returns 0, or -EINVAL with err;
 * with *mode help, version or a bad option, cfg is not read.
 */
static int read_config(int argc, char **argv, struct pgoffd_config *cfg,
		       char *path, size_t path_len, enum run_mode *mode,
		       char *err, size_t errlen)
{
	bool path_given = false;
	int c, idx;

	config_defaults(cfg);
	snprintf(path, path_len, "%s", PGOFF_CONFIG_PATH);
	*mode = RUN_SERVE;
	optind = 0;	/* glibc: start over, also on reload */
	while ((c = getopt_long(argc, argv, "c:nvhV", long_opts, NULL)) != -1) {
		if (c == 'c') {
			snprintf(path, path_len, "%s", optarg);
			path_given = true;
		} else if (c == 'n') {
			*mode = RUN_CHECK;
		} else if (c == 'h' || c == 'V' || c == '?') {
			*mode = c == 'h' ? RUN_HELP : c == 'V' ? RUN_VERSION :
							       RUN_BAD_OPTION;
			return 0;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	/* the default file may be absent; a file asked for may not */
	if (config_load(cfg, path, !path_given, err, errlen))
		return -EINVAL;
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:nvhV", long_opts, &idx)) != -1) {
		if (c == 'v') {
			cfg->verbose = true;
		} else if (c == 0 &&
			   config_set(cfg, long_opts[idx].name,
				      optarg ? optarg : "yes", err, errlen)) {
			return -EINVAL;
		}
	}
	return 0;
}

/* Names to ids; what the server and tracer take. err set on failure. */
static int resolve(const struct pgoffd_config *cfg, struct server_opts *so,
		   struct tracer_opts *to, struct prober_opts *po, char *err,
		   size_t errlen)
{
	struct group *gr = getgrnam(cfg->group);

	if (!gr) {
		snprintf(err, errlen, "group '%s' does not exist; create it "
			 "with 'groupadd --system %s' or set group", cfg->group,
			 cfg->group);
		return -ENOENT;
	}
	so->socket_path = cfg->socket;
	so->group_name = cfg->group;
	so->group = gr->gr_gid;
	so->has_query_group = cfg->query_group[0] != '\0';
	if (so->has_query_group) {
		gr = getgrnam(cfg->query_group);
		if (!gr) {
			snprintf(err, errlen, "query group '%s' does not exist; "
				 "create it with 'groupadd --system %s'",
				 cfg->query_group, cfg->query_group);
			return -ENOENT;
		}
		so->query_group = gr->gr_gid;
	}
	so->max_clients = cfg->max_clients;
	so->max_clients_per_uid = cfg->max_clients_per_uid;
	so->queue_bytes = cfg->queue_bytes;
	so->stuck_timeout_s = (unsigned int)cfg->stuck_timeout_s;
	so->min_floor_ns = cfg->min_floor_ns;
	so->record_min_ns = cfg->record_min_ns;
	to->ringbuf_bytes = cfg->ringbuf_bytes;
	to->force_raw_tp = cfg->raw_tp;
	po->proc_root = "/proc";
	po->max_procs_per_uid = (uint32_t)cfg->max_procs_per_uid;
	po->max_threads_per_uid = (uint32_t)cfg->max_procs_per_uid;
	if (pg_trust_parse_uids(&po->trust, cfg->trust_uids, err, errlen) ||
	    pg_trust_parse_dirs(&po->trust, cfg->trust_data_dirs, err, errlen))
		return -EINVAL;
	return 0;
}

/* SIGHUP: settings that can change at run time do; the others say so. */
static void reload(struct broker *b, int argc, char **argv)
{
	struct pgoffd_config cfg;
	struct server_opts so = { 0 };
	struct tracer_opts to = { 0 };
	struct prober_opts po = { 0 };
	char path[PATH_MAX], err[300];
	enum run_mode mode;

	/* the mode is the one pgoffd started with: serve or check */
	if (read_config(argc, argv, &cfg, path, sizeof(path), &mode, err,
			sizeof(err)) ||
	    resolve(&cfg, &so, &to, &po, err, sizeof(err))) {
		log_warnx("SIGHUP: configuration not reloaded: %s", err);
		return;
	}
	if (strcmp(cfg.socket, b->cfg.socket) || strcmp(cfg.user, b->cfg.user) ||
	    cfg.ringbuf_bytes != b->cfg.ringbuf_bytes ||
	    cfg.raw_tp != b->cfg.raw_tp ||
	    strcmp(cfg.trust_uids, b->cfg.trust_uids) ||
	    strcmp(cfg.trust_data_dirs, b->cfg.trust_data_dirs) ||
	    cfg.max_procs_per_uid != b->cfg.max_procs_per_uid ||
	    cfg.record != b->cfg.record || cfg.usdt != b->cfg.usdt ||
	    strcmp(cfg.state_dir, b->cfg.state_dir))
		log_warnx("SIGHUP: socket, user, ringbuf-size, raw-tp, "
			  "trust-uids, trust-data-dirs, max-processes-per-user, "
			  "record, usdt and state-directory change only with a "
			  "restart; kept as they were");
	cfg.record = b->cfg.record;
	cfg.usdt = b->cfg.usdt;
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", b->cfg.state_dir);
	snprintf(cfg.socket, sizeof(cfg.socket), "%s", b->cfg.socket);
	snprintf(cfg.user, sizeof(cfg.user), "%s", b->cfg.user);
	snprintf(cfg.trust_uids, sizeof(cfg.trust_uids), "%s", b->cfg.trust_uids);
	snprintf(cfg.trust_data_dirs, sizeof(cfg.trust_data_dirs), "%s",
		 b->cfg.trust_data_dirs);
	cfg.ringbuf_bytes = b->cfg.ringbuf_bytes;
	cfg.raw_tp = b->cfg.raw_tp;
	cfg.max_procs_per_uid = b->cfg.max_procs_per_uid;
	b->cfg = cfg;
	/* names into b->cfg */
	resolve(&b->cfg, &so, &to, &po, err, sizeof(err));
	log_init("pgoffd", cfg.verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	if (b->rec) {
		struct recorder_opts ro = { cfg.record_min_ns,
					    cfg.record_max,
					    cfg.record_max_age_ns,
					    cfg.record_queries,
					    cfg.record_user_stacks,
					    cfg.record_keep_free };

		recorder_set_opts(b->rec, &ro);
		so.store = recorder_store(b->rec);
	}
	server_reconfigure(b->server, &so);
	pg_registry_set_limit(b->registry, (uint32_t)cfg.max_clusters_per_uid);
	log_info("SIGHUP: configuration reloaded from %s: group %s, query "
		 "group %s, min-floor %llu ns, %llu clients (%llu per user)",
		 path, cfg.group, cfg.query_group[0] ? cfg.query_group : "-",
		 (unsigned long long)cfg.min_floor_ns,
		 (unsigned long long)cfg.max_clients,
		 (unsigned long long)cfg.max_clients_per_uid);
}

/* SIGHUP reloads; SIGTERM and SIGINT end the loop. */
static void on_signal(void *ctx, uint32_t events)
{
	struct broker *b = ctx;
	struct signalfd_siginfo si;

	(void)events;
	if (read(b->sfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		reload(b, b->argc, b->argv);
		return;
	}
	log_info("signal %u: exiting", si.ssi_signo);
	sd_notify_state("STOPPING=1");
	b->running = false;
}

/* What setup finds out and hands from one step to the next. */
struct setup {
	struct server_opts so;
	struct tracer_opts to;
	struct prober_opts po;
	uid_t uid;			/* what pgoffd runs as once set up */
	gid_t gid;
};

/* The configuration, checked; pgoffd --check stops here. Exits on error. */
static void configure(struct broker *b, struct setup *s)
{
	char path[PATH_MAX], err_msg[300];
	enum run_mode mode;
	int err = read_config(b->argc, b->argv, &b->cfg, path, sizeof(path),
			      &mode, err_msg, sizeof(err_msg));

	switch (err ? RUN_SERVE : mode) {
	case RUN_HELP:
		usage(stdout);
		exit(0);
	case RUN_VERSION:
		printf("pgoffd %s\n", PGOFF_VERSION);
		exit(0);
	case RUN_BAD_OPTION:
		usage(stderr);
		exit(2);
	case RUN_SERVE:
	case RUN_CHECK:
		break;
	}
	if (err || resolve(&b->cfg, &s->so, &s->to, &s->po, err_msg,
			   sizeof(err_msg))) {
		fprintf(stderr, "pgoffd: %s\n", err_msg);
		exit(2);
	}
	log_init("pgoffd", b->cfg.verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	if (privdrop_lookup(b->cfg.user, &s->uid, &s->gid))
		exit(2);
	if (mode == RUN_CHECK) {
		printf("pgoffd: configuration ok (%s)\n", path);
		exit(0);
	}
	if (geteuid() != 0)
		log_fatal(0, "pgoffd must be started as root (it drops root "
			  "once the BPF programs are attached)");
	s->po.uid = s->uid;
	s->po.gid = s->gid;
}

/* As root: the prober, the BPF programs, the clusters running now. */
static void attach(struct broker *b, struct setup *s)
{
	int err;

	/* first, while this process has nothing open worth inheriting */
	err = prober_start(&b->prober, &s->po);
	if (err)
		log_fatal(-err, "cannot start the PostgreSQL prober");

	b->ksyms = ksyms_load("/proc/kallsyms");
	if (!b->ksyms)
		log_fatal(errno, "cannot read kernel symbols from /proc/kallsyms "
			  "(pgoffd must start as root)");
	err = tracer_open(&b->tracer, &s->to, on_record, b);
	if (err)
		log_fatal(-err, "cannot load the BPF programs (root, a kernel "
			  "with BTF and BPF ring buffers are needed)");
	log_info("BPF programs attached (%s)", tracer_hook(b->tracer));
	/* the prober alone adds targets: pgoffd keeps a read-only fd */
	err = prober_give_maps(b->prober, tracer_targets_fd(b->tracer),
			       tracer_quotas_fd(b->tracer),
			       tracer_target_slots_fd(b->tracer));
	if (!err)
		err = tracer_forget_targets(b->tracer);
	if (err)
		log_fatal(-err, "cannot hand the table of traced processes to "
			  "the prober");
	err = pg_registry_new(&b->registry, "/proc",
			      (uint32_t)b->cfg.max_clusters_per_uid);
	if (err)
		log_fatal(-err, "out of memory");
	err = pg_registry_scan(b->registry, monotonic_ms());
	if (err)
		log_fatal(-err, "cannot scan /proc");
	probe_at_start(b);
	attach_usdt(b);
}

/* The flight record's directory (made as root) and its store. */
static void open_record(struct broker *b, struct setup *s)
{
	struct recorder_opts ro = { b->cfg.record_min_ns,
				    b->cfg.record_max,
				    b->cfg.record_max_age_ns,
				    b->cfg.record_queries,
				    b->cfg.record_user_stacks,
				    b->cfg.record_keep_free };
	char err_msg[300];
	int dfd = recorder_prepare_dir(b->cfg.state_dir, s->uid, s->gid,
				       err_msg, sizeof(err_msg));
	int err;

	if (dfd < 0)
		log_fatal(0, "state directory: %s (or set record = no)",
			  err_msg);
	err = recorder_open(&b->rec, dfd, &ro);
	if (err == -EBUSY)
		log_fatal(0, "another pgoffd records in %s",
			  b->cfg.state_dir);
	if (err)
		log_fatal(-err, "cannot open the record in %s",
			  b->cfg.state_dir);
	s->so.store = recorder_store(b->rec);
	/* events go on numbering after the stored and reserved ones */
	b->events.seq = recorder_seq_start(b->rec);
	log_info("recording waits and intervals of %llu ns or more in "
		 "%s (events go on from seq %llu)",
		 (unsigned long long)ro.min_ns, b->cfg.state_dir,
		 (unsigned long long)b->events.seq + 1);
}

/* The loop and the socket; then root is dropped and systemd told. */
static void serve(struct broker *b, struct setup *s)
{
	struct server_hooks hooks = { .status = status_hook, .ps = ps_hook,
				      .stats = stats_hook,
				      .past_start = past_start,
				      .past_step = past_step,
				      .past_finish = past_finish,
				      .past_cancel = past_cancel,
				      .history = history_hook,
				      .filter_changed = filter_hook,
				      .ctx = b };
	int err = make_fds(b);

	if (err)
		log_fatal(-err, "cannot set up the event loop");
	err = server_open(&b->server, &s->so, &hooks, b->epfd);
	if (err)
		log_fatal(-err, "cannot serve %s", s->so.socket_path);
	filter_hook(b);	/* the recorder's filter, before any client */
	/* nothing below needs root: the BPF fds, the socket and /proc's
	 * world-readable files do; the prober keeps what discovery needs */
	if (privdrop(s->uid, s->gid, NULL, 0))
		log_fatal(0, "refusing to run with privileges it could not drop");
	log_info("serving %s to group %s as uid %u with no capabilities; %zu "
		 "PostgreSQL processes in %zu clusters", s->so.socket_path,
		 s->so.group_name, s->uid, pg_registry_proc_count(b->registry),
		 pg_registry_cluster_count(b->registry));
	/* systemd (Type=notify): started means serving, privileges dropped */
	err = sd_notify_state("READY=1");
	if (err < 0)
		log_warnx("cannot tell systemd that pgoffd is ready "
			  "($NOTIFY_SOCKET): %s", strerror(-err));
}

/* Startup, as root, to serving without privileges. Exits on failure. */
static void setup(struct broker *b, int argc, char **argv)
{
	struct setup s = { 0 };

	b->argc = argc;
	b->argv = argv;
	b->epfd = b->tfd = b->sfd = -1;
	clock_gettime(CLOCK_MONOTONIC, &b->started);
	ring_pace_init(&b->ring);
	if (holdback_new(&b->held, HOLDBACK_RECORDS,
			 sizeof(struct pgoff_record_query) +
			 sizeof(struct pgoff_ustack), HOLDBACK_MS))
		log_fatal(ENOMEM, "out of memory");
	log_init("pgoffd", LOG_LEVEL_INFO);
	configure(b, &s);
	attach(b, &s);
	if (b->cfg.record)
		open_record(b, &s);
	b->events.ksyms = b->ksyms;
	b->events.ksyms_cache = &b->ksyms_cache;
	b->events.registry = b->registry;
	if (usyms_new(&b->events.usyms, NULL))
		log_fatal(ENOMEM, "out of memory");
	b->stats.tracer = b->tracer;
	b->texts.tracer = b->tracer;
	b->stats.registry = b->registry;
	serve(b, &s);
}

/* Until SIGTERM or SIGINT: fds ready, then the ring, held records, and
 * what the round queued for clients. */
static void run(struct broker *b)
{
	b->running = true;
	while (b->running) {
		struct epoll_event evs[64];
		/* records left over from the last round: do not sleep */
		int timeout = b->ring_more ? 0 : -1, n;
		int64_t held = holdback_wait_ms(b->held, monotonic_ms());

		if (!b->ring_more && ring_in_use(b))
			timeout = (int)ring_pace_wait_ms(&b->ring, monotonic_ms());
		if (held >= 0 && (timeout < 0 || held < timeout))
			timeout = (int)held;
		held = b->rec ? recorder_flush_wait_ms(b->rec, monotonic_ms()) : -1;
		if (held >= 0 && (timeout < 0 || held < timeout))
			timeout = (int)held;
		n = epoll_wait(b->epfd, evs, 64, timeout);
		if (n < 0 && errno != EINTR)
			log_fatal(errno, "epoll_wait");
		for (int i = 0; i < n; i++)
			loop_call(&evs[i]);
		if (b->ring_more || (ring_in_use(b) &&
				     !ring_pace_wait_ms(&b->ring, monotonic_ms()))) {
			int got = tracer_consume(b->tracer, RING_BUDGET,
						 &b->ring_more);

			ring_pace_read(&b->ring, monotonic_ms(), got);
		}
		holdback_expire(b->held, monotonic_ms(), publish, b);
		/* the events of the last RECORDER_BATCH_MS in one record
		 * (server_flush stores them first if any is sent) */
		if (b->rec)
			recorder_flush(b->rec);
		server_flush(b->server);	/* one send per client per round */
		server_reap(b->server);
	}
}

/* What is held goes out, clients are told; then all is detached. */
static void teardown(struct broker *b)
{
	holdback_expire(b->held, INT64_MAX, publish, b);
	server_close(b->server, "shutdown");
	recorder_close(b->rec);
	holdback_free(b->held);
	event_ctx_free(&b->events);
	usyms_free(b->events.usyms);
	stats_free(&b->stats);
	tracer_close(b->tracer);
	pg_registry_free(b->registry);
	prober_stop(b->prober);
	usdt_free(b->usdt);
	ksyms_free(b->ksyms);
	close(b->epfd);
	close(b->tfd);
	close(b->sfd);
	log_info("stopped; all BPF programs detached");
}

int main(int argc, char **argv)
{
	static struct broker b;

	setup(&b, argc, argv);
	run(&b);
	teardown(&b);
	return 0;
}
