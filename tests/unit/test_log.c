/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_log.c - a log line is one line whatever a message carries: outside
 * data (a data directory, a process title, comm, a broker's message) with
 * newlines, terminal escapes, C1 controls or bad UTF-8 comes out escaped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include "common/log.h"
#include "tests/unit/check.h"

static const struct {
	const char *in;
	const char *want;
} cases[] = {
	{ "plain text, caf\xc3\xa9 \xe2\x82\xac", "plain text, caf\xc3\xa9 \xe2\x82\xac" },
	{ "/data\npgoffd: info: forged", "/data\\npgoffd: info: forged" },
	{ "\x1b[2J\x1b]0;t\x07", "\\x1b[2J\\x1b]0;t\\x07" },
	{ "tab\there\r\x7f", "tab\\x09here\\x0d\\x7f" },
	{ "csi\xc2\x9b" "31m", "csi\\xc2\\x9b31m" },		/* C1 as UTF-8 */
	{ "nel\xc2\x85|nbsp\xc2\xa0", "nel\\xc2\\x85|nbsp\xc2\xa0" },
	{ "lone\x9b" "31m", "lone\\x9b31m" },
	{ "over\xc0\xaf\xe0\x82\x9b", "over\\xc0\\xaf\\xe0\\x82\\x9b" },
	{ "latin1 caf\xe9", "latin1 caf\\xe9" },
	{ "cut \xe2\x82", "cut \\xe2\\x82" },
	{ "back\\slash", "back\\slash" },
	{ "", "" },
};

static void test_escape_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[128];
		size_t n = log_escape(cases[i].in, out, sizeof(out));

		CHECK(n == strlen(out));
		CHECK_STR(out, cases[i].want);
	}
}

/* A small buffer cuts between escapes, never inside one. */
static void test_escape_cut(void)
{
	char out[8];

	CHECK(log_escape("ab\x1b\x1b", out, sizeof(out)) == 6);
	CHECK_STR(out, "ab\\x1b");
	CHECK(log_escape("abcdef\n", out, sizeof(out)) == 6);
	CHECK_STR(out, "abcdef");
	CHECK(log_escape("abcde\xc3\xa9", out, sizeof(out)) == 7);
	CHECK(log_escape("abcdef\xc3\xa9", out, sizeof(out)) == 6);
	CHECK(log_escape("x", out, 1) == 0 && out[0] == '\0');
}

/* What log_* wrote with fmt and its arguments, into a string. */
static char *logged(void (*fn)(const char *, ...), const char *fmt, const char *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	log_set_output(f);
	fn(fmt, arg);
	log_set_output(NULL);
	fclose(f);
	return buf;
}

static void test_line_cannot_be_forged(void)
{
	char *out;

	log_init("pgoffd", LOG_LEVEL_DEBUG);
	out = logged(log_info, "new cluster in %s",
		     "/home/eve/x\npgoffd: warning: client uid 0: denied\x1b[8m");
	CHECK_STR(out, "pgoffd: info: new cluster in /home/eve/x\\npgoffd: "
		  "warning: client uid 0: denied\\x1b[8m\n");
	free(out);
	/* trailing newlines (libbpf's) are dropped, not escaped */
	out = logged(log_debug, "%s", "libbpf: loaded\n\n");
	CHECK_STR(out, "pgoffd: debug: libbpf: loaded\n");
	free(out);
	errno = ENOENT;
	out = logged(log_warn, "cannot open %s", "a\xc2\x9b" "b");
	CHECK_STR(out, "pgoffd: warning: cannot open a\\xc2\\x9bb: No such file or directory\n");
	free(out);
}

/* The longest message, every byte of it an escape: one line, all of it. */
static void test_longest_message(void)
{
	char msg[2000], *out;
	size_t lines = 0;

	memset(msg, '\x1b', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	out = logged(log_warnx, "%s", msg);
	CHECK(out);
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	if (lines != 1 || strlen(out) != strlen("pgoffd: warning: ") + 4 * 1023 + 1)
		fprintf(stderr, "%zu lines, %zu bytes\n", lines, strlen(out));
	CHECK(lines == 1);
	CHECK(strlen(out) == strlen("pgoffd: warning: ") + 4 * 1023 + 1);
	free(out);
}

int main(void)
{
	RUN(test_escape_table);
	RUN(test_escape_cut);
	RUN(test_line_cannot_be_forged);
	RUN(test_longest_message);
	return CHECK_DONE();
}
