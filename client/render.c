// SPDX-License-Identifier: GPL-2.0-only
/* render.c - tables for humans; --json output never passes through here. */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include "client/render.h"
#include "protocol/protocol.h"
#include "protocol/units.h"

static const char *str_or(json_object *o, const char *key, const char *dflt)
{
	const char *s;

	return o && pgoff_get_string(o, key, &s) ? s : dflt;
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
 * space, control bytes (a terminal escape in a string literal) '?', and
 * a cut never splits a UTF-8 character.
 */
static void render_query(FILE *out, const char *q)
{
	char line[QUERY_COLS + 4];
	size_t n = 0;
	bool space = false;

	if (!q)
		return;
	for (; *q; q++) {
		unsigned char ch = (unsigned char)*q;

		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			space = n > 0;
			continue;
		}
		if (n + space + 1 > QUERY_COLS)
			break;
		if (space)
			line[n++] = ' ';
		space = false;
		line[n++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	if (*q) {
		if (((unsigned char)*q & 0xc0) == 0x80) {
			/* the cut fell inside a character: drop its start */
			while (n > 0 && ((unsigned char)line[n - 1] & 0xc0) == 0x80)
				n--;
			if (n > 0)
				n--;
		}
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n] = '\0';
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

void render_event(FILE *out, json_object *ev)
{
	char d[PGOFF_DURATION_BUFSZ], rq[PGOFF_DURATION_BUFSZ];
	char pgwait[64] = "-", waker[48] = "-", stack[160] = "";
	json_object *pg = NULL, *w = NULL, *st = NULL;
	const char *time = str_or(ev, "time", "?");
	int64_t pid = 0, wpid, n;

	pg = member(ev, "pg", json_type_object);
	w = member(ev, "waker", json_type_object);
	st = member(ev, "stack", json_type_array);
	pgoff_get_int64(ev, "pid", &pid);
	if (pg && str_or(pg, "wait_event_type", NULL))
		snprintf(pgwait, sizeof(pgwait), "%s:%s",
			 str_or(pg, "wait_event_type", "?"),
			 str_or(pg, "wait_event", "?"));
	if (w && pgoff_get_int64(w, "pid", &wpid))
		snprintf(waker, sizeof(waker), "%" PRId64 " %s", wpid,
			 str_or(w, "comm", "?"));
	/* an episode: how it was made up; an interval: the first frames say
	 * why (the full stack is in --json) */
	if (pgoff_get_int64(ev, "intervals", &n)) {
		char oncpu[PGOFF_DURATION_BUFSZ];

		snprintf(stack, sizeof(stack), "%" PRId64 " interval%s, %s on cpu",
			 n, n == 1 ? "" : "s", dur(ev, "on_cpu_ns", oncpu, sizeof(oncpu)));
	}
	for (size_t i = 0; st && i < json_object_array_length(st) && i < 3; i++) {
		const char *f = json_object_get_string(
			json_object_array_get_idx(st, i));
		size_t used = strlen(stack);

		snprintf(stack + used, sizeof(stack) - used, "%s%s",
			 i ? " < " : "", f ? f : "?");
	}
	/* "2026-12-02T14:26:25.178564Z" -> "14:26:25.178564" */
	if (strlen(time) >= 26)
		time += 11;
	fprintf(out, "%-15.15s %7" PRId64 " %9s %9s %-6s %-28s %-18s %-22s %s\n",
		time, pid, dur(ev, "duration_ns", d, sizeof(d)),
		dur(ev, "runq_ns", rq, sizeof(rq)), str_or(ev, "wait", "?"),
		pgwait, str_or(pg, "backend_type", "-"), waker, stack);
	render_query(out, str_or(ev, "query", NULL));
}

/* Processes named postgres that pgoffd does not trace, and why. */
static void render_untraced(FILE *out, json_object *untraced)
{
	size_t n = untraced ? json_object_array_length(untraced) : 0;

	if (!n)
		return;
	fprintf(out, "not traced:\n%7s %7s  %s\n", "PID", "UID", "WHY");
	for (size_t i = 0; i < n; i++) {
		json_object *u = json_object_array_get_idx(untraced, i);
		int64_t pid = 0, uid = 0;

		pgoff_get_int64(u, "pid", &pid);
		pgoff_get_int64(u, "uid", &uid);
		fprintf(out, "%7" PRId64 " %7" PRId64 "  %s\n", pid, uid,
			str_or(u, "why", "?"));
	}
}

void render_ps(FILE *out, json_object *ps)
{
	json_object *clusters = NULL, *procs = NULL;

	clusters = member(ps, "clusters", json_type_array);
	procs = member(ps, "processes", json_type_array);
	for (size_t i = 0; clusters && i < json_object_array_length(clusters); i++) {
		json_object *c = json_object_array_get_idx(clusters, i);
		int64_t id = 0, port = 0, pm = 0;

		pgoff_get_int64(c, "id", &id);
		pgoff_get_int64(c, "port", &port);
		pgoff_get_int64(c, "postmaster_pid", &pm);
		fprintf(out, "cluster %" PRId64 ": PostgreSQL %s, port %" PRId64
			", postmaster %" PRId64 ", %s\n", id,
			str_or(c, "version", "?"), port, pm,
			str_or(c, "data_dir", "?"));
	}
	fprintf(out, "%7s %7s  %-28s %-16s %s\n", "PID", "CLUSTER",
		"BACKEND TYPE", "DATABASE", "USER");
	for (size_t i = 0; procs && i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		int64_t pid = 0, cl = 0;

		pgoff_get_int64(p, "pid", &pid);
		pgoff_get_int64(p, "cluster", &cl);
		fprintf(out, "%7" PRId64 " %7" PRId64 "  %-28s %-16s %s\n", pid,
			cl, str_or(p, "backend_type", "-"),
			str_or(p, "database", "-"), str_or(p, "user", "-"));
	}
	render_untraced(out, member(ps, "untraced", json_type_array));
}

void render_status(FILE *out, json_object *status)
{
	json_object_object_foreach(status, key, val) {
		if (strcmp(key, "id") == 0 || strcmp(key, "ok") == 0)
			continue;
		if (json_object_is_type(val, json_type_object)) {
			fprintf(out, "%s:\n", key);
			json_object_object_foreach(val, k2, v2)
				fprintf(out, "  %-20s %s\n", k2,
					json_object_get_string(v2));
		} else {
			fprintf(out, "%-22s %s\n", key,
				val ? json_object_get_string(val) : "-");
		}
	}
}
