// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_client.c - libFuzzer target for what pgoffctl does with a line from
 * the broker: strict parse, then every renderer (event table line, ps,
 * status; a stats reply as top and metrics show it, also differenced
 * against itself), whatever shape the object has, and a flame graph of
 * the event's stack under its PostgreSQL wait; both flame outputs must be
 * valid UTF-8 with no control byte but '\n'.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client/flame.h"
#include "client/render.h"
#include "client/stats_view.h"
#include "protocol/protocol.h"
#include "common/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void render_stats(FILE *out, json_object *obj)
{
	struct sv_snapshot s, d;
	struct sv_group *g;
	char err[160];
	int n;

	if (sv_parse(obj, &s, err, sizeof(err)))
		return;
	sv_render_metrics(out, &s, obj, true);
	for (enum sv_by by = SV_BY_BACKEND; by <= SV_BY_DATABASE; by++) {
		n = sv_group(&s, by, &g);
		if (n < 0)
			abort();
		sv_render_top(out, g, (size_t)n, by, s.now_ns, s.hist_unit_ns, 0);
		json_object_put(sv_top_json(g, (size_t)n, by, s.now_ns,
					    s.hist_unit_ns, 0));
		free(g);
	}
	if (sv_delta(&s, &s, &d) == 0)
		sv_free(&d);
	sv_free(&s);
}

static void check_text(const char *buf, size_t len)
{
	char *clean = malloc(len + 1);

	if (!clean)
		abort();
	if (pgoff_utf8_clean(buf, len, clean) != len || memcmp(clean, buf, len) != 0)
		abort();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n')
			abort();
	free(clean);
}

/* As pgoffctl flame would: the wait, then the stack outermost first. */
static void flame_event(json_object *ev)
{
	const char *frames[FLAME_MAX_DEPTH + 8], *type, *event;
	json_object *pg, *st;
	char wait[256];
	size_t n = 0;
	int64_t ns = 0;
	struct flame *f = flame_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	int err;

	if (!f)
		abort();
	if (json_object_object_get_ex(ev, "pg", &pg) && json_object_is_type(pg, json_type_object) &&
	    pgoff_get_string(pg, "wait_event_type", &type) &&
	    pgoff_get_string(pg, "wait_event", &event))
		snprintf(wait, sizeof(wait), "%s:%s", type, event);
	else
		snprintf(wait, sizeof(wait), "(no PostgreSQL wait)");
	frames[n++] = wait;
	if (json_object_object_get_ex(ev, "stack", &st) && json_object_is_type(st, json_type_array))
		for (size_t i = json_object_array_length(st); i > 0 && n < FLAME_MAX_DEPTH + 8; i--)
			frames[n++] = json_object_get_string(json_object_array_get_idx(st, i - 1));
	pgoff_get_int64(ev, "duration_ns", &ns);
	err = flame_add(f, frames, n, ns > 0 ? (uint64_t)ns / 1000 : 0);
	if (err && err != -EINVAL)
		abort();
	if (!err)
		flame_add(f, frames, n / 2 ? n / 2 : 1, 1);
	out = open_memstream(&buf, &len);
	if (!out || flame_write_folded(f, out) || flame_write_svg(f, NULL, out))
		abort();
	fclose(out);
	check_text(buf, len);
	free(buf);
	flame_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgoff_error err;
	json_object *obj;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	if (size > PGOFF_MAX_LINE)
		return 0;
	/* watch --json's look at a line before it parses one */
	(void)pgoff_is_event_line((const char *)data, size);
	obj = pgoff_parse_line((const char *)data, size, 64, &err);
	if (!obj)
		return 0;
	out = open_memstream(&buf, &len);
	if (!out)
		abort();
	render_event(out, obj);
	render_ps(out, obj);
	render_status(out, obj);
	render_stats(out, obj);
	flame_event(obj);
	fclose(out);
	free(buf);
	json_object_put(obj);
	return 0;
}
