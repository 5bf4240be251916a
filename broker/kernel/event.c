// SPDX-License-Identifier: GPL-2.0-only
/* event.c - one kernel record (an off-CPU interval or an episode):
 * resolved into a struct event (decoded, symbolized, classified), then
 * encoded as JSON lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "broker/kernel/event.h"
#include "broker/kernel/json_fields.h"
#include "broker/kernel/ksyms.h"
#include "broker/pg/pg_registry.h"
#include "broker/pg/pg_status_layout.h"
#include "broker/pg/pg_wait_names.h"
#include "broker/record/sql_redact.h"
#include "broker/pg/usyms.h"
#include "common/units.h"
#include "common/utf8.h"

/* CLOCK_REALTIME minus CLOCK_MONOTONIC now (BPF stamps the latter);
 * unsigned, so that a stamp at any value wraps, never overflows. */
static uint64_t wall_offset_ns(void)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return (uint64_t)((real.tv_sec - mono.tv_sec) * 1000000000LL +
			  (real.tv_nsec - mono.tv_nsec));
}

/* RFC 3339 UTC with microseconds of wall_ns into buf; the date and time
 * of a second are made once (gmtime, strftime) and kept in c. */
static void format_wall_time(struct event_clock *c, uint64_t wall_ns,
			     char buf[EVENT_TIME_LEN])
{
	time_t sec = (time_t)(wall_ns / 1000000000ULL);
	uint64_t us = wall_ns % 1000000000ULL / 1000;
	struct tm tm;

	if (!c->date_len || sec != c->sec) {
		gmtime_r(&sec, &tm);
		c->date_len = strftime(c->date, sizeof(c->date),
				       "%Y-%m-%dT%H:%M:%S", &tm);
		c->sec = sec;
	}
	memcpy(buf, c->date, c->date_len);
	buf[c->date_len] = '.';
	for (int i = 6; i > 0; i--, us /= 10)
		buf[c->date_len + i] = (char)('0' + us % 10);
	memcpy(buf + c->date_len + 7, "Z", 2);
}

/* The kernel frames, leaf first, scheduler frames dropped, and the
 * kernel's view of the wait they show. */
static void resolve_kernel_stack(const struct event_ctx *ctx,
				 const struct pgoff_record *r, struct event *e)
{
	const char *names[PGOFF_STACK_DEPTH];
	size_t n = r->stack_bytes > 0 ? (size_t)r->stack_bytes / 8 : 0;
	size_t skip;

	for (size_t i = 0; i < n; i++)
		names[i] = ctx->ksyms_cache ?
			   ksyms_lookup_cached(ctx->ksyms, ctx->ksyms_cache,
					       r->stack[i]) :
			   ksyms_lookup(ctx->ksyms, r->stack[i], NULL, NULL);
	skip = pgoff_stack_skip(names, n);
	e->stack_len = n - skip;
	memcpy(e->stack, names + skip, e->stack_len * sizeof(names[0]));
	/* a switch-in unseen: no stack, the system call it blocked in */
	e->kernel_wait = r->stack_bytes == PGOFF_STACK_NOT_WALKED &&
			 (r->flags & PGOFF_F_SWITCH_IN_UNSEEN) ?
			 pgoff_classify_syscall(r->syscall, r->state) :
			 pgoff_classify_stack(e->stack, e->stack_len,
					      r->flags & PGOFF_F_PREEMPTED);
	if (r->stack_bytes >= 0)
		return;
	if (r->stack_bytes != PGOFF_STACK_NOT_WALKED)
		e->stack_error = "kernel stack could not be read";
	else if (r->flags & PGOFF_F_SWITCH_IN_UNSEEN)
		e->stack_error = "not walked: the kernel reported no switch "
				 "back onto a CPU, seen only after it ran";
	else
		e->stack_error = "not available with the raw_tp fallback";
}

