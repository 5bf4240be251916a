/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_exporter_exposition.c - pgoff_exporter's page: the histogram from
 * the kernel's buckets (grouped, cumulative, _sum and _count), the AAS
 * gauge between two snapshots, pgoffd's health from status, what a scrape
 * shows with pgoffd down, and counters held at their highest
 * (monotonic.c) so that a moved row never looks like a reset, and the
 * longest wait of one backend across scrapes (streaks.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/exposition.h"
#include "exporter/monotonic.h"
#include "exporter/streaks.h"
#include "tests/unit/check.h"

static char *page;
static size_t page_len;

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

/* The page must have this exact line (or, with prefix, a line that
 * starts with it). */
static bool has_line(const char *line)
{
	const char *p = page;
	size_t n = strlen(line);

	while (p && *p) {
		if (strncmp(p, line, n) == 0 && p[n] == '\n')
			return true;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	fprintf(stderr, "no line \"%s\" in:\n%s\n", line, page);
	return false;
}

static bool lacks(const char *text)
{
	if (!strstr(page, text))
		return true;
	fprintf(stderr, "\"%s\" should not be in:\n%s\n", text, page);
	return false;
}

#define ROW(pid, dir, db, bt, wt, we, w, count, ns, hist)                     \
	"{\"pid\":" #pid ",\"cluster\":1,\"cluster_id\":\"13e382a564cd7b20\","     \
	"\"owner\":105,\"data_dir\":\"" dir "\","                               \
	"\"backend_type\":\"" bt "\",\"database\":\"" db "\","               \
	"\"wait_event_type\":" wt ",\"wait_event\":" we ",\"wait\":\"" w    \
	"\",\"count\":" #count ",\"time_ns\":" #ns ",\"hist\":" hist "}"

/* The labels of ROW's cluster at /d, on every per-cluster series. */
#define CL "cluster=\"/d\",cluster_id=\"13e382a564cd7b20\",owner=\"105\"," \
	"container=\"\",pod_uid=\"\""

/* Bucket 21 holds [2^20, 2^21) * 1024 ns: a 2 s interval. */
#define H21_1 "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]"
#define H21_2 "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2]"

static const char *const labels_text =
	"{\"now_ns\":5000000000,\"hist_unit_ns\":1024,\"rows\":["
	ROW(0, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock",
	    1, 2000000000, H21_1) ","
	ROW(0, "/d", "crm", "client backend", "\"Lock\"", "\"tuple\"", "lock",
	    3, 2100000, "[1,0,0,0,0,0,0,0,0,0,0,2]") ","
	ROW(0, "/d", "crm", "client backend", "\"IO\"", "\"DataFileRead\"", "io",
	    2, 30000, "[0,0,0,0,2]") ","
	/* the same wait's time on a CPU, sampled: time, no interval */
	ROW(0, "/d", "crm", "client backend", "\"IO\"", "\"DataFileRead\"", "on_cpu",
	    0, 20000000, "[]") ","
	ROW(0, "/d", "", "walwriter", "null", "null", "cpu", 1, 500, "[1]")
	"]}";

static void render_to_page(const struct ex_scrape *s, int want)
{
	FILE *f;

	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	if (!f || ex_render(f, s) != want)
		abort();
	fclose(f);
}

static void test_histogram(void)
{
	struct sv_snapshot s;
	FILE *f;

	CHECK(parse(labels_text, &s) == 0);
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(ex_render_histogram(f, &s) == 0);
	fclose(f);
	CHECK(has_line("# TYPE pgoff_wait_duration_seconds histogram"));
	/* the two Lock rows are one series: buckets 0, 11 and 21 */
	CHECK(has_line("pgoff_wait_duration_seconds_bucket{" CL ",wait=\"lock\",wait_event_type=\"Lock\",le=\"0.000001023\"} 1"));
	CHECK(has_line("pgoff_wait_duration_seconds_bucket{" CL ",wait=\"lock\",wait_event_type=\"Lock\",le=\"0.001048575\"} 1"));
	CHECK(has_line("pgoff_wait_duration_seconds_bucket{" CL ",wait=\"lock\",wait_event_type=\"Lock\",le=\"0.002097151\"} 3"));
	CHECK(has_line("pgoff_wait_duration_seconds_bucket{" CL ",wait=\"lock\",wait_event_type=\"Lock\",le=\"1.073741823\"} 3"));
	CHECK(has_line("pgoff_wait_duration_seconds_bucket{" CL ",wait=\"lock\",wait_event_type=\"Lock\",le=\"2.147483647\"} 4"));
	CHECK(has_line("pgoff_wait_duration_seconds_bucket{" CL ",wait=\"lock\",wait_event_type=\"Lock\",le=\"+Inf\"} 4"));
	CHECK(has_line("pgoff_wait_duration_seconds_sum{" CL ",wait=\"lock\",wait_event_type=\"Lock\"} 2.0021"));
	CHECK(has_line("pgoff_wait_duration_seconds_count{" CL ",wait=\"lock\",wait_event_type=\"Lock\"} 4"));
	CHECK(has_line("pgoff_wait_duration_seconds_count{" CL ",wait=\"io\",wait_event_type=\"IO\"} 2"));
	/* outside any PostgreSQL wait: an empty label, as pgoffctl metrics */
	CHECK(has_line("pgoff_wait_duration_seconds_count{" CL ",wait=\"cpu\",wait_event_type=\"\"} 1"));
	/* 32 buckets, _sum and _count for each of the three series: time
	 * on a CPU is no interval, and has none */
	CHECK(lacks("wait=\"on_cpu\""));
	CHECK(page_len > 0);
	{
		size_t lines = 0;

		for (char *p = page; *p; p++)
			lines += *p == '\n';
		CHECK(lines == 2 + 3 * (32 + 2));
	}
	sv_free(&s);
}

static void test_aas(void)
{
	const char *prev_text =
		"{\"now_ns\":1000000000,\"rows\":["
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 0, "[]") ","
		ROW(11, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 100000000, "[]") ","
		ROW(12, "/d", "shop", "client backend", "\"Client\"", "\"ClientRead\"", "poll", 5, 900000000, "[]")
		"]}";
	const char *cur_text =
		"{\"now_ns\":3000000000,\"rows\":["
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 2000000000, "[]") ","
		ROW(11, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 1100000000, "[]") ","
		ROW(12, "/d", "shop", "client backend", "\"Client\"", "\"ClientRead\"", "poll", 5, 900000000, "[]")
		"]}";
	struct sv_snapshot prev, cur;
	FILE *f;

	CHECK(parse(prev_text, &prev) == 0);
	CHECK(parse(cur_text, &cur) == 0);
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(ex_render_aas(f, &prev, &cur) == 0);
	fclose(f);
	/* 2 s + 1 s of lock wait in 2 s: 1.5 backends on average */
	CHECK(has_line("pgoff_backends_waiting{" CL ",wait_event_type=\"Lock\",wait_event=\"transactionid\",wait=\"lock\"} 1.5"));
	/* a wait seen before but idle in the window: 0, not absent */
	CHECK(has_line("pgoff_backends_waiting{" CL ",wait_event_type=\"Client\",wait_event=\"ClientRead\",wait=\"poll\"} 0"));
	CHECK(has_line("pgoff_backends_waiting_window_seconds 2"));
	/* the same instant twice: nothing to average over, nothing said */
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(ex_render_aas(f, &cur, &cur) == 0);
	fclose(f);
	CHECK(page_len == 0);
	sv_free(&prev);
	sv_free(&cur);
}

