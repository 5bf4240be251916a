/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_sql_redact.c - literals become $n as pg_stat_statements shows
 * them; what the tokenizer cannot tell for sure is hidden, never shown.
 */
#include "broker/record/sql_redact.h"
#include "tests/unit/check.h"

#include <stdlib.h>

struct redact_case {
	const char *sql, *want;
};

static int check_cases(const struct redact_case *c, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len;
		char *got = sql_redact(c[i].sql, strlen(c[i].sql), &len);

		if (!got || strcmp(got, c[i].want) || len != strlen(got)) {
			fprintf(stderr, "redact [%s]\n   got [%s]\n  want [%s]\n",
				c[i].sql, got ? got : "(null)", c[i].want);
			failed++;
		}
		free(got);
	}
	return failed;
}

#define CHECK_CASES(cases) \
	CHECK(check_cases(cases, sizeof(cases) / sizeof(cases[0])) == 0)

static void test_constants(void)
{
	static const struct redact_case cases[] = {
		{ "SELECT 1", "SELECT $1" },
		{ "select * from t where a = 'x' and b = 42",
		  "select * from t where a = $1 and b = $2" },
		{ "SELECT 'it''s', E'a\\'b', e'\\\\', N'n'",
		  "SELECT $1, $2, $3, $4" },
		{ "SELECT B'0101', X'1F', b'', x'ff'", "SELECT $1, $2, $3, $4" },
		{ "SELECT U&'d\\0061t\\+000061', u&'x'", "SELECT $1, $2" },
		{ "SELECT 3.14, .5, 1., 1e10, 1.5E-3, 2e+7, 1_000_000",
		  "SELECT $1, $2, $3, $4, $5, $6, $7" },
		{ "SELECT 0x1F, 0o17, 0b101, 0XFF", "SELECT $1, $2, $3, $4" },
		{ "SELECT -5, a-1", "SELECT -$1, a-$2" },
		{ "SELECT '1'::int, interval '1 day'",
		  "SELECT $1::int, interval $2" },
		{ "SELECT x FROM t LIMIT 10 OFFSET 20",
		  "SELECT x FROM t LIMIT $1 OFFSET $2" },
		{ "FOR i IN 1..10 LOOP", "FOR i IN $1..$2 LOOP" },
		{ "SELECT a[1:2]", "SELECT a[$1:$2]" },
		{ "", "" },
	};

	CHECK_CASES(cases);
}

static void test_names_stay(void)
{
	static const struct redact_case cases[] = {
		{ "SELECT t1.col2, \"Weird \"\"9\"\" name\", U&\"d\\0061t\" FROM s3.t1",
		  "SELECT t1.col2, \"Weird \"\"9\"\" name\", U&\"d\\0061t\" FROM s3.t1" },
		{ "SELECT abc$1, a$b$ FROM x", "SELECT abc$1, a$b$ FROM x" },
		{ "SELECT éé1, 表2 FROM t", "SELECT éé1, 表2 FROM t" },
		{ "SELECT e, n, x, b, u FROM t", "SELECT e, n, x, b, u FROM t" },
		{ "SELECT \"it's\" FROM t WHERE a = 'q'",
		  "SELECT \"it's\" FROM t WHERE a = $1" },
	};

	CHECK_CASES(cases);
}

static void test_parameters(void)
{
	static const struct redact_case cases[] = {
		/* a prepared statement's parameters stay; ours follow */
		{ "UPDATE t SET a = $1 WHERE id = 7 AND b = $2",
		  "UPDATE t SET a = $1 WHERE id = $3 AND b = $2" },
		{ "SELECT 5 WHERE x = $12", "SELECT $13 WHERE x = $12" },
		/* a $n inside a string is not a parameter */
		{ "SELECT '$9', 1", "SELECT $1, $2" },
		/* absurd numbers are text, not a numbering to follow */
		{ "SELECT $99999999999999999999, 1",
		  "SELECT $99999999999999999999, $1" },
		/* a $n inside a name is no parameter, but ours never read
		 * the same: they go on after it */
		{ "SELECT ident$1 , 42", "SELECT ident$1 , $2" },
		{ "SELECT a$2b$7, \"q$5\", 1", "SELECT a$2b$7, \"q$5\", $8" },
		{ "SELECT x$3 WHERE y = $1 AND z = 0",
		  "SELECT x$3 WHERE y = $1 AND z = $4" },
		{ "SELECT a$99999999999999999999, 1",
		  "SELECT a$99999999999999999999, $1" },
	};

	CHECK_CASES(cases);
}