/* The user stack after the record (and its query), if it has one. */
static const struct pgoff_ustack *record_ustack(const struct pgoff_record *r,
						const void *data, size_t size)
{
	size_t at = (r->flags & PGOFF_F_QUERY) ?
		    sizeof(struct pgoff_record_query) : sizeof(*r);

	if (!(r->flags & PGOFF_F_USTACK) ||
	    size < at + sizeof(struct pgoff_ustack))
		return NULL;
	return (const struct pgoff_ustack *)((const char *)data + at);
}

static void resolve_user_stack(struct event_ctx *ctx,
			       const struct pgoff_ustack *us, struct event *e)
{
	e->ustack_walked = us != NULL;
	if (!us) {
		/* the kernel walks it only while a subscription may want it */
		e->ustack_error = "not walked: the interval began before a "
			"subscription with user_stack could want it, or the "
			"process's memory is not read (see pg.missing)";
		return;
	}
	e->ustack_error = "pgoffd has no user stack symbolizer";
	if (ctx->usyms)
		e->ustack_len = usyms_stack(ctx->usyms, e->cluster ?
					    &e->cluster->info : NULL, us,
					    e->ustack, USYMS_MAX_FRAMES,
					    &e->ustack_error, e->ustack_why,
					    sizeof(e->ustack_why));
}

/* The SQL, or why there is none. */
static void resolve_query(const struct pgoff_record *r, const void *data,
			  size_t size, struct event *e)
{
	const struct pgoff_record_query *rq = data;

	e->query_told = r->flags & (PGOFF_F_QUERY | PGOFF_F_QUERY_LOST |
				    PGOFF_F_QUERY_UNSEEN);
	if ((r->flags & PGOFF_F_QUERY) && size >= sizeof(*rq)) {
		e->query = rq->query;
		e->query_len = r->query_len < PGOFF_QUERY_MAX ? r->query_len :
								PGOFF_QUERY_MAX - 1;
		/* the kernel keeps what PostgreSQL itself shows by default */
		e->query_truncated = e->query_len == PGOFF_QUERY_MAX - 1;
	} else {
		e->query_error = (r->flags & PGOFF_F_QUERY_UNSEEN) ?
			"not captured: the interval began before any "
			"subscriber could see queries" :
			"the query text could not be read or kept in the "
			"kernel (counted in query_failed)";
	}
}

/* Why an interval has no PostgreSQL wait event. */
static const char *pg_missing_why(uint32_t flags, const struct pg_cluster *c)
{
	if (flags & PGOFF_F_PG_NOT_OWNER)
		return "not read: the process no longer runs as its cluster's "
		       "owner (its uids changed)";
	if (flags & PGOFF_F_PG_NO_SYMBOL)
		return c && c->info.pg_missing[0] ? c->info.pg_missing :
						    "symbol unknown";
	return "backend memory could not be read";
}

/*
 * The statement the backend ran, from its status entry (flags say
 * whether it was read). A statement without a query id, or a backend
 * whose entry is not read while it may run one, gets the reason.
 */
static void resolve_status(uint32_t flags, int pg_state, uint64_t query_id,
			   struct event *e)
{
	const char *cluster_why = e->cluster && e->cluster->info.status_missing[0] ?
				  e->cluster->info.status_missing : NULL;

	e->status_read = flags & PGOFF_F_PG_STATUS;
	if (e->status_read) {
		e->pg_state = pg_state;
		e->query_id = query_id;
		if (!query_id && (flags & PGOFF_F_IN_STATEMENT))
			e->query_id_missing = e->cluster &&
				e->cluster->info.major < 14 ?
				"no query ids before PostgreSQL 14" :
				"the server computed none (compute_query_id "
				"is off, or auto without pg_stat_statements)";
	} else if (cluster_why) {
		e->query_id_missing = cluster_why;
	} else if (flags & PGOFF_F_IN_STATEMENT) {
		e->query_id_missing = (flags & PGOFF_F_PG_NOT_OWNER) ?
			"not read: the process no longer runs as its "
			"cluster's owner" :
			"the backend's status entry could not be read "
			"(not set up yet, or track_activities is off)";
	}
	e->idle = pgoff_wait_idle(e->proc && e->proc->titled ?
				  e->proc->title.backend_type : NULL,
				  e->pg_wait_event_info,
				  e->status_read || e->has_pg_wait,
				  flags & PGOFF_F_IN_STATEMENT);
}

