// SPDX-License-Identifier: GPL-2.0-only
/* event.c - decode, symbolize, classify and encode one kernel record: an
 * off-CPU interval or an episode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "broker/event.h"
#include "broker/json_fields.h"
#include "broker/ksyms.h"
#include "broker/pg_registry.h"
#include "broker/pg_wait_names.h"
#include "broker/usyms.h"
#include "protocol/utf8.h"

void event_format_time(uint64_t mono_ns, char *buf, size_t len)
{
	struct timespec mono, real;
	int64_t wall_ns;
	time_t sec;
	struct tm tm;
	size_t n;

	/* BPF stamps CLOCK_MONOTONIC; shift by the clocks' current offset. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	wall_ns = (int64_t)mono_ns - (mono.tv_sec * 1000000000LL + mono.tv_nsec) +
		  (real.tv_sec * 1000000000LL + real.tv_nsec);
	sec = (time_t)(wall_ns / 1000000000LL);
	gmtime_r(&sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06lldZ",
		 (long long)(wall_ns % 1000000000LL) / 1000);
}

/* Symbol names, leaf first, scheduler frames dropped; the kernel view. */
static json_object *encode_stack(const struct event_ctx *ctx,
				 const struct pgoff_record *r,
				 enum pgoff_wait *kernel_wait)
{
	const char *names[PGOFF_STACK_DEPTH];
	size_t n = r->stack_bytes > 0 ? (size_t)r->stack_bytes / 8 : 0;
	size_t skip;
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		names[i] = ksyms_lookup(ctx->ksyms, r->stack[i], NULL, NULL);
	skip = pgoff_stack_skip(names, n);
	/* never the address: it would tell unprivileged members where the
	 * kernel is loaded (KASLR), as kptr_restrict keeps from them */
	for (size_t i = skip; i < n; i++)
		json_object_array_add(arr, json_object_new_string(
					      names[i] ? names[i] : "[unknown]"));
	*kernel_wait = pgoff_classify_stack(names + skip, n - skip,
					    r->flags & PGOFF_F_PREEMPTED);
	return arr;
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

/* user_stack (leaf first) and user_stack_error into ev. */
static void add_user_stack(const struct event_ctx *ctx, json_object *ev,
			   const struct pgoff_ustack *us,
			   const struct pg_cluster *c)
{
	char names[USYMS_MAX_FRAMES][USYMS_NAME_MAX], errbuf[200];
	const char *error = "pgoffd has no user stack symbolizer";
	json_object *arr;
	size_t n = 0;

	if (!us) {
		/* the kernel walks it only while a subscription may want it */
		json_object_object_add(ev, "user_stack", NULL);
		json_add_str(ev, "user_stack_error", "not walked: the interval began "
			"before a subscription with user_stack could want it, or "
			"the process's memory is not read (see pg.missing)");
		return;
	}
	arr = json_object_new_array();
	if (ctx->usyms)
		n = usyms_stack(ctx->usyms, c ? &c->info : NULL, us, names,
				USYMS_MAX_FRAMES, &error, errbuf,
				sizeof(errbuf));
	for (size_t i = 0; i < n; i++) {
		/* names come from files of the traced process: UTF-8 made */
		char clean[USYMS_NAME_MAX + 1];
		size_t len = pgoff_utf8_clean(names[i], USYMS_NAME_MAX - 1, clean);

		json_object_array_add(arr, json_object_new_string_len(clean,
								      (int)len));
	}
	json_object_object_add(ev, "user_stack", arr);
	if (error)
		json_add_str(ev, "user_stack_error", error);
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
	json_add_text(cl, "data_dir", c->info.data_dir, sizeof(c->info.data_dir));
	json_add_int(cl, "port", c->info.port);
	json_add_str(cl, "version", c->info.version);
	return cl;
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

static json_object *encode_pg(uint32_t flags, uint32_t info,
			      const struct pg_proc *proc,
			      const struct pg_cluster *c,
			      struct event_meta *meta)
{
	json_object *pg = json_object_new_object();
	json_object *missing = json_object_new_object();
	int major = c ? c->info.major : 0;

	if (flags & PGOFF_F_PG_WAIT) {
		char why[64];

		meta->pg_wait_event = json_add_pg_wait(pg, major, info);
		if (info && c && event_names_missing(c, why, sizeof(why)))
			json_add_str(missing, "wait_event_name", why);
	} else {
		json_add_str(missing, "wait_event", pg_missing_why(flags, c));
	}
	if (proc && proc->titled) {
		const struct pg_title *t = &proc->title;

		json_add_text(pg, "backend_type", t->backend_type,
			 sizeof(t->backend_type));
		meta->backend_type = t->backend_type;
		if (t->database[0]) {
			json_add_text(pg, "database", t->database, sizeof(t->database));
			meta->database = t->database;
		}
		if (t->user[0])
			json_add_text(pg, "user", t->user, sizeof(t->user));
	} else {
		json_add_str(missing, "backend_type", "process title not readable yet");
	}
	if (c)
		json_object_object_add(pg, "cluster", event_encode_cluster(c));
	if (json_object_object_length(missing))
		json_object_object_add(pg, "missing", missing);
	else
		json_object_put(missing);
	return pg;
}

/* Who ended the (last) interval: the fields of a record or episode. */
struct waker {
	uint32_t flags, pid, tgid, pg_wait_event_info;
	const char *comm;
};

static json_object *encode_waker(struct event_ctx *ctx, const struct waker *r)
{
	json_object *w = json_object_new_object();
	const struct pg_proc *p;
	const struct pg_cluster *c;

	json_add_int(w, "pid", r->tgid);
	json_add_int(w, "tid", r->pid);
	json_add_text(w, "comm", r->comm, PGOFF_COMM_LEN);
	/* the kernel says whether to ask: no /proc probe for kernel threads */
	if (!(r->flags & PGOFF_F_WAKER_TRACED))
		return w;
	p = pg_registry_proc(ctx->registry, r->tgid);
	if (p && p->titled)
		json_add_text(w, "backend_type", p->title.backend_type,
			 sizeof(p->title.backend_type));
	if (r->flags & PGOFF_F_WAKER_PG_WAIT) {
		c = p ? pg_registry_cluster(ctx->registry, p->cluster) : NULL;
		json_add_pg_wait(w, c ? c->info.major : 0, r->pg_wait_event_info);
	}
	return w;
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
	json_object_put(ctx->last);
	ctx->last = NULL;
	free(ctx->plain);
	ctx->plain = NULL;
	free(ctx->ustack);
	ctx->ustack = NULL;
	free(ctx->query);
	ctx->query = NULL;
}

/* The SQL, for those who may see it: added after the plain line is cut. */
static void add_query(json_object *ev, const struct pgoff_record *r,
		      const void *data, size_t size)
{
	const struct pgoff_record_query *rq = data;

	if ((r->flags & PGOFF_F_QUERY) && size >= sizeof(*rq)) {
		size_t len = r->query_len < PGOFF_QUERY_MAX ? r->query_len :
							      PGOFF_QUERY_MAX - 1;

		json_add_text(ev, "query", rq->query, len);
		/* the kernel keeps what PostgreSQL itself shows by default */
		if (len == PGOFF_QUERY_MAX - 1)
			json_object_object_add(ev, "query_truncated",
					       json_object_new_boolean(1));
	} else {
		json_object_object_add(ev, "query", NULL);
		json_add_str(ev, "query_error", (r->flags & PGOFF_F_QUERY_UNSEEN) ?
			"not captured: the interval began before any "
			"subscriber could see queries" :
			"the query text could not be read or kept in the "
			"kernel (counted in query_failed)");
	}
}

/* The plain line, cut out of json-c's buffer before anything is added. */
static int keep_plain(struct event_ctx *ctx, json_object *ev,
		      struct event_lines *lines)
{
	size_t len;
	const char *line = pgoff_json_line(ev, &len);

	if (len >= PGOFF_MAX_LINE)
		return -E2BIG;
	memcpy(ctx->plain, line, len + 1);
	lines->plain = ctx->plain;
	lines->plain_len = len;
	return 0;
}

/* ev's line, copied into *buf (allocated once); NULL if no memory. */
static const char *copy_line(char **buf, json_object *ev, size_t *len)
{
	const char *line = pgoff_json_line(ev, len);

	if (*len >= PGOFF_MAX_LINE)
		return NULL;
	if (!*buf && !(*buf = malloc(PGOFF_MAX_LINE)))
		return NULL;
	memcpy(*buf, line, *len + 1);
	return *buf;
}

/* ev with its user stack (or why none), copied into *buf; ev keeps it. */
static int keep_copy(char **buf, json_object *ev, const struct pg_cluster *c,
		     const struct pgoff_ustack *us, struct event_ctx *ctx)
{
	size_t len;

	add_user_stack(ctx, ev, us, c);
	return copy_line(buf, ev, &len) ? 0 : -ENOMEM;
}

/* Fields every item about a process shares, up to the durations. */
static void add_head(struct event_ctx *ctx, json_object *ev, const char *type,
		     uint64_t start_ns, uint64_t end_ns, uint32_t tgid,
		     uint32_t pid, const char *comm)
{
	char ts[48];

	json_add_str(ev, "type", type);
	json_add_int(ev, "seq", (int64_t)++ctx->seq);
	event_format_time(end_ns, ts, sizeof(ts));
	json_add_str(ev, "time", ts);
	event_format_time(start_ns, ts, sizeof(ts));
	json_add_str(ev, "start", ts);
	json_add_int(ev, "pid", tgid);
	json_add_int(ev, "tid", pid);
	json_add_text(ev, "comm", comm, PGOFF_COMM_LEN);
	json_add_int(ev, "duration_ns", (int64_t)(end_ns - start_ns));
}

static int encode_episode(struct event_ctx *ctx, const struct pgoff_episode *e,
			  struct event_lines *lines, struct event_meta *meta)
{
	json_object *ev = ctx->last;
	struct waker wk = { e->flags, e->waker_pid, e->waker_tgid,
			    e->waker_pg_wait_event_info, e->waker_comm };
	json_object *waker = (e->flags & PGOFF_F_WOKEN) ?
				     encode_waker(ctx, &wk) : NULL;
	const struct pg_proc *proc = pg_registry_proc(ctx->registry, e->tgid);
	const struct pg_cluster *c = pg_registry_cluster(ctx->registry,
							 e->cluster);

	add_head(ctx, ev, "episode", e->start_ns, e->end_ns, e->tgid, e->pid,
		 e->comm);
	json_add_int(ev, "blocked_ns", (int64_t)e->blocked_ns);
	json_add_int(ev, "runq_ns", (int64_t)e->runq_ns);
	json_add_int(ev, "on_cpu_ns", (int64_t)e->oncpu_ns);
	json_add_int(ev, "intervals", e->intervals);
	/* PostgreSQL's own start and end (its probes), or the kernel's view */
	json_add_str(ev, "boundary", (e->bounds & PGOFF_EP_START_PROBE) &&
				     (e->bounds & PGOFF_EP_DONE_PROBE) ?
				     "exact" : "inferred");
	meta->episode = true;
	meta->has_pg_wait = true;
	meta->pg_wait_event_info = e->pg_wait_event_info;
	/* no single kernel view: PostgreSQL's class says what it was */
	meta->wait = pgoff_wait_refine(PGOFF_WAIT_OTHER, e->pg_wait_event_info,
				       e->flags & PGOFF_F_IN_STATEMENT);
	json_add_str(ev, "wait", pgoff_wait_name(meta->wait));
	json_object_object_add(ev, "pg", encode_pg(PGOFF_F_PG_WAIT,
		e->pg_wait_event_info, proc, c, meta));
	if (waker)
		json_object_object_add(ev, "waker", waker);
	meta->tgid = e->tgid;
	meta->duration_ns = e->end_ns - e->start_ns;
	return keep_plain(ctx, ev, lines);
}

int event_encode(struct event_ctx *ctx, const void *data, size_t size,
		 struct event_lines *lines, struct event_meta *meta)
{
	const struct pgoff_record *r = data;
	const struct pg_proc *proc;
	const struct pg_cluster *c;
	json_object *ev, *waker = NULL, *stack;
	uint64_t dur, blocked, runq;
	enum pgoff_wait kernel_wait = PGOFF_WAIT_OTHER;
	const struct pgoff_ustack *us;
	const char *mismatch;
	int err;

	if (size < sizeof(uint32_t))
		return -EINVAL;
	if (!ctx->plain && !(ctx->plain = malloc(PGOFF_MAX_LINE)))
		return -ENOMEM;
	json_object_put(ctx->last);
	ctx->last = ev = json_object_new_object();
	memset(meta, 0, sizeof(*meta));
	memset(lines, 0, sizeof(*lines));
	if (r->kind == PGOFF_REC_EPISODE && size >= sizeof(struct pgoff_episode))
		return encode_episode(ctx, data, lines, meta);
	if (r->kind != PGOFF_REC_INTERVAL || size < sizeof(*r))
		return -EINVAL;
	/* the waker first: looking it up may grow the registry */
	if (r->flags & PGOFF_F_WOKEN) {
		struct waker wk = { r->flags, r->waker_pid, r->waker_tgid,
				    r->waker_pg_wait_event_info, r->waker_comm };

		waker = encode_waker(ctx, &wk);
	}
	proc = pg_registry_proc(ctx->registry, r->tgid);
	c = pg_registry_cluster(ctx->registry, r->cluster);
	dur = r->end_ns - r->start_ns;
	blocked = pgoff_blocked_ns(r->flags, r->start_ns, r->wake_ns, r->end_ns);
	runq = dur - blocked;

	add_head(ctx, ev, "offcpu", r->start_ns, r->end_ns, r->tgid, r->pid,
		 r->comm);
	json_add_int(ev, "blocked_ns", (int64_t)blocked);
	json_add_int(ev, "runq_ns", (int64_t)runq);

	stack = encode_stack(ctx, r, &kernel_wait);
	meta->has_pg_wait = r->flags & PGOFF_F_PG_WAIT;
	meta->pg_wait_event_info = meta->has_pg_wait ? r->pg_wait_event_info : 0;
	meta->wait = pgoff_wait_refine(kernel_wait, meta->pg_wait_event_info,
				       r->flags & PGOFF_F_IN_STATEMENT);
	json_add_str(ev, "wait", pgoff_wait_name(meta->wait));
	json_add_str(ev, "kernel_wait", pgoff_wait_name(kernel_wait));
	mismatch = pgoff_wait_mismatch(kernel_wait, meta->has_pg_wait,
				       meta->pg_wait_event_info);
	if (mismatch)
		json_add_str(ev, "mismatch", mismatch);
	json_object_object_add(ev, "pg", encode_pg(r->flags,
		r->pg_wait_event_info, proc, c, meta));
	if (waker)
		json_object_object_add(ev, "waker", waker);
	json_object_object_add(ev, "stack", stack);
	if (r->stack_bytes < 0)
		json_add_str(ev, "stack_error",
			r->stack_bytes == PGOFF_STACK_NOT_WALKED ?
				"not available with the raw_tp fallback" :
				"kernel stack could not be read");
	meta->tgid = r->tgid;
	meta->duration_ns = dur;

	err = keep_plain(ctx, ev, lines);
	if (err)
		return err;
	us = record_ustack(r, data, size);
	if ((us || ctx->want_ustack) &&
	    !(err = keep_copy(&ctx->ustack, ev, c, us, ctx))) {
		lines->with_ustack = ctx->ustack;
		lines->with_ustack_len = strlen(ctx->ustack);
	}
	if (ctx->want_query && (r->flags & (PGOFF_F_QUERY | PGOFF_F_QUERY_LOST |
					    PGOFF_F_QUERY_UNSEEN))) {
		add_query(ev, r, data, size);
		lines->with_query = pgoff_json_line(ev, &lines->with_query_len);
		if (lines->with_ustack) {
			/* with SQL alone: a copy without the stack; with
			 * both: ev as it was */
			json_object *st = NULL, *why = NULL;

			json_object_object_get_ex(ev, "user_stack", &st);
			json_object_object_get_ex(ev, "user_stack_error", &why);
			json_object_get(st);
			json_object_get(why);
			json_object_object_del(ev, "user_stack");
			json_object_object_del(ev, "user_stack_error");
			lines->with_query = copy_line(&ctx->query, ev,
						      &lines->with_query_len);
			json_object_object_add(ev, "user_stack", st);
			if (why)
				json_object_object_add(ev, "user_stack_error", why);
			if (!lines->with_query)
				return -ENOMEM;
			lines->with_query_ustack = pgoff_json_line(ev,
				&lines->with_query_ustack_len);
		}
	}
	return err;
}
