// SPDX-License-Identifier: GPL-2.0-only
/* UTF-8 cleaning: what strict JSON parsers accept comes out unchanged. */
#include <json-c/json.h>
#include "common/utf8.h"
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

/* A table cell: no byte a terminal acts on, whatever came. */
static const struct {
	const char *in;
	const char *want;
} cells[] = {
	{ "client backend", "client backend" },
	{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
	{ "\x1b[2J\x1b]0;owned\x07", "?[2J?]0;owned?" },	/* ESC, OSC, BEL */
	{ "a\xc2\x9b" "31mred", "a?31mred" },		/* CSI as C1, U+009B */
	{ "\xc2\x80|\xc2\x9f|\xc2\xa0", "?|?|\xc2\xa0" },	/* C1 ends at U+009F */
	{ "a\x9b" "31m", "a?31m" },			/* a lone 0x9b byte */
	{ "\xc0\x9b\xe0\x82\x9b", "?????" },		/* overlong CSI forms */
	{ "\xc0\xaf", "??" },				/* overlong '/' */
	{ "line\nbreak\r\ttab\x7f", "line?break??tab?" },
	{ "caf\xe9", "caf?" },				/* LATIN1 */
	{ "\xed\xa0\x80", "???" },			/* surrogate */
	{ "\xe2\x82", "??" },				/* cut mid-character */
	{ "", "" },
};

static void test_cell(void)
{
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		char out[64];
		bool cut = true;
		size_t n = pgoff_utf8_cell(cells[i].in, out, sizeof(out), &cut);

		if (n != strlen(out) || cut)
			fprintf(stderr, "case %zu: returned %zu for \"%s\", cut %d\n",
				i, n, out, cut);
		CHECK(n == strlen(out) && !cut);
		CHECK_STR(out, cells[i].want);
	}
}

/* The cell's size cuts whole characters only, and says so. */
static void test_cell_cut(void)
{
	char out[8];
	bool cut;

	/* 3 + 2 + 2 bytes fit in 8 with the NUL; the next é does not */
	CHECK(pgoff_utf8_cell("abc\xc3\xa9\xc3\xa9\xc3\xa9", out, sizeof(out), &cut) == 7);
	CHECK_STR(out, "abc\xc3\xa9\xc3\xa9");
	CHECK(cut);
	/* a 4-byte character at the edge is left out whole */
	CHECK(pgoff_utf8_cell("abcde\xf0\x9f\x90\x98", out, sizeof(out), &cut) == 5);
	CHECK_STR(out, "abcde");
	CHECK(cut);
	CHECK(pgoff_utf8_cell("abcdefg", out, sizeof(out), &cut) == 7 && !cut);
	CHECK(pgoff_utf8_cell("\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", out, sizeof(out), &cut) == 7);
	CHECK_STR(out, "???????");
	CHECK(cut);
	CHECK(pgoff_utf8_cell("x", out, 1, &cut) == 0 && out[0] == '\0' && cut);
	CHECK(pgoff_utf8_cell("x", out, 2, NULL) == 1);
}

/* U+0080..U+009F in UTF-8, checked here without the code under test. */
static bool has_c1(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return true;
	return false;
}

/* Every two-byte prefix: the cell is well-formed UTF-8 with no control. */
static void test_cell_never_controls(void)
{
	unsigned char in[5] = { 0, 0, 0x9b, 0xbf, 0 };
	char out[16];

	for (unsigned int v = 0x0101; v < 1u << 16; v++) {
		size_t n;

		in[0] = (unsigned char)(v >> 8);
		in[1] = (unsigned char)v;
		if (!in[1])
			continue;
		n = pgoff_utf8_cell((const char *)in, out, sizeof(out), NULL);
		if (!pgoff_utf8_printable(out, n) || has_c1(out)) {
			fprintf(stderr, "input %02x %02x 9b bf gave \"%s\"\n",
				in[0], in[1], out);
			CHECK(0);
		}
	}
}

int main(void)
{
	RUN(test_table);
	RUN(test_limits);
	RUN(test_always_parses);
	RUN(test_cell);
	RUN(test_cell_cut);
	RUN(test_cell_never_controls);
	return CHECK_DONE();
}
