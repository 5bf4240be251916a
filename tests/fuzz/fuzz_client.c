// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_client.c - libFuzzer target for what pgoffctl does with a line from
 * the broker: strict parse, then every renderer (event table line, ps,
 * status), whatever shape the object has.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "client/render.h"
#include "protocol/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	fclose(out);
	free(buf);
	json_object_put(obj);
	return 0;
}
