// SPDX-License-Identifier: GPL-2.0-only
/* UTF-8 cleaning: what strict JSON parsers accept comes out unchanged. */
#include <json-c/json.h>
#include "protocol/utf8.h"
#include "protocol/protocol.h"
#include "tests/unit/check.h"

static const struct {
	const char *in;
	const char *want;
} cases[] = {
	{ "SELECT 1", "SELECT 1" },
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x98", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x98" },
	{ "caf\xe9", "caf?" },				/* LATIN1 */
	{ "\xe2\x82", "??" },				/* cut mid-character */
	{ "x\xc3", "x?" },
	{ "\xc0\xaf", "??" },				/* overlong '/' */
	{ "\xe0\x80\xaf", "???" },			/* overlong, 3 bytes */
	{ "\xed\xa0\x80", "???" },			/* surrogate */
	{ "\xf4\x90\x80\x80", "????" },			/* above U+10FFFF */
	{ "\x80 \xbf", "? ?" },				/* stray continuations */
	{ "\xff\xfe", "??" },
	{ "", "" },
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		size_t n = pgoff_utf8_clean(cases[i].in, strlen(cases[i].in), out);

		CHECK(n == strlen(out));
		CHECK_STR(out, cases[i].want);
	}
}

/* A length limit and an embedded NUL both end the text. */
static void test_limits(void)
{
	char out[16];

	CHECK(pgoff_utf8_clean("abcdef", 3, out) == 3);
	CHECK_STR(out, "abc");
	CHECK(pgoff_utf8_clean("ab\0cd", 5, out) == 2);
	CHECK_STR(out, "ab");
	/* a 3-byte sequence whose end is cut by the limit */
	CHECK(pgoff_utf8_clean("a\xe2\x82\xac", 3, out) == 3);
	CHECK_STR(out, "a??");
}

/* Every byte value in every position: the result always parses. */
static void test_always_parses(void)
{
	unsigned char in[4];
	char out[8], line[64];

	for (unsigned int v = 0; v < 1u << 16; v++) {
		json_object *obj, *s;
		struct pgoff_error err;

		in[0] = (unsigned char)(v >> 8);
		in[1] = (unsigned char)v;
		in[2] = 0x80;
		in[3] = 0xbf;
		pgoff_utf8_clean((const char *)in, 4, out);
		obj = json_object_new_object();
		json_object_object_add(obj, "s", json_object_new_string(out));
		snprintf(line, sizeof(line), "%s", pgoff_json_line(obj, NULL));
		json_object_put(obj);
		obj = pgoff_parse_line(line, strlen(line), 4, &err);
		CHECK(obj != NULL);
		CHECK(json_object_object_get_ex(obj, "s", &s));
		CHECK(strcmp(json_object_get_string(s), out) == 0);
		json_object_put(obj);
	}
}

int main(void)
{
	RUN(test_table);
	RUN(test_limits);
	RUN(test_always_parses);
	return CHECK_DONE();
}
