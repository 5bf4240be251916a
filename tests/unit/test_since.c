/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_since.c - "--since" arguments: durations back from now and
 * RFC 3339 timestamps.
 */
#include "common/since.h"
#include "tests/unit/check.h"

#include <errno.h>

#define S 1000000000LL

static void test_ago(void)
{
	uint64_t ns = 7;

	CHECK(pgoff_parse_ago("10m", &ns) == 0 && ns == 600 * (uint64_t)S);
	CHECK(pgoff_parse_ago("2h", &ns) == 0 && ns == 7200 * (uint64_t)S);
	CHECK(pgoff_parse_ago("7d", &ns) == 0 && ns == 7 * 86400 * (uint64_t)S);
	CHECK(pgoff_parse_ago("90s", &ns) == 0 && ns == 90 * (uint64_t)S);
	CHECK(pgoff_parse_ago("0", &ns) == 0 && ns == 0);
}

static void test_ago_errors(void)
{
	uint64_t ns = 7;

	CHECK(pgoff_parse_ago("", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("5", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("h", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("-1h", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("1hh", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("1 h", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("1.5h", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("1w", &ns) == -EINVAL);
	CHECK(pgoff_parse_ago("367d", &ns) == -ERANGE);
	CHECK(pgoff_parse_ago("99999999999999999999999s", &ns) == -ERANGE);
	CHECK(ns == 7);
}

static void test_rfc3339(void)
{
	int64_t ns = 0;

	CHECK(pgoff_parse_rfc3339("1970-01-01T00:00:00Z", &ns) == 0 && ns == 0);
	/* date -u -d 2026-12-04T02:55:00Z +%s */
	CHECK(pgoff_parse_rfc3339("2026-12-04T02:55:00Z", &ns) == 0 &&
	      ns == 1796352900LL * S);
	CHECK(pgoff_parse_rfc3339("2026-12-04T03:55:00+01:00", &ns) == 0 &&
	      ns == 1796352900LL * S);
	CHECK(pgoff_parse_rfc3339("2026-12-03t21:25:00.5-05:30", &ns) == 0 &&
	      ns == 1796352900LL * S + S / 2);
	CHECK(pgoff_parse_rfc3339("2024-02-29 12:00:00.000000001z", &ns) == 0 &&
	      ns == 1709208000LL * S + 1);
	CHECK(pgoff_parse_rfc3339("2000-03-01T00:00:00Z", &ns) == 0 &&
	      ns == 951868800LL * S);
}

static void test_rfc3339_errors(void)
{
	int64_t ns = 7;

	CHECK(pgoff_parse_rfc3339("2026-12-04T02:55:00", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-12-04", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-13-04T02:55:00Z", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2023-02-29T02:55:00Z", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-12-04T24:00:00Z", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-12-04T02:55:00.Z", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-12-04T02:55:00.1234567890Z", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-12-04T02:55:00+1:00", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("2026-12-04T02:55:00Zjunk", &ns) == -EINVAL);
	CHECK(pgoff_parse_rfc3339("1969-12-31T23:59:59Z", &ns) == -ERANGE);
	CHECK(ns == 7);
}

static void test_since(void)
{
	int64_t ns = 0, now = 1796352900LL * S;

	CHECK(pgoff_parse_since("10m", now, &ns) == 0 && ns == now - 600 * S);
	CHECK(pgoff_parse_since("2026-12-04T02:55:00Z", now, &ns) == 0 &&
	      ns == now);
	CHECK(pgoff_parse_since("yesterday", now, &ns) == -EINVAL);
}

static void test_clock(void)
{
	int secs = 7;

	CHECK(pgoff_parse_clock("02:50", &secs) == 0 && secs == 10200);
	CHECK(pgoff_parse_clock("2:50", &secs) == 0 && secs == 10200);
	CHECK(pgoff_parse_clock("23:59:59", &secs) == 0 && secs == 86399);
	CHECK(pgoff_parse_clock("00:00", &secs) == 0 && secs == 0);
	secs = 7;
	CHECK(pgoff_parse_clock("24:00", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("02:60", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("02:50:60", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("02:5", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("02:50:", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("002:50", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("02:50pm", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock(":50", &secs) == -EINVAL);
	CHECK(pgoff_parse_clock("", &secs) == -EINVAL);
	CHECK(secs == 7);
}

int main(void)
{
	RUN(test_ago);
	RUN(test_ago_errors);
	RUN(test_rfc3339);
	RUN(test_rfc3339_errors);
	RUN(test_since);
	RUN(test_clock);
	return CHECK_DONE();
}
