/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event.h - one kernel record becomes one event: an interval an "offcpu"
 * event, an episode (a PostgreSQL wait whole) an "episode" event. It is
 * resolved once into a struct event (symbolized, classified, told in
 * PostgreSQL's terms), which is then encoded as JSON lines: one plain,
 * and with the SQL and the user stack for subscribers who may see them.
 * Also the ps reply's processes and clusters.
 */
#ifndef PGOFF_EVENT_H
#define PGOFF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <json-c/json.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/classify.h"
#include "broker/serve/filter.h"
#include "broker/kernel/json_writer.h"
#include "broker/pg/usyms.h"

struct ksyms_cache;

struct ksyms;
struct pg_registry;
struct pg_proc;
struct pg_cluster;

/* An event's time: RFC 3339 UTC with microseconds, NUL included (room
 * for any year a uint64_t of ns reaches). */
#define EVENT_TIME_LEN	40
/* The date and time of the last second written. */
struct event_clock {
	time_t sec;
	char date[EVENT_TIME_LEN - 9];	/* "YYYY-MM-DDTHH:MM:SS" */
	size_t date_len;		/* 0: none yet */
};

struct event_ctx {
	const struct ksyms *ksyms;
	struct ksyms_cache *ksyms_cache;	/* NULL: every frame searched */
	struct pg_registry *registry;
	struct usyms *usyms;		/* NULL: user stacks are not named */
	uint64_t seq;			/* last sequence number given out */
	struct event_clock clock;
	/* the lines of the last event: without SQL and user stack, with
	 * the stack, with SQL, with both (PGOFF_MAX_LINE each, once) */
	char *plain, *ustack, *query, *query_ustack;
	char *redacted, *redacted_ustack;	/* with SQL redacted */
	/* the parts the lines are joined from: the plain fields, the user
	 * stack's, the query's (written as text, their memory kept) */
	struct json_writer plain_fields, ustack_fields, query_fields;
	bool want_query;		/* a subscriber may see SQL: encode it */
	bool want_redacted;		/* the recorder keeps SQL redacted */
	bool want_ustack;		/* a subscriber wants user stacks */
};

/* Who ended the (last) off-CPU interval. */
struct event_waker {
	uint32_t pid, tgid;
	const char *comm;		/* PGOFF_COMM_LEN bytes, maybe no NUL */
	bool traced;			/* a traced PostgreSQL process: */
	const struct pg_proc *proc;	/* NULL: not known */
	bool has_pg_wait;		/* its own wait event was read */
	int pg_major;			/* its cluster's; 0: unknown */
	uint32_t pg_wait_event_info;
	const char *pg_run_name;	/* its cluster's run-time name; NULL */
};

/*
 * One kernel record resolved: every label, name, class and frame its
 * line shows, each looked up once. Strings are borrowed: from the
 * record, the kernel symbols, and the registry (until it changes).
 */
struct event {
	bool episode;			/* else an off-CPU interval */
	uint64_t start_ns, end_ns;
	uint32_t pid, tgid;
	const char *comm;		/* PGOFF_COMM_LEN bytes, maybe no NUL */
	uint64_t blocked_ns, runq_ns;
	uint64_t on_cpu_ns;		/* episodes: on a CPU inside the wait */
	uint32_t intervals;		/* episodes: off-CPU intervals merged */
	bool exact;			/* episodes: bounds from PostgreSQL's probes */
	enum pgoff_wait wait;
	enum pgoff_wait kernel_wait;	/* intervals: the kernel stack's view */
	const char *mismatch;		/* intervals: why the views differ; NULL */

	bool has_pg_wait;		/* wait_event_info was read */
	uint32_t pg_wait_event_info;	/* 0 unless has_pg_wait */
	const char *pg_wait_event;	/* its name in the cluster's major; NULL */
	const char *pg_run_name;	/* the cluster's server named it at run
					 * time (pg_names.h): pg_wait_event */
	const char *pg_wait_missing;	/* why it was not read; NULL */
	const char *pg_name_missing;	/* why it has no name; NULL */
	const struct pg_proc *proc;	/* NULL: not known */
	const struct pg_cluster *cluster;	/* NULL: not known */
	/* the backend's status entry: the statement it ran */
	bool status_read;		/* pg_state and query_id were read */
	int pg_state;			/* st_state, raw (status_read) */
	uint64_t query_id;		/* 0: none */
	const char *query_id_missing;	/* why a statement has none; NULL */
	bool idle;			/* idle time, not an active session's */
	bool woken;
	bool runq_unknown;		/* intervals: ended at its wakeup,
					 * its switch-in unseen */
	struct event_waker waker;	/* when woken */

	/* intervals: kernel frames, leaf first, scheduler frames dropped */
	const char *stack[PGOFF_STACK_DEPTH];	/* NULL: no known symbol */
	size_t stack_len;
	const char *stack_error;	/* NULL: walked */

	/* intervals: the user stack, named when the kernel walked it */
	bool ustack_walked;
	char ustack[USYMS_MAX_FRAMES][USYMS_NAME_MAX];
	size_t ustack_len;
	const char *ustack_error;	/* NULL: complete */

	/* intervals: the SQL, or why not; only when query_told */
	bool query_told;		/* the record says what it was, or why not */
	const char *query;		/* NULL: see query_error */
	size_t query_len;
	bool query_truncated;
	const char *query_error;

	char name_why[64];		/* room for pg_name_missing */
	char ustack_why[200];		/* room for ustack_error */
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
	/* with the query's literals as $n (sql_redact.h) and
	 * "query_redacted", when want_redacted; a null query (its
	 * query_error says why) as it is. NULL: not made (memory). */
	const char *with_redacted;
	size_t with_redacted_len;
	const char *with_redacted_ustack;
	size_t with_redacted_ustack_len;
};

/*
 * Resolve a record of size bytes (struct pgoff_record, or struct
 * pgoff_record_query with PGOFF_F_QUERY; a struct pgoff_ustack after
 * either with PGOFF_F_USTACK; or struct pgoff_episode) into e. The
 * registry may read titles. Returns 0, or -EINVAL for a record that is
 * neither.
 */
int event_resolve(struct event_ctx *ctx, const void *data, size_t size,
		  struct event *e);
/* What filters look at; strings borrowed from e. */
void event_meta_of(const struct event *e, struct event_meta *meta);
/* e's lines, with the next sequence number; valid until the next call.
 * 0, or -E2BIG for a line over PGOFF_MAX_LINE, -ENOMEM. */
int event_lines_encode(struct event_ctx *ctx, const struct event *e,
		       struct event_lines *lines);

/*
 * The three above in one: a record resolved, its meta and its lines.
 * lines stay valid until the next call; meta's strings point into the
 * registry, so only until it changes (the next lookup or scan). Returns
 * 0, or -errno.
 */
int event_encode(struct event_ctx *ctx, const void *data, size_t size,
		 struct event_lines *lines, struct event_meta *meta);
void event_ctx_free(struct event_ctx *ctx);

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


#endif
