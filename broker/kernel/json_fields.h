/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json_fields.h - the fields every reply and event is built from: a value
 * or null, text from outside made valid UTF-8, and PostgreSQL's wait event
 * as pg_stat_activity names it. A leaf: json-c, utf8 and the name tables.
 */
#ifndef PGOFF_JSON_FIELDS_H
#define PGOFF_JSON_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "broker/pg/cluster_ident.h"

/* key: v, or null when v is NULL */
void json_add_str(json_object *o, const char *key, const char *v);
void json_add_int(json_object *o, const char *key, int64_t v);
/* A string from outside (titles, comm, SQL) made valid UTF-8, into o. */
void json_add_text(json_object *o, const char *key, const char *v,
		   size_t max);
/*
 * wait_event_info, wait_event_type and wait_event (as pg_stat_activity
 * names them for that major version; null for 0) into o. run_name: the
 * name the cluster's server made for it at run time (pg_names.h), or
 * NULL. Returns the known event name, or NULL.
 */
const char *json_add_pg_wait(json_object *o, int major, uint32_t info,
			     const char *run_name);
/*
 * A cluster's identity: "cluster_id" (null when the cluster is not
 * known), "owner" (its uid) and "container" ({"runtime","id","pod_uid"},
 * what is known of it; absent on the host). The same fields in the same
 * order for writers without json-c objects: json_write_ident (event.c).
 */
void json_add_ident(json_object *o, const struct cluster_ident *id);
/* "query_id": id as PostgreSQL shows it, a string (pgoff_format_query_id) */
void json_add_query_id(json_object *o, uint64_t id);
/*
 * The same wait event's type and name (NULL for 0; a raw id, written into
 * raw, where no name is known), for writers without json-c objects.
 * Returns the known event name, or NULL.
 */
#define PG_WAIT_RAW_LEN	48
const char *pg_wait_labels(int major, uint32_t info, const char *run_name,
			   char *raw, size_t len, const char **type,
			   const char **name);

#endif
