/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_stats_view.c - stats replies into top's tables and JSON and the
 * Prometheus text: parsing hostile replies, differences between
 * snapshots, grouping, quantiles, label escaping and merging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client/stats_view.h"
#include "tests/unit/check.h"
#include "tests/unit/terminal_safe.h"

static int parse(const char *text, struct sv_snapshot *s)
{
	json_object *o = json_tokener_parse(text);
	char err[160];
	int r;

	if (!o)
		return -100;
	r = sv_parse(o, s, err, sizeof(err));
	json_object_put(o);
	return r;
}

#define ROW(pid, db, wt, we, w, count, ns, hist)                             \
	"{\"pid\":" #pid ",\"cluster\":1,\"data_dir\":\"/d\",\"backend_type\":" \
	"\"client backend\",\"database\":\"" db "\",\"user\":\"u\","        \
	"\"wait_event_type\":" wt ",\"wait_event\":" we ",\"wait\":\"" w    \
	"\",\"count\":" #count ",\"time_ns\":" #ns ",\"hist\":" hist "}"

static const char *const prev_text =
	"{\"now_ns\":1000000000,\"hist_unit_ns\":1024,\"rows\":["
	ROW(10, "shop", "\"Lock\"", "\"transactionid\"", "lock", 2, 3000000, "[0,0,2]") ","
	ROW(11, "shop", "null", "null", "cpu", 5, 500000, "[5]")
	"]}";

static const char *const cur_text =
	"{\"now_ns\":3000000000,\"hist_unit_ns\":1024,\"rows\":["
	ROW(10, "shop", "\"Lock\"", "\"transactionid\"", "lock", 4, 1003000000, "[0,0,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2]") ","
	ROW(11, "shop", "null", "null", "cpu", 5, 500000, "[5]") ","
	ROW(12, "crm", "\"Lock\"", "\"transactionid\"", "lock", 1, 200000000, "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]") ","
	ROW(12, "crm", "\"IO\"", "\"DataFileRead\"", "io", 3, 30000, "[0,0,0,0,3]")
	"]}";

static void test_parse_rejects_bad_replies(void)
{
	struct sv_snapshot s;

	CHECK(parse("{\"now_ns\":1}", &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":{}}", &s) == -EPROTO);
	CHECK(parse("{\"rows\":[]}", &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":[1]}", &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"count\":-1,\"time_ns\":1}]}", &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"count\":1,\"time_ns\":1,"
		    "\"hist\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]}]}",
		    &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"count\":1,\"time_ns\":1,\"hist\":[\"x\"]}]}", &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"hist_unit_ns\":0,\"rows\":[]}", &s) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"pid\":4294967296,\"count\":1,\"time_ns\":1}]}", &s) == -EPROTO);
	/* long strings are cut, not overflowed */
	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"count\":1,\"time_ns\":1,\"wait\":"
		    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}]}", &s) == 0);
	CHECK(s.n == 1 && strlen(s.rows[0].wait) == sizeof(s.rows[0].wait) - 1);
	sv_free(&s);
}

static void test_delta(void)
{
	struct sv_snapshot p, c, d;

	CHECK(parse(prev_text, &p) == 0 && parse(cur_text, &c) == 0);
	CHECK(sv_delta(&p, &c, &d) == 0);
	/* pid 11 did nothing: left out; pid 12's rows are new: whole */
	CHECK(d.n == 3);
	CHECK(d.rows[0].pid == 10 && d.rows[0].count == 2 &&
	      d.rows[0].time_ns == 1000000000 && d.rows[0].hist[2] == 0 &&
	      d.rows[0].hist[20] == 2);
	CHECK(d.rows[1].pid == 12 && d.rows[1].time_ns == 200000000);
	sv_free(&d);
	/* a row whose count went down (pid reused) counts whole */
	c.rows[0].count = 1;
	CHECK(sv_delta(&p, &c, &d) == 0);
	CHECK(d.rows[0].pid == 10 && d.rows[0].count == 1 &&
	      d.rows[0].time_ns == 1003000000);
	sv_free(&d);
	sv_free(&p);
	sv_free(&c);
}