static void test_dollar_quotes(void)
{
	static const struct redact_case cases[] = {
		{ "SELECT $$it's a $1 secret$$, 2", "SELECT $1, $2" },
		{ "DO $body$ BEGIN PERFORM 'x'; END $body$",
		  "DO $1" },
		{ "SELECT $a$ $b$ inner $b$ $a$ || $b$x$b$", "SELECT $1 || $2" },
		/* a tag begins with a letter: $1$ is a parameter then a $ */
		{ "SELECT $1$", "SELECT $1$" },
		{ "SELECT $tag", "SELECT $tag" },
	};

	CHECK_CASES(cases);
}

static void test_comments_dropped(void)
{
	static const struct redact_case cases[] = {
		{ "SELECT 1 -- password 'hunter2'\nFROM t",
		  "SELECT $1 \nFROM t" },
		{ "SELECT /* app=shop user=alice */ a FROM t",
		  "SELECT   a FROM t" },
		{ "SELECT a/* /* nested */ still comment */b",
		  "SELECT a b" },
		{ "SELECT a -- trailing", "SELECT a " },
		/* not comments: inside a string */
		{ "SELECT '-- x', '/* y */'", "SELECT $1, $2" },
	};

	CHECK_CASES(cases);
}

static void test_continued_strings(void)
{
	static const struct redact_case cases[] = {
		{ "SELECT 'one'\n  'two', 'x' 'y'", "SELECT $1, $2 $3" },
	};

	CHECK_CASES(cases);
}

/* Cut queries (the kernel keeps 1023 bytes) and tricks: the rest is
 * hidden, the secret never shown. */
static void test_hides_what_it_cannot_tell(void)
{
	static const struct redact_case cases[] = {
		{ "SELECT a FROM t WHERE pw = 'SECRET", "SELECT a FROM t WHERE pw = $1" },
		{ "SELECT E'SECRET\\' AND 1", "SELECT $1" },
		{ "SELECT $q$SECRET", "SELECT $1" },
		{ "SELECT \"SECRET", "SELECT $1" },
		{ "SELECT 1 /* SECRET", "SELECT $1  " },
		/* standard_conforming_strings decides where this ends: with
		 * it off, 'a\' AND b = ' is one string and SECRET is not */
		{ "SELECT * FROM t WHERE a = 'x\\' AND b = 'SECRET' AND c = 'z'",
		  "SELECT * FROM t WHERE a = $1" },
		/* a backslash not before a quote is the same either way */
		{ "SELECT 'C:\\\\dir\\file', 'SECRET'", "SELECT $1, $2" },
		{ "SELECT 'a''", "SELECT $1" },
	};

	CHECK_CASES(cases);
}

/* A NUL ends the text; any bytes are taken. */
static void test_bytes(void)
{
	static const char with_nul[] = "SELECT 1\0 'SECRET'";
	static const char high[] = "SELECT \xff\xfe 'SECRET' \x80";
	size_t len;
	char *got = sql_redact(with_nul, sizeof(with_nul) - 1, &len);

	CHECK_STR(got, "SELECT $1");
	free(got);
	got = sql_redact(high, sizeof(high) - 1, &len);
	CHECK_STR(got, "SELECT \xff\xfe $1 \x80");
	free(got);
	got = sql_redact("SELECT 'abc'", 9, &len);	/* cut by the length */
	CHECK_STR(got, "SELECT $1");
	CHECK(len == 9);
	free(got);
}

/* Longer than the text: every byte a literal. */
static void test_grows(void)
{
	char in[1024], *got;
	size_t len;

	for (size_t i = 0; i < sizeof(in) - 1; i += 2)
		in[i] = '7', in[i + 1] = ',';
	in[sizeof(in) - 1] = '\0';
	got = sql_redact(in, strlen(in), &len);
	CHECK(got != NULL);
	CHECK(strncmp(got, "$1,$2,$3,", 9) == 0);
	CHECK_CONTAINS(got, ",$511,$512");
	CHECK(len == strlen(got));
	free(got);
}

int main(void)
{
	RUN(test_constants);
	RUN(test_names_stay);
	RUN(test_parameters);
	RUN(test_dollar_quotes);
	RUN(test_comments_dropped);
	RUN(test_continued_strings);
	RUN(test_hides_what_it_cannot_tell);
	RUN(test_bytes);
	RUN(test_grows);
	return CHECK_DONE();
}
