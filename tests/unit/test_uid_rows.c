/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_uid_rows.c - a bounded table of users' rows: a user past their
 * share gets no new row (keep) or loses their own oldest (forget); a
 * full table keeps its rows (keep) or forgets the oldest of whoever
 * holds the most (forget), never another user's while they hold less.
 */
#include <stdint.h>
#include "broker/uid_rows.h"
#include "tests/unit/check.h"

static uint32_t uid_at(const void *rows, size_t i)
{
	return ((const uint32_t *)rows)[i];
}

static void test_room_and_counts(void)
{
	const struct uid_rows t = { .max = 4, .per_uid = 2,
				    .full = UID_ROWS_KEEP, .uid_of = uid_at };
	uint32_t rows[4] = { 7, 8, 7 };

	CHECK(uid_rows_count(&t, rows, 3, 7) == 2);
	CHECK(uid_rows_count(&t, rows, 3, 9) == 0);
	CHECK(uid_rows_place(&t, rows, 3, 8) == 3);
	CHECK(uid_rows_place(&t, rows, 0, 8) == 0);
}

static void test_keep(void)
{
	const struct uid_rows t = { .max = 4, .per_uid = 2,
				    .full = UID_ROWS_KEEP, .uid_of = uid_at };
	uint32_t rows[4] = { 7, 8, 7, 9 };

	/* 7 holds its share; the table is full for 10 too */
	CHECK(uid_rows_place(&t, rows, 3, 7) == UID_ROWS_NONE);
	CHECK(uid_rows_place(&t, rows, 4, 10) == UID_ROWS_NONE);
}

static void test_forget(void)
{
	const struct uid_rows t = { .max = 4, .per_uid = 3,
				    .full = UID_ROWS_FORGET, .uid_of = uid_at };
	uint32_t rows[4] = { 8, 7, 7, 9 };
	uint32_t own[4] = { 8, 7, 7, 7 };

	/* full: 7 holds the most, its oldest (index 1) goes, for anyone */
	CHECK(uid_rows_place(&t, rows, 4, 10) == 1);
	CHECK(uid_rows_place(&t, rows, 4, 8) == 1);
	/* 7 at its share: its own oldest goes, never 8's */
	CHECK(uid_rows_place(&t, own, 4, 7) == 1);
	CHECK(uid_rows_place(&t, own, 3, 7) == 3);
}

int main(void)
{
	RUN(test_room_and_counts);
	RUN(test_keep);
	RUN(test_forget);
	return CHECK_DONE();
}