/* The name c's server made for info at run time, or NULL; a name it may
 * have made since the last read is asked for. */
static const char *run_name(struct event_ctx *ctx, const struct pg_cluster *c,
			    uint32_t info)
{
	const char *name = c ? pg_names_find(&c->names, info) : NULL;

	if (c && !name)
		pg_registry_name_unknown(ctx->registry, c->id, info);
	return name;
}

/* The process, its cluster and its wait event, as the record's flags
 * say it was read. */
static void resolve_pg(struct event_ctx *ctx, uint32_t cluster,
		       uint32_t flags, uint32_t info, struct event *e)
{
	int major;

	e->proc = pg_registry_proc(ctx->registry, e->tgid);
	e->cluster = pg_registry_cluster(ctx->registry, cluster);
	major = e->cluster ? e->cluster->info.major : 0;
	e->has_pg_wait = flags & PGOFF_F_PG_WAIT;
	if (!e->has_pg_wait) {
		e->pg_wait_missing = pg_missing_why(flags, e->cluster);
		return;
	}
	e->pg_wait_event_info = info;
	if (!info)
		return;
	e->pg_wait_event = pg_wait_event_name(major, info);
	e->pg_run_name = run_name(ctx, e->cluster, info);
	if (e->pg_run_name)
		e->pg_wait_event = e->pg_run_name;
	if (e->cluster)
		e->pg_name_missing = event_names_missing(e->cluster, e->name_why,
							 sizeof(e->name_why));
}

/* Who ended the (last) interval: the fields of a record or episode. */
static void resolve_waker(struct event_ctx *ctx, uint32_t flags,
			  uint32_t pid, uint32_t tgid, uint32_t info,
			  const char *comm, struct event *e)
{
	struct event_waker *w = &e->waker;
	const struct pg_cluster *c;

	e->woken = flags & PGOFF_F_WOKEN;
	if (!e->woken)
		return;
	w->pid = pid;
	w->tgid = tgid;
	w->comm = comm;
	/* the kernel says whether to ask: no /proc probe for kernel threads */
	w->traced = flags & PGOFF_F_WAKER_TRACED;
	if (!w->traced)
		return;
	w->proc = pg_registry_proc(ctx->registry, tgid);
	w->has_pg_wait = flags & PGOFF_F_WAKER_PG_WAIT;
	if (w->has_pg_wait) {
		c = w->proc ? pg_registry_cluster(ctx->registry,
						  w->proc->cluster) : NULL;
		w->pg_major = c ? c->info.major : 0;
		w->pg_wait_event_info = info;
		w->pg_run_name = info ? run_name(ctx, c, info) : NULL;
	}
}

