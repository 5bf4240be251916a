// SPDX-License-Identifier: GPL-2.0-only
/* replay_meta.c - filter fields of a stored event; see replay_meta.h. */
#include <errno.h>
#include <string.h>
#include "broker/kernel/classify.h"
#include "broker/record/replay_meta.h"
#include "protocol/protocol.h"
#include "common/units.h"

int replay_meta(json_object *ev, struct event_meta *m)
{
	const char *type, *wait, *s;
	int64_t pid, dur, info;
	json_object *pg, *cl, *co;

	memset(m, 0, sizeof(*m));
	if (!json_object_is_type(ev, json_type_object) ||
	    !pgoff_get_string(ev, "type", &type) ||
	    !pgoff_get_int64(ev, "pid", &pid) ||
	    !pgoff_get_int64(ev, "duration_ns", &dur) ||
	    !pgoff_get_string(ev, "wait", &wait) || pid < 0 ||
	    pid > PGOFF_PID_MAX || dur < 0)
		return -EINVAL;
	if (strcmp(type, "episode") == 0)
		m->episode = true;
	else if (strcmp(type, "offcpu") != 0)
		return -EINVAL;
	m->tgid = (uint32_t)pid;
	m->duration_ns = (uint64_t)dur;
	m->wait = PGOFF_WAIT__COUNT;
	for (int w = 0; w < PGOFF_WAIT__COUNT; w++)
		if (strcmp(wait, pgoff_wait_name((enum pgoff_wait)w)) == 0)
			m->wait = (enum pgoff_wait)w;
	if (m->wait == PGOFF_WAIT__COUNT)
		return -EINVAL;
	if (!json_object_object_get_ex(ev, "pg", &pg) ||
	    !json_object_is_type(pg, json_type_object))
		return 0;
	if (pgoff_get_int64(pg, "wait_event_info", &info) && info >= 0 &&
	    info <= UINT32_MAX) {
		m->has_pg_wait = true;
		m->pg_wait_event_info = (uint32_t)info;
		if (pgoff_get_string(pg, "wait_event", &s))
			m->pg_wait_event = s;
	}
	if (pgoff_get_string(pg, "database", &s))
		m->database = s;
	if (pgoff_get_string(pg, "backend_type", &s))
		m->backend_type = s;
	if (pgoff_get_string(pg, "query_id", &s) &&
	    pgoff_parse_query_id(s, &m->query_id))
		m->query_id = 0;
	/* (stored before clusters had containers: none) */
	if (json_object_object_get_ex(pg, "cluster", &cl) &&
	    json_object_object_get_ex(cl, "container", &co) &&
	    pgoff_get_string(co, "id", &s))
		m->container = s;
	return 0;
}

/* Take out keys; true if ev had the first. */
static bool take_out(json_object *ev, const char *const *keys, size_t n)
{
	bool had = json_object_object_get_ex(ev, keys[0], NULL);

	for (size_t i = 0; had && i < n; i++)
		json_object_object_del(ev, keys[i]);
	return had;
}

const char *replay_line(json_object *ev, const char *line, size_t *len,
			bool sees_query, bool wants_ustack)
{
	static const char *const sql_keys[] = {
		"query", "query_truncated", "query_error", "query_redacted",
	};
	static const char *const ustack_keys[] = {
		"user_stack", "user_stack_error",
	};
	bool changed = false;

	if (!sees_query)
		changed |= take_out(ev, sql_keys, 4);
	if (!wants_ustack)
		changed |= take_out(ev, ustack_keys, 2);
	return changed ? pgoff_json_line(ev, len) : line;
}