/* Idle time is not an active session's: out of pgoff_backends_waiting,
 * into pgoff_backends_idle. */
static void test_aas_idle(void)
{
	static const char prev_text[] =
		"{\"now_ns\":1000000000,\"rows\":[]}";
	static const char cur_text[] =
		"{\"now_ns\":3000000000,\"rows\":["
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 1, 1000000000, "[]") ","
		"{\"pid\":11,\"data_dir\":\"/d\",\"cluster_id\":\"13e382a564cd7b20\","
		"\"owner\":105,\"backend_type\":\"client backend\","
		"\"wait_event_type\":\"Client\",\"wait_event\":\"ClientRead\",\"wait\":\"poll\","
		"\"idle\":true,\"state\":\"idle\",\"count\":3,\"time_ns\":2000000000}]}";
	struct sv_snapshot prev, cur;
	FILE *f;

	CHECK(parse(prev_text, &prev) == 0);
	CHECK(parse(cur_text, &cur) == 0);
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(ex_render_aas(f, &prev, &cur) == 0);
	fclose(f);
	CHECK(has_line("pgoff_backends_waiting{" CL ",wait_event_type=\"Lock\",wait_event=\"transactionid\",wait=\"lock\"} 0.5"));
	CHECK(lacks("ClientRead"));
	CHECK(has_line("pgoff_backends_idle{" CL "} 1"));
	sv_free(&prev);
	sv_free(&cur);
}

