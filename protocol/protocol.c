// SPDX-License-Identifier: GPL-2.0-only
/* protocol.c - encode and decode protocol v1 messages; see protocol.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "protocol/protocol.h"
#include "common/utf8.h"

static int fail(struct pgoff_error *err, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct pgoff_error *err, const char *code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

json_object *pgoff_parse_line(const char *line, size_t len, int depth,
			      struct pgoff_error *err)
{
	struct json_tokener *tok;
	json_object *obj;
	enum json_tokener_error jerr;
	size_t end;

	if (len > PGOFF_MAX_LINE) {
		fail(err, PGOFF_ERR_LINE_TOO_LONG, "line longer than %d bytes",
		     PGOFF_MAX_LINE);
		return NULL;
	}
	tok = json_tokener_new_ex(depth);
	if (!tok) {
		fail(err, PGOFF_ERR_BAD_JSON, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
				    JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);

	if (!obj || jerr != json_tokener_success) {
		/* json_tokener_continue: the line ended inside a value */
		fail(err, PGOFF_ERR_BAD_JSON, "invalid JSON: %s",
		     jerr == json_tokener_continue ?
			     "incomplete" : json_tokener_error_desc(jerr));
		json_object_put(obj);
		return NULL;
	}
	while (end < len && (line[end] == ' ' || line[end] == '\t' ||
			     line[end] == '\r'))
		end++;
	if (end != len) {
		fail(err, PGOFF_ERR_BAD_JSON,
		     "unexpected data after the JSON object at byte %zu", end);
		json_object_put(obj);
		return NULL;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		fail(err, PGOFF_ERR_BAD_JSON, "a line must be a JSON object");
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

bool pgoff_get_int64(json_object *obj, const char *key, int64_t *out)
{
	json_object *v;

	/* json-c would convert strings, doubles and booleans: refuse them. */
	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

bool pgoff_get_string(json_object *obj, const char *key, const char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return false;
	*out = json_object_get_string(v);
	return true;
}

/*
 * An integer field in [min, max]. json-c clamps overflowing literals to
 * INT64_MIN/MAX, so max < INT64_MAX also rejects those.
 */
static int get_ranged(json_object *obj, const char *key, int64_t min,
		      int64_t max, bool required, int64_t *out,
		      struct pgoff_error *err)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v)) {
		if (required)
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "missing field \"%s\"", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "field \"%s\" must be an integer", key);
	*out = json_object_get_int64(v);
	if (*out < min || *out > max)
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "field \"%s\" must be in [%lld, %lld]", key,
			    (long long)min, (long long)max);
	return 0;
}

/* An optional array of non-empty strings, each shorter than PGOFF_MAX_NAME. */
static int get_names(json_object *obj, const char *key, struct pgoff_names *out,
		     struct pgoff_error *err)
{
	json_object *arr;
	size_t n;

	out->n = 0;
	if (!json_object_object_get_ex(obj, key, &arr))
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "field \"%s\" must be an array of strings", key);
	n = json_object_array_length(arr);
	if (n > PGOFF_MAX_FILTER_NAMES)
		return fail(err, PGOFF_ERR_LIMIT,
			    "at most %d entries in \"%s\"",
			    PGOFF_MAX_FILTER_NAMES, key);
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);
		const char *s;
		size_t len;

		if (!json_object_is_type(v, json_type_string))
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "%s[%zu] must be a string", key, i);
		s = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (len == 0 || len >= PGOFF_MAX_NAME || strlen(s) != len)
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "%s[%zu] must be 1 to %d bytes, without NUL",
				    key, i, PGOFF_MAX_NAME - 1);
		memcpy(out->v[i], s, len + 1);
	}
	out->n = n;
	return 0;
}

static int decode_subscribe(json_object *obj, struct pgoff_filter *f,
			    struct pgoff_error *err)
{
	json_object *pids, *us;
	int64_t min = 0;
	size_t i, n;

