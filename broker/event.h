/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event.h - one kernel record becomes one "offcpu" event: symbolized,
 * classified and told in PostgreSQL's terms, encoded once as a JSON line
 * that every matching subscriber gets.
 */
#ifndef PGOFF_EVENT_H
#define PGOFF_EVENT_H

#include <stdint.h>
#include <json-c/json.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/classify.h"

struct ksyms;
struct pg_registry;

struct event_ctx {
	const struct ksyms *ksyms;
	struct pg_registry *registry;
	uint64_t seq;			/* last sequence number given out */
};

/* What subscriptions filter on, next to the encoded event. */
struct event_meta {
	uint32_t tgid;
	uint64_t duration_ns;
	enum pgoff_wait wait;
};

/* Returns the event object (the caller puts it) and fills meta. */
json_object *event_encode(struct event_ctx *ctx, const struct pgoff_record *r,
			  struct event_meta *meta);

/* RFC 3339 UTC with microseconds of a CLOCK_MONOTONIC timestamp. */
void event_format_time(uint64_t mono_ns, char *buf, size_t len);

#endif