/* ROW's cluster, for rows by statement. */
#define QCL "\"data_dir\":\"/d\",\"cluster_id\":\"13e382a564cd7b20\",\"owner\":105"

/* The statements with the most time, by query id, summed over waits;
 * rows without one left out; at most n. */
static void test_top_queries(void)
{
	static const char text[] =
		"{\"now_ns\":1,\"rows\":["
		"{" QCL ",\"database\":\"shop\",\"query_id\":\"-5\",\"wait\":\"lock\",\"count\":1,\"time_ns\":1000000000},"
		"{" QCL ",\"database\":\"shop\",\"query_id\":\"-5\",\"wait\":\"io\",\"count\":1,\"time_ns\":500000000},"
		"{" QCL ",\"database\":\"shop\",\"query_id\":\"7\",\"wait\":\"io\",\"count\":1,\"time_ns\":2000000000},"
		"{" QCL ",\"database\":\"shop\",\"query_id\":\"8\",\"wait\":\"io\",\"count\":1,\"time_ns\":100},"
		"{" QCL ",\"database\":\"shop\",\"wait\":\"poll\",\"count\":9,\"time_ns\":9000000000}]}";
	struct sv_snapshot rows;
	FILE *f;

	CHECK(parse(text, &rows) == 0);
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(ex_render_top_queries(f, &rows, 2) == 0);
	fclose(f);
	CHECK(has_line("pgoff_query_offcpu_seconds_total{" CL ",database=\"shop\",query_id=\"7\"} 2"));
	CHECK(has_line("pgoff_query_offcpu_seconds_total{" CL ",database=\"shop\",query_id=\"-5\"} 1.5"));
	CHECK(lacks("query_id=\"8\""));
	CHECK(lacks("query_id=\"\""));	/* the row of no statement */
	sv_free(&rows);
}

static void test_broker_down(void)
{
	struct ex_process self = { 1.25, 4096 * 1000, 1700000000, 7 };
	struct ex_scrape s = {
		.version = "0.1.0", .revision = "abc\"def", .up = false,
		.broker_connects = 1, .broker_errors = 3, .self = &self,
	};

	render_to_page(&s, 0);
	CHECK(has_line("pgoff_build_info{version=\"0.1.0\",revision=\"abc\\\"def\"} 1"));
	CHECK(has_line("pgoff_broker_up 0"));
	CHECK(has_line("pgoff_exporter_broker_errors_total 3"));
	CHECK(has_line("process_cpu_seconds_total 1.25"));
	CHECK(has_line("process_resident_memory_bytes 4096000"));
	CHECK(lacks("pgoff_offcpu_seconds_total"));
	CHECK(lacks("pgoff_wait_duration_seconds"));
	CHECK(lacks("pgoff_traced_processes"));
	CHECK(lacks("pgoff_bpf_programs_attached"));
	CHECK(lacks("pgoff_exporter_http_"));	/* no server: not known */
}

/* What the HTTP server refused: a counter with a reason each. */
static void test_http_counts(void)
{
	struct ex_http http = {
		.auth_missing = 1, .auth_wrong = 2, .auth_rate_limited = 3,
		.header_timeouts = 4, .crowded_out = 5, .connections_refused = 6,
	};
	struct ex_scrape s = { .version = "0.1.0", .revision = "r", .http = &http };

	render_to_page(&s, 0);
	CHECK(has_line("# TYPE pgoff_exporter_http_auth_failures_total counter"));
	CHECK(has_line("pgoff_exporter_http_auth_failures_total{reason=\"missing\"} 1"));
	CHECK(has_line("pgoff_exporter_http_auth_failures_total{reason=\"wrong\"} 2"));
	CHECK(has_line("pgoff_exporter_http_auth_failures_total{reason=\"rate_limited\"} 3"));
	CHECK(has_line("# TYPE pgoff_exporter_http_connections_closed_total counter"));
	CHECK(has_line("pgoff_exporter_http_connections_closed_total{reason=\"header_deadline\"} 4"));
	CHECK(has_line("pgoff_exporter_http_connections_closed_total{reason=\"crowded_out\"} 5"));
	CHECK(has_line("pgoff_exporter_http_connections_closed_total{reason=\"limit\"} 6"));
}

