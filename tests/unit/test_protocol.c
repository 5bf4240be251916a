// SPDX-License-Identifier: GPL-2.0-only
/* Request decoding as a table: request line -> expected error code. */
#include <errno.h>
#include <unistd.h>
#include "protocol/protocol.h"
#include "common/linebuf.h"
#include "tests/unit/check.h"

/* 128 bytes: one more than a name may have */
#define LONG_NAME "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" \
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct {
	const char *line;
	const char *code;	/* NULL: accepted */
} cases[] = {
	{ "{\"op\":\"hello\",\"version\":1}", NULL },
	{ "{\"op\":\"hello\",\"version\":1,\"id\":7,\"extra\":\"ignored\"}", NULL },
	{ "{\"op\":\"status\"}", NULL },
	{ "{\"op\":\"subscribe\",\"pids\":[1,4194304],\"min_duration_ns\":0}", NULL },
	{ "  {\"op\":\"status\"}\r", NULL },
	{ "{\"op\":\"ps\"}", NULL },
	{ "{\"op\":\"subscribe\",\"types\":[\"lock\",\"io\"],\"pg_waits\":[\"Lock:advisory\"],"
	  "\"databases\":[\"shop\"],\"backend_types\":[\"client backend\"]}", NULL },
	{ "{\"op\":\"subscribe\",\"view\":\"both\",\"user_stack\":true}", NULL },
	{ "{\"op\":\"subscribe\",\"user_stack\":1}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"types\":\"lock\"}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"types\":[1]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"databases\":[\"\"]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"databases\":[\"a\\u0000b\"]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"databases\":[\"" LONG_NAME "\"]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"pg_waits\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
	  "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}", PGOFF_ERR_LIMIT },
	{ "", PGOFF_ERR_BAD_JSON },
	{ "{", PGOFF_ERR_BAD_JSON },
	{ "{\"op\":\"status\"} {}", PGOFF_ERR_BAD_JSON },
	{ "[]", PGOFF_ERR_BAD_JSON },
	{ "\"op\"", PGOFF_ERR_BAD_JSON },
	{ "{'op':'status'}", PGOFF_ERR_BAD_JSON },
	{ "{\"op\":\"st\xff\"}", PGOFF_ERR_BAD_JSON },
	{ "{\"a\":[[[[[[[[[[1]]]]]]]]]]}", PGOFF_ERR_BAD_JSON },
	{ "{}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":7}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"fly\"}", PGOFF_ERR_UNKNOWN_OP },
	{ "{\"op\":\"hello\"}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"hello\",\"version\":\"1\"}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"hello\",\"version\":1.0}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"status\",\"id\":-1}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"status\",\"id\":true}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"pids\":[0]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"pids\":[4194305]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"pids\":[\"12\"]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"pids\":12}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"pids\":[NaN]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"min_duration_ns\":-1}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"min_duration_ns\":1e400}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"min_duration_ns\":99999999999999999999}",
	  PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"min_duration_ns\":86400000000001}",
	  PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"stats\",\"since_ns\":1,\"until_ns\":2}", NULL },
	{ "{\"op\":\"stats\",\"by\":\"query\"}", NULL },
	{ "{\"op\":\"stats\",\"by\":\"queries\"}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"subscribe\",\"query_ids\":[\"-42\",\"7\"]}", NULL },
	{ "{\"op\":\"subscribe\",\"query_ids\":[-42]}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"stats\",\"by\":\"labels\",\"since_ns\":0}", NULL },
	{ "{\"op\":\"stats\",\"since_ns\":5,\"until_ns\":5}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"stats\",\"until_ns\":5}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"stats\",\"since_ns\":-1}", PGOFF_ERR_BAD_REQUEST },
	{ "{\"op\":\"stats\",\"since_ns\":\"1h\"}", PGOFF_ERR_BAD_REQUEST },
};

static void test_decode_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pgoff_request req;
		struct pgoff_error err = { 0 };
		int ret = pgoff_request_decode(cases[i].line,
					       strlen(cases[i].line), &req, &err);

		if (!cases[i].code) {
			if (ret)
				fprintf(stderr, "case %zu: %s\n", i, err.message);
			CHECK(ret == 0);
		} else {
			if (ret == 0 || strcmp(err.code, cases[i].code))
				fprintf(stderr, "case %zu: got %s, want %s\n", i,
					ret ? err.code : "ok", cases[i].code);
			CHECK(ret == -EINVAL);
			CHECK_STR(err.code, cases[i].code);
		}
	}
}

