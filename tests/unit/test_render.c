// SPDX-License-Identifier: GPL-2.0-only
/* pgoffctl's table: the SQL line under an event stays one safe line. */
#define _GNU_SOURCE
#include <stdlib.h>
#include "client/render.h"
#include "protocol/protocol.h"
#include "common/utf8.h"
#include "tests/unit/check.h"
#include "tests/unit/terminal_safe.h"

/* render_event's output for an event whose query is q. */
static char *rendered(const char *q)
{
	json_object *ev = json_object_new_object();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_object_object_add(ev, "pid", json_object_new_int(42));
	json_object_object_add(ev, "query", json_object_new_string(q));
	render_event(f, ev);
	fclose(f);
	json_object_put(ev);
	return buf;
}

static const char *query_line(const char *out)
{
	const char *nl = strchr(out, '\n');

	return nl ? nl + 1 : "";
}

static void test_whitespace_folds(void)
{
	char *out = rendered("select\n\t1,   2\r\n from t");

	CHECK(strstr(query_line(out), "query: select 1, 2 from t\n") != NULL);
	free(out);
}

/* A space and a character added at the limit must not overflow. */
static void test_long_queries_are_cut(void)
{
	for (size_t space_at = 140; space_at < 160; space_at++) {
		char q[400];
		char *out;
		const char *line;

		memset(q, 'a', sizeof(q) - 1);
		q[sizeof(q) - 1] = '\0';
		q[space_at] = ' ';
		out = rendered(q);
		line = query_line(out);
		CHECK(strlen(line) <= 15 + 8 + 150 + 3 + 1);
		CHECK(strstr(line, "...\n") != NULL);
		free(out);
	}
}

static void test_no_control_bytes_or_split_characters(void)
{
	char q[400] = "select '\x1b[2J'";
	char clean[512];

	/* 2-byte characters across the cut, at every alignment */
	for (int shift = 0; shift < 2; shift++) {
		char *out;
		const char *line;

		strcpy(q, shift ? "x" : "");
		strcat(q, "select '\x1b[2J' ");
		while (strlen(q) < 380)
			strcat(q, "\xc3\xa9");
		out = rendered(q);
		line = query_line(out);
		CHECK(strchr(line, '\x1b') == NULL);
		CHECK(strstr(line, "'?[2J'") != NULL);
		pgoff_utf8_clean(line, strlen(line), clean);
		CHECK_STR(clean, line);		/* nothing was invalid */
		free(out);
	}
}

/* What every hostile string below tries: ESC sequences (CSI, OSC with
 * BEL), CSI in its C1 form (U+009B), a lone 0x9b byte (CSI in 8-bit
 * terminals), overlong encodings of it, newlines, DEL. */
#define CSI_C1 "\xc2\x9b"

static char *render_to_string(void (*fn)(FILE *, json_object *), json_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, o);
	fclose(f);
	return buf;
}

static json_object *str(const char *s)
{
	/* json-c keeps any bytes; pgoffctl gets whatever pgoffd sends */
	return json_object_new_string(s);
}

static void test_event_cells_are_clean(void)
{
	json_object *ev = json_object_new_object();
	json_object *pg = json_object_new_object();
	json_object *w = json_object_new_object();
	json_object *st = json_object_new_array();
	char *out;

	json_object_object_add(ev, "time", str("2026-12-02T14:26:25.1\x1b[2J78564Z"));
	json_object_object_add(ev, "pid", json_object_new_int(42));
	json_object_object_add(ev, "duration_ns", json_object_new_int(5000));
	json_object_object_add(ev, "wait", str("\x1b[5m"));
	json_object_object_add(pg, "wait_event_type", str("Lock\n\rfake"));
	json_object_object_add(pg, "wait_event", str("a\x9b" "31m"));
	json_object_object_add(pg, "backend_type", str("client" CSI_C1 "2Jbackend"));
	json_object_object_add(ev, "pg", pg);
	json_object_object_add(w, "pid", json_object_new_int(7));
	json_object_object_add(w, "comm", str("\x1b]0;owned\x07"));
	json_object_object_add(ev, "waker", w);
	json_object_array_add(st, str("do_\xc0\x9b" "epoll"));
	json_object_array_add(st, str("x\xe0\x82\x9b\x7f"));
	json_object_array_add(st, str("\n"));
	json_object_object_add(ev, "stack", st);
	json_object_object_add(ev, "query", str("select '" CSI_C1 "2J\x9b'"));
	out = render_to_string(render_event, ev);
	CHECK(terminal_safe(out, 2));
	CHECK_CONTAINS(out, "7 ?]0;owned?");
	CHECK_CONTAINS(out, "client?2Jbackend");
	CHECK_CONTAINS(out, "do_??epoll < x???? < ?");
	CHECK_CONTAINS(out, "query: select '?2J?'");
	free(out);
	json_object_put(ev);
}

/* --user-stack: PostgreSQL's frames on a line of their own, made safe;
 * a missing stack says why. */
