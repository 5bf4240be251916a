// SPDX-License-Identifier: GPL-2.0-only
/* filter.c - subscription filters and their kernel union; see filter.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "broker/serve/filter.h"
#include "broker/pg/pg_wait_names.h"
#include "common/units.h"

static int bad(struct pgoff_error *err, const char *fmt, const char *what)
{
	err->code = PGOFF_ERR_BAD_REQUEST;
	snprintf(err->message, sizeof(err->message), fmt, what);
	return -EINVAL;
}

/* "Lock" or "Lock:transactionid" (any case). */
static int compile_pg_wait(const char *spec, struct pg_wait_match *out,
			   struct pgoff_error *err)
{
	char class_name[PGOFF_MAX_NAME];
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);

	memcpy(class_name, spec, len);
	class_name[len] = '\0';
	out->pg_class = pg_wait_class_parse(class_name);
	if (out->pg_class < 0)
		return bad(err, "unknown PostgreSQL wait event type \"%.60s\" "
			   "(LWLock, Lock, BufferPin, Activity, Client, "
			   "Extension, IPC, Timeout, IO)", class_name);
	out->event = NULL;
	if (!colon)
		return 0;
	out->event = pg_wait_event_spelling(out->pg_class, colon + 1);
	if (out->event)
		return 0;
	/* a server may name these at run time: taken as given */
	if ((out->pg_class == PG_CLASS_EXTENSION ||
	     out->pg_class == PG_CLASS_INJECTION_POINT ||
	     out->pg_class == PG_CLASS_LWLOCK) && colon[1] &&
	    strlen(colon + 1) < sizeof(out->run_event)) {
		memcpy(out->run_event, colon + 1, strlen(colon + 1) + 1);
		return 0;
	}
	return bad(err, "unknown PostgreSQL wait event \"%.80s\"", spec);
}

int filter_compile(const struct pgoff_filter *req, uint64_t floor_ns,
		   struct filter *out, struct pgoff_error *err)
{
	memset(out, 0, sizeof(*out));
	out->view = req->view;
	out->requested_min_ns = req->min_duration_ns;
	filter_set_floor(out, floor_ns);
	memcpy(out->pids, req->pids, req->npids * sizeof(req->pids[0]));
	out->npids = req->npids;
	for (size_t i = 0; i < req->types.n; i++) {
		enum pgoff_wait w;

		if (pgoff_wait_parse(req->types.v[i], &w))
			return bad(err, "unknown wait type \"%.60s\" (lock, io, "
				   "net, poll, sleep, ipc, memory, cpu, other)",
				   req->types.v[i]);
		if (w == PGOFF_WAIT_ON_CPU)
			return bad(err, "wait type \"%s\" is a wait's time on "
				   "a CPU, sampled: in top's and stats' rows only, "
				   "never in an event", req->types.v[i]);
		out->waits |= 1u << w;
	}
	for (size_t i = 0; i < req->pg_waits.n; i++)
		if (compile_pg_wait(req->pg_waits.v[i], &out->pg_waits[i], err))
			return -EINVAL;
	out->npg_waits = req->pg_waits.n;
	out->databases = req->databases;
	out->backend_types = req->backend_types;
	for (size_t i = 0; i < req->query_ids.n; i++)
		if (pgoff_parse_query_id(req->query_ids.v[i], &out->query_ids[i]))
			return bad(err, "\"%.40s\" is not a query id (a non-zero "
				   "signed 64-bit number, as pg_stat_statements "
				   "shows queryid)", req->query_ids.v[i]);
	out->nquery_ids = req->query_ids.n;
	for (size_t i = 0; i < req->containers.n; i++)
		if (!pgoff_container_prefix_valid(req->containers.v[i]))
			return bad(err, "\"%.70s\" is not a container id (12 to "
				   "64 hex digits: its start, as docker ps shows "
				   "it, or all of it)", req->containers.v[i]);
	out->containers = req->containers;
	out->user_stack = req->user_stack;
	if (out->user_stack && out->view == PGOFF_VIEW_WAITS)
		return bad(err, "%s", "user_stack is on intervals: it needs "
			   "view \"intervals\" or \"both\"");
	return 0;
}

void filter_set_floor(struct filter *f, uint64_t floor_ns)
{
	f->min_duration_ns = f->requested_min_ns > floor_ns ?
				     f->requested_min_ns : floor_ns;
}

static bool pid_in(const struct filter *f, uint32_t tgid)
{
	for (size_t i = 0; i < f->npids; i++)
		if (f->pids[i] == tgid)
			return true;
	return false;
}

