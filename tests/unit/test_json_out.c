/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_json_out.c - pgoffctl --json: DEL and C1 controls, which json-c
 * writes raw, come out as \u escapes that parse back to the same text.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "client/json_out.h"
#include "protocol/protocol.h"
#include "tests/unit/check.h"
#include "tests/unit/terminal_safe.h"

static char *printed(json_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_out(f, o);
	fclose(f);
	return buf;
}

static void test_c1_and_del_escaped(void)
{
	static const char *const names[] = {
		"comm\xc2\x9b" "2J", "del\x7f", "nel\xc2\x85|nbsp\xc2\xa0|\xc2\x9f",
		"esc\x1b[1m", "caf\xc3\xa9",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_object *o = json_object_new_object(), *back, *v;
		struct pgoff_error err;
		char *out;

		json_object_object_add(o, "comm", json_object_new_string(names[i]));
		out = printed(o);
		CHECK(terminal_safe(out, 1));
		back = pgoff_parse_line(out, strlen(out) - 1, 4, &err);
		if (!back)
			fprintf(stderr, "%s: %s\n", out, err.message);
		CHECK(back && json_object_object_get_ex(back, "comm", &v));
		CHECK_STR(json_object_get_string(v), names[i]);
		json_object_put(back);
		json_object_put(o);
		free(out);
	}
}

static void test_plain_lines_unchanged(void)
{
	const char *line = "{\"type\":\"offcpu\",\"comm\":\"postgres\",\"x\":\"\\u001b\"}";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_out_line(f, line, strlen(line));
	fclose(f);
	CHECK(buf && strncmp(buf, line, strlen(line)) == 0 &&
	      strcmp(buf + strlen(line), "\n") == 0);
	CHECK_CONTAINS(buf, "\\u001b");
	free(buf);
	/* the escape for U+009B exactly */
	buf = NULL;
	f = open_memstream(&buf, &len);
	json_out_line(f, "{\"a\":\"x\xc2\x9by\"}", strlen("{\"a\":\"x\xc2\x9by\"}"));
	fclose(f);
	CHECK_STR(buf, "{\"a\":\"x\\u009by\"}\n");
	free(buf);
}

int main(void)
{
	RUN(test_c1_and_del_escaped);
	RUN(test_plain_lines_unchanged);
	return CHECK_DONE();
}
