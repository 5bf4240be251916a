/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event_frames.h - an offcpu event as a sample of a flame graph or a
 * pprof profile: the frames flame draws (the statement with --by query,
 * the PostgreSQL wait, the kernel wait type, PostgreSQL's own frames
 * with --user-stack, the kernel stack, outermost first) and, for pprof,
 * labels in PostgreSQL's terms. Shared by pgoffctl flame and
 * pgoff_exporter's profile endpoint, so that both draw the same.
 */
#ifndef PGOFF_EVENT_FRAMES_H
#define PGOFF_EVENT_FRAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "client/flame.h"
#include "client/pprof.h"

struct event_frames {
	const char *frames[FLAME_MAX_DEPTH];	/* outermost first; borrowed
						 * from the event or below */
	size_t n;
	uint64_t ns;				/* duration_ns */
	char root[200], kind[40], query[64];
};

/* ev's frames into f; false when ev is no sample (no duration_ns). f
 * borrows from ev: it is valid while ev is. */
bool event_frames(json_object *ev, bool user, bool by_query,
		  struct event_frames *f);
/* Idle time (as top leaves it out): the event says "idle": true. */
bool event_is_idle(json_object *ev);
/*
 * ev as one sample of p: its frames, and the labels wait_event_type,
 * wait_event, wait, backend_type, database, cluster (the data
 * directory), cluster_id, container, pod_uid, query_id, idle where the
 * event has them, and pid and owner (numbers). Returns 0 (also for an event that is no sample), or what
 * pprof_add returns.
 */
int event_pprof_add(struct pprof *p, json_object *ev, bool user, bool by_query);

#endif
