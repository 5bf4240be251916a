// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_exporter.c - libFuzzer target for what pgoff_exporter does with
 * pgoffd's replies: a line, strictly parsed, taken as a status reply, a
 * ps reply (the clusters) and a stats reply; the counters held across two scrapes (monotonic.c),
 * the AAS gauge and the longest waits between the reply and itself, and
 * the whole page rendered. Nothing from the broker is trusted.
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
#include "protocol/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgoff_error perr;
	struct mono_state m = { 0 };
	struct streaks st = { 0 };
	struct sv_snapshot s, again, later;
	struct ex_scrape sc = { .version = "0", .revision = "r", .up = true };
	json_object *obj = pgoff_parse_line((const char *)data, size, 64, &perr);
	char err[160];
	FILE *out;

	if (!obj)
		return 0;
	out = fopen("/dev/null", "w");
	if (!out)
		abort();
	if (sv_parse(obj, &s, err, sizeof(err)) == 0) {
		if (sv_parse(obj, &again, err, sizeof(err)) ||
		    sv_parse(obj, &later, err, sizeof(err)))
			abort();	/* the same reply parses the same */
		later.now_ns = later.now_ns < UINT64_MAX - 1000000000 ?
			       later.now_ns + 1000000000 : later.now_ns;
		if (mono_apply(&m, &s) == 0 && mono_apply(&m, &again) == 0 &&
		    m.decreases != 0)
			abort();	/* a reply is never below itself */
		streaks_update(&st, &s, &later);
		sc.status = obj;
		sc.ps = obj;
		sc.labels = &s;
		sc.pids_prev = &again;
		sc.pids = &later;
		sc.streaks = &st;
		ex_render(out, &sc);
		sc.per_pid = true;
		ex_render(out, &sc);
		sv_free(&s);
		sv_free(&again);
		sv_free(&later);
	}
	sc = (struct ex_scrape){ .version = "0", .revision = "r", .up = false,
				 .status = obj };
	ex_render(out, &sc);
	fclose(out);
	streaks_reset(&st);
	mono_reset(&m);
	json_object_put(obj);
	return 0;
}