static void test_broker_up(void)
{
	json_object *st = json_tokener_parse(
		"{\"ok\":true,\"broker\":\"pgoffd 0.1.0\",\"uptime_s\":100,"
		"\"hook\":\"tp_btf\",\"bpf_programs_attached\":5,\"clients\":2,\"subscribers\":0,\"clusters\":1,"
		"\"traced_processes\":6,\"kernel_min_duration_ns\":null,"
		"\"counters\":{\"switches\":68,\"events\":0,\"ringbuf_full\":3,"
		"\"start_map_full\":0,\"stack_failed\":1,\"pg_read_failed\":0,"
		"\"query_failed\":0,\"user_stack_failed\":4,\"episodes\":2,\"client_queue_full\":0,"
		"\"aggregate_map_full\":0}}");
	struct sv_snapshot labels;
	struct ex_scrape s = {
		.version = "0.1.0", .revision = "r", .up = true, .status = st,
		.labels = &labels, .wall_now = 1700000100.5,
	};

	CHECK(st);
	CHECK(parse(labels_text, &labels) == 0);
	render_to_page(&s, 0);
	CHECK(has_line("pgoff_broker_up 1"));
	CHECK(has_line("pgoff_broker_info{version=\"0.1.0\",hook=\"tp_btf\"} 1"));
	CHECK(has_line("pgoff_broker_start_time_seconds 1700000000"));
	CHECK(has_line("pgoff_clusters 1"));
	CHECK(has_line("pgoff_traced_processes 6"));
	CHECK(has_line("pgoff_bpf_programs_attached 5"));
	CHECK(has_line("pgoff_lost_events_total{cause=\"ringbuf_full\"} 3"));
	CHECK(has_line("pgoff_lost_events_total{cause=\"aggregate_map_full\"} 0"));
	CHECK(has_line("pgoff_degraded_events_total{missing=\"stack\"} 1"));
	CHECK(has_line("pgoff_degraded_events_total{missing=\"user_stack\"} 4"));
	CHECK(has_line("pgoff_context_switches_total 68"));
	CHECK(has_line("pgoff_stats_truncated{by=\"labels\"} 0"));
	CHECK(lacks("pgoff_stats_truncated{by=\"pid\"}"));	/* none asked */
	CHECK(lacks("pgoff_kernel_min_duration_seconds"));	/* null */
	CHECK(has_line("pgoff_offcpu_seconds_total{" CL ",database=\"shop\",backend_type=\"client backend\",wait_event_type=\"Lock\",wait_event=\"transactionid\",wait=\"lock\",idle=\"false\"} 2.000000000"));
	CHECK(has_line("pgoff_offcpu_intervals_total{" CL ",database=\"crm\",backend_type=\"client backend\",wait_event_type=\"Lock\",wait_event=\"tuple\",wait=\"lock\",idle=\"false\"} 3"));
	CHECK(has_line("pgoff_wait_duration_seconds_count{" CL ",wait=\"lock\",wait_event_type=\"Lock\"} 4"));
	CHECK(has_line("pgoff_wait_on_cpu_seconds_total{" CL ",database=\"crm\",backend_type=\"client backend\",wait_event_type=\"IO\",wait_event=\"DataFileRead\",idle=\"false\"} 0.020000000"));
	CHECK(lacks("wait=\"on_cpu\""));
	CHECK(lacks("pid=\""));			/* no pid label by default */
	CHECK(lacks("pgoff_backends_waiting"));	/* no earlier snapshot */
	json_object_put(st);
	sv_free(&labels);
}