/* An on_cpu row (time, no count) whose time went down is another
 * process's with the same pid: counted whole, not as 0. */
static void test_delta_on_cpu_reset(void)
{
	static const char *const prev =
		"{\"now_ns\":1,\"rows\":[{\"pid\":9,\"wait\":\"on_cpu\","
		"\"wait_event_type\":\"IO\",\"wait_event\":\"WALSync\","
		"\"count\":0,\"time_ns\":500000000}]}";
	static const char *const cur =
		"{\"now_ns\":2,\"rows\":[{\"pid\":9,\"wait\":\"on_cpu\","
		"\"wait_event_type\":\"IO\",\"wait_event\":\"WALSync\","
		"\"count\":0,\"time_ns\":20000000}]}";
	static const char *const later =
		"{\"now_ns\":3,\"rows\":[{\"pid\":9,\"wait\":\"on_cpu\","
		"\"wait_event_type\":\"IO\",\"wait_event\":\"WALSync\","
		"\"count\":0,\"time_ns\":50000000}]}";
	struct sv_snapshot p, c, l, d;

	CHECK(parse(prev, &p) == 0 && parse(cur, &c) == 0 && parse(later, &l) == 0);
	CHECK(sv_delta(&p, &c, &d) == 0);
	CHECK(d.n == 1 && d.rows[0].time_ns == 20000000);
	sv_free(&d);
	CHECK(sv_delta(&c, &l, &d) == 0);	/* the same process: the rise */
	CHECK(d.n == 1 && d.rows[0].time_ns == 30000000);
	sv_free(&d);
	sv_free(&p);
	sv_free(&c);
	sv_free(&l);
}

static void test_group(void)
{
	struct sv_snapshot p, c, d;
	struct sv_group *g;
	int n;

	CHECK(parse(prev_text, &p) == 0 && parse(cur_text, &c) == 0);
	CHECK(sv_delta(&p, &c, &d) == 0);
	n = sv_group(&d, SV_BY_BACKEND, &g);
	CHECK(n == 2);
	CHECK(g[0].key.pid == 10 && g[0].time_ns == 1000000000);
	CHECK_STR(g[0].top_wait, "lock Lock:transactionid");
	CHECK(g[1].key.pid == 12 && g[1].count == 4 &&
	      g[1].time_ns == 200030000);
	CHECK_STR(g[1].top_wait, "lock Lock:transactionid");
	free(g);
	n = sv_group(&d, SV_BY_WAIT, &g);
	CHECK(n == 2);
	CHECK_STR(g[0].key.wait_event, "transactionid");
	CHECK(g[0].backends == 2 && g[0].count == 3 &&
	      g[0].time_ns == 1200000000);
	free(g);
	n = sv_group(&d, SV_BY_DATABASE, &g);
	CHECK(n == 2);
	CHECK_STR(g[0].key.database, "shop");
	CHECK(g[1].backends == 1);	/* pid 12 has two rows in crm */
	free(g);
	sv_free(&d);
	sv_free(&p);
	sv_free(&c);
}

/* Rows by statement: grouped by query id (and wait), each id as
 * PostgreSQL shows it, time outside any statement apart; a bad id is
 * refused. */
#define QROW(qid, we, w, count, ns)                                          \
	"{\"cluster\":1,\"data_dir\":\"/d\",\"backend_type\":null,"          \
	"\"database\":\"shop\"," qid "\"wait_event_type\":" we ","            \
	"\"wait_event\":" we ",\"wait\":\"" w "\",\"count\":" #count        \
	",\"time_ns\":" #ns ",\"hist\":[" #count "]}"