	memset(f, 0, sizeof(*f));
	if (get_ranged(obj, "min_duration_ns", 0, PGOFF_MAX_DURATION_NS, false,
		       &min, err))
		return -EINVAL;
	f->min_duration_ns = (uint64_t)min;
	if (json_object_object_get_ex(obj, "since_ns", NULL)) {
		if (get_ranged(obj, "since_ns", 0, INT64_MAX, true,
			       &f->since_ns, err))
			return -EINVAL;
		f->has_since = true;
	}
	if (json_object_object_get_ex(obj, "user_stack", &us)) {
		if (!json_object_is_type(us, json_type_boolean))
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "field \"user_stack\" must be true or false");
		f->user_stack = json_object_get_boolean(us);
	}
	if (json_object_object_get_ex(obj, "resume_seq", NULL)) {
		if (f->has_since)
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "\"since_ns\" and \"resume_seq\" do not go "
				    "together");
		if (get_ranged(obj, "resume_seq", 0, INT64_MAX - 1, true,
			       &f->resume_seq, err))
			return -EINVAL;
		f->has_resume = true;
	}
	if (json_object_object_get_ex(obj, "view", NULL)) {
		const char *view = "";

		pgoff_get_string(obj, "view", &view);
		if (strcmp(view, "intervals") == 0)
			f->view = PGOFF_VIEW_INTERVALS;
		else if (strcmp(view, "waits") == 0)
			f->view = PGOFF_VIEW_WAITS;
		else if (strcmp(view, "both") == 0)
			f->view = PGOFF_VIEW_BOTH;
		else
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "field \"view\" must be \"intervals\", "
				    "\"waits\" or \"both\"");
	}
	if (get_names(obj, "types", &f->types, err) ||
	    get_names(obj, "pg_waits", &f->pg_waits, err) ||
	    get_names(obj, "databases", &f->databases, err) ||
	    get_names(obj, "backend_types", &f->backend_types, err) ||
	    get_names(obj, "query_ids", &f->query_ids, err) ||
	    get_names(obj, "containers", &f->containers, err))
		return -EINVAL;
	if (!json_object_object_get_ex(obj, "pids", &pids))
		return 0;
	if (!json_object_is_type(pids, json_type_array))
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "field \"pids\" must be an array of integers");
	n = json_object_array_length(pids);
	if (n > PGOFF_MAX_FILTER_PIDS)
		return fail(err, PGOFF_ERR_LIMIT,
			    "at most %d pids in one subscription",
			    PGOFF_MAX_FILTER_PIDS);
	for (i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(pids, i);
		int64_t pid;

		if (!json_object_is_type(p, json_type_int))
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "pids[%zu] must be an integer", i);
		pid = json_object_get_int64(p);
		if (pid < 1 || pid > PGOFF_PID_MAX)
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "pids[%zu] must be in [1, %d]", i,
				    PGOFF_PID_MAX);
		f->pids[i] = (uint32_t)pid;
	}
	f->npids = n;
	return 0;
}

/* "by": "pid" (default) or "labels"; since_ns and until_ns: the past. */
static int decode_stats(json_object *obj, struct pgoff_request *req,
			struct pgoff_error *err)
{
	enum pgoff_stats_by *by = &req->stats.by;
	const char *v;

	*by = PGOFF_STATS_BY_PID;
	if (json_object_object_get_ex(obj, "since_ns", NULL)) {
		if (get_ranged(obj, "since_ns", 0, INT64_MAX - 1, true,
			       &req->stats.since_ns, err) ||
		    get_ranged(obj, "until_ns", 0, INT64_MAX - 1, false,
			       &req->stats.until_ns, err))
			return -EINVAL;
		if (req->stats.until_ns &&
		    req->stats.until_ns <= req->stats.since_ns)
			return fail(err, PGOFF_ERR_BAD_REQUEST,
				    "\"until_ns\" must be after \"since_ns\"");
		req->stats.has_since = true;
	} else if (json_object_object_get_ex(obj, "until_ns", NULL)) {
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "\"until_ns\" needs \"since_ns\"");
	}
	if (!json_object_object_get_ex(obj, "by", NULL))
		return 0;
	if (!pgoff_get_string(obj, "by", &v))
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "\"by\" must be a string");
	if (strcmp(v, "labels") == 0)
		*by = PGOFF_STATS_BY_LABELS;
	else if (strcmp(v, "query") == 0)
		*by = PGOFF_STATS_BY_QUERY;
	else if (strcmp(v, "pid") != 0)
		return fail(err, PGOFF_ERR_BAD_REQUEST,
			    "\"by\" must be \"pid\", \"labels\" or \"query\"");
	return 0;
}