static void test_monotonic(void)
{
	const char *first =
		"{\"now_ns\":1,\"rows\":["
		ROW(0, "/d", "", "", "\"Lock\"", "\"transactionid\"", "lock", 4, 4000, "[0,4]") ","
		ROW(0, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 1, 1000, "[0,1]")
		"]}";
	/* the 4 intervals moved to shop's row (its title was read) */
	const char *second =
		"{\"now_ns\":2,\"rows\":["
		ROW(0, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 5, 5000, "[0,5]") ","
		ROW(0, "/d", "", "", "\"Lock\"", "\"transactionid\"", "lock", 0, 0, "[]")
		"]}";
	/* cut short: the empty-label row is left out, and comes back */
	const char *third =
		"{\"now_ns\":3,\"truncated\":true,\"rows\":["
		ROW(0, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 6, 6000, "[0,6]")
		"]}";
	const char *fourth =
		"{\"now_ns\":4,\"rows\":["
		ROW(0, "/d", "", "", "\"Lock\"", "\"transactionid\"", "lock", 1, 100, "[0,1]") ","
		ROW(0, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 2, 2000, "[0,1]") ","
		ROW(0, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 5, 5000, "[0,5]")
		"]}";
	struct mono_state m = { 0 };
	struct sv_snapshot s;

	CHECK(parse(first, &s) == 0);
	CHECK(mono_apply(&m, &s) == 0 && m.decreases == 0 && m.n == 2);
	sv_free(&s);
	CHECK(parse(second, &s) == 0);
	CHECK(mono_apply(&m, &s) == 0);
	/* sorted by labels: the empty database first, held at 4 */
	CHECK(s.n == 2 && s.rows[0].database[0] == '\0');
	CHECK(s.rows[0].count == 4 && s.rows[0].time_ns == 4000 &&
	      s.rows[0].hist[1] == 4);
	CHECK(s.rows[1].count == 5);
	CHECK(m.decreases == 3);	/* count, time and one bucket */
	sv_free(&s);
	CHECK(parse(third, &s) == 0);
	CHECK(mono_apply(&m, &s) == 0 && s.n == 1 && m.n == 2);	/* remembered */
	sv_free(&s);
	CHECK(parse(fourth, &s) == 0);
	CHECK(mono_apply(&m, &s) == 0);
	/* rows with the same labels summed first (7), then held (4, not 1) */
	CHECK(s.n == 2 && s.rows[0].count == 4 && s.rows[1].count == 7 &&
	      s.rows[1].hist[1] == 6);
	sv_free(&s);
	mono_reset(&m);
	CHECK(m.n == 0 && m.decreases == 6);
	CHECK(parse(second, &s) == 0);
	CHECK(mono_apply(&m, &s) == 0 && s.rows[0].count == 0);	/* forgotten */
	sv_free(&s);
	mono_reset(&m);
}

/* Rows that differ in idle only (a backend's waits for its client between
 * statements and in one), or in their statement only (by query), are
 * series of their own, each held on its own. */
static void test_monotonic_keeps_series_apart(void)
{
	const char *text =
		"{\"now_ns\":1,\"rows\":["
		"{\"data_dir\":\"/d\",\"database\":\"shop\",\"wait_event_type\":\"Client\","
		"\"wait_event\":\"ClientRead\",\"wait\":\"net\",\"count\":1,\"time_ns\":10},"
		"{\"data_dir\":\"/d\",\"database\":\"shop\",\"wait_event_type\":\"Client\","
		"\"wait_event\":\"ClientRead\",\"wait\":\"net\",\"idle\":true,\"count\":1,"
		"\"time_ns\":900},"
		"{\"data_dir\":\"/d\",\"database\":\"shop\",\"query_id\":\"42\","
		"\"wait_event_type\":\"Lock\",\"wait_event\":\"tuple\",\"wait\":\"lock\","
		"\"count\":1,\"time_ns\":20},"
		"{\"data_dir\":\"/d\",\"database\":\"shop\",\"query_id\":\"-7\","
		"\"wait_event_type\":\"Lock\",\"wait_event\":\"tuple\",\"wait\":\"lock\","
		"\"count\":1,\"time_ns\":30}]}";
	struct mono_state m = { 0 };
	struct sv_snapshot s;
	uint64_t idle = 0, busy = 0;

	CHECK(parse(text, &s) == 0);
	CHECK(mono_apply(&m, &s) == 0);
	CHECK(s.n == 4 && m.n == 4);
	for (size_t i = 0; i < s.n; i++)
		if (!strcmp(s.rows[i].wait, "net"))
			*(s.rows[i].idle ? &idle : &busy) += s.rows[i].time_ns;
	CHECK(idle == 900 && busy == 10);
	sv_free(&s);
	mono_reset(&m);
}

/* pid 10 waits for a lock across three snapshots (the deadlock check
 * splits it into intervals: two kernel wait types); pid 11 waits for
 * the same lock for half of the second window only; pid 12 is idle. */
