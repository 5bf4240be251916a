// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_client.c - libFuzzer target for what pgoffctl does with a line from
 * the broker: strict parse, then every renderer (event table line, ps,
 * status; a stats reply as top and metrics show it, also differenced
 * against itself), whatever shape the object has.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "client/render.h"
#include "client/stats_view.h"
#include "protocol/protocol.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgoff_error err;
	json_object *obj;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	if (size > PGOFF_MAX_LINE)
		return 0;
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
	fclose(out);
	free(buf);
	json_object_put(obj);
	return 0;
}