static void test_group_by_query(void)
{
	static const char text[] =
		"{\"now_ns\":1,\"rows\":["
		QROW("\"query_id\":\"-9223372036854775807\",", "\"Lock\"", "lock", 2, 3000) ","
		QROW("\"query_id\":\"-9223372036854775807\",", "\"IO\"", "io", 1, 500) ","
		QROW("\"query_id\":\"42\",", "\"Lock\"", "lock", 1, 2000) ","
		QROW("", "null", "poll", 7, 9000) ","
		QROW("\"query_folded\":true,", "null", "cpu", 1, 10)
		"]}";
	struct sv_snapshot s, bad;
	struct sv_group *g;
	json_object *j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	CHECK(parse(text, &s) == 0);
	n = sv_group(&s, SV_BY_QUERY, &g);
	CHECK(n == 4);
	CHECK(g[0].key.query_id == 0 && !g[0].key.query_folded &&
	      g[0].time_ns == 9000);
	CHECK(g[1].key.query_id == 0x8000000000000001ull &&
	      g[1].time_ns == 3500 && g[1].count == 3);
	CHECK_STR(g[1].top_wait, "lock Lock:Lock");
	CHECK(g[2].key.query_id == 42 && g[3].key.query_folded);
	f = open_memstream(&buf, &len);
	sv_render_top(f, g, (size_t)n, SV_BY_QUERY, 1000000000, 1024, 0);
	fclose(f);
	CHECK(strstr(buf, "\n-9223372036854775807 "));
	CHECK(strstr(buf, "\n(other statements) "));
	CHECK(!strstr(buf, "BACKENDS"));
	free(buf);
	j = sv_top_json(g, (size_t)n, SV_BY_QUERY, 1000000000, 1024, 0);
	CHECK_STR(json_object_to_json_string_ext(json_object_array_get_idx(
		json_object_object_get(j, "rows"), 1), JSON_C_TO_STRING_PLAIN),
		"{\"query_id\":\"-9223372036854775807\",\"database\":\"shop\","
		"\"top_wait\":\"lock Lock:Lock\",\"data_dir\":\"\\/d\","
		"\"cluster_id\":null,\"time_ns\":3500,\"share\":0.0,\"count\":3,\"p50_ns\":1024,"
		"\"p99_ns\":1024}");
	json_object_put(j);
	free(g);
	n = sv_group(&s, SV_BY_QUERY_WAIT, &g);
	CHECK(n == 5);
	free(g);
	sv_free(&s);
	CHECK(parse("{\"now_ns\":1,\"rows\":[" QROW("\"query_id\":\"0\",",
		    "null", "cpu", 1, 1) "]}", &bad) == -EPROTO);
	CHECK(parse("{\"now_ns\":1,\"rows\":[" QROW("\"query_id\":42,",
		    "null", "cpu", 1, 1) "]}", &bad) == -EPROTO);
}

static void test_quantiles(void)
{
	uint64_t h[SV_BUCKETS] = { 0 };

	CHECK(sv_quantile_ns(h, 1024, 0.5) == 0);
	h[0] = 50;
	h[3] = 49;
	h[10] = 1;
	CHECK(sv_quantile_ns(h, 1024, 0.5) == 1024);		/* bucket 0 */
	CHECK(sv_quantile_ns(h, 1024, 0.99) == 1024 << 3);	/* 99th of 100 */
	CHECK(sv_quantile_ns(h, 1024, 1.0) == 1024 << 10);
	h[SV_BUCKETS - 1] = 1000;
	CHECK(sv_quantile_ns(h, 1024, 0.99) == UINT64_MAX);	/* open bucket */
}

static char *render_metrics(const struct sv_snapshot *s, json_object *st,
			    bool per_pid)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || sv_render_metrics(f, s, st, per_pid))
		return NULL;
	fclose(f);
	return buf;
}

static int count_lines(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		n += strncmp(p, prefix, strlen(prefix)) == 0;
	}
	return n;
}