static void test_streaks(void)
{
	const char *t[] = {
		"{\"now_ns\":1000000000,\"rows\":["
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 0, "[]") ","
		ROW(11, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 0, "[]") ","
		ROW(12, "/d", "shop", "client backend", "\"Client\"", "\"ClientRead\"", "poll", 0, 0, "[]")
		"]}",
		"{\"now_ns\":11000000000,\"rows\":["
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 9, 9950000000, "[]") ","
		ROW(11, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 5000000000, "[]") ","
		ROW(12, "/d", "shop", "client backend", "\"Client\"", "\"ClientRead\"", "poll", 0, 10000000000, "[]")
		"]}",
		"{\"now_ns\":21000000000,\"rows\":["
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 18, 19900000000, "[]") ","
		ROW(10, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "cpu", 1, 50000000, "[]") ","
		ROW(11, "/d", "shop", "client backend", "\"Lock\"", "\"transactionid\"", "lock", 0, 15000000000, "[]") ","
		ROW(12, "/d", "shop", "client backend", "\"Client\"", "\"ClientRead\"", "poll", 1, 15000000000, "[]")
		"]}",
	};
	struct sv_snapshot snap[3];
	struct streaks st = { 0 };
	FILE *f;

	for (int i = 0; i < 3; i++)
		CHECK(parse(t[i], &snap[i]) == 0);
	CHECK(streaks_update(&st, &snap[0], &snap[1]) == 0);
	/* 10: 99.5 % of the window; 12 all of it; 11 half */
	CHECK(st.n == 2);
	CHECK(streaks_update(&st, &snap[1], &snap[2]) == 0);
	/* 10 goes on (its cpu row counts), 11 has all of it, 12 only half */
	CHECK(st.n == 2);
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(streaks_render(f, &st) == 0);
	fclose(f);
	CHECK(has_line("pgoff_wait_longest_seconds{" CL ",wait_event_type=\"Lock\",wait_event=\"transactionid\"} 20"));
	CHECK(lacks("ClientRead"));
	/* the same snapshot again: no time passed, nothing changes */
	CHECK(streaks_update(&st, &snap[2], &snap[2]) == 0 && st.n == 2);
	streaks_reset(&st);
	CHECK(st.n == 0);
	for (int i = 0; i < 3; i++)
		sv_free(&snap[i]);
}

/* A backend of the cluster ID at /srv/pgc/data (a path two containers
 * share), owner OWNER, container CT, sleeping NS ns. */
#define SROW(pid, id, owner, ct, ns)                                         \
	"{\"pid\":" #pid ",\"cluster_id\":\"" id "\",\"owner\":" #owner ","  \
	ct "\"data_dir\":\"/srv/pgc/data\",\"backend_type\":\"client backend\"," \
	"\"database\":\"postgres\",\"wait_event_type\":\"Timeout\","          \
	"\"wait_event\":\"PgSleep\",\"wait\":\"sleep\",\"count\":0,"            \
	"\"time_ns\":" #ns ",\"hist\":[]}"
#define CT_A "3f1c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3"
#define CTA "\"container\":{\"runtime\":\"docker\",\"id\":\"" CT_A "\"},"
#define CLA "cluster=\"/srv/pgc/data\",cluster_id=\"13e382a564cd7b20\"," \
	"owner=\"999\",container=\"" CT_A "\",pod_uid=\"\""
#define CLB "cluster=\"/srv/pgc/data\",cluster_id=\"9c1de0a7b3f24e61\"," \
	"owner=\"999\",container=\"\",pod_uid=\"\""
#define CLC "cluster=\"/srv/pgc/data\",cluster_id=\"9c1de0a7b3f24e61\"," \
	"owner=\"1001\",container=\"\",pod_uid=\"\""

/*
 * Three clusters at one path: A in a container, B on the host, C a
 * look-alike of another owner that made B's id come out (as no hash
 * does: an owner of its own is enough). Each sleeps 10 s of the 10 s
 * between two scrapes: the gauges per wait, the longest waits and the
 * histogram are each cluster's own; and the clusters are described, at
 * one path, as ps tells them.
 */