bool pgoff_is_event_line(const char *line, size_t len)
{
	static const char *const heads[] = { "{\"type\":\"offcpu\",",
					     "{\"type\":\"episode\"," };

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		size_t n = strlen(heads[i]);

		if (len > n && memcmp(line, heads[i], n) == 0 &&
		    line[len - 1] == '}')
			return pgoff_utf8_printable(line, len);
	}
	return false;
}

int pgoff_request_decode(const char *line, size_t len,
			 struct pgoff_request *req, struct pgoff_error *err)
{
	json_object *obj;
	const char *op;
	int ret = 0;

	memset(req, 0, sizeof(*req));
	obj = pgoff_parse_line(line, len, PGOFF_JSON_DEPTH, err);
	if (!obj)
		return -EINVAL;
	/* The id first, so that even a rejected request is answered by id. */
	if (json_object_object_get_ex(obj, "id", NULL)) {
		if (get_ranged(obj, "id", 0, INT64_MAX - 1, true, &req->id,
			       err)) {
			ret = -EINVAL;
			goto out;
		}
		req->has_id = true;
	}
	if (!pgoff_get_string(obj, "op", &op)) {
		ret = fail(err, PGOFF_ERR_BAD_REQUEST,
			   "missing string field \"op\"");
		goto out;
	}
	if (strcmp(op, "hello") == 0) {
		req->op = PGOFF_OP_HELLO;
		ret = get_ranged(obj, "version", 1, 1000000, true,
				 &req->hello.version, err);
	} else if (strcmp(op, "status") == 0) {
		req->op = PGOFF_OP_STATUS;
	} else if (strcmp(op, "ps") == 0) {
		req->op = PGOFF_OP_PS;
	} else if (strcmp(op, "subscribe") == 0) {
		req->op = PGOFF_OP_SUBSCRIBE;
		ret = decode_subscribe(obj, &req->subscribe, err);
	} else if (strcmp(op, "history") == 0) {
		req->op = PGOFF_OP_HISTORY;
	} else if (strcmp(op, "stats") == 0) {
		req->op = PGOFF_OP_STATS;
		ret = decode_stats(obj, req, err);
	} else {
		ret = fail(err, PGOFF_ERR_UNKNOWN_OP, "unknown op \"%.40s\"",
			   op);
	}
out:
	json_object_put(obj);
	return ret;
}

static const char *const op_names[] = {
	[PGOFF_OP_HELLO] = "hello",
	[PGOFF_OP_STATUS] = "status",
	[PGOFF_OP_SUBSCRIBE] = "subscribe",
	[PGOFF_OP_PS] = "ps",
	[PGOFF_OP_STATS] = "stats",
	[PGOFF_OP_HISTORY] = "history",
};

const char *pgoff_stats_by_name(enum pgoff_stats_by by)
{
	return by == PGOFF_STATS_BY_LABELS ? "labels" :
	       by == PGOFF_STATS_BY_QUERY ? "query" : "pid";
}

const char *pgoff_view_name(enum pgoff_view v)
{
	return v == PGOFF_VIEW_WAITS ? "waits" :
	       v == PGOFF_VIEW_BOTH ? "both" : "intervals";
}

static void put_names(json_object *obj, const char *key,
		      const struct pgoff_names *names)
{
	json_object *arr;

	if (!names->n)
		return;
	arr = json_object_new_array();
	for (size_t i = 0; i < names->n; i++)
		json_object_array_add(arr, json_object_new_string(names->v[i]));
	json_object_object_add(obj, key, arr);
}