static void test_metrics_escape_and_merge(void)
{
	struct sv_snapshot s;
	json_object *st = json_tokener_parse(
		"{\"traced_processes\":7,\"clients\":2,\"counters\":"
		"{\"ringbuf_full\":3,\"client_queue_full\":0}}");
	char *out;

	/* two rows with the same labels (a restarted cluster: pgoffd gave
	 * it another number, its identity is the same): one series */
	CHECK(parse("{\"now_ns\":1,\"rows\":["
		    "{\"cluster\":1,\"cluster_id\":\"13e382a564cd7b20\",\"owner\":105,"
		    "\"data_dir\":\"/d\\\"q\\\\b\\nn\",\"backend_type\":\"client backend\","
		    "\"database\":\"x\",\"wait\":\"lock\",\"wait_event_type\":\"Lock\","
		    "\"wait_event\":\"advisory\",\"count\":2,\"time_ns\":1500000000},"
		    "{\"cluster\":2,\"cluster_id\":\"13e382a564cd7b20\",\"owner\":105,"
		    "\"data_dir\":\"/d\\\"q\\\\b\\nn\",\"backend_type\":\"client backend\","
		    "\"database\":\"x\",\"wait\":\"lock\",\"wait_event_type\":\"Lock\","
		    "\"wait_event\":\"advisory\",\"count\":1,\"time_ns\":2}]}", &s) == 0);
	out = render_metrics(&s, st, false);
	CHECK(out);
	CHECK(strstr(out, "pgoff_offcpu_seconds_total{cluster=\"/d\\\"q\\\\b\\nn\","
			  "cluster_id=\"13e382a564cd7b20\",owner=\"105\",container=\"\","
			  "pod_uid=\"\",database=\"x\",backend_type=\"client backend\","
			  "wait_event_type=\"Lock\",wait_event=\"advisory\","
			  "wait=\"lock\",idle=\"false\"} 1.500000002\n"));
	CHECK(strstr(out, "wait=\"lock\",idle=\"false\"} 3\n"));
	CHECK(strstr(out, "# TYPE pgoff_offcpu_seconds_total counter\n"));
	CHECK(strstr(out, "pgoff_lost_events_total{cause=\"ringbuf_full\"} 3\n"));
	CHECK(strstr(out, "pgoff_traced_processes 7\n"));
	CHECK(!strstr(out, "pid="));
	/* one series line per metric: merged */
	CHECK(count_lines(out, "pgoff_offcpu_seconds_total{") == 1);
	CHECK(count_lines(out, "pgoff_offcpu_intervals_total{") == 1);
	free(out);
	out = render_metrics(&s, NULL, true);
	CHECK(out && strstr(out, ",pid=\"0\"}"));
	CHECK(!strstr(out, "pgoff_lost_events_total"));
	free(out);
	sv_free(&s);
	json_object_put(st);
}

/* A wait's time on a CPU (pgoffd's samples): its own series, none of
 * the off-CPU ones; top's group of the wait event counts it as time. */
static void test_on_cpu_rows(void)
{
	struct sv_snapshot s;
	struct sv_group *g = NULL;
	uint64_t io = 0;
	char *out;
	int ng;

	CHECK(parse("{\"now_ns\":1,\"rows\":["
		    "{\"pid\":7,\"data_dir\":\"/d\",\"backend_type\":\"client backend\","
		    "\"database\":\"x\",\"wait\":\"io\",\"wait_event_type\":\"IO\","
		    "\"wait_event\":\"WALSync\",\"count\":4,\"time_ns\":3000000000,"
		    "\"hist\":[0,4]},"
		    "{\"pid\":7,\"data_dir\":\"/d\",\"backend_type\":\"client backend\","
		    "\"database\":\"x\",\"wait\":\"on_cpu\",\"wait_event_type\":\"IO\","
		    "\"wait_event\":\"WALSync\",\"count\":0,\"time_ns\":500000000}]}",
		    &s) == 0);
	CHECK(!sv_row_on_cpu(&s.rows[0]) && sv_row_on_cpu(&s.rows[1]));
	out = render_metrics(&s, NULL, false);
	CHECK(out);
	CHECK(count_lines(out, "pgoff_offcpu_seconds_total{") == 1);
	CHECK(count_lines(out, "pgoff_offcpu_intervals_total{") == 1);
	CHECK(out && strstr(out, "wait=\"io\",idle=\"false\"} 3.000000000\n"));
	CHECK(out && !strstr(out, "wait=\"on_cpu\""));
	CHECK(count_lines(out, "pgoff_wait_on_cpu_seconds_total{") == 1);
	CHECK(out && strstr(out, "wait_event=\"WALSync\",idle=\"false\"} 0.500000000\n"));
	CHECK(out && strstr(out, "# TYPE pgoff_wait_on_cpu_seconds_total counter\n"));
	free(out);
	ng = sv_group(&s, SV_BY_WAIT, &g);
	CHECK(ng == 2);
	for (int i = 0; i < ng; i++)
		if (strcmp(g[i].key.wait_event, "WALSync") == 0)
			io += g[i].time_ns;
	CHECK(io == 3500000000ULL);
	free(g);
	/* by backend: OFF% is time off the CPU */
	g = NULL;
	ng = sv_group(&s, SV_BY_BACKEND, &g);
	CHECK(ng == 1 && g[0].time_ns == 3000000000ULL && g[0].count == 4);
	free(g);
	sv_free(&s);
}

