// SPDX-License-Identifier: GPL-2.0-only
/*
 * render.c - tables for humans; --json output never passes through here.
 * Every string from pgoffd is hostile (a comm, a data directory, a title
 * any local user can set): each goes through pgoff_utf8_cell on its way
 * to a cell, so no control character reaches the terminal.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "client/render.h"
#include "protocol/protocol.h"
#include "common/units.h"
#include "common/utf8.h"

static const char *str_or(json_object *o, const char *key, const char *dflt)
{
	const char *s;

	return o && pgoff_get_string(o, key, &s) ? s : dflt;
}

/* A cell's room: the longest column here, or a whole value on its line. */
#define CELL_MAX 512

/* The member key of o (or dflt), made safe for a cell, into buf. */
static const char *cell(json_object *o, const char *key, const char *dflt,
			char buf[CELL_MAX])
{
	pgoff_utf8_cell(str_or(o, key, dflt), buf, CELL_MAX, NULL);
	return buf;
}

static const char *dur(json_object *o, const char *key, char *buf, size_t len)
{
	int64_t ns;

	if (!pgoff_get_int64(o, key, &ns) || ns < 0)
		return "?";
	return pgoff_format_duration((uint64_t)ns, buf, len);
}

void render_event_header(FILE *out)
{
	fprintf(out, "%-15s %7s %9s %9s %-6s %-28s %-18s %-22s %s\n", "TIME",
		"PID", "DURATION", "RUNQ", "WAIT", "PG WAIT EVENT", "BACKEND",
		"WOKEN BY", "STACK / INTERVALS");
}

#define QUERY_COLS 150	/* bytes of SQL shown under an event */

/*
 * The SQL under its event, on one line: whitespace runs become one
 * space, then control characters (a terminal escape in a string
 * literal) and bad UTF-8 '?', and a cut never splits a character.
 */
static void render_query(FILE *out, const char *q)
{
	char line[QUERY_COLS + 4], *folded;
	size_t n = 0;
	bool space = false, cut;

	if (!q)
		return;
	folded = malloc(strlen(q) + 1);
	if (!folded)
		return;
	for (; *q; q++) {
		if (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') {
			space = n > 0;
			continue;
		}
		if (space)
			folded[n++] = ' ';
		space = false;
		folded[n++] = *q;
	}
	folded[n] = '\0';
	n = pgoff_utf8_cell(folded, line, QUERY_COLS + 1, &cut);
	free(folded);
	if (cut) {
		memcpy(line + n, "...", 4);
		n += 3;
	}
	fprintf(out, "%15s query: %s\n", "", line);
}

/* A member of the given type, or NULL: what pgoffd sends is not trusted
 * to have the shape it should (json-c asserts on the wrong type). */
static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, type) ? v : NULL;
}

/* PostgreSQL's frames, leaf first, on a line of their own (--user-stack). */
static void render_user_stack(FILE *out, json_object *ev)
{
	json_object *us = member(ev, "user_stack", json_type_array);
	char raw[1024] = "", line[400];
	const char *why = str_or(ev, "user_stack_error", NULL);

	if (!us && !why)
		return;
	for (size_t i = 0; us && i < json_object_array_length(us); i++) {
		const char *f = json_object_get_string(
			json_object_array_get_idx(us, i));
		size_t used = strlen(raw);

		snprintf(raw + used, sizeof(raw) - used, "%s%s", i ? " < " : "",
			 f ? f : "?");
	}
	if (why) {
		size_t used = strlen(raw);

		snprintf(raw + used, sizeof(raw) - used, "%s(%s)",
			 raw[0] ? " " : "", why);
	}
	pgoff_utf8_cell(raw, line, sizeof(line), NULL);
	fprintf(out, "    user stack: %s\n", line);
}