static void test_clusters_at_one_path(void)
{
	static const char prev_text[] =
		"{\"now_ns\":1000000000,\"rows\":["
		SROW(10, "13e382a564cd7b20", 999, CTA, 0) ","
		SROW(20, "9c1de0a7b3f24e61", 999, "", 0) ","
		SROW(30, "9c1de0a7b3f24e61", 1001, "", 0) "]}";
	static const char cur_text[] =
		"{\"now_ns\":11000000000,\"rows\":["
		SROW(10, "13e382a564cd7b20", 999, CTA, 10000000000) ","
		SROW(20, "9c1de0a7b3f24e61", 999, "", 10000000000) ","
		SROW(30, "9c1de0a7b3f24e61", 1001, "", 10000000000) "]}";
	static const char ps_text[] =
		"{\"clusters\":[{\"id\":1,\"cluster_id\":\"13e382a564cd7b20\","
		"\"owner\":999," CTA "\"data_dir\":\"/srv/pgc/data\",\"port\":5432,"
		"\"version\":\"15.18\",\"path_shared\":2},"
		"{\"id\":2,\"cluster_id\":\"9c1de0a7b3f24e61\",\"owner\":999,"
		"\"data_dir\":\"/srv/pgc/data\",\"port\":5433,\"version\":\"15.18\","
		"\"unit\":\"postgresql@15-main.service\",\"path_shared\":2},"
		"{\"id\":3,\"cluster_id\":\"9c1de0a7b3f24e61\",\"owner\":1001,"
		"\"data_dir\":\"/srv/pgc/data\",\"port\":5434,\"version\":\"15.18\","
		"\"path_shared\":2}]}";
	struct sv_snapshot prev, cur;
	struct streaks st = { 0 };
	json_object *ps = json_tokener_parse(ps_text);
	FILE *f;

	CHECK(ps && parse(prev_text, &prev) == 0 && parse(cur_text, &cur) == 0);
	free(page);
	page = NULL;
	f = open_memstream(&page, &page_len);
	CHECK(ex_render_aas(f, &prev, &cur) == 0);
	CHECK(ex_render_histogram(f, &cur) == 0);
	CHECK(streaks_update(&st, &prev, &cur) == 0);
	CHECK(streaks_render(f, &st) == 0);
	CHECK(ex_render_clusters(f, ps) == 0);
	fclose(f);
	CHECK(has_line("pgoff_backends_waiting{" CLA ",wait_event_type=\"Timeout\",wait_event=\"PgSleep\",wait=\"sleep\"} 1"));
	CHECK(has_line("pgoff_backends_waiting{" CLB ",wait_event_type=\"Timeout\",wait_event=\"PgSleep\",wait=\"sleep\"} 1"));
	CHECK(has_line("pgoff_backends_waiting{" CLC ",wait_event_type=\"Timeout\",wait_event=\"PgSleep\",wait=\"sleep\"} 1"));
	CHECK(has_line("pgoff_wait_duration_seconds_sum{" CLA ",wait=\"sleep\",wait_event_type=\"Timeout\"} 10"));
	CHECK(has_line("pgoff_wait_duration_seconds_sum{" CLC ",wait=\"sleep\",wait_event_type=\"Timeout\"} 10"));
	CHECK(has_line("pgoff_wait_longest_seconds{" CLB ",wait_event_type=\"Timeout\",wait_event=\"PgSleep\"} 10"));
	CHECK(has_line("pgoff_wait_longest_seconds{" CLC ",wait_event_type=\"Timeout\",wait_event=\"PgSleep\"} 10"));
	CHECK(has_line("pgoff_cluster_info{" CLA ",runtime=\"docker\",unit=\"\",version=\"15.18\",port=\"5432\"} 1"));
	CHECK(has_line("pgoff_cluster_info{" CLB ",runtime=\"\",unit=\"postgresql@15-main.service\",version=\"15.18\",port=\"5433\"} 1"));
	CHECK(has_line("pgoff_cluster_path_shared{" CLC "} 2"));
	streaks_reset(&st);
	json_object_put(ps);
	sv_free(&prev);
	sv_free(&cur);
}

int main(void)
{
	RUN(test_histogram);
	RUN(test_aas);
	RUN(test_aas_idle);
	RUN(test_top_queries);
	RUN(test_broker_down);
	RUN(test_http_counts);
	RUN(test_broker_up);
	RUN(test_monotonic);
	RUN(test_monotonic_keeps_series_apart);
	RUN(test_streaks);
	RUN(test_clusters_at_one_path);
	free(page);
	return CHECK_DONE();
}