static void test_top_json(void)
{
	struct sv_snapshot p, c, d;
	struct sv_group *g;
	json_object *j, *r;
	int n;

	CHECK(parse(prev_text, &p) == 0 && parse(cur_text, &c) == 0);
	CHECK(sv_delta(&p, &c, &d) == 0);
	n = sv_group(&d, SV_BY_BACKEND, &g);
	CHECK(n == 2);
	j = sv_top_json(g, (size_t)n, SV_BY_BACKEND, 2000000000, 1024, 1);
	CHECK(json_object_array_length(json_object_object_get(j, "rows")) == 1);
	r = json_object_array_get_idx(json_object_object_get(j, "rows"), 0);
	CHECK(json_object_get_int64(json_object_object_get(r, "pid")) == 10);
	CHECK(json_object_get_double(json_object_object_get(r, "share")) == 0.5);
	CHECK(json_object_get_int64(json_object_object_get(r, "p99_ns")) == 1024LL << 20);
	CHECK(json_object_get_int64(json_object_object_get(j, "total_rows")) == 2);
	json_object_put(j);
	free(g);
	sv_free(&d);
	sv_free(&p);
	sv_free(&c);
}

/* What the broker sends is shown on a terminal: no escapes get through. */
static void test_top_table_is_clean(void)
{
	struct sv_snapshot s;
	struct sv_group *g;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"pid\":5,\"database\":\"a\\u001b[2Jb\","
		    "\"wait\":\"io\",\"count\":1,\"time_ns\":5}]}", &s) == 0);
	n = sv_group(&s, SV_BY_BACKEND, &g);
	CHECK(n == 1);
	f = open_memstream(&buf, &len);
	sv_render_top(f, g, 1, SV_BY_BACKEND, 1000000000, 1024, 0);
	fclose(f);
	CHECK(buf && !strchr(buf, 0x1b) && strstr(buf, "a?[2Jb"));
	free(buf);
	free(g);
	sv_free(&s);
}

/* Every cell of every table, and every label: C1 controls (as JSON
 * escapes and as raw UTF-8), a lone 0x9b byte, overlong forms, ESC and
 * newlines from the broker never reach the terminal. */