static void resolve_episode(struct event_ctx *ctx,
			    const struct pgoff_episode *ep, struct event *e)
{
	e->episode = true;
	e->start_ns = ep->start_ns;
	e->end_ns = ep->end_ns;
	e->pid = ep->pid;
	e->tgid = ep->tgid;
	e->comm = ep->comm;
	e->blocked_ns = ep->blocked_ns;
	e->runq_ns = ep->runq_ns;
	e->on_cpu_ns = ep->oncpu_ns;
	e->intervals = ep->intervals;
	/* PostgreSQL's own start and end (its probes), or the kernel's view */
	e->exact = (ep->bounds & PGOFF_EP_START_PROBE) &&
		   (ep->bounds & PGOFF_EP_DONE_PROBE);
	resolve_waker(ctx, ep->flags, ep->waker_pid, ep->waker_tgid,
		      ep->waker_pg_wait_event_info, ep->waker_comm, e);
	/* an episode is a wait PostgreSQL reported */
	resolve_pg(ctx, ep->cluster, PGOFF_F_PG_WAIT, ep->pg_wait_event_info, e);
	resolve_status(ep->flags, ep->pg_state, ep->query_id, e);
	/* no single stack: PostgreSQL's class says what it was, or the
	 * system call of its longest blocked interval */
	e->wait = pgoff_episode_wait(pgoff_classify_syscall(ep->kernel_syscall,
							    ep->kernel_state),
				     e->pg_wait_event_info,
				     ep->flags & PGOFF_F_IN_STATEMENT);
}

static void resolve_interval(struct event_ctx *ctx, const void *data,
			     size_t size, struct event *e)
{
	const struct pgoff_record *r = data;

	e->start_ns = r->start_ns;
	e->end_ns = r->end_ns;
	e->pid = r->pid;
	e->tgid = r->tgid;
	e->comm = r->comm;
	e->blocked_ns = pgoff_blocked_ns(r->flags, r->start_ns, r->wake_ns,
					 r->end_ns);
	e->runq_ns = (r->end_ns - r->start_ns) - e->blocked_ns;
	e->runq_unknown = r->flags & PGOFF_F_END_AT_WAKE;
	resolve_waker(ctx, r->flags, r->waker_pid, r->waker_tgid,
		      r->waker_pg_wait_event_info, r->waker_comm, e);
	resolve_pg(ctx, r->cluster, r->flags, r->pg_wait_event_info, e);
	resolve_status(r->flags, r->pg_state, r->query_id, e);
	resolve_kernel_stack(ctx, r, e);
	e->wait = pgoff_wait_refine(e->kernel_wait, e->pg_wait_event_info,
				    r->flags & PGOFF_F_IN_STATEMENT);
	e->mismatch = pgoff_wait_mismatch(e->kernel_wait, e->has_pg_wait,
					  e->pg_wait_event_info);
	resolve_query(r, data, size, e);
	resolve_user_stack(ctx, record_ustack(r, data, size), e);
}

int event_resolve(struct event_ctx *ctx, const void *data, size_t size,
		  struct event *e)
{
	const struct pgoff_record *r = data;

	memset(e, 0, sizeof(*e));
	if (size < sizeof(uint32_t))
		return -EINVAL;
	if (r->kind == PGOFF_REC_EPISODE && size >= sizeof(struct pgoff_episode))
		resolve_episode(ctx, data, e);
	else if (r->kind == PGOFF_REC_INTERVAL && size >= sizeof(*r))
		resolve_interval(ctx, data, size, e);
	else
		return -EINVAL;
	return 0;
}

void event_meta_of(const struct event *e, struct event_meta *meta)
{
	const struct pg_title *t = e->proc && e->proc->titled ?
				   &e->proc->title : NULL;

	memset(meta, 0, sizeof(*meta));
	meta->episode = e->episode;
	meta->tgid = e->tgid;
	meta->duration_ns = e->end_ns - e->start_ns;
	meta->wait = e->wait;
	meta->has_pg_wait = e->has_pg_wait;
	meta->pg_wait_event_info = e->pg_wait_event_info;
	meta->pg_wait_event = e->pg_wait_event;
	meta->backend_type = t ? t->backend_type : NULL;
	meta->database = t && t->database[0] ? t->database : NULL;
	meta->query_id = e->query_id;
	meta->has_owner = e->cluster != NULL;
	meta->owner = e->cluster ? e->cluster->info.account_uid : 0;
	meta->container = e->cluster && e->cluster->ident.container.id[0] ?
			  e->cluster->ident.container.id : NULL;
}

