/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_units.c - duration and integer parsing, duration formatting.
 */
#include "common/units.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <locale.h>

#define SENTINEL 0x5a5a5a5a5a5a5a5aULL

/* Parse with *ns preset, so tests can see it is untouched on error. */
static int dur(const char *s, uint64_t *ns)
{
	*ns = SENTINEL;
	return pgoff_parse_duration(s, ns);
}

static void test_duration_units(void)
{
	uint64_t ns;

	CHECK(dur("100ns", &ns) == 0 && ns == 100);
	CHECK(dur("500us", &ns) == 0 && ns == 500000);
	CHECK(dur("5ms", &ns) == 0 && ns == 5000000);
	CHECK(dur("3s", &ns) == 0 && ns == 3000000000ULL);
	CHECK(dur("2m", &ns) == 0 && ns == 120000000000ULL);
	CHECK(dur("1ns", &ns) == 0 && ns == 1);
	CHECK(dur("007ms", &ns) == 0 && ns == 7000000);
}

static void test_duration_zero(void)
{
	uint64_t ns;

	CHECK(dur("0", &ns) == 0 && ns == 0);
	CHECK(dur("000", &ns) == 0 && ns == 0);
	CHECK(dur("0.0", &ns) == 0 && ns == 0);
	CHECK(dur("0ns", &ns) == 0 && ns == 0);
	CHECK(dur("0s", &ns) == 0 && ns == 0);
	CHECK(dur("0m", &ns) == 0 && ns == 0);
}

static void test_duration_fractions(void)
{
	uint64_t ns;

	CHECK(dur("1.5s", &ns) == 0 && ns == 1500000000ULL);
	CHECK(dur("0.25ms", &ns) == 0 && ns == 250000);
	CHECK(dur("2.5m", &ns) == 0 && ns == 150000000000ULL);
	CHECK(dur("1.000000001s", &ns) == 0 && ns == 1000000001ULL);
	CHECK(dur("0.1us", &ns) == 0 && ns == 100);
	/* 1/60 of a minute is exactly a second. */
	CHECK(dur("0.0166666666666m", &ns) == 0 && ns == 1000000000ULL);
	/* A fraction far longer than any integer type still works. */
	CHECK(dur("1.00000000000000000000000000000000000000001s", &ns) == 0 &&
	      ns == 1000000000ULL);
}

static void test_duration_rounding(void)
{
	uint64_t ns;

	/* Half up to the nanosecond. */
	CHECK(dur("1.5ns", &ns) == 0 && ns == 2);
	CHECK(dur("1.49ns", &ns) == 0 && ns == 1);
	CHECK(dur("0.4ns", &ns) == 0 && ns == 0);
	CHECK(dur("0.0005us", &ns) == 0 && ns == 1);
	CHECK(dur("0.0004999us", &ns) == 0 && ns == 0);
	CHECK(dur("1.0000000004s", &ns) == 0 && ns == 1000000000ULL);
	CHECK(dur("1.0000000005s", &ns) == 0 && ns == 1000000001ULL);
	CHECK(dur("0.9999999999s", &ns) == 0 && ns == 1000000000ULL);
	/* 0.00000000001m = 0.6ns -> 1; 0.000000000008m = 0.48ns -> 0. */
	CHECK(dur("0.00000000001m", &ns) == 0 && ns == 1);
	CHECK(dur("0.000000000008m", &ns) == 0 && ns == 0);
	/* A tie far down the digits: 0.0000000000083333...m is 0.4999...8ns. */
	CHECK(dur("0.00000000000833333333333333333m", &ns) == 0 && ns == 0);
	CHECK(dur("0.0000000000083333333333333333333334m", &ns) == 0 &&
	      ns == 1);
}

