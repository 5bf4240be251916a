// SPDX-License-Identifier: GPL-2.0-only
/* json_fields.c - the JSON fields events and replies share. */
#include <stdio.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/json_fields.h"
#include "broker/pg/pg_wait_names.h"
#include "common/units.h"
#include "common/utf8.h"

void json_add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/* Text from outside (titles, comm, SQL): valid UTF-8 or it is not sent. */
void json_add_text(json_object *o, const char *key, const char *v,
		   size_t max)
{
	char buf[PGOFF_QUERY_MAX];
	size_t n;

	if (max > sizeof(buf) - 1)
		max = sizeof(buf) - 1;
	n = pgoff_utf8_clean(v, max, buf);
	json_object_object_add(o, key, json_object_new_string_len(buf, (int)n));
}

void json_add_int(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

const char *pg_wait_labels(int major, uint32_t info, const char *run_name,
			   char *raw, size_t len, const char **type,
			   const char **name)
{
	*type = pg_wait_event_type(major, info);
	/* a run-time name is never a built-in event's (pg_shmem_names.c):
	 * it replaces a raw id or "extension" */
	*name = run_name ? run_name : pg_wait_event_name(major, info);
	if (!info) {
		*type = *name = NULL;
		return NULL;
	}
	if (!*type || !*name) {
		const char *known = *name;

		/* a raw id only where no name is known */
		snprintf(raw, len, "class 0x%02x id %u", info >> 24,
			 info & 0xffff);
		if (!*type)
			*type = raw;
		if (!*name)
			*name = raw;
		return known;
	}
	return *name;
}

void json_add_ident(json_object *o, const struct cluster_ident *id)
{
	const struct container *c = &id->container;
	json_object *co;

	json_add_str(o, "cluster_id", id->id[0] ? id->id : NULL);
	if (!id->id[0])
		return;
	json_add_int(o, "owner", id->owner);
	if (!c->id[0] && !c->pod_uid[0])
		return;
	co = json_object_new_object();
	if (c->runtime[0])
		json_add_str(co, "runtime", c->runtime);
	if (c->id[0])
		json_add_str(co, "id", c->id);
	if (c->pod_uid[0])
		json_add_str(co, "pod_uid", c->pod_uid);
	json_object_object_add(o, "container", co);
}

/* PostgreSQL's wait event as pg_stat_activity names it, into o. */
void json_add_query_id(json_object *o, uint64_t id)
{
	char buf[PGOFF_QUERY_ID_BUFSZ];

	json_add_str(o, "query_id", pgoff_format_query_id(id, buf, sizeof(buf)));
}

const char *json_add_pg_wait(json_object *o, int major, uint32_t info,
			     const char *run_name)
{
	const char *type, *name, *known;
	char raw[PG_WAIT_RAW_LEN];

	known = pg_wait_labels(major, info, run_name, raw, sizeof(raw), &type,
			       &name);
	json_add_int(o, "wait_event_info", info);
	json_add_str(o, "wait_event_type", type);
	json_add_str(o, "wait_event", name);
	return known;
}