const char *event_names_missing(const struct pg_cluster *c, char *buf,
				size_t len)
{
	if (pg_wait_names_known_major(c->info.major))
		return NULL;
	if (c->info.major)
		snprintf(buf, len, "no names for PostgreSQL %d: raw ids",
			 c->info.major);
	else
		snprintf(buf, len, "unknown PostgreSQL version: raw ids");
	return buf;
}

json_object *event_encode_cluster(const struct pg_cluster *c)
{
	json_object *cl = json_object_new_object();

	json_add_int(cl, "id", c->id);
	json_add_ident(cl, &c->ident);
	json_add_text(cl, "data_dir", c->info.data_dir, sizeof(c->info.data_dir));
	json_add_int(cl, "port", c->info.port);
	json_add_str(cl, "version", c->info.version);
	if (c->unit[0])
		json_add_str(cl, "unit", c->unit);
	return cl;
}

/* json_add_ident's fields, for a line written as text. */
static void write_ident(struct json_writer *w, const struct cluster_ident *id)
{
	const struct container *c = &id->container;

	json_write_str(w, "cluster_id", id->id[0] ? id->id : NULL);
	if (!id->id[0])
		return;
	json_write_int(w, "owner", id->owner);
	if (!c->id[0] && !c->pod_uid[0])
		return;
	json_write_object(w, "container");
	if (c->runtime[0])
		json_write_str(w, "runtime", c->runtime);
	if (c->id[0])
		json_write_str(w, "id", c->id);
	if (c->pod_uid[0])
		json_write_str(w, "pod_uid", c->pod_uid);
	json_write_end_object(w);
}

/* PostgreSQL's wait event as pg_stat_activity names it (json_add_pg_wait) */
static void write_pg_wait(struct json_writer *w, int major, uint32_t info,
			  const char *run)
{
	const char *type, *name;
	char raw[PG_WAIT_RAW_LEN];

	pg_wait_labels(major, info, run, raw, sizeof(raw), &type, &name);
	json_write_int(w, "wait_event_info", info);
	json_write_str(w, "wait_event_type", type);
	json_write_str(w, "wait_event", name);
}

/* The fields of event_encode_cluster, for a line written as text. */
static void write_cluster(struct json_writer *w, const struct pg_cluster *c)
{
	json_write_object(w, "cluster");
	json_write_int(w, "id", c->id);
	write_ident(w, &c->ident);
	json_write_text(w, "data_dir", c->info.data_dir,
			sizeof(c->info.data_dir));
	json_write_int(w, "port", c->info.port);
	json_write_str(w, "version", c->info.version);
	if (c->unit[0])
		json_write_str(w, "unit", c->unit);
	json_write_end_object(w);
}

/* "missing": what could not be read, and why; only when something was. */
static void write_pg_missing(struct json_writer *w, const struct event *e,
			     const struct pg_title *t)
{
	/* no wait event read, or read without a name */
	bool wait_missing = !e->has_pg_wait || e->pg_name_missing;

	if (!wait_missing && t && !e->query_id_missing)
		return;
	json_write_object(w, "missing");
	if (e->has_pg_wait && wait_missing)
		json_write_str(w, "wait_event_name", e->pg_name_missing);
	else if (wait_missing)
		json_write_str(w, "wait_event", e->pg_wait_missing);
	if (!t)
		json_write_str(w, "backend_type",
			       "process title not readable yet");
	if (e->query_id_missing)
		json_write_str(w, "query_id", e->query_id_missing);
	json_write_end_object(w);
}

/*
 * The backend's state as pg_stat_activity names it, and the statement's
 * query id: a string, the signed 64-bit number pg_stat_statements shows
 * as queryid (JSON readers such as jq keep only 53 bits of a number).
 */
