/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_ring_pace.c - when pgoffd reads the ring buffer: fast while
 * records come, backing off to the idle pace when none do, fast again
 * for a new subscription.
 */
#include "broker/kernel/ring_pace.h"
#include "tests/unit/check.h"

static void test_first_read_is_due_at_once(void)
{
	struct ring_pace p;

	ring_pace_init(&p);
	CHECK(ring_pace_wait_ms(&p, 1000) == 0);
}

static void test_fast_while_records_come(void)
{
	struct ring_pace p;

	ring_pace_init(&p);
	ring_pace_read(&p, 1000, 5);
	CHECK(ring_pace_wait_ms(&p, 1000) == RING_PACE_MS);
	CHECK(ring_pace_wait_ms(&p, 1001) == RING_PACE_MS - 1);
	CHECK(ring_pace_wait_ms(&p, 1000 + RING_PACE_MS) == 0);
	CHECK(ring_pace_wait_ms(&p, 5000) == 0);	/* late: never negative */
}

static void test_backs_off_to_idle_pace(void)
{
	struct ring_pace p;
	int64_t now = 1000, last = 0;

	ring_pace_init(&p);
	for (int i = 0; i < 20; i++) {
		ring_pace_read(&p, now, 0);
		last = ring_pace_wait_ms(&p, now);
		CHECK(last <= RING_IDLE_PACE_MS);
		now += last;
	}
	CHECK(last == RING_IDLE_PACE_MS);
	/* doubling: 4, 8, 16, 32 after the first four empty reads */
	ring_pace_init(&p);
	ring_pace_read(&p, 0, 0);
	CHECK(ring_pace_wait_ms(&p, 0) == 2 * RING_PACE_MS);
	ring_pace_read(&p, 0, 0);
	CHECK(ring_pace_wait_ms(&p, 0) == 4 * RING_PACE_MS);
	/* one read with records: back to the fast pace */
	ring_pace_read(&p, 0, 1);
	CHECK(ring_pace_wait_ms(&p, 0) == RING_PACE_MS);
}

static void test_reset_ends_the_backoff(void)
{
	struct ring_pace p;

	ring_pace_init(&p);
	for (int i = 0; i < 10; i++)
		ring_pace_read(&p, 1000, 0);
	CHECK(ring_pace_wait_ms(&p, 1001) == RING_IDLE_PACE_MS - 1);
	ring_pace_reset(&p, true);
	CHECK(ring_pace_wait_ms(&p, 1001) == RING_PACE_MS - 1);
	CHECK(ring_pace_wait_ms(&p, 1010) == 0);
}

/* With only the recorder reading, the first read after a change is as
 * soon as ever, then records come RING_RECORD_PACE_MS apart; a live
 * subscriber brings the fast pace back. */
static void test_recorder_alone_reads_slower(void)
{
	struct ring_pace p;

	ring_pace_init(&p);
	ring_pace_reset(&p, false);
	CHECK(ring_pace_wait_ms(&p, 1000) == 0);
	ring_pace_read(&p, 1000, 40);
	CHECK(ring_pace_wait_ms(&p, 1000) == RING_RECORD_PACE_MS);
	ring_pace_read(&p, 1000 + RING_RECORD_PACE_MS, 0);	/* backs off */
	CHECK(ring_pace_wait_ms(&p, 1000 + RING_RECORD_PACE_MS) ==
	      RING_IDLE_PACE_MS);
	ring_pace_reset(&p, true);
	ring_pace_read(&p, 2000, 3);
	CHECK(ring_pace_wait_ms(&p, 2000) == RING_PACE_MS);
}

int main(void)
{
	RUN(test_first_read_is_due_at_once);
	RUN(test_fast_while_records_come);
	RUN(test_backs_off_to_idle_pace);
	RUN(test_reset_ends_the_backoff);
	RUN(test_recorder_alone_reads_slower);
	return CHECK_DONE();
}