static void test_user_stack_line(void)
{
	json_object *ev = json_object_new_object();
	json_object *us = json_object_new_array();
	char *out;

	json_object_object_add(ev, "pid", json_object_new_int(42));
	json_object_array_add(us, str("epoll_wait"));
	json_object_array_add(us, str("WaitLatch"));
	json_object_array_add(us, str("evil\x1b[2J"));
	json_object_object_add(ev, "user_stack", us);
	out = render_to_string(render_event, ev);
	CHECK(terminal_safe(out, 2));
	CHECK_CONTAINS(out, "\n    user stack: epoll_wait < WaitLatch < evil?[2J\n");
	free(out);
	json_object_object_add(ev, "user_stack", NULL);
	json_object_object_add(ev, "user_stack_error", str("not walked"));
	out = render_to_string(render_event, ev);
	CHECK_CONTAINS(out, "\n    user stack: (not walked)\n");
	free(out);
	json_object_put(ev);
}

static void test_ps_cells_are_clean(void)
{
	json_object *ps = json_object_new_object();
	json_object *cl = json_object_new_array(), *c = json_object_new_object();
	json_object *procs = json_object_new_array(), *p = json_object_new_object();
	char *out;

	json_object_object_add(c, "id", json_object_new_int(1));
	json_object_object_add(c, "data_dir", str("/home/x/\ncluster 2: PostgreSQL 99\x1b[8m"));
	json_object_object_add(c, "version", str("15" CSI_C1 "8m"));
	json_object_array_add(cl, c);
	json_object_object_add(p, "pid", json_object_new_int(5));
	json_object_object_add(p, "backend_type", str("\x07\x08"));
	json_object_object_add(p, "database", str("db\x9b" "1;1H"));
	json_object_object_add(p, "user", str("u\xc0\x80\r"));
	json_object_array_add(procs, p);
	json_object_object_add(ps, "clusters", cl);
	json_object_object_add(ps, "processes", procs);
	out = render_to_string(render_ps, ps);
	CHECK(terminal_safe(out, 3));	/* the cluster, the header, the process */
	CHECK_CONTAINS(out, "PostgreSQL 15?8m,");
	CHECK_CONTAINS(out, "/home/x/?cluster 2: PostgreSQL 99?[8m");
	CHECK_CONTAINS(out, "db?1;1H");
	free(out);
	json_object_put(ps);
}

/* A cluster's run-time names: how many, or why none (its words clean). */
static void test_ps_run_time_names(void)
{
	json_object *ps = json_object_new_object();
	json_object *cl = json_object_new_array();
	json_object *a = json_object_new_object(), *b = json_object_new_object();
	char *out;

	json_object_object_add(a, "id", json_object_new_int(1));
	json_object_object_add(a, "run_time_names", json_object_new_int(3));
	json_object_object_add(b, "id", json_object_new_int(2));
	json_object_object_add(b, "run_time_names", json_object_new_int(0));
	json_object_object_add(b, "run_time_names_missing",
			       str("cannot open its memory\x1b[2J"));
	json_object_array_add(cl, a);
	json_object_array_add(cl, b);
	json_object_object_add(ps, "clusters", cl);
	out = render_to_string(render_ps, ps);
	CHECK(terminal_safe(out, 3));
	CHECK_CONTAINS(out, ", 3 run-time names\n");
	CHECK_CONTAINS(out, ", run-time names: cannot open its memory?[2J\n");
	free(out);
	json_object_put(ps);
}

/* A cluster's identity: its id, owner, container (12 digits, as docker
 * ps shows them), service, and the clusters at its path; a hostile
 * value of any is a clean cell. */
static void test_ps_identity(void)
{
	json_object *ps = json_object_new_object();
	json_object *cl = json_object_new_array(), *c = json_object_new_object();
	json_object *co = json_object_new_object(), *same = json_object_new_array();
	char *out;

	json_object_object_add(c, "id", json_object_new_int(2));
	json_object_object_add(c, "cluster_id", str("9c1de0a7b3f24e61"));
	json_object_object_add(c, "owner", json_object_new_int(999));
	json_object_object_add(c, "data_dir", str("/var/lib/postgresql/data"));
	json_object_object_add(c, "port", json_object_new_int(5432));
	json_object_object_add(c, "version", str("15.18"));
	json_object_object_add(c, "postmaster_pid", json_object_new_int(4242));
	json_object_object_add(co, "runtime", str("containerd"));
	json_object_object_add(co, "id", str("3f1c2b9a8e7d6c5b4a39281706f5e4d3"
					     "c2b1a09f8e7d6c5b4a3928170615e4d3"));
	json_object_object_add(co, "pod_uid", str("0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f"));
	json_object_object_add(c, "container", co);
	json_object_object_add(c, "unit", str("x\x1b[2J.service"));
	json_object_object_add(c, "path_shared", json_object_new_int(2));
	json_object_array_add(same, str("a1b2c3d4e5f60718"));
	json_object_array_add(same, str("\x1b]0;pwned\x07"));
	json_object_object_add(c, "path_shared_with", same);
	json_object_array_add(cl, c);
	json_object_object_add(ps, "clusters", cl);
	out = render_to_string(render_ps, ps);
	CHECK(terminal_safe(out, 3));	/* the cluster, its look-alikes, the header */
	CHECK_CONTAINS(out, "cluster 2 9c1de0a7b3f24e61: PostgreSQL 15.18, port 5432, "
		       "postmaster 4242, uid 999, /var/lib/postgresql/data, "
		       "containerd 3f1c2b9a8e7d, pod 0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f, "
		       "x?[2J.service, 0 run-time names\n");
	CHECK_CONTAINS(out, "  the same path as 2 other clusters (a1b2c3d4e5f60718, "
		       "?]0;pwned?): another container's, or a look-alike; told "
		       "apart by their ids\n");
	free(out);
	json_object_put(ps);
}