static void write_status(struct json_writer *w, const struct event *e)
{
	const struct pg_status_layout *l =
		pg_status_layout(e->cluster ? e->cluster->info.major : 0);
	const char *state = pg_status_state_name(l, e->pg_state);
	char id[PGOFF_QUERY_ID_BUFSZ];

	if (state)
		json_write_str(w, "state", state);
	if (e->query_id)
		json_write_str(w, "query_id", pgoff_format_query_id(
				       e->query_id, id, sizeof(id)));
}

static void write_pg(struct json_writer *w, const struct event *e)
{
	const struct pg_title *t = e->proc && e->proc->titled ?
				   &e->proc->title : NULL;

	json_write_object(w, "pg");
	if (e->has_pg_wait)
		write_pg_wait(w, e->cluster ? e->cluster->info.major : 0,
			      e->pg_wait_event_info, e->pg_run_name);
	if (t) {
		json_write_text(w, "backend_type", t->backend_type,
				sizeof(t->backend_type));
		if (t->database[0])
			json_write_text(w, "database", t->database,
					sizeof(t->database));
		if (t->user[0])
			json_write_text(w, "user", t->user, sizeof(t->user));
	}
	if (e->status_read)
		write_status(w, e);
	if (e->cluster)
		write_cluster(w, e->cluster);
	write_pg_missing(w, e, t);
	json_write_end_object(w);
}

static void write_waker(struct json_writer *w, const struct event_waker *wk)
{
	json_write_object(w, "waker");
	json_write_int(w, "pid", wk->tgid);
	json_write_int(w, "tid", wk->pid);
	json_write_text(w, "comm", wk->comm, PGOFF_COMM_LEN);
	if (wk->proc && wk->proc->titled)
		json_write_text(w, "backend_type", wk->proc->title.backend_type,
				sizeof(wk->proc->title.backend_type));
	if (wk->has_pg_wait)
		write_pg_wait(w, wk->pg_major, wk->pg_wait_event_info,
			      wk->pg_run_name);
	json_write_end_object(w);
}

/* never an address: it would tell unprivileged members where the kernel
 * is loaded (KASLR), as kptr_restrict keeps from them */
static void write_kernel_stack(struct json_writer *w, const struct event *e)
{
	json_write_array(w, "stack");
	for (size_t i = 0; i < e->stack_len; i++)
		json_write_str(w, NULL, e->stack[i] ? e->stack[i] : "[unknown]");
	json_write_end_array(w);
}

/* Fields every item about a process shares, up to the durations. */
static void write_head(struct event_ctx *ctx, struct json_writer *w,
		       const struct event *e)
{
	char ts[EVENT_TIME_LEN];
	/* one offset for both: time - start is the duration */
	uint64_t offset = wall_offset_ns();

	json_write_str(w, "type", e->episode ? "episode" : "offcpu");
	json_write_int(w, "seq", (int64_t)++ctx->seq);
	format_wall_time(&ctx->clock, e->end_ns + offset, ts);
	json_write_str(w, "time", ts);
	format_wall_time(&ctx->clock, e->start_ns + offset, ts);
	json_write_str(w, "start", ts);
	json_write_int(w, "pid", e->tgid);
	json_write_int(w, "tid", e->pid);
	json_write_text(w, "comm", e->comm, PGOFF_COMM_LEN);
	json_write_int(w, "duration_ns", (int64_t)(e->end_ns - e->start_ns));
	json_write_int(w, "blocked_ns", (int64_t)e->blocked_ns);
	json_write_int(w, "runq_ns", (int64_t)e->runq_ns);
	if (e->runq_unknown)
		json_write_str(w, "runq_unknown", "the kernel reported no "
			       "switch back onto a CPU: the interval ends at "
			       "its wakeup");
}