json_object *pgoff_request_encode(const struct pgoff_request *req)
{
	json_object *obj = json_object_new_object();
	const struct pgoff_filter *f = &req->subscribe;

	json_object_object_add(obj, "op",
			       json_object_new_string(op_names[req->op]));
	if (req->has_id)
		json_object_object_add(obj, "id",
				       json_object_new_int64(req->id));
	switch (req->op) {
	case PGOFF_OP_HELLO:
		json_object_object_add(obj, "version",
				       json_object_new_int64(req->hello.version));
		break;
	case PGOFF_OP_SUBSCRIBE:
		if (f->npids) {
			json_object *pids = json_object_new_array();

			for (size_t i = 0; i < f->npids; i++)
				json_object_array_add(pids,
					json_object_new_int64(f->pids[i]));
			json_object_object_add(obj, "pids", pids);
		}
		json_object_object_add(obj, "min_duration_ns",
			json_object_new_int64((int64_t)f->min_duration_ns));
		json_object_object_add(obj, "view", json_object_new_string(
			pgoff_view_name(f->view)));
		put_names(obj, "types", &f->types);
		put_names(obj, "pg_waits", &f->pg_waits);
		put_names(obj, "databases", &f->databases);
		put_names(obj, "backend_types", &f->backend_types);
		put_names(obj, "query_ids", &f->query_ids);
		put_names(obj, "containers", &f->containers);
		if (f->user_stack)
			json_object_object_add(obj, "user_stack",
					       json_object_new_boolean(1));
		if (f->has_since)
			json_object_object_add(obj, "since_ns",
				json_object_new_int64(f->since_ns));
		if (f->has_resume)
			json_object_object_add(obj, "resume_seq",
				json_object_new_int64(f->resume_seq));
		break;
	case PGOFF_OP_STATS:
		json_object_object_add(obj, "by", json_object_new_string(
			pgoff_stats_by_name(req->stats.by)));
		if (req->stats.has_since)
			json_object_object_add(obj, "since_ns",
				json_object_new_int64(req->stats.since_ns));
		if (req->stats.has_since && req->stats.until_ns)
			json_object_object_add(obj, "until_ns",
				json_object_new_int64(req->stats.until_ns));
		break;
	case PGOFF_OP_STATUS:
	case PGOFF_OP_PS:
	case PGOFF_OP_HISTORY:
		break;
	}
	return obj;
}

static json_object *reply_base(const struct pgoff_request *req, bool ok)
{
	json_object *obj = json_object_new_object();

	if (req && req->has_id)
		json_object_object_add(obj, "id",
				       json_object_new_int64(req->id));
	json_object_object_add(obj, "ok", json_object_new_boolean(ok));
	return obj;
}

json_object *pgoff_reply_ok(const struct pgoff_request *req)
{
	return reply_base(req, true);
}

json_object *pgoff_reply_error(const struct pgoff_request *req,
			       const char *code, const char *message)
{
	json_object *obj = reply_base(req, false);
	json_object *e = json_object_new_object();

	json_object_object_add(e, "code", json_object_new_string(code));
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(obj, "error", e);
	return obj;
}

static const char *const known_codes[] = {
	PGOFF_ERR_BAD_JSON, PGOFF_ERR_BAD_REQUEST, PGOFF_ERR_UNKNOWN_OP,
	PGOFF_ERR_VERSION, PGOFF_ERR_NEED_HELLO, PGOFF_ERR_LINE_TOO_LONG,
	PGOFF_ERR_FORBIDDEN, PGOFF_ERR_TOO_MANY, PGOFF_ERR_LIMIT, PGOFF_ERR_BUSY,
};

int pgoff_reply_check(json_object *reply, struct pgoff_error *err)
{
	json_object *ok, *e;
	const char *code = "unknown", *message = "no message";

	if (json_object_object_get_ex(reply, "ok", &ok) &&
	    json_object_is_type(ok, json_type_boolean) &&
	    json_object_get_boolean(ok))
		return 0;
	if (json_object_object_get_ex(reply, "error", &e)) {
		pgoff_get_string(e, "code", &code);
		pgoff_get_string(e, "message", &message);
	}
	/* The reply's strings die with it: map the code onto ours. */
	err->code = PGOFF_ERR_BAD_REQUEST;
	for (size_t i = 0; i < sizeof(known_codes) / sizeof(known_codes[0]); i++)
		if (strcmp(code, known_codes[i]) == 0)
			err->code = known_codes[i];
	snprintf(err->message, sizeof(err->message), "%s (%s)", message, code);
	return -EPROTO;
}

const char *pgoff_json_line(json_object *obj, size_t *len)
{
	return json_object_to_json_string_length(obj,
		JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}