void render_event(FILE *out, json_object *ev)
{
	char d[PGOFF_DURATION_BUFSZ], rq[PGOFF_DURATION_BUFSZ];
	char pgwait[64] = "-", waker[48] = "-", stack[160], raw[CELL_MAX] = "";
	char t[16], wait[7], backend[CELL_MAX];
	const char *time = str_or(ev, "time", "?");
	json_object *pg = NULL, *w = NULL, *st = NULL;
	int64_t pid = 0, wpid, n;

	pg = member(ev, "pg", json_type_object);
	w = member(ev, "waker", json_type_object);
	st = member(ev, "stack", json_type_array);
	pgoff_get_int64(ev, "pid", &pid);
	/* each cell is put together from what came, then made safe whole */
	if (pg && str_or(pg, "wait_event_type", NULL)) {
		snprintf(raw, sizeof(raw), "%s:%s", str_or(pg, "wait_event_type", "?"),
			 str_or(pg, "wait_event", "?"));
		pgoff_utf8_cell(raw, pgwait, sizeof(pgwait), NULL);
	}
	if (w && pgoff_get_int64(w, "pid", &wpid)) {
		snprintf(raw, sizeof(raw), "%" PRId64 " %s", wpid,
			 str_or(w, "comm", "?"));
		pgoff_utf8_cell(raw, waker, sizeof(waker), NULL);
	}
	/* an episode: how it was made up; an interval: the first frames say
	 * why (the full stack is in --json) */
	raw[0] = '\0';
	if (pgoff_get_int64(ev, "intervals", &n)) {
		char oncpu[PGOFF_DURATION_BUFSZ];

		snprintf(raw, sizeof(raw), "%" PRId64 " interval%s, %s on cpu",
			 n, n == 1 ? "" : "s", dur(ev, "on_cpu_ns", oncpu, sizeof(oncpu)));
	}
	for (size_t i = 0; st && i < json_object_array_length(st) && i < 3; i++) {
		const char *f = json_object_get_string(
			json_object_array_get_idx(st, i));
		size_t used = strlen(raw);

		snprintf(raw + used, sizeof(raw) - used, "%s%s",
			 i ? " < " : "", f ? f : "?");
	}
	pgoff_utf8_cell(raw, stack, sizeof(stack), NULL);
	/* "2026-12-02T14:26:25.178564Z" -> "14:26:25.178564" */
	if (strlen(time) >= 26)
		time += 11;
	pgoff_utf8_cell(time, t, sizeof(t), NULL);
	pgoff_utf8_cell(str_or(ev, "wait", "?"), wait, sizeof(wait), NULL);
	fprintf(out, "%-15s %7" PRId64 " %9s %9s %-6s %-28s %-18s %-22s %s\n",
		t, pid, dur(ev, "duration_ns", d, sizeof(d)),
		dur(ev, "runq_ns", rq, sizeof(rq)), wait,
		pgwait, cell(pg, "backend_type", "-", backend), waker, stack);
	render_user_stack(out, ev);
	render_query(out, str_or(ev, "query", NULL));
}

/* Processes named postgres that pgoffd does not trace, and why: the
 * newest that fit in the reply, of the total it keeps; past what it keeps
 * the others are only counted. */
static void render_untraced(FILE *out, json_object *ps)
{
	json_object *untraced = member(ps, "untraced", json_type_array);
	size_t n = untraced ? json_object_array_length(untraced) : 0;
	int64_t total = 0, unkept = 0;

	pgoff_get_int64(ps, "untraced_total", &total);
	pgoff_get_int64(ps, "untraced_unkept", &unkept);
	if (!n && unkept <= 0)
		return;
	fprintf(out, "not traced");
	if ((int64_t)n < total)
		fprintf(out, " (the newest %zu of %" PRId64 ")", n, total);
	if (unkept > 0)
		fprintf(out, " (and %" PRId64 " more not kept)", unkept);
	fprintf(out, ":\n");
	if (n)
		fprintf(out, "%7s %7s  %s\n", "PID", "UID", "WHY");
	for (size_t i = 0; i < n; i++) {
		json_object *u = json_object_array_get_idx(untraced, i);
		int64_t pid = 0, uid = 0;

		pgoff_get_int64(u, "pid", &pid);
		pgoff_get_int64(u, "uid", &uid);
		fprintf(out, "%7" PRId64 " %7" PRId64 "  %s\n", pid, uid,
			str_or(u, "why", "?"));
	}
}

/*
 * A cluster's container as operators name it: its runtime and the first
 * 12 digits of its id (as docker ps shows them), its pod; into buf, ""
 * on the host.
 */
static const char *container_cell(json_object *c, char buf[CELL_MAX])
{
	json_object *co = member(c, "container", json_type_object);
	char rt[24], id[13], pod[48];

	buf[0] = '\0';
	if (!co)
		return buf;
	pgoff_utf8_cell(str_or(co, "runtime", "container"), rt, sizeof(rt), NULL);
	pgoff_utf8_cell(str_or(co, "id", ""), id, sizeof(id), NULL);
	pgoff_utf8_cell(str_or(co, "pod_uid", ""), pod, sizeof(pod), NULL);
	snprintf(buf, CELL_MAX, "%s%s%s%s%s%s", id[0] ? rt : "", id[0] ? " " : "",
		 id, id[0] && pod[0] ? ", " : "", pod[0] ? "pod " : "", pod);
	return buf;
}