static bool pg_wait_in(const struct filter *f, const struct event_meta *m)
{
	if (!m->has_pg_wait || !m->pg_wait_event_info)
		return false;
	for (size_t i = 0; i < f->npg_waits; i++) {
		const struct pg_wait_match *w = &f->pg_waits[i];

		if ((int)PGOFF_PG_CLASS(m->pg_wait_event_info) != w->pg_class)
			continue;
		const char *want = w->event ? w->event :
				   w->run_event[0] ? w->run_event : NULL;

		/* case-blind: versions spell some names differently */
		if (!want || (m->pg_wait_event &&
			      strcasecmp(want, m->pg_wait_event) == 0))
			return true;
	}
	return false;
}

/* Database and backend type names are compared exactly, as PostgreSQL does. */
static bool name_in(const struct pgoff_names *names, const char *v)
{
	if (!v)
		return false;
	for (size_t i = 0; i < names->n; i++)
		if (strcmp(names->v[i], v) == 0)
			return true;
	return false;
}

static bool container_in(const struct filter *f, const char *id)
{
	for (size_t i = 0; id && i < f->containers.n; i++)
		if (pgoff_container_matches(id, f->containers.v[i]))
			return true;
	return false;
}

static bool query_id_in(const struct filter *f, uint64_t id)
{
	for (size_t i = 0; id && i < f->nquery_ids; i++)
		if (f->query_ids[i] == id)
			return true;
	return false;
}

/* Which kinds of item a view streams. */
static bool view_has(enum pgoff_view v, const struct event_meta *m)
{
	switch (v) {
	case PGOFF_VIEW_INTERVALS:
		return !m->episode;
	case PGOFF_VIEW_WAITS:	/* an interval inside a PG wait is in its episode */
		return m->episode || !(m->has_pg_wait && m->pg_wait_event_info);
	case PGOFF_VIEW_BOTH:
		return true;
	}
	return false;
}

bool filter_match(const struct filter *f, const struct event_meta *m)
{
	if (!view_has(f->view, m))
		return false;
	if (m->duration_ns < f->min_duration_ns)
		return false;
	if (f->npids && !pid_in(f, m->tgid))
		return false;
	if (f->waits && !(f->waits & (1u << m->wait)))
		return false;
	if (f->npg_waits && !pg_wait_in(f, m))
		return false;
	if (f->databases.n && !name_in(&f->databases, m->database))
		return false;
	if (f->backend_types.n && !name_in(&f->backend_types, m->backend_type))
		return false;
	if (f->nquery_ids && !query_id_in(f, m->query_id))
		return false;
	if (f->containers.n && !container_in(f, m->container))
		return false;
	return true;
}

void kernel_filter_init(struct kernel_filter *k)
{
	memset(k, 0, sizeof(*k));
	k->min_duration_ns = UINT64_MAX;
	k->pg_class_filter = true;
}

void kernel_filter_add(struct kernel_filter *k, const struct filter *f,
		       bool may_see_query)
{
	k->any = true;
	if (f->min_duration_ns < k->min_duration_ns)
		k->min_duration_ns = f->min_duration_ns;
	if (!f->npids)
		k->all_pids = true;
	for (size_t j = 0; j < f->npids && !k->all_pids; j++) {
		size_t i;

		for (i = 0; i < k->npids && k->pids[i] != f->pids[j]; i++)
			;
		if (i < k->npids)
			continue;
		if (k->npids == PGOFF_MAX_WATCH_PIDS)	/* the broker filters */
			k->all_pids = true;
		else
			k->pids[k->npids++] = f->pids[j];
	}
	/* preempted intervals are exactly the ones whose wait is cpu */
	if (!f->waits || (f->waits & (1u << PGOFF_WAIT_CPU)))
		k->want_cpu = true;
	if (!f->waits || (f->waits & ~(1u << PGOFF_WAIT_CPU)))
		k->want_other = true;
	if (!f->npg_waits)
		k->pg_class_filter = false;
	for (size_t i = 0; i < f->npg_waits; i++) {
		unsigned int c = (unsigned int)f->pg_waits[i].pg_class & 0xff;

		k->pg_classes[PGOFF_PG_CLASS_WORD(c)] |= PGOFF_PG_CLASS_BIT(c);
	}
	if (may_see_query)
		k->want_query = true;
	if (f->view != PGOFF_VIEW_INTERVALS)
		k->want_episodes = true;
	if (f->view != PGOFF_VIEW_WAITS)
		k->want_pg_intervals = true;
}

bool kernel_filter_done(struct kernel_filter *k)
{
	if (k->all_pids)
		k->npids = 0;
	if (!k->any) {
		k->pg_class_filter = false;
		return false;
	}
	k->cpu = k->want_cpu && k->want_other ? PGOFF_CPU_ANY :
		 k->want_cpu ? PGOFF_CPU_ONLY : PGOFF_CPU_NONE;
	if (!k->pg_class_filter)
		memset(k->pg_classes, 0, sizeof(k->pg_classes));
	return true;
}