/* The past in a stats request: encoded and decoded alike. */
static void test_roundtrip_stats_since(void)
{
	struct pgoff_request in = { .op = PGOFF_OP_STATS }, out;
	struct pgoff_error err;
	json_object *obj;
	const char *line;

	in.stats.by = PGOFF_STATS_BY_LABELS;
	in.stats.has_since = true;
	in.stats.since_ns = 1796398013130304067LL;
	in.stats.until_ns = 1796398073130304067LL;
	obj = pgoff_request_encode(&in);
	line = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	CHECK(pgoff_request_decode(line, strlen(line), &out, &err) == 0);
	json_object_put(obj);
	CHECK(out.op == PGOFF_OP_STATS && out.stats.by == PGOFF_STATS_BY_LABELS);
	CHECK(out.stats.has_since && out.stats.since_ns == in.stats.since_ns);
	CHECK(out.stats.until_ns == in.stats.until_ns);
}

static void test_too_many_pids(void)
{
	char line[1024] = "{\"op\":\"subscribe\",\"pids\":[1";
	struct pgoff_request req;
	struct pgoff_error err;

	for (int i = 0; i < PGOFF_MAX_FILTER_PIDS; i++)
		strcat(line, ",2");
	strcat(line, "]}");
	CHECK(pgoff_request_decode(line, strlen(line), &req, &err) == -EINVAL);
	CHECK_STR(err.code, PGOFF_ERR_LIMIT);
}

static void test_roundtrip_subscribe(void)
{
	struct pgoff_request in = { .op = PGOFF_OP_SUBSCRIBE, .has_id = true,
				    .id = 42 }, out;
	struct pgoff_error err;
	json_object *obj;
	const char *line;
	size_t len;

	in.subscribe.pids[0] = 4242;
	in.subscribe.pids[1] = 17;
	in.subscribe.npids = 2;
	in.subscribe.min_duration_ns = 5000000;
	strcpy(in.subscribe.types.v[0], "lock");
	strcpy(in.subscribe.types.v[1], "io");
	in.subscribe.types.n = 2;
	strcpy(in.subscribe.pg_waits.v[0], "Lock:transactionid");
	in.subscribe.pg_waits.n = 1;
	strcpy(in.subscribe.databases.v[0], "caf\xc3\xa9");
	in.subscribe.databases.n = 1;
	strcpy(in.subscribe.backend_types.v[0], "client backend");
	in.subscribe.backend_types.n = 1;
	in.subscribe.user_stack = true;
	strcpy(in.subscribe.containers.v[0], "3f1c2b9a8e7d");
	in.subscribe.containers.n = 1;
	obj = pgoff_request_encode(&in);
	line = pgoff_json_line(obj, &len);
	CHECK(pgoff_request_decode(line, len, &out, &err) == 0);
	json_object_put(obj);
	CHECK(out.op == PGOFF_OP_SUBSCRIBE && out.has_id && out.id == 42);
	CHECK(out.subscribe.npids == 2 && out.subscribe.pids[0] == 4242 &&
	      out.subscribe.pids[1] == 17);
	CHECK(out.subscribe.min_duration_ns == 5000000);
	CHECK(out.subscribe.types.n == 2);
	CHECK_STR(out.subscribe.types.v[1], "io");
	CHECK(out.subscribe.pg_waits.n == 1);
	CHECK_STR(out.subscribe.pg_waits.v[0], "Lock:transactionid");
	CHECK(out.subscribe.databases.n == 1);
	CHECK_STR(out.subscribe.databases.v[0], "caf\xc3\xa9");
	CHECK_STR(out.subscribe.backend_types.v[0], "client backend");
	CHECK(out.subscribe.user_stack);
	CHECK(out.subscribe.containers.n == 1);
	CHECK_STR(out.subscribe.containers.v[0], "3f1c2b9a8e7d");
}

