/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * protocol.h - pgoff wire protocol v1: JSON lines over a Unix stream socket.
 * See protocol/PROTOCOL.md for every message with an example.
 *
 * json-c ownership, once for this whole library: a function returning
 * json_object * gives the caller a reference to json_object_put();
 * json_object_object_add() takes over the reference it is given;
 * getters (json_object_object_get_ex, pgoff_get_*) borrow.
 */
#ifndef PGOFF_PROTOCOL_H
#define PGOFF_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define PGOFF_PROTO_VERSION	1
#define PGOFF_MAX_REQUEST_LINE	4096	/* bytes, newline included */
#define PGOFF_MAX_LINE		262144	/* longest line the broker sends */
#define PGOFF_JSON_DEPTH	8	/* nesting accepted in a request */
#define PGOFF_MAX_FILTER_PIDS	64	/* pids in one subscription */
#define PGOFF_MAX_FILTER_NAMES	16	/* entries in each name list of a filter */
#define PGOFF_MAX_NAME		128	/* bytes of one name, NUL included */
#define PGOFF_MAX_DURATION_NS	(86400ULL * 1000000000ULL)	/* one day */
#define PGOFF_PID_MAX		4194304	/* PID_MAX_LIMIT on 64-bit */

/* Error codes: stable strings that scripts may test. */
#define PGOFF_ERR_BAD_JSON	"bad_json"	/* not one JSON object */
#define PGOFF_ERR_BAD_REQUEST	"bad_request"	/* a field has the wrong type or range */
#define PGOFF_ERR_UNKNOWN_OP	"unknown_op"
#define PGOFF_ERR_VERSION	"unsupported_version"
#define PGOFF_ERR_NEED_HELLO	"hello_required"	/* first request must be hello */
#define PGOFF_ERR_LINE_TOO_LONG	"line_too_long"	/* connection is closed */
#define PGOFF_ERR_FORBIDDEN	"forbidden"	/* connection is closed */
#define PGOFF_ERR_TOO_MANY	"too_many_clients"	/* connection is closed */
#define PGOFF_ERR_LIMIT		"limit_exceeded"
#define PGOFF_ERR_BUSY		"busy"	/* past stats: too many being summed */

/* Causes in {"type":"dropped"} items. */
#define PGOFF_DROP_CLIENT_QUEUE	"client_queue_full"
#define PGOFF_DROP_RINGBUF	"ringbuf_full"
#define PGOFF_DROP_START_MAP	"start_map_full"
#define PGOFF_DROP_EXPIRED	"expired"	/* watch --resume: not stored any more */

enum pgoff_op {
	PGOFF_OP_HELLO,
	PGOFF_OP_STATUS,
	PGOFF_OP_SUBSCRIBE,
	PGOFF_OP_PS,
	PGOFF_OP_STATS,
	PGOFF_OP_HISTORY,
};

/* How a stats reply groups the kernel's aggregation. */
enum pgoff_stats_by {
	PGOFF_STATS_BY_PID = 0,		/* live processes, by pid and wait */
	PGOFF_STATS_BY_LABELS,		/* cluster, database, backend type and
					   wait, including exited processes */
	PGOFF_STATS_BY_QUERY,		/* cluster, database, statement (query
					   id) and wait, exited processes too */
	PGOFF_STATS__BY
};

/* A list of names from a request; empty: no filter on that field. */
struct pgoff_names {
	char v[PGOFF_MAX_FILTER_NAMES][PGOFF_MAX_NAME];
	size_t n;
};

/* What a subscription streams. */
enum pgoff_view {
	PGOFF_VIEW_INTERVALS = 0,	/* every off-CPU interval ("offcpu") */
	PGOFF_VIEW_WAITS,		/* PostgreSQL waits whole ("episode"), and
					   the intervals outside any of them */
	PGOFF_VIEW_BOTH,		/* every interval and every episode */
};

/* A subscription as requested; the broker checks the names' meaning. */
struct pgoff_filter {
	enum pgoff_view view;
	uint32_t pids[PGOFF_MAX_FILTER_PIDS];	/* empty: every traced process */
	size_t npids;
	uint64_t min_duration_ns;
	struct pgoff_names types;		/* "lock", "io", …: the event's wait */
	struct pgoff_names pg_waits;		/* "Lock" or "Lock:transactionid" */
	struct pgoff_names databases;
	struct pgoff_names backend_types;	/* "client backend", … */
	struct pgoff_names query_ids;		/* "-42": as PostgreSQL shows them */
	struct pgoff_names containers;		/* container ids or prefixes of 12+ */
	bool user_stack;			/* "offcpu" events carry user_stack */
	bool has_since;				/* replay the store first */
	int64_t since_ns;			/* wall clock, ns since the epoch */
	bool has_resume;			/* replay what came after a seq */
	int64_t resume_seq;			/* the last seq the client saw */
};

struct pgoff_request {
	enum pgoff_op op;
	bool has_id;
	int64_t id;			/* echoed in the reply */
	union {
		struct {
			int64_t version;
		} hello;
		struct pgoff_filter subscribe;
		struct {
			enum pgoff_stats_by by;
			/* over the past: the recorded seconds that ended in
			 * (since_ns, until_ns], wall clock */
			bool has_since;
			int64_t since_ns, until_ns;	/* until 0: now */
		} stats;
	};
};

struct pgoff_error {
	const char *code;		/* PGOFF_ERR_* */
	char message[200];
};

/*
 * Strictly parse one line (without its newline) into a JSON object:
 * exactly one object, valid UTF-8, depth-limited, nothing after it.
 * Returns NULL and fills err on failure.
 */
json_object *pgoff_parse_line(const char *line, size_t len, int depth,
			      struct pgoff_error *err);

/*
 * Whether a line from the broker is an event ("offcpu" or "episode") that
 * a client may pass on as it came, unparsed: pgoffd writes "type" first,
 * and the line is printable UTF-8 (see pgoff_utf8_printable). Anything
 * else is for pgoff_parse_line.
 */
bool pgoff_is_event_line(const char *line, size_t len);

/* Request line -> struct. Returns 0, or -EINVAL with err filled. */
int pgoff_request_decode(const char *line, size_t len,
			 struct pgoff_request *req, struct pgoff_error *err);
/* Struct -> request object (the client's side). */
json_object *pgoff_request_encode(const struct pgoff_request *req);

/* {"id":…,"ok":true}; the caller adds the operation's fields. */
json_object *pgoff_reply_ok(const struct pgoff_request *req);
/* {"id":…,"ok":false,"error":{"code":…,"message":…}}; req may be NULL. */
json_object *pgoff_reply_error(const struct pgoff_request *req,
			       const char *code, const char *message);
/* Reply object -> 0 when ok, else -EPROTO with err filled from it. */
int pgoff_reply_check(json_object *reply, struct pgoff_error *err);

/* "pid", "labels". */
const char *pgoff_stats_by_name(enum pgoff_stats_by by);

/* "intervals", "waits", "both". */
const char *pgoff_view_name(enum pgoff_view v);

/* Serialize without pretty-printing or escaped slashes; borrowed string. */
const char *pgoff_json_line(json_object *obj, size_t *len);

/* Typed getters that borrow; return false when absent or of another type. */
bool pgoff_get_int64(json_object *obj, const char *key, int64_t *out);
bool pgoff_get_string(json_object *obj, const char *key, const char **out);

#endif