/* The event's fields without SQL and user stack. */
static void write_plain(struct event_ctx *ctx, struct json_writer *w,
			const struct event *e)
{
	json_writer_reset(w);
	write_head(ctx, w, e);
	if (e->episode) {
		json_write_int(w, "on_cpu_ns", (int64_t)e->on_cpu_ns);
		json_write_int(w, "intervals", e->intervals);
		json_write_str(w, "boundary", e->exact ? "exact" : "inferred");
	}
	json_write_str(w, "wait", pgoff_wait_name(e->wait));
	if (e->idle)
		json_write_bool(w, "idle", true);
	if (!e->episode) {
		json_write_str(w, "kernel_wait", pgoff_wait_name(e->kernel_wait));
		if (e->mismatch)
			json_write_str(w, "mismatch", e->mismatch);
	}
	write_pg(w, e);
	if (e->woken)
		write_waker(w, &e->waker);
	if (!e->episode) {
		write_kernel_stack(w, e);
		if (e->stack_error)
			json_write_str(w, "stack_error", e->stack_error);
	}
}

/* user_stack (leaf first) and user_stack_error. */
static void write_user_stack(struct json_writer *w, const struct event *e)
{
	json_writer_reset(w);
	if (e->ustack_walked) {
		json_write_array(w, "user_stack");
		/* names come from files of the traced process: UTF-8 made */
		for (size_t i = 0; i < e->ustack_len; i++)
			json_write_text(w, NULL, e->ustack[i],
					USYMS_NAME_MAX - 1);
		json_write_end_array(w);
	} else {
		json_write_null(w, "user_stack");
	}
	if (e->ustack_error)
		json_write_str(w, "user_stack_error", e->ustack_error);
}

/* query (and query_truncated), or null and query_error; redacted: the
 * query's literals as $n, with query_redacted. -ENOMEM: out of memory. */
static int write_query(struct json_writer *w, const struct event *e,
		       bool redacted)
{
	json_writer_reset(w);
	if (!e->query) {
		json_write_null(w, "query");
		json_write_str(w, "query_error", e->query_error);
		return 0;
	}
	if (redacted) {
		size_t len;
		char *text = sql_redact(e->query, e->query_len, &len);

		if (!text)
			return -ENOMEM;
		json_write_text(w, "query", text, len);
		free(text);
	} else {
		json_write_text(w, "query", e->query, e->query_len);
	}
	if (e->query_truncated)
		json_write_bool(w, "query_truncated", true);
	if (redacted)
		json_write_bool(w, "query_redacted", true);
	return 0;
}

/* An object's fields as they appear inside a line: without its braces. */
struct fields {
	const char *text;
	size_t len;
};

static struct fields fields_of(const struct json_writer *w)
{
	return (struct fields){ (const char *)w->buf.p, w->buf.n };
}

/*
 * The plain line with more fields added at its end, into *buf
 * (PGOFF_MAX_LINE, allocated once); *line and *len say where.
 * 0, -E2BIG or -ENOMEM.
 */
static int join_line(char **buf, const struct fields *plain,
		     const struct fields *more, size_t nmore,
		     const char **line, size_t *len)
{
	size_t n = plain->len;

	for (size_t i = 0; i < nmore; i++)
		n += 1 + more[i].len;
	if (n + 2 >= PGOFF_MAX_LINE)
		return -E2BIG;
	if (!*buf && !(*buf = malloc(PGOFF_MAX_LINE)))
		return -ENOMEM;
	n = 0;
	(*buf)[n++] = '{';
	memcpy(*buf + n, plain->text, plain->len);
	n += plain->len;
	for (size_t i = 0; i < nmore; i++) {
		(*buf)[n++] = ',';
		memcpy(*buf + n, more[i].text, more[i].len);
		n += more[i].len;
	}
	(*buf)[n++] = '}';
	(*buf)[n] = '\0';
	*line = *buf;
	*len = n;
	return 0;
}

/* The query's lines, plain and with the user stack (f[2], when us),
 * into buf and ustack_buf; redacted or not. */
