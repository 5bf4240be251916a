/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_log_limit.c - lines about one uid's clients: at most
 * LOG_LIMIT_PER_S a second, the rest counted and told in one line; other
 * uids keep their share; the table stays bounded whatever the uids.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "broker/serve/log_limit.h"
#include "common/log.h"
#include "tests/unit/check.h"

static char *buf;
static size_t len;
static FILE *out;

static void capture(void)
{
	out = open_memstream(&buf, &len);
	log_set_output(out);
}

static char *captured(void)
{
	log_set_output(NULL);
	fclose(out);
	return buf;
}

static size_t lines_in(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static void test_limit_per_second(void)
{
	struct log_limit l = { 0 };
	unsigned int allowed = 0, other = 0;
	char *got;

	capture();
	for (int i = 0; i < 1000; i++)
		allowed += log_limit_allow(&l, 1001, 50);
	for (int i = 0; i < 5; i++)
		other += log_limit_allow(&l, 1002, 50);
	log_limit_flush(&l, 50);	/* the second is not over: nothing */
	got = captured();
	if (allowed != LOG_LIMIT_PER_S || other != 5 || lines_in(got))
		fprintf(stderr, "allowed %u, other uid %u, said: %s\n", allowed,
			other, got);
	CHECK(allowed == LOG_LIMIT_PER_S && other == 5 && lines_in(got) == 0);
	free(got);
	capture();
	log_limit_flush(&l, 51);
	got = captured();
	CHECK_STR(got, "pgoff: warning: client uid 1001: suppressed 990 similar "
		  "lines (more than 10 a second)\n");
	free(got);
	/* a new second: the share again, and nothing more to tell */
	capture();
	CHECK(log_limit_allow(&l, 1001, 52));
	log_limit_flush(&l, 53);
	got = captured();
	CHECK(lines_in(got) == 0);
	free(got);
}

/* The first line of a later second tells what the last one held back. */
static void test_summary_before_next_line(void)
{
	struct log_limit l = { 0 };
	char *got;

	for (int i = 0; i < LOG_LIMIT_PER_S + 3; i++)
		log_limit_allow(&l, 7, 100);
	capture();
	CHECK(log_limit_allow(&l, 7, 101));
	got = captured();
	CHECK_CONTAINS(got, "client uid 7: suppressed 3 similar lines");
	free(got);
}

/* More uids than the table holds: bounded, and no count is lost. */
static void test_many_uids(void)
{
	struct log_limit l = { 0 };
	size_t summaries;
	char *got;

	capture();
	for (uid_t u = 0; u < 10 * LOG_LIMIT_UIDS; u++)
		for (int i = 0; i < LOG_LIMIT_PER_S + 1; i++)
			log_limit_allow(&l, 5000 + u, 9);
	log_limit_flush(&l, 10);
	got = captured();
	summaries = lines_in(got);
	/* every uid held one line back; each is told once */
	if (summaries != 10 * LOG_LIMIT_UIDS)
		fprintf(stderr, "%zu summaries\n", summaries);
	CHECK(summaries == 10 * LOG_LIMIT_UIDS);
	CHECK(sizeof(l) < 4096);
	free(got);
}

int main(void)
{
	RUN(test_limit_per_second);
	RUN(test_summary_before_next_line);
	RUN(test_many_uids);
	return CHECK_DONE();
}