static void test_tables_and_metrics_are_clean(void)
{
	static const enum sv_by bys[] = { SV_BY_BACKEND, SV_BY_WAIT, SV_BY_DATABASE };
	struct sv_snapshot s;
	struct sv_group *g;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	CHECK(parse("{\"now_ns\":1,\"rows\":[{\"pid\":5,"
		    "\"cluster_id\":\"c\\u001b1\",\"owner\":7,\"container\":"
		    "{\"runtime\":\"r\\u0007\",\"id\":\"i\\n9\",\"pod_uid\":\"p\\u009b\"},"
		    "\"data_dir\":\"/d\\n\xc2\x9b" "2J\",\"database\":\"a\\u009b2J\","
		    "\"user\":\"u\x9b" "1m\",\"backend_type\":\"b\\n\\u001b[1m\","
		    "\"wait_event_type\":\"Lock\\u0085\",\"wait_event\":\"\xc0\x9b\","
		    "\"wait\":\"io\\u001b\",\"count\":1,\"time_ns\":5}]}", &s) == 0);
	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++) {
		n = sv_group(&s, bys[i], &g);
		CHECK(n == 1);
		f = open_memstream(&buf, &len);
		sv_render_top(f, g, 1, bys[i], 1000000000, 1024, 0);
		fclose(f);
		free(g);
		if (!terminal_safe(buf, 2))
			fprintf(stderr, "top --by %s\n", sv_by_name(bys[i]));
		CHECK(terminal_safe(buf, 2));
		CHECK_CONTAINS(buf, i == SV_BY_WAIT ? "Lock?:?? " : "a?2J");
		if (i != SV_BY_WAIT) {
			CHECK_CONTAINS(buf, "c?1 ");
			CHECK_CONTAINS(buf, " i?9 ");
		}
		free(buf);
		buf = NULL;
	}
	f = open_memstream(&buf, &len);
	CHECK(sv_render_metrics(f, &s, NULL, true) == 0);
	fclose(f);
	CHECK(terminal_safe(buf, 0));
	CHECK_CONTAINS(buf, "{cluster=\"/d\\n?2J\",cluster_id=\"c?1\",owner=\"7\","
		       "container=\"i\\n9\",pod_uid=\"p?\",database=\"a?2J\","
		       "backend_type=\"b\\n?[1m\",wait_event_type=\"Lock?\","
		       "wait_event=\"??\",wait=\"io?\",idle=\"false\",pid=\"5\"}");
	free(buf);
	sv_free(&s);
}

/* The longest labels, all of them escapes: one whole, valid series. */
static void test_metrics_longest_labels(void)
{
	char q[600], text[2000];
	struct sv_snapshot s;
	char *out, *line;

	memset(q, 0, sizeof(q));
	for (int i = 0; i < 255; i++)
		strcat(q, "\\\"");	/* a JSON-escaped quote: one byte */
	snprintf(text, sizeof(text), "{\"now_ns\":1,\"rows\":[{\"count\":1,"
		 "\"time_ns\":5,\"data_dir\":\"%s\",\"database\":\"%.62s\","
		 "\"wait\":\"io\"}]}", q, q);
	CHECK(parse(text, &s) == 0);
	CHECK(strlen(s.rows[0].data_dir) == 255);
	out = render_metrics(&s, NULL, true);
	CHECK(out);
	line = strstr(out, "pgoff_offcpu_seconds_total{");
	CHECK(line && strstr(line, "wait=\"io\",idle=\"false\",pid=\"0\"} 0.000000005\n"));
	CHECK(count_lines(out, "pgoff_offcpu_seconds_total{") == 1);
	free(out);
	sv_free(&s);
}

/* What top must not show as a burst of time. */
static void test_delta_without_spikes(void)
{
	struct sv_snapshot p, c, d;

	CHECK(parse(prev_text, &p) == 0 && parse(cur_text, &c) == 0);
	/* time read short for a moment, count the same: nothing, not all */
	c.rows[0].count = p.rows[0].count;
	memcpy(c.rows[0].hist, p.rows[0].hist, sizeof(c.rows[0].hist));
	c.rows[0].time_ns = p.rows[0].time_ns - 1;
	CHECK(sv_delta(&p, &c, &d) == 0);
	for (size_t i = 0; i < d.n; i++)
		CHECK(d.rows[i].pid != 10);
	sv_free(&d);
	/* prev was cut short: rows missing from it count nothing */
	p.truncated = true;
	CHECK(sv_delta(&p, &c, &d) == 0);
	CHECK(d.n == 0);
	sv_free(&d);
	/* the same names but one without its wait event read: two rows */
	p.truncated = false;
	c.rows[1].pg_known = false;
	c.rows[1].time_ns += 7;
	CHECK(sv_delta(&p, &c, &d) == 0);
	CHECK(d.n == 3 && d.rows[0].pid == 11 && d.rows[0].time_ns == 500007);
	sv_free(&d);
	sv_free(&p);
	sv_free(&c);
}

/* A row of cluster ID (owner 999) at the shared path /srv/pgc/data,
 * in container CT (a runtime's id) or on the host (""). */
