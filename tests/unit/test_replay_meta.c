/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_replay_meta.c - a stored event line gives back the fields the
 * filters match on, and a replay is filtered as live.
 */
#include "broker/record/replay_meta.h"
#include "tests/unit/check.h"

#include <errno.h>

static json_object *parse(const char *s)
{
	return json_tokener_parse(s);
}

static void test_offcpu(void)
{
	json_object *ev = parse("{\"type\":\"offcpu\",\"seq\":3,\"pid\":42,"
				"\"duration_ns\":12000000,\"wait\":\"lock\","
				"\"pg\":{\"wait_event_info\":50331652,"
				"\"wait_event\":\"transactionid\","
				"\"database\":\"db1\",\"backend_type\":"
				"\"client backend\"}}");
	struct event_meta m;

	CHECK(replay_meta(ev, &m) == 0);
	CHECK(!m.episode && m.tgid == 42 && m.duration_ns == 12000000);
	CHECK(m.wait == PGOFF_WAIT_LOCK && m.has_pg_wait);
	CHECK(m.pg_wait_event_info == 50331652);
	CHECK_STR(m.pg_wait_event, "transactionid");
	CHECK_STR(m.database, "db1");
	CHECK_STR(m.backend_type, "client backend");
	json_object_put(ev);
}

/* The container of an event's cluster; none on the host, and none in
 * events stored before clusters had containers. */
static void test_container(void)
{
	json_object *ev = parse("{\"type\":\"episode\",\"seq\":3,\"pid\":42,"
				"\"duration_ns\":12000000,\"wait\":\"sleep\","
				"\"pg\":{\"cluster\":{\"id\":1,\"cluster_id\":"
				"\"13e382a564cd7b20\",\"owner\":999,\"container\":"
				"{\"runtime\":\"docker\",\"id\":\"3f1c2b9a8e7d\"}}}}");
	struct event_meta m;

	CHECK(replay_meta(ev, &m) == 0);
	CHECK_STR(m.container, "3f1c2b9a8e7d");
	json_object_put(ev);
	ev = parse("{\"type\":\"episode\",\"seq\":3,\"pid\":42,"
		   "\"duration_ns\":12000000,\"wait\":\"sleep\","
		   "\"pg\":{\"cluster\":{\"id\":1,\"data_dir\":\"/d\"}}}");
	CHECK(replay_meta(ev, &m) == 0 && !m.container);
	json_object_put(ev);
}

static void test_episode_no_pg(void)
{
	json_object *ev = parse("{\"type\":\"episode\",\"pid\":7,"
				"\"duration_ns\":5,\"wait\":\"io\"}");
	struct event_meta m;

	CHECK(replay_meta(ev, &m) == 0);
	CHECK(m.episode && m.wait == PGOFF_WAIT_IO && !m.has_pg_wait);
	CHECK(!m.database && !m.backend_type);
	json_object_put(ev);
}

static void test_refused(void)
{
	static const char *bad[] = {
		"{\"type\":\"dropped\",\"pid\":7,\"duration_ns\":5,\"wait\":\"io\"}",
		"{\"type\":\"offcpu\",\"pid\":-1,\"duration_ns\":5,\"wait\":\"io\"}",
		"{\"type\":\"offcpu\",\"pid\":1,\"duration_ns\":-5,\"wait\":\"io\"}",
		"{\"type\":\"offcpu\",\"pid\":1,\"duration_ns\":5,\"wait\":\"nap\"}",
		"{\"type\":\"offcpu\",\"pid\":1,\"wait\":\"io\"}",
		"[1,2]",
	};
	struct event_meta m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *ev = parse(bad[i]);

		CHECK(replay_meta(ev, &m) == -EINVAL);
		json_object_put(ev);
	}
}

/* Stored SQL goes to those who see queries live, and to nobody else. */
static void test_sql_only_for_the_query_group(void)
{
	static const char stored[] =
		"{\"type\":\"offcpu\",\"seq\":9,\"pid\":42,\"duration_ns\":5,"
		"\"wait\":\"lock\",\"query\":\"update t set v = $1\","
		"\"query_truncated\":true,\"query_redacted\":true}";
	static const char none[] =
		"{\"type\":\"offcpu\",\"pid\":42,\"duration_ns\":5,"
		"\"wait\":\"lock\"}";
	json_object *ev = parse(stored);
	size_t len = sizeof(stored) - 1;
	const char *line = replay_line(ev, stored, &len, true, false);

	CHECK(line == stored && len == sizeof(stored) - 1);
	line = replay_line(ev, stored, &len, false, false);
	CHECK_STR(line, "{\"type\":\"offcpu\",\"seq\":9,\"pid\":42,"
			"\"duration_ns\":5,\"wait\":\"lock\"}");
	CHECK(len == strlen(line));
	json_object_put(ev);
	ev = parse(none);
	len = sizeof(none) - 1;
	CHECK(replay_line(ev, none, &len, false, false) == none);
	json_object_put(ev);
}

/* A stored user stack goes to subscriptions that asked for one. */
static void test_ustack_only_when_asked(void)
{
	static const char stored[] =
		"{\"type\":\"offcpu\",\"pid\":42,\"duration_ns\":5,"
		"\"wait\":\"lock\",\"query\":\"select $1\","
		"\"user_stack\":[\"ProcSleep\",\"main\"]}";
	json_object *ev = parse(stored);
	size_t len = sizeof(stored) - 1;

	CHECK(replay_line(ev, stored, &len, true, true) == stored);
	CHECK_STR(replay_line(ev, stored, &len, true, false),
		  "{\"type\":\"offcpu\",\"pid\":42,\"duration_ns\":5,"
		  "\"wait\":\"lock\",\"query\":\"select $1\"}");
	json_object_put(ev);
	ev = parse(stored);
	CHECK_STR(replay_line(ev, stored, &len, false, true),
		  "{\"type\":\"offcpu\",\"pid\":42,\"duration_ns\":5,"
		  "\"wait\":\"lock\",\"user_stack\":[\"ProcSleep\",\"main\"]}");
	CHECK(len == strlen("{\"type\":\"offcpu\",\"pid\":42,\"duration_ns\":5,"
			    "\"wait\":\"lock\",\"user_stack\":[\"ProcSleep\",\"main\"]}"));
	json_object_put(ev);
}

int main(void)
{
	RUN(test_offcpu);
	RUN(test_container);
	RUN(test_episode_no_pg);
	RUN(test_refused);
	RUN(test_sql_only_for_the_query_group);
	RUN(test_ustack_only_when_asked);
	return CHECK_DONE();
}
