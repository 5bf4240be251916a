// SPDX-License-Identifier: GPL-2.0-only
/* event_frames.c - an offcpu event as frames and labels; see event_frames.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "client/event_frames.h"
#include "protocol/protocol.h"

/* ev's "pg" object, or NULL. */
static json_object *pg_of(json_object *ev)
{
	json_object *pg;

	if (json_object_object_get_ex(ev, "pg", &pg) &&
	    json_object_is_type(pg, json_type_object))
		return pg;
	return NULL;
}

/* The root frame: the PostgreSQL wait, or why there is none. */
static void root_frame(json_object *ev, const char *wait, char *buf,
		       size_t len)
{
	const char *type, *event;
	json_object *pg = pg_of(ev);

	if (pg && pgoff_get_string(pg, "wait_event_type", &type) &&
	    pgoff_get_string(pg, "wait_event", &event))
		snprintf(buf, len, "%s:%s", type, event);
	else
		snprintf(buf, len, "%s", strcmp(wait, "cpu") == 0 ?
			 "(run queue)" : "(no PostgreSQL wait)");
}

/* A frame for the statement: its query id, or none. */
static void query_frame(json_object *ev, char *buf, size_t len)
{
	const char *id;
	json_object *pg = pg_of(ev);

	if (pg && pgoff_get_string(pg, "query_id", &id))
		snprintf(buf, len, "query %s", id);
	else
		snprintf(buf, len, "(no statement)");
}

/* The frames of a stack array (leaf first on the wire), outermost first. */
static size_t add_frames(json_object *ev, const char *key,
			 const char **frames, size_t n)
{
	json_object *stack;

	if (!json_object_object_get_ex(ev, key, &stack) ||
	    !json_object_is_type(stack, json_type_array))
		return n;
	for (size_t i = json_object_array_length(stack);
	     i-- > 0 && n < FLAME_MAX_DEPTH;) {
		const char *fr = json_object_get_string(
			json_object_array_get_idx(stack, i));

		if (fr && *fr)
			frames[n++] = fr;
	}
	return n;
}

/*
 * user: PostgreSQL's own frames go between the kernel wait type and the
 * kernel stack, from "which SQL-level operation" down to the kernel.
 */
bool event_frames(json_object *ev, bool user, bool by_query,
		  struct event_frames *f)
{
	const char *wait = "other";
	int64_t ns;

	f->n = 0;
	if (!pgoff_get_int64(ev, "duration_ns", &ns) || ns < 0)
		return false;
	f->ns = (uint64_t)ns;
	pgoff_get_string(ev, "wait", &wait);
	root_frame(ev, wait, f->root, sizeof(f->root));
	snprintf(f->kind, sizeof(f->kind), "wait: %s", wait);
	if (by_query) {
		query_frame(ev, f->query, sizeof(f->query));
		f->frames[f->n++] = f->query;
	}
	f->frames[f->n++] = f->root;
	f->frames[f->n++] = f->kind;
	if (user)
		f->n = add_frames(ev, "user_stack", f->frames, f->n);
	f->n = add_frames(ev, "stack", f->frames, f->n);
	return true;
}

bool event_is_idle(json_object *ev)
{
	json_object *v;

	return json_object_object_get_ex(ev, "idle", &v) &&
	       json_object_get_boolean(v);
}

int event_pprof_add(struct pprof *p, json_object *ev, bool user, bool by_query)
{
	static const char *const pg_keys[] = {
		"wait_event_type", "wait_event", "backend_type", "database",
		"query_id",
	};
	struct pprof_label labels[PPROF_MAX_LABELS];
	struct event_frames f;
	json_object *pg = pg_of(ev), *cluster = NULL, *ct;
	const char *s;
	size_t n = 0;
	int64_t pid, owner;

	if (!event_frames(ev, user, by_query, &f))
		return 0;
	for (size_t i = 0; pg && i < sizeof(pg_keys) / sizeof(pg_keys[0]); i++)
		if (pgoff_get_string(pg, pg_keys[i], &s))
			labels[n++] = (struct pprof_label){ pg_keys[i], s, 0 };
	if (pgoff_get_string(ev, "wait", &s))
		labels[n++] = (struct pprof_label){ "wait", s, 0 };
	if (pg && json_object_object_get_ex(pg, "cluster", &cluster) &&
	    !json_object_is_type(cluster, json_type_object))
		cluster = NULL;
	/* the cluster as the exporter's series name it: two at one path
	 * are two clusters in a profile too */
	if (cluster && pgoff_get_string(cluster, "data_dir", &s))
		labels[n++] = (struct pprof_label){ "cluster", s, 0 };
	if (cluster && pgoff_get_string(cluster, "cluster_id", &s))
		labels[n++] = (struct pprof_label){ "cluster_id", s, 0 };
	if (cluster && pgoff_get_int64(cluster, "owner", &owner))
		labels[n++] = (struct pprof_label){ "owner", NULL, owner };
	if (cluster && json_object_object_get_ex(cluster, "container", &ct) &&
	    json_object_is_type(ct, json_type_object)) {
		if (pgoff_get_string(ct, "id", &s))
			labels[n++] = (struct pprof_label){ "container", s, 0 };
		if (pgoff_get_string(ct, "pod_uid", &s))
			labels[n++] = (struct pprof_label){ "pod_uid", s, 0 };
	}
	if (event_is_idle(ev))
		labels[n++] = (struct pprof_label){ "idle", "true", 0 };
	if (pgoff_get_int64(ev, "pid", &pid))
		labels[n++] = (struct pprof_label){ "pid", NULL, pid };
	return pprof_add(p, f.frames, f.n, labels, n, f.ns);
}
