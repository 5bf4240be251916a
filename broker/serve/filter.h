/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * filter.h - subscription filters: checked and compiled from a request,
 * matched against each event in pgoffd, and merged over all live
 * subscriptions into the one conservative filter the kernel applies
 * (the kernel may pass more than a subscription wants; never less).
 */
#ifndef PGOFF_FILTER_H
#define PGOFF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/classify.h"
#include "broker/priv/pg_shmem_names.h"
#include "protocol/protocol.h"

/* One --pg-wait entry: a class, and an event name or every event. */
struct pg_wait_match {
	int pg_class;				/* PG_CLASS_* */
	const char *event;			/* static spelling; NULL: every event
						 * (or run_event) */
	/* a name of a class whose names a server may make up at run time
	 * (Extension, InjectionPoint, LWLock tranches), as given */
	char run_event[PG_RUN_NAME_LEN];
};

struct filter {
	enum pgoff_view view;
	uint64_t min_duration_ns;		/* floor already applied */
	uint64_t requested_min_ns;		/* as asked, before the floor */
	uint32_t pids[PGOFF_MAX_FILTER_PIDS];	/* none: every process */
	size_t npids;
	uint32_t waits;				/* bit per enum pgoff_wait; 0: every wait */
	struct pg_wait_match pg_waits[PGOFF_MAX_FILTER_NAMES];
	size_t npg_waits;
	struct pgoff_names databases;
	struct pgoff_names backend_types;
	uint64_t query_ids[PGOFF_MAX_FILTER_NAMES];	/* none: any statement */
	size_t nquery_ids;
	struct pgoff_names containers;		/* id prefixes; none: anywhere */
	bool user_stack;			/* its "offcpu" events want user stacks */
};

/* What filters look at, for one event (strings borrowed for the call). */
struct event_meta {
	bool episode;				/* an "episode", else an "offcpu" */
	uint64_t seq;				/* its line's "seq" */
	bool stored;				/* added to the flight record */
	uint32_t tgid;
	uint64_t duration_ns;
	enum pgoff_wait wait;
	bool has_pg_wait;			/* wait_event_info was read */
	uint32_t pg_wait_event_info;
	const char *pg_wait_event;		/* a table's spelling, or NULL */
	const char *database;			/* NULL: unknown */
	const char *backend_type;		/* NULL: unknown */
	uint64_t query_id;			/* 0: none */
	const char *container;			/* its cluster's; NULL: the host */
	bool has_owner;				/* its cluster is known: */
	uint32_t owner;				/* the user answerable for it:
						 * info.account_uid */
};

/*
 * Check the request's names (an unknown wait type, PostgreSQL wait class
 * or event is a bad_request naming it) and compile them. floor_ns is the
 * broker's lowest threshold. Returns 0, or -EINVAL with err filled.
 */
int filter_compile(const struct pgoff_filter *req, uint64_t floor_ns,
		   struct filter *out, struct pgoff_error *err);
bool filter_match(const struct filter *f, const struct event_meta *m);
/* The broker's floor changed: min_duration_ns = max(requested, floor). */
void filter_set_floor(struct filter *f, uint64_t floor_ns);

/* The union of live filters as the kernel applies it (see offcpu.bpf.c). */
struct kernel_filter {
	uint64_t min_duration_ns;		/* UINT64_MAX: nobody subscribes */
	uint32_t pids[PGOFF_MAX_WATCH_PIDS];
	size_t npids;				/* 0: every process */
	bool all_pids;
	uint32_t cpu;				/* PGOFF_CPU_* */
	bool pg_class_filter;			/* only the classes below */
	uint64_t pg_classes[PGOFF_PG_CLASS_WORDS];	/* see PGOFF_PG_CLASS */
	bool want_query;			/* capture SQL for someone */
	bool want_episodes;			/* someone's view has episodes */
	bool want_pg_intervals;			/* someone's has intervals in PG waits */
	/* merge state */
	bool any;
	bool want_cpu, want_other;		/* some filter takes cpu / non-cpu */
};

void kernel_filter_init(struct kernel_filter *k);
/* Widen k to pass everything f passes; may_see_query: f's owner sees SQL. */
void kernel_filter_add(struct kernel_filter *k, const struct filter *f,
		       bool may_see_query);
/* Finish after the last add: decides cpu; false when nobody subscribed. */
bool kernel_filter_done(struct kernel_filter *k);

#endif