static json_object *untraced_reply(int n, int total)
{
	json_object *ps = json_object_new_object();
	json_object *u = json_object_new_array();

	for (int i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "pid", json_object_new_int(100 + i));
		json_object_object_add(o, "uid", json_object_new_int(995));
		json_object_object_add(o, "why", str("why"));
		json_object_array_add(u, o);
	}
	json_object_object_add(ps, "untraced", u);
	if (total >= 0)
		json_object_object_add(ps, "untraced_total",
				       json_object_new_int(total));
	return ps;
}

/* A cut list of untraced processes says so, how many there are, and how
 * many more pgoffd had no room to keep. */
static void test_ps_untraced_says_when_cut(void)
{
	json_object *ps = untraced_reply(2, 300);
	char *out = render_to_string(render_ps, ps);

	CHECK_CONTAINS(out, "not traced (the newest 2 of 300):\n");
	CHECK_CONTAINS(out, "    101     995  why\n");
	free(out);
	json_object_put(ps);
	ps = untraced_reply(2, 2);
	out = render_to_string(render_ps, ps);
	CHECK_CONTAINS(out, "not traced:\n");
	free(out);
	json_object_put(ps);
	ps = untraced_reply(1, -1);	/* an older pgoffd: no total */
	out = render_to_string(render_ps, ps);
	CHECK_CONTAINS(out, "not traced:\n");
	free(out);
	json_object_put(ps);
	ps = untraced_reply(2, 4096);
	json_object_object_add(ps, "untraced_unkept", json_object_new_int(7));
	out = render_to_string(render_ps, ps);
	CHECK_CONTAINS(out, "not traced (the newest 2 of 4096) (and 7 more not kept):\n");
	free(out);
	json_object_put(ps);
	ps = untraced_reply(0, 0);	/* none kept, some counted */
	json_object_object_add(ps, "untraced_unkept", json_object_new_int(3));
	out = render_to_string(render_ps, ps);
	CHECK_CONTAINS(out, "not traced (and 3 more not kept):\n");
	CHECK(strstr(out, "WHY") == NULL);	/* no header over no row */
	free(out);
	json_object_put(ps);
}

static void test_status_cells_are_clean(void)
{
	json_object *st = json_object_new_object(), *cnt = json_object_new_object();
	char *out;

	json_object_object_add(st, "broker", str("pgoffd\n\x1b[1mfake: 1"));
	json_object_object_add(st, "k\x1b[2J", json_object_new_int(1));
	json_object_object_add(cnt, "x" CSI_C1, str("\x9b"));
	json_object_object_add(st, "counters", cnt);
	out = render_to_string(render_status, st);
	CHECK(terminal_safe(out, 4));
	CHECK_CONTAINS(out, "pgoffd??[1mfake: 1");
	free(out);
	json_object_put(st);
}

/* history's owners: a line each, key=value, cells as clean */
static void test_history_owners_a_line_each(void)
{
	json_object *h = json_object_new_object(), *a = json_object_new_array();
	json_object *o = json_object_new_object(), *p = json_object_new_object();
	char *out;

	json_object_object_add(o, "uid", json_object_new_int(115));
	json_object_object_add(o, "events_refused", json_object_new_int(7));
	json_object_object_add(p, "uid", NULL);
	json_object_object_add(p, "owner", str("other\x1b[2J"));
	json_object_array_add(a, o);
	json_object_array_add(a, p);
	json_object_object_add(h, "owners", a);
	out = render_to_string(render_status, h);
	CHECK(terminal_safe(out, 3));
	CHECK_CONTAINS(out, "owners:\n  uid=115 events_refused=7\n"
			    "  uid=null owner=other?[2J\n");
	free(out);
	json_object_put(h);
}

int main(void)
{
	RUN(test_whitespace_folds);
	RUN(test_long_queries_are_cut);
	RUN(test_no_control_bytes_or_split_characters);
	RUN(test_event_cells_are_clean);
	RUN(test_user_stack_line);
	RUN(test_ps_untraced_says_when_cut);
	RUN(test_ps_cells_are_clean);
	RUN(test_ps_run_time_names);
	RUN(test_ps_identity);
	RUN(test_status_cells_are_clean);
	RUN(test_history_owners_a_line_each);
	return CHECK_DONE();
}