static void test_duration_syntax_errors(void)
{
	uint64_t ns;

	CHECK(dur("", &ns) == -EINVAL && ns == SENTINEL);
	CHECK(dur("5", &ns) == -EINVAL && ns == SENTINEL);
	CHECK(dur("1.5", &ns) == -EINVAL);
	CHECK(dur("1.2.3s", &ns) == -EINVAL);
	CHECK(dur("ms", &ns) == -EINVAL);
	CHECK(dur("5 ms", &ns) == -EINVAL);
	CHECK(dur(" 5ms", &ns) == -EINVAL);
	CHECK(dur("5ms ", &ns) == -EINVAL);
	CHECK(dur("1e3ms", &ns) == -EINVAL);
	CHECK(dur("+5ms", &ns) == -EINVAL);
	CHECK(dur(".5s", &ns) == -EINVAL);
	CHECK(dur("5.s", &ns) == -EINVAL);
	CHECK(dur("5MS", &ns) == -EINVAL);
	CHECK(dur("5sec", &ns) == -EINVAL);
	CHECK(dur("5mss", &ns) == -EINVAL);
	CHECK(dur("25h", &ns) == -EINVAL);
	CHECK(dur("1,5s", &ns) == -EINVAL);
	CHECK(dur("0x10ms", &ns) == -EINVAL);
	CHECK(dur("-", &ns) == -EINVAL);
	CHECK(dur("-ms", &ns) == -EINVAL);
	CHECK(dur("999999999999999999999", &ns) == -EINVAL);
	CHECK(dur("999999999999999999999x", &ns) == -EINVAL);
	CHECK(pgoff_parse_duration(NULL, &ns) == -EINVAL);
	CHECK(pgoff_parse_duration("5ms", NULL) == -EINVAL);
	CHECK(ns == SENTINEL);
}

static void test_duration_range_errors(void)
{
	uint64_t ns;

	CHECK(dur("-1ms", &ns) == -ERANGE && ns == SENTINEL);
	CHECK(dur("-1.5s", &ns) == -ERANGE);
	CHECK(dur("999999999999999999999s", &ns) == -ERANGE);
	CHECK(dur("99999999999999999999999999999ns", &ns) == -ERANGE);
	/* One day is the limit. */
	CHECK(dur("1440m", &ns) == 0 && ns == PGOFF_DURATION_MAX_NS);
	CHECK(dur("86400s", &ns) == 0 && ns == PGOFF_DURATION_MAX_NS);
	CHECK(dur("86400000000000ns", &ns) == 0 && ns == PGOFF_DURATION_MAX_NS);
	CHECK(dur("1500m", &ns) == -ERANGE);
	CHECK(dur("86400.000000001s", &ns) == -ERANGE);
	CHECK(dur("86400000000001ns", &ns) == -ERANGE);
	CHECK(dur("1440.0000000001m", &ns) == -ERANGE);
	/* Rounds down to exactly a day: accepted. */
	CHECK(dur("86400.0000000004s", &ns) == 0 && ns == PGOFF_DURATION_MAX_NS);
	CHECK(ns == PGOFF_DURATION_MAX_NS);
}

static void test_duration_locale(void)
{
	uint64_t ns;

	/* A decimal-comma locale, if installed, must not change anything. */
	setlocale(LC_ALL, "de_DE.UTF-8");
	CHECK(dur("1.5s", &ns) == 0 && ns == 1500000000ULL);
	CHECK(dur("1,5s", &ns) == -EINVAL);
	setlocale(LC_ALL, "C");
}

/* Query ids as PostgreSQL shows them: signed 64 bits, both ways. */
static void test_query_id(void)
{
	char buf[PGOFF_QUERY_ID_BUFSZ];
	uint64_t id = 7;

	CHECK_STR(pgoff_format_query_id(1ull << 63, buf, sizeof(buf)),
		  "-9223372036854775808");
	CHECK_STR(pgoff_format_query_id(42, buf, sizeof(buf)), "42");
	CHECK(pgoff_parse_query_id("-9223372036854775808", &id) == 0 &&
	      id == 1ull << 63);
	CHECK(pgoff_parse_query_id("9223372036854775807", &id) == 0 &&
	      id == INT64_MAX);
	CHECK(pgoff_parse_query_id("-1", &id) == 0 && id == UINT64_MAX);
	CHECK(pgoff_parse_query_id("9223372036854775808", &id) == -ERANGE);
	CHECK(pgoff_parse_query_id("-9223372036854775809", &id) == -ERANGE);
	CHECK(pgoff_parse_query_id("0", &id) == -ERANGE);
	CHECK(pgoff_parse_query_id("-0", &id) == -ERANGE);
	CHECK(pgoff_parse_query_id("", &id) == -EINVAL);
	CHECK(pgoff_parse_query_id("-", &id) == -EINVAL);
	CHECK(pgoff_parse_query_id("+5", &id) == -EINVAL);
	CHECK(pgoff_parse_query_id("5 ", &id) == -EINVAL);
	CHECK(pgoff_parse_query_id("--5", &id) == -EINVAL);
	CHECK(id == UINT64_MAX);	/* left alone on errors */
}