static void test_id_echoed_on_error(void)
{
	const char *line = "{\"op\":\"nope\",\"id\":9}";
	struct pgoff_request req;
	struct pgoff_error err;
	json_object *reply;

	CHECK(pgoff_request_decode(line, strlen(line), &req, &err) == -EINVAL);
	CHECK(req.has_id && req.id == 9);
	reply = pgoff_reply_error(&req, err.code, err.message);
	CHECK_STR(pgoff_json_line(reply, NULL),
		  "{\"id\":9,\"ok\":false,\"error\":{\"code\":\"unknown_op\","
		  "\"message\":\"unknown op \\\"nope\\\"\"}}");
	CHECK(pgoff_reply_check(reply, &err) == -EPROTO);
	CHECK_STR(err.code, PGOFF_ERR_UNKNOWN_OP);
	json_object_put(reply);
}

static void test_linebuf_framing(void)
{
	struct linebuf lb;
	int fds[2];
	char *line;
	size_t len;

	CHECK(pipe(fds) == 0);
	CHECK(linebuf_init(&lb, 16) == 0);
	CHECK(!linebuf_has_line(&lb));
	CHECK(write(fds[1], "ab\ncd", 5) == 5);
	CHECK(linebuf_fill(&lb, fds[0]) == 5);
	CHECK(linebuf_has_line(&lb));
	CHECK(linebuf_next(&lb, &line, &len) == 1);
	CHECK_STR(line, "ab");
	CHECK(!linebuf_has_line(&lb));			/* "cd" is partial */
	CHECK(linebuf_next(&lb, &line, &len) == 0);
	CHECK(write(fds[1], "e\n0123456789abcdefgh", 20) == 20);
	CHECK(linebuf_fill(&lb, fds[0]) > 0);
	CHECK(linebuf_next(&lb, &line, &len) == 1);
	CHECK_STR(line, "cde");
	CHECK(linebuf_fill(&lb, fds[0]) > 0);
	CHECK(linebuf_next(&lb, &line, &len) == -EMSGSIZE);
	linebuf_free(&lb);
	close(fds[0]);
	close(fds[1]);
}

/* What watch --json may print unparsed: events, whole, printable. */
static void test_event_line(void)
{
	static const struct {
		const char *line;
		bool event;
	} lines[] = {
		{ "{\"type\":\"offcpu\",\"seq\":1}", true },
		{ "{\"type\":\"episode\",\"seq\":2,\"pg\":{\"user\":\"j\u00f6rg\"}}", true },
		{ "{\"type\":\"offcpu\",\"comm\":\"caf\xc3\xa9\"}", true },
		/* notices and replies are parsed */
		{ "{\"type\":\"dropped\",\"count\":3}", false },
		{ "{\"id\":1,\"ok\":true}", false },
		/* another member first, or spaces: parsed, not trusted */
		{ "{\"seq\":1,\"type\":\"offcpu\"}", false },
		{ "{ \"type\":\"offcpu\",\"seq\":1}", false },
		/* a head alone, or cut */
		{ "{\"type\":\"offcpu\",", false },
		{ "{\"type\":\"offcpu\",\"seq\":1", false },
		/* nothing a terminal would act on, nothing malformed */
		{ "{\"type\":\"offcpu\",\"comm\":\"\x1b]0;x\x07\"}", false },
		{ "{\"type\":\"offcpu\",\"comm\":\"\x7f\"}", false },
		{ "{\"type\":\"offcpu\",\"comm\":\"\xc3\"}", false },
		{ "{\"type\":\"offcpu\",\"comm\":\"\xed\xa0\x80\"}", false },
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		const char *l = lines[i].line;

		if (pgoff_is_event_line(l, strlen(l)) != lines[i].event)
			fprintf(stderr, "case %zu: %s\n", i, l);
		CHECK(pgoff_is_event_line(l, strlen(l)) == lines[i].event);
	}
	/* a NUL inside is not printable either */
	CHECK(!pgoff_is_event_line("{\"type\":\"offcpu\",\"a\":\"\0\"}", 26));
}

int main(void)
{
	RUN(test_decode_table);
	RUN(test_too_many_pids);
	RUN(test_roundtrip_stats_since);
	RUN(test_roundtrip_subscribe);
	RUN(test_id_echoed_on_error);
	RUN(test_linebuf_framing);
	RUN(test_event_line);
	return CHECK_DONE();
}
