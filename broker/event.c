// SPDX-License-Identifier: GPL-2.0-only
/* event.c - decode, symbolize, classify and encode one off-CPU interval. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "broker/event.h"
#include "broker/ksyms.h"
#include "broker/pg_registry.h"
#include "broker/pg_wait_names.h"

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

static void add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static void add_int(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* Symbol names, leaf first, scheduler frames dropped; the kernel view. */
static json_object *encode_stack(const struct event_ctx *ctx,
				 const struct pgoff_record *r,
				 enum pgoff_wait *kernel_wait)
{
	const char *names[PGOFF_STACK_DEPTH];
	char unnamed[PGOFF_STACK_DEPTH][24];
	size_t n = r->stack_bytes > 0 ? (size_t)r->stack_bytes / 8 : 0;
	size_t skip;
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		names[i] = ksyms_lookup(ctx->ksyms, r->stack[i], NULL, NULL);
		if (!names[i]) {	/* shown as an address, never dropped */
			snprintf(unnamed[i], sizeof(unnamed[i]), "0x%llx",
				 (unsigned long long)r->stack[i]);
			names[i] = unnamed[i];
		}
	}
	skip = pgoff_stack_skip(names, n);
	for (size_t i = skip; i < n; i++)
		json_object_array_add(arr, json_object_new_string(names[i]));
	*kernel_wait = pgoff_classify_stack(names + skip, n - skip,
					    r->flags & PGOFF_F_PREEMPTED);
	return arr;
}

static json_object *encode_pg(const struct pgoff_record *r,
			      const struct pg_proc *proc,
			      const struct pg_cluster *c)
{
	json_object *pg = json_object_new_object();
	json_object *missing = json_object_new_object();
	int major = c ? c->major : 0;

	if (r->flags & PGOFF_F_PG_WAIT) {
		uint32_t info = r->pg_wait_event_info;
		const char *type = pg_wait_event_type(major, info);
		const char *name = pg_wait_event_name(major, info);
		char raw[48];

		add_int(pg, "wait_event_info", info);
		if (info && (!type || !name)) {
			/* a raw id only where no name is known */
			snprintf(raw, sizeof(raw), "class 0x%02x id %u",
				 info >> 24, info & 0xffff);
			if (!type)
				type = raw;
			if (!name)
				name = raw;
		}
		add_str(pg, "wait_event_type", info ? type : NULL);
		add_str(pg, "wait_event", info ? name : NULL);
	} else {
		add_str(missing, "wait_event",
			(r->flags & PGOFF_F_PG_NO_SYMBOL) ?
				(c && c->pg_missing[0] ? c->pg_missing :
							 "symbol unknown") :
				"backend memory could not be read");
	}
	if (proc && proc->titled) {
		add_str(pg, "backend_type", proc->title.backend_type);
		if (proc->title.database[0])
			add_str(pg, "database", proc->title.database);
		if (proc->title.user[0])
			add_str(pg, "user", proc->title.user);
	} else {
		add_str(missing, "backend_type", "process title not readable yet");
	}
	if (c) {
		json_object *cl = json_object_new_object();

		add_int(cl, "id", c->id);
		add_str(cl, "data_dir", c->data_dir);
		add_int(cl, "port", c->port);
		add_str(cl, "version", c->version);
		json_object_object_add(pg, "cluster", cl);
	}
	if (json_object_object_length(missing))
		json_object_object_add(pg, "missing", missing);
	else
		json_object_put(missing);
	return pg;
}

static json_object *encode_waker(struct event_ctx *ctx,
				 const struct pgoff_record *r)
{
	json_object *w = json_object_new_object();
	/* the kernel says whether to ask: no /proc probe for kernel threads */
	const struct pg_proc *p = (r->flags & PGOFF_F_WAKER_TRACED) ?
		pg_registry_proc(ctx->registry, r->waker_tgid) : NULL;
	char comm[PGOFF_COMM_LEN + 1];

	memcpy(comm, r->waker_comm, PGOFF_COMM_LEN);
	comm[PGOFF_COMM_LEN] = '\0';
	add_int(w, "pid", r->waker_tgid);
	add_int(w, "tid", r->waker_pid);
	add_str(w, "comm", comm);
	if (p && p->titled)
		add_str(w, "backend_type", p->title.backend_type);
	return w;
}

json_object *event_encode(struct event_ctx *ctx, const struct pgoff_record *r,
			  struct event_meta *meta)
{
	json_object *ev = json_object_new_object();
	const struct pg_proc *proc = pg_registry_proc(ctx->registry, r->tgid);
	const struct pg_cluster *c = pg_registry_cluster(ctx->registry,
							 r->cluster);
	uint64_t dur = r->end_ns - r->start_ns;
	uint64_t blocked = 0, runq = dur;
	enum pgoff_wait kernel_wait = PGOFF_WAIT_OTHER;
	char ts[48], comm[PGOFF_COMM_LEN + 1];
	json_object *stack;

	if (!(r->flags & PGOFF_F_PREEMPTED)) {
		/* woken at wake_ns; no wakeup seen: all of it was blocked */
		blocked = (r->flags & PGOFF_F_WOKEN) && r->wake_ns >= r->start_ns &&
					  r->wake_ns <= r->end_ns ?
				  r->wake_ns - r->start_ns :
				  dur;
		runq = dur - blocked;
	}
	memcpy(comm, r->comm, PGOFF_COMM_LEN);
	comm[PGOFF_COMM_LEN] = '\0';

	add_str(ev, "type", "offcpu");
	add_int(ev, "seq", (int64_t)++ctx->seq);
	event_format_time(r->end_ns, ts, sizeof(ts));
	add_str(ev, "time", ts);
	event_format_time(r->start_ns, ts, sizeof(ts));
	add_str(ev, "start", ts);
	add_int(ev, "pid", r->tgid);
	add_int(ev, "tid", r->pid);
	add_str(ev, "comm", comm);
	add_int(ev, "duration_ns", (int64_t)dur);
	add_int(ev, "blocked_ns", (int64_t)blocked);
	add_int(ev, "runq_ns", (int64_t)runq);

	stack = encode_stack(ctx, r, &kernel_wait);
	meta->wait = pgoff_wait_refine(kernel_wait,
				       (r->flags & PGOFF_F_PG_WAIT) ?
					       r->pg_wait_event_info : 0);
	add_str(ev, "wait", pgoff_wait_name(meta->wait));
	add_str(ev, "kernel_wait", pgoff_wait_name(kernel_wait));
	json_object_object_add(ev, "pg", encode_pg(r, proc, c));
	if (r->flags & PGOFF_F_WOKEN)
		json_object_object_add(ev, "waker", encode_waker(ctx, r));
	json_object_object_add(ev, "stack", stack);
	if (r->stack_bytes < 0)
		add_str(ev, "stack_error",
			r->stack_bytes == -95 ?
				"not available with the raw_tp fallback" :
				"kernel stack could not be read");

	meta->tgid = r->tgid;
	meta->duration_ns = dur;
	return ev;
}