/* One cluster's line, and one more for clusters at its path. */
static void render_cluster(FILE *out, json_object *c)
{
	char c1[CELL_MAX], c2[CELL_MAX], c3[CELL_MAX], c4[CELL_MAX],
	     c5[CELL_MAX];
	json_object *same = member(c, "path_shared_with", json_type_array);
	int64_t id = 0, port = 0, pm = 0, uid = -1, shared = 0, run = 0;

	pgoff_get_int64(c, "id", &id);
	pgoff_get_int64(c, "port", &port);
	pgoff_get_int64(c, "postmaster_pid", &pm);
	pgoff_get_int64(c, "owner", &uid);
	fprintf(out, "cluster %" PRId64 " %s: PostgreSQL %s, port %" PRId64
		", postmaster %" PRId64 ", uid %" PRId64 ", %s", id,
		cell(c, "cluster_id", "?", c1), cell(c, "version", "?", c2),
		port, pm, uid, cell(c, "data_dir", "?", c3));
	if (container_cell(c, c4)[0])
		fprintf(out, ", %s", c4);
	if (str_or(c, "unit", NULL))
		fprintf(out, ", %s", cell(c, "unit", "", c5));
	pgoff_get_int64(c, "run_time_names", &run);
	if (member(c, "run_time_names_missing", json_type_string))
		fprintf(out, ", run-time names: %s\n",
			cell(c, "run_time_names_missing", "?", c5));
	else
		fprintf(out, ", %" PRId64 " run-time name%s\n", run,
			run == 1 ? "" : "s");
	if (!pgoff_get_int64(c, "path_shared", &shared) || shared <= 0)
		return;
	fprintf(out, "  the same path as %" PRId64 " other cluster%s (", shared,
		shared == 1 ? "" : "s");
	for (size_t i = 0; same && i < json_object_array_length(same); i++) {
		const char *o = json_object_get_string(
			json_object_array_get_idx(same, i));

		pgoff_utf8_cell(o ? o : "?", c1, sizeof(c1), NULL);
		fprintf(out, "%s%s", i ? ", " : "", c1);
	}
	fprintf(out, "): another container's, or a look-alike; told apart "
		"by their ids\n");
}

void render_ps(FILE *out, json_object *ps)
{
	json_object *clusters = NULL, *procs = NULL;
	char c1[CELL_MAX], c2[CELL_MAX], c3[CELL_MAX];

	clusters = member(ps, "clusters", json_type_array);
	procs = member(ps, "processes", json_type_array);
	for (size_t i = 0; clusters && i < json_object_array_length(clusters); i++)
		render_cluster(out, json_object_array_get_idx(clusters, i));
	fprintf(out, "%7s %7s  %-28s %-16s %s\n", "PID", "CLUSTER",
		"BACKEND TYPE", "DATABASE", "USER");
	for (size_t i = 0; procs && i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		int64_t pid = 0, cl = 0;

		pgoff_get_int64(p, "pid", &pid);
		pgoff_get_int64(p, "cluster", &cl);
		fprintf(out, "%7" PRId64 " %7" PRId64 "  %-28s %-16s %s\n", pid,
			cl, cell(p, "backend_type", "-", c1),
			cell(p, "database", "-", c2), cell(p, "user", "-", c3));
	}
	render_untraced(out, ps);
}

/* A key or a value of a status reply, as text, into a cell. */
static const char *text_cell(const char *s, char buf[CELL_MAX])
{
	pgoff_utf8_cell(s ? s : "-", buf, CELL_MAX, NULL);
	return buf;
}

/* A list of objects (history's owners): a line each, its fields as
 * key=value. */
static void render_object_list(FILE *out, const char *key, json_object *list)
{
	char k[CELL_MAX], v[CELL_MAX];

	fprintf(out, "%s:\n", text_cell(key, k));
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *e = json_object_array_get_idx(list, i);
		const char *sep = "  ";

		if (!json_object_is_type(e, json_type_object))
			continue;
		json_object_object_foreach(e, k2, v2) {
			fprintf(out, "%s%s=", sep, text_cell(k2, k));
			fputs(text_cell(v2 ? json_object_get_string(v2) : "null", v),
			      out);
			sep = " ";
		}
		fputc('\n', out);
	}
}

void render_status(FILE *out, json_object *status)
{
	char k[CELL_MAX], v[CELL_MAX];

	json_object_object_foreach(status, key, val) {
		if (strcmp(key, "id") == 0 || strcmp(key, "ok") == 0)
			continue;
		if (json_object_is_type(val, json_type_array) &&
		    json_object_array_length(val) &&
		    json_object_is_type(json_object_array_get_idx(val, 0),
					json_type_object)) {
			render_object_list(out, key, val);
		} else if (json_object_is_type(val, json_type_object)) {
			fprintf(out, "%s:\n", text_cell(key, k));
			json_object_object_foreach(val, k2, v2)
				fprintf(out, "  %-20s %s\n", text_cell(k2, k),
					text_cell(json_object_get_string(v2), v));
		} else {
			fprintf(out, "%-22s %s\n", text_cell(key, k),
				text_cell(val ? json_object_get_string(val) : NULL, v));
		}
	}
}