static void test_parse_u64(void)
{
	uint64_t v = SENTINEL;

	CHECK(pgoff_parse_u64("0", 0, 10, &v) == 0 && v == 0);
	CHECK(pgoff_parse_u64("10", 0, 10, &v) == 0 && v == 10);
	CHECK(pgoff_parse_u64("007", 0, 10, &v) == 0 && v == 7);
	CHECK(pgoff_parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 &&
	      v == UINT64_MAX);
	v = SENTINEL;
	CHECK(pgoff_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) ==
	      -ERANGE);
	CHECK(pgoff_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v) ==
	      -ERANGE);
	CHECK(pgoff_parse_u64("11", 0, 10, &v) == -ERANGE);
	CHECK(pgoff_parse_u64("4", 5, 10, &v) == -ERANGE);
	CHECK(pgoff_parse_u64("", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("-1", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("+1", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64(" 1", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("1 ", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("1x", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("0x1", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("1.0", 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("99999999999999999999999x", 0, UINT64_MAX, &v) ==
	      -EINVAL);
	CHECK(pgoff_parse_u64(NULL, 0, 10, &v) == -EINVAL);
	CHECK(pgoff_parse_u64("1", 0, 10, NULL) == -EINVAL);
	CHECK(v == SENTINEL);
}

static const char *fmt(uint64_t ns)
{
	static char buf[PGOFF_DURATION_BUFSZ];

	return pgoff_format_duration(ns, buf, sizeof(buf));
}

static void test_format_small(void)
{
	CHECK_STR(fmt(0), "0ns");
	CHECK_STR(fmt(1), "1ns");
	CHECK_STR(fmt(999), "999ns");
	CHECK_STR(fmt(1000), "1.00us");
	CHECK_STR(fmt(1004), "1.00us");
	CHECK_STR(fmt(1005), "1.01us");
	CHECK_STR(fmt(9994), "9.99us");
	CHECK_STR(fmt(9995), "10.0us");
	CHECK_STR(fmt(12345), "12.3us");
	CHECK_STR(fmt(99949), "99.9us");
	CHECK_STR(fmt(99950), "100us");
	CHECK_STR(fmt(812000), "812us");
	CHECK_STR(fmt(999499), "999us");
}

static void test_format_boundaries(void)
{
	CHECK_STR(fmt(999500), "1.00ms");
	CHECK_STR(fmt(999999), "1.00ms");
	CHECK_STR(fmt(1000000), "1.00ms");
	CHECK_STR(fmt(1030000), "1.03ms");
	CHECK_STR(fmt(1034999), "1.03ms");
	CHECK_STR(fmt(15500000), "15.5ms");
	CHECK_STR(fmt(999499999), "999ms");
	CHECK_STR(fmt(999500000), "1.000s");
	CHECK_STR(fmt(999999999), "1.000s");
	CHECK_STR(fmt(1000000000), "1.000s");
	CHECK_STR(fmt(1500000000), "1.500s");
	CHECK_STR(fmt(1000499999), "1.000s");
	CHECK_STR(fmt(1000500000), "1.001s");
	CHECK_STR(fmt(59999499999ULL), "59.999s");
	CHECK_STR(fmt(59999500000ULL), "1m00s");
	CHECK_STR(fmt(60000000000ULL), "1m00s");
}

static void test_format_minutes(void)
{
	CHECK_STR(fmt(123000000000ULL), "2m03s");
	CHECK_STR(fmt(123499999999ULL), "2m03s");
	CHECK_STR(fmt(123500000000ULL), "2m04s");
	CHECK_STR(fmt(119500000000ULL), "2m00s");
	CHECK_STR(fmt(PGOFF_DURATION_MAX_NS), "1440m00s");
	CHECK_STR(fmt(UINT64_MAX), "307445734m34s");
}

static void test_format_buffer(void)
{
	char buf[4] = "zzz", one[1] = { 'z' };

	/* Truncated, but terminated. */
	CHECK(pgoff_format_duration(1500000000, buf, sizeof(buf)) == buf);
	CHECK_STR(buf, "1.5");
	CHECK(pgoff_format_duration(5, one, sizeof(one)) == one);
	CHECK(one[0] == '\0');
	/* Nothing to terminate: untouched. */
	one[0] = 'z';
	CHECK(pgoff_format_duration(5, one, 0) == one);
	CHECK(one[0] == 'z');
}

int main(void)
{
	RUN(test_duration_units);
	RUN(test_duration_zero);
	RUN(test_duration_fractions);
	RUN(test_duration_rounding);
	RUN(test_duration_syntax_errors);
	RUN(test_duration_range_errors);
	RUN(test_duration_locale);
	RUN(test_parse_u64);
	RUN(test_query_id);
	RUN(test_format_small);
	RUN(test_format_boundaries);
	RUN(test_format_minutes);
	RUN(test_format_buffer);
	return CHECK_DONE();
}
