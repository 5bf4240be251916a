/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event.h - one kernel record becomes one "offcpu" event: symbolized,
 * classified and told in PostgreSQL's terms, encoded once as a JSON line
 * (and once more with the SQL, for subscribers allowed to see it).
 */
#ifndef PGOFF_EVENT_H
#define PGOFF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/classify.h"
#include "broker/filter.h"

struct ksyms;
struct pg_registry;
struct usyms;

struct event_ctx {
	const struct ksyms *ksyms;
	struct pg_registry *registry;
	struct usyms *usyms;		/* NULL: user stacks are not named */
	uint64_t seq;			/* last sequence number given out */
	json_object *last;		/* the encoded event; lines point into it */
	char *plain;			/* copy of the line without SQL */
	char *ustack;			/* copies of the lines with the user */
	char *query;			/* stack, and with SQL but without it */
	bool want_query;		/* a subscriber may see SQL: encode it */
	bool want_ustack;		/* a subscriber wants user stacks */
};

/* One encoded event, in the form without SQL and (maybe) with it. */
struct event_lines {
	const char *plain;
	size_t plain_len;
	const char *with_query;		/* NULL: the event carries no query */
	size_t with_query_len;
	/* the same with user_stack, for subscriptions that asked; NULL:
	 * the event has no user stack */
	const char *with_ustack;
	size_t with_ustack_len;
	const char *with_query_ustack;
	size_t with_query_ustack_len;
};

/*
 * Encode a record of size bytes (struct pgoff_record, or struct
 * pgoff_record_query with PGOFF_F_QUERY; a struct pgoff_ustack after
 * either with PGOFF_F_USTACK). lines stay valid until the next
 * call; meta's strings point into the registry, so only until it changes
 * (the next lookup or scan). Returns 0, or -errno.
 */
int event_encode(struct event_ctx *ctx, const void *data, size_t size,
		 struct event_lines *lines, struct event_meta *meta);
void event_ctx_free(struct event_ctx *ctx);

struct pg_proc;
struct pg_cluster;
/* A traced process for a ps reply: pid, cluster, backend type, db, user. */
json_object *event_encode_proc(const struct pg_proc *p);
/* A cluster: id, data directory, port, version. */
json_object *event_encode_cluster(const struct pg_cluster *c);
/*
 * Why a cluster's wait events have no names (a major version pgoffd has
 * no tables for: 20, a fork), written into buf; NULL when they have.
 */
const char *event_names_missing(const struct pg_cluster *c, char *buf,
				size_t len);

/* A string from outside (titles, comm, SQL) made valid UTF-8, into o. */
void event_add_text(json_object *o, const char *key, const char *v,
		    size_t max);
/*
 * wait_event_info, wait_event_type and wait_event (as pg_stat_activity
 * names them for that major version; null for 0) into o. Returns the
 * known event name, or NULL.
 */
const char *event_add_pg_wait(json_object *o, int major, uint32_t info);

/* RFC 3339 UTC with microseconds of a CLOCK_MONOTONIC timestamp. */
void event_format_time(uint64_t mono_ns, char *buf, size_t len);

#endif
