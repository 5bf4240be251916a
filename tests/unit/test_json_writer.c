/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_json_writer.c - the writer's text against json-c's for the same
 * values (pgoff_json_line's flags): every byte alone, pseudo-random
 * strings of the bytes that matter, integers at their limits, nesting,
 * nulls and booleans, and text from outside made valid UTF-8 as
 * json_add_text makes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "broker/kernel/json_fields.h"
#include "broker/kernel/json_writer.h"
#include "protocol/protocol.h"
#include "tests/unit/check.h"

static struct json_writer w;

/* The writer's fields in braces, as one object's line. */
static const char *written(void)
{
	static char line[8192];

	snprintf(line, sizeof(line), "{%.*s}", (int)w.buf.n,
		 w.buf.p ? (const char *)w.buf.p : "");
	return line;
}

/* json-c's line of o, which is put. */
static const char *json_c(json_object *o)
{
	static char line[8192];

	snprintf(line, sizeof(line), "%s", pgoff_json_line(o, NULL));
	json_object_put(o);
	return line;
}

static void test_every_byte(void)
{
	for (int c = 1; c < 256; c++) {
		char s[4] = { 'a', (char)c, 'b', 0 };
		json_object *o = json_object_new_object();

		json_object_object_add(o, "s", json_object_new_string_len(s, 3));
		json_writer_reset(&w);
		json_write_str_len(&w, "s", s, 3);
		CHECK(!w.buf.failed);
		CHECK_STR(written(), json_c(o));
	}
}

/* deterministic, so that a failure is seen again */
static uint32_t next_random(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

static void test_random_strings(void)
{
	static const char bytes[] = "\"\\/\b\f\n\r\t\x01\x1f\x7f\x80\xc3\xa9\xff az";
	uint32_t state = 16;

	for (int round = 0; round < 2000; round++) {
		char s[64];
		size_t len = next_random(&state) % sizeof(s);
		json_object *o = json_object_new_object();

		for (size_t i = 0; i < len; i++)
			s[i] = bytes[next_random(&state) % (sizeof(bytes) - 1)];
		json_object_object_add(o, "k", json_object_new_string_len(s, (int)len));
		json_object_object_add(o, "t", json_object_new_string_len(s, (int)len));
		json_writer_reset(&w);
		json_write_str_len(&w, "k", s, len);
		json_write_str_len(&w, "t", s, len);
		CHECK_STR(written(), json_c(o));
	}
}

static void test_integers(void)
{
	static const int64_t values[] = { 0, 1, -1, 9, 10, -10, 4294967295LL,
		INT64_MAX, INT64_MIN, INT64_MIN + 1, 1234567890123LL };

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "n", json_object_new_int64(values[i]));
		json_writer_reset(&w);
		json_write_int(&w, "n", values[i]);
		CHECK_STR(written(), json_c(o));
	}
}

/* Objects and arrays in each other, empty ones, nulls and booleans. */
static void test_nesting(void)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	json_object *inner = json_object_new_object();

	json_object_object_add(o, "empty", json_object_new_object());
	json_object_object_add(o, "none", json_object_new_array());
	json_object_array_add(a, json_object_new_string("x"));
	json_object_array_add(a, NULL);
	json_object_array_add(a, json_object_new_array());
	json_object_array_add(a, inner);
	json_object_object_add(inner, "yes", json_object_new_boolean(1));
	json_object_object_add(inner, "no", json_object_new_boolean(0));
	json_object_object_add(o, "list", a);
	json_object_object_add(o, "null", NULL);
	json_object_object_add(o, "last", json_object_new_int64(3));

	json_writer_reset(&w);
	json_write_object(&w, "empty");
	json_write_end_object(&w);
	json_write_array(&w, "none");
	json_write_end_array(&w);
	json_write_array(&w, "list");
	json_write_str(&w, NULL, "x");
	json_write_str(&w, NULL, NULL);
	json_write_array(&w, NULL);
	json_write_end_array(&w);
	json_write_object(&w, NULL);
	json_write_bool(&w, "yes", true);
	json_write_bool(&w, "no", false);
	json_write_end_object(&w);
	json_write_end_array(&w);
	json_write_null(&w, "null");
	json_write_int(&w, "last", 3);
	CHECK_STR(written(), json_c(o));
}

/* Cut at max, stopped at a NUL, bad bytes '?': json_add_text's text. */
static void test_text_from_outside(void)
{
	static const char *texts[] = { "plain", "caf\xc3\xa9", "cut \xc3",
		"\xff\xfe\x80 bad", "nul\0hidden", "\"quoted\"\n" };

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		for (size_t max = 0; max <= 12; max += 3) {
			json_object *o = json_object_new_object();

			json_add_text(o, "t", texts[i], max);
			json_writer_reset(&w);
			json_write_text(&w, "t", texts[i], max);
			CHECK_STR(written(), json_c(o));
		}
	}
}

/* reset keeps the memory, free lets it go; both leave a usable writer */
static void test_reset_and_free(void)
{
	json_writer_reset(&w);
	json_write_int(&w, "a", 1);
	json_writer_reset(&w);
	json_write_int(&w, "b", 2);
	CHECK_STR(written(), "{\"b\":2}");
	json_writer_free(&w);
	CHECK(!w.buf.p && w.buf.n == 0);
	json_writer_reset(&w);
	json_write_str(&w, "c", "d");
	CHECK_STR(written(), "{\"c\":\"d\"}");
}

int main(void)
{
	int rc;

	RUN(test_every_byte);
	RUN(test_random_strings);
	RUN(test_integers);
	RUN(test_nesting);
	RUN(test_text_from_outside);
	RUN(test_reset_and_free);
	rc = CHECK_DONE();
	json_writer_free(&w);
	return rc;
}