static int join_query(struct event_ctx *ctx, const struct event *e,
		      bool redacted, char **buf, char **ustack_buf,
		      struct fields *f, bool us, const char **line,
		      size_t *len, const char **uline, size_t *ulen)
{
	int err = write_query(&ctx->query_fields, e, redacted);

	if (err || ctx->query_fields.buf.failed)
		return -ENOMEM;
	f[1] = fields_of(&ctx->query_fields);
	err = join_line(buf, &f[0], &f[1], 1, line, len);
	if (!err && us)
		err = join_line(ustack_buf, &f[0], &f[1], 2, uline, ulen);
	return err;
}

int event_lines_encode(struct event_ctx *ctx, const struct event *e,
		       struct event_lines *lines)
{
	struct fields f[3];	/* plain, query, user stack: in line order */
	bool us = e->ustack_walked || (!e->episode && ctx->want_ustack);
	int err = 0;

	memset(lines, 0, sizeof(*lines));
	write_plain(ctx, &ctx->plain_fields, e);
	if (us)
		write_user_stack(&ctx->ustack_fields, e);
	if (ctx->plain_fields.buf.failed ||
	    (us && ctx->ustack_fields.buf.failed))
		return -ENOMEM;
	f[0] = fields_of(&ctx->plain_fields);
	err = join_line(&ctx->plain, &f[0], NULL, 0, &lines->plain,
			&lines->plain_len);
	if (!err && us) {
		f[2] = fields_of(&ctx->ustack_fields);
		err = join_line(&ctx->ustack, &f[0], &f[2], 1,
				&lines->with_ustack, &lines->with_ustack_len);
	}
	if (!err && ctx->want_query && e->query_told)
		err = join_query(ctx, e, false, &ctx->query, &ctx->query_ustack,
				 f, us, &lines->with_query,
				 &lines->with_query_len,
				 &lines->with_query_ustack,
				 &lines->with_query_ustack_len);
	/* the recorder's: without it (memory), the event is stored
	 * without SQL, not lost */
	if (!err && ctx->want_redacted && e->query_told &&
	    join_query(ctx, e, true, &ctx->redacted, &ctx->redacted_ustack,
		       f, us, &lines->with_redacted,
		       &lines->with_redacted_len, &lines->with_redacted_ustack,
		       &lines->with_redacted_ustack_len)) {
		lines->with_redacted = lines->with_redacted_ustack = NULL;
	}
	return err;
}

int event_encode(struct event_ctx *ctx, const void *data, size_t size,
		 struct event_lines *lines, struct event_meta *meta)
{
	struct event e;
	int err = event_resolve(ctx, data, size, &e);

	if (err)
		return err;
	event_meta_of(&e, meta);
	err = event_lines_encode(ctx, &e, lines);
	meta->seq = ctx->seq;		/* the lines gave it out */
	return err;
}

json_object *event_encode_proc(const struct pg_proc *p)
{
	json_object *o = json_object_new_object();
	const struct pg_title *t = &p->title;

	json_add_int(o, "pid", p->pid);
	json_add_int(o, "cluster", p->cluster);
	if (!p->titled) {
		json_add_str(o, "backend_type", NULL);
		return o;
	}
	json_add_text(o, "backend_type", t->backend_type, sizeof(t->backend_type));
	if (t->database[0])
		json_add_text(o, "database", t->database, sizeof(t->database));
	if (t->user[0])
		json_add_text(o, "user", t->user, sizeof(t->user));
	return o;
}

void event_ctx_free(struct event_ctx *ctx)
{
	free(ctx->plain);
	free(ctx->ustack);
	free(ctx->query);
	free(ctx->query_ustack);
	free(ctx->redacted);
	free(ctx->redacted_ustack);
	ctx->plain = ctx->ustack = ctx->query = ctx->query_ustack = NULL;
	ctx->redacted = ctx->redacted_ustack = NULL;
	json_writer_free(&ctx->plain_fields);
	json_writer_free(&ctx->ustack_fields);
	json_writer_free(&ctx->query_fields);
}
