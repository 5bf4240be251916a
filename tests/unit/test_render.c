// SPDX-License-Identifier: GPL-2.0-only
/* pgoffctl's table: the SQL line under an event stays one safe line. */
#define _GNU_SOURCE
#include <stdlib.h>
#include "client/render.h"
#include "protocol/protocol.h"
#include "protocol/utf8.h"
#include "tests/unit/check.h"

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

int main(void)
{
	RUN(test_whitespace_folds);
	RUN(test_long_queries_are_cut);
	RUN(test_no_control_bytes_or_split_characters);
	return CHECK_DONE();
}