#define IROW(pid, id, ct, ns)                                                \
	"{\"pid\":" #pid ",\"cluster\":" #pid ",\"cluster_id\":\"" id "\","  \
	"\"owner\":999," ct "\"data_dir\":\"/srv/pgc/data\",\"backend_type\":" \
	"\"client backend\",\"database\":\"postgres\",\"wait_event_type\":" \
	"\"Timeout\",\"wait_event\":\"PgSleep\",\"wait\":\"sleep\","     \
	"\"count\":1,\"time_ns\":" #ns "}"
#define CT(id) "\"container\":{\"runtime\":\"docker\",\"id\":\"" id "\"},"
#define CT_A "3f1c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3"

/*
 * Two clusters at one path (two containers'), and a look-alike of
 * another owner: never one series, one database row, one delta; a
 * container's rows are picked by a prefix of its id.
 */
static void test_clusters_at_one_path(void)
{
	struct sv_snapshot s, prev, d;
	struct sv_group *g;
	char *out;
	int n;

	CHECK(parse("{\"now_ns\":2,\"rows\":["
		    IROW(10, "13e382a564cd7b20", CT(CT_A), 1000000000) ","
		    IROW(20, "9c1de0a7b3f24e61", "", 1000000000) ","
		    IROW(30, "9c1de0a7b3f24e61", "", 5) "]}", &s) == 0);
	/* the look-alike's owner differs: the same id is another series */
	CHECK(parse("{\"now_ns\":1,\"rows\":["
		    IROW(10, "13e382a564cd7b20", CT(CT_A), 1000) ","
		    IROW(20, "13e382a564cd7b20", "", 1000) "]}", &prev) == 0);
	out = render_metrics(&s, NULL, false);
	CHECK(out);
	CHECK(count_lines(out, "pgoff_offcpu_seconds_total{") == 2);
	CHECK_CONTAINS(out, "pgoff_offcpu_seconds_total{cluster=\"/srv/pgc/data\","
		       "cluster_id=\"13e382a564cd7b20\",owner=\"999\",container=\""
		       CT_A "\",pod_uid=\"\",database=\"postgres\"");
	CHECK_CONTAINS(out, "cluster_id=\"9c1de0a7b3f24e61\",owner=\"999\","
		       "container=\"\",pod_uid=\"\",database=\"postgres\","
		       "backend_type=\"client backend\",wait_event_type=\"Timeout\","
		       "wait_event=\"PgSleep\",wait=\"sleep\",idle=\"false\"} 1.000000005\n");
	free(out);
	n = sv_group(&s, SV_BY_DATABASE, &g);
	CHECK(n == 2 && g[0].time_ns == 1000000005 && g[0].backends == 2);
	free(g);
	n = sv_group(&s, SV_BY_CLUSTER_WAIT, &g);
	CHECK(n == 2);
	free(g);
	n = sv_group(&s, SV_BY_WAIT, &g);	/* the host's waits: one */
	CHECK(n == 1);
	free(g);
	/* 20's earlier row was another cluster's (a reused pid): whole */
	CHECK(sv_delta(&prev, &s, &d) == 0);
	for (size_t i = 0; i < d.n; i++)
		if (d.rows[i].pid == 20)
			CHECK(d.rows[i].time_ns == 1000000000);
	sv_free(&d);
	CHECK(sv_in_container(&s.rows[0], "3F1C2B9A8E7D"));
	CHECK(!sv_in_container(&s.rows[1], "3f1c2b9a8e7d"));
	sv_free(&s);
	sv_free(&prev);
}

int main(void)
{
	RUN(test_parse_rejects_bad_replies);
	RUN(test_delta);
	RUN(test_delta_on_cpu_reset);
	RUN(test_group);
	RUN(test_group_by_query);
	RUN(test_quantiles);
	RUN(test_metrics_escape_and_merge);
	RUN(test_on_cpu_rows);
	RUN(test_top_json);
	RUN(test_top_table_is_clean);
	RUN(test_tables_and_metrics_are_clean);
	RUN(test_metrics_longest_labels);
	RUN(test_delta_without_spikes);
	RUN(test_clusters_at_one_path);
	return CHECK_DONE();
}
