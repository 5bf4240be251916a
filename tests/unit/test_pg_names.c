// SPDX-License-Identifier: GPL-2.0-only
/*
 * A cluster's run-time names as pgoffd keeps them: what the prober read,
 * made printable, sorted and looked up; which unnamed wait events ask
 * for another read, per major.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/pg/pg_names.h"
#include "tests/unit/check.h"

static struct pg_run_names answer;

static void add(uint32_t info, const char *name)
{
	answer.names[answer.n].wait_event_info = info;
	memcpy(answer.names[answer.n].name, name,
	       strnlen(name, PG_RUN_NAME_LEN));
	answer.n++;
}

static void test_take_and_find(void)
{
	struct pg_names n = { 0 };
	char long_name[PG_RUN_NAME_LEN];

	memset(&answer, 0, sizeof(answer));
	memset(long_name, 'x', sizeof(long_name));	/* no NUL of its own */
	add(0x0B000003, "inj");
	add(0x07000001, "Tab\there");
	add(0x01000064, long_name);
	add(0x07000001, "second of a repeated id");
	CHECK(pg_names_take(&n, &answer) == 0);
	CHECK(n.read && !n.status && n.n == 3);
	CHECK(n.v[0].wait_event_info == 0x01000064 &&
	      n.v[2].wait_event_info == 0x0B000003);
	CHECK_STR(pg_names_find(&n, 0x07000001), "Tab?here");
	CHECK(strlen(pg_names_find(&n, 0x01000064)) == PG_RUN_NAME_LEN - 1);
	CHECK(pg_names_find(&n, 0x07000002) == NULL);
	/* a failed read: no names, the reason, printable */
	memset(&answer, 0, sizeof(answer));
	answer.status = -EINVAL;
	snprintf(answer.why, sizeof(answer.why), "bad\x1b[0m \xff");
	CHECK(pg_names_take(&n, &answer) == 0);
	CHECK(n.n == 0 && n.status == -EINVAL);
	CHECK_STR(n.why, "bad?[0m ?");
	CHECK(pg_names_find(&n, 0x07000001) == NULL);
	pg_names_free(&n);
	CHECK(pg_names_find(NULL, 1) == NULL);
}

/* Failed reads are tried again less and less often; a good one resets. */
static void test_backoff(void)
{
	struct pg_names n = { 0 };
	uint32_t seen[12];

	memset(&answer, 0, sizeof(answer));
	answer.status = -ETIMEDOUT;
	for (int i = 0; i < 12; i++) {
		CHECK(pg_names_take(&n, &answer) == 0);
		seen[i] = n.backoff_ms;
	}
	CHECK(seen[0] == PG_NAMES_BACKOFF_MS && seen[1] == 2 * seen[0]);
	CHECK(seen[11] == PG_NAMES_BACKOFF_MAX_MS);
	answer.status = 0;
	CHECK(pg_names_take(&n, &answer) == 0);
	CHECK(n.backoff_ms == 0);
	pg_names_free(&n);
}

/* More than an answer holds is not believed. */
static void test_take_bounded(void)
{
	struct pg_names n = { 0 };

	memset(&answer, 0, sizeof(answer));
	for (uint32_t i = 0; i < PG_RUN_NAMES_MAX; i++)
		add(0x07000001 + i, "e");
	answer.n = 1u << 30;
	answer.truncated = 1;
	CHECK(pg_names_take(&n, &answer) == 0);
	CHECK(n.n == PG_RUN_NAMES_MAX && n.truncated);
	pg_names_free(&n);
}

static void test_may_appear(void)
{
	/* 17 and later: custom wait events, not the built-in Extension */
	CHECK(pg_names_may_appear(17, 0x07000002));
	CHECK(pg_names_may_appear(19, 0x0B000001));
	CHECK(!pg_names_may_appear(17, 0x07000000));
	CHECK(!pg_names_may_appear(16, 0x07000002));
	/* tranches: 19 names them all in shared memory; 14-18 only the
	 * ones requested before start, read once */
	CHECK(pg_names_may_appear(19, 0x01000064));
	CHECK(!pg_names_may_appear(19, 0x01000010));	/* built in */
	CHECK(!pg_names_may_appear(18, 0x01000070));
	CHECK(!pg_names_may_appear(17, 0x03000004));
	CHECK(!pg_names_may_appear(17, 0));
}

int main(void)
{
	RUN(test_take_and_find);
	RUN(test_take_bounded);
	RUN(test_backoff);
	RUN(test_may_appear);
	return CHECK_DONE();
}
