/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_exporter_histogram.c - the kernel's log2 buckets as "le" bounds:
 * every duration the kernel puts in bucket b is at most bucket b's le and
 * more than bucket b-1's, checked at each bound, with the kernel's own
 * bucket function (bpf/offcpu.bpf.c's agg_bucket, restated here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/histogram.h"
#include "tests/unit/check.h"

/* As the kernel computes it: us = ns >> 10; 0 -> 0, else log2(us) + 1. */
static size_t kernel_bucket(uint64_t ns)
{
	uint64_t us = ns >> 10;
	size_t b = 0;

	if (!us)
		return 0;
	while (us >> b > 1)
		b++;
	b++;
	return b < EXH_BUCKETS ? b : EXH_BUCKETS - 1;
}

/* le label back into nanoseconds, from its decimal text (exact). */
static uint64_t le_ns(const char *le)
{
	uint64_t sec = 0, frac = 0;
	const char *dot = strchr(le, '.');
	size_t digits = 0;

	sec = strtoull(le, NULL, 10);
	if (dot) {
		for (const char *p = dot + 1; *p; p++, digits++)
			frac = frac * 10 + (uint64_t)(*p - '0');
		for (; digits < 9; digits++)
			frac *= 10;
	}
	return sec * 1000000000ULL + frac;
}

static void test_le_values(void)
{
	char buf[32];

	CHECK(exh_le(0, 1024, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "0.000001023");
	CHECK(exh_le(1, 1024, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "0.000002047");
	/* a 2 s wait: [2^20, 2^21) units, bucket 21, ends at 2.147483648 s */
	CHECK(exh_le(21, 1024, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "2.147483647");
	CHECK(exh_le(30, 1024, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "1099.511627775");
	CHECK(exh_le(31, 1024, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "+Inf");
	CHECK(exh_le(32, 1024, buf, sizeof(buf)) == -EINVAL);
	CHECK(exh_le(3, 0, buf, sizeof(buf)) == -EINVAL);
	CHECK(exh_le(3, 1024, buf, 8) == -ERANGE);
	CHECK(exh_le(30, UINT64_MAX / 4, buf, sizeof(buf)) == -ERANGE);
}

/* At each bound, the kernel's bucket of le and of le + 1 ns. */
static void test_le_matches_kernel_buckets(void)
{
	char buf[32];

	for (size_t b = 0; b + 1 < EXH_BUCKETS; b++) {
		uint64_t le;

		CHECK(exh_le(b, 1024, buf, sizeof(buf)) == 0);
		le = le_ns(buf);
		if (kernel_bucket(le) != b || kernel_bucket(le + 1) != b + 1) {
			fprintf(stderr, "bucket %zu: le %s (%llu ns) is in bucket "
				"%zu, %llu ns in %zu\n", b, buf,
				(unsigned long long)le, kernel_bucket(le),
				(unsigned long long)le + 1, kernel_bucket(le + 1));
			CHECK(0);
		}
	}
	/* everything longer than bucket 30 is in the open last bucket */
	CHECK(kernel_bucket(UINT64_MAX) == EXH_BUCKETS - 1);
}

static void test_seconds(void)
{
	char buf[32];

	exh_seconds(0, buf, sizeof(buf));
	CHECK_STR(buf, "0");
	exh_seconds(2500000000ULL, buf, sizeof(buf));
	CHECK_STR(buf, "2.5");
	exh_seconds(1, buf, sizeof(buf));
	CHECK_STR(buf, "0.000000001");
	exh_seconds(UINT64_MAX, buf, sizeof(buf));
	CHECK_STR(buf, "18446744073.709551615");
}

static void test_cumulate(void)
{
	uint64_t h[EXH_BUCKETS] = { 1, 0, 2 }, c[EXH_BUCKETS];

	h[31] = 4;
	exh_cumulate(h, c);
	CHECK(c[0] == 1 && c[1] == 1 && c[2] == 3 && c[30] == 3 && c[31] == 7);
	h[0] = UINT64_MAX;
	exh_cumulate(h, c);
	CHECK(c[31] == UINT64_MAX);	/* saturates, never wraps */
}

int main(void)
{
	RUN(test_le_values);
	RUN(test_le_matches_kernel_buckets);
	RUN(test_seconds);
	RUN(test_cumulate);
	return CHECK_DONE();
}
