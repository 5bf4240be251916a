/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_pg_status_layout.c - where each major keeps what pgoff reads of a
 * backend's status entry, and what the kernel is told of it: the
 * generated rows agree with what was checked on the live servers, the
 * states are named as pg_stat_activity names them (18 inserted
 * "starting"), and a major with no row is not read at all.
 */
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/pg/pg_status_layout.h"
#include "tests/unit/check.h"

static void test_rows(void)
{
	const struct pg_status_layout *l15 = pg_status_layout(15);
	const struct pg_status_layout *l18 = pg_status_layout(18);

	CHECK(l15 && l18 && pg_status_layout(19) && pg_status_layout(17));
	CHECK(!pg_status_layout(16) && !pg_status_layout(20));
	/* 13 has a row (its struct) but no query id */
	CHECK(pg_status_layout(13) && pg_status_layout(13)->query_id == -1);
	CHECK(l15->changecount == 0 && l15->procpid == 4 && l15->state == 232 &&
	      l15->query_id == 424 && l15->query_id_size == 8);
	CHECK(l18->state == 232 && l18->query_id == 424);
	CHECK_STR(pg_status_state_name(l15, 2), "active");
	CHECK_STR(pg_status_state_name(l18, 2), "idle");
	CHECK_STR(pg_status_state_name(l18, 3), "active");
	CHECK_STR(pg_status_state_name(l18, 1), "starting");
	CHECK_STR(pg_status_state_name(l15, 3), "idle in transaction");
	CHECK(!pg_status_state_name(l15, 0));	/* STATE_UNDEFINED */
	CHECK(!pg_status_state_name(NULL, 2));
	CHECK(pg_status_state_active(l15, 2) && pg_status_state_active(l15, 4));
	CHECK(!pg_status_state_active(l15, 1) && !pg_status_state_active(l18, 2));
}

static void test_target(void)
{
	struct pgoff_target t = { .status_ptr = 1 };

	pg_status_target(15, 0x5000, &t);
	CHECK(t.status_ptr == 0x5000 && t.status_len == 432 &&
	      t.st_state_off == 232 && t.st_query_id_off == 424);
	CHECK(t.status_active == ((1u << 2) | (1u << 4)));	/* running, fastpath */
	CHECK(t.status_ignored == 1u << 6);			/* disabled */
	CHECK(t.status_len <= PGOFF_STATUS_MAX);
	pg_status_target(18, 0x5000, &t);
	CHECK(t.status_active == ((1u << 3) | (1u << 5)) &&
	      t.status_ignored == 1u << 7);
	pg_status_target(16, 0x5000, &t);	/* no row: nothing is read */
	CHECK(t.status_ptr == 0);
	pg_status_target(15, 0, &t);		/* no MyBEEntry */
	CHECK(t.status_ptr == 0);
}

int main(void)
{
	RUN(test_rows);
	RUN(test_target);
	return CHECK_DONE();
}
