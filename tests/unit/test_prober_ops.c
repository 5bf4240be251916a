/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_prober_ops.c - what pgoffd may ask of the privileged prober, and
 * how often: the descriptors' hand-overs once and in order, questions
 * any number of times, anything else refused.
 */
#include "broker/priv/prober_ops.h"
#include "tests/unit/check.h"

static void test_hand_overs_once(void)
{
	uint32_t taken = 0;

	CHECK(prober_op_take(OP_MAPS, &taken));
	CHECK(!prober_op_take(OP_MAPS, &taken));	/* would swap the maps */
	CHECK(prober_op_take(OP_USDT_KNOWN, &taken));
	CHECK(prober_op_take(OP_USDT_KNOWN, &taken));
	CHECK(prober_op_take(OP_USDT, &taken));
	CHECK(!prober_op_take(OP_USDT, &taken));
	/* the binaries linked at start come before the program */
	CHECK(!prober_op_take(OP_USDT_KNOWN, &taken));
}

static void test_questions_any_number_of_times(void)
{
	uint32_t taken = 0;

	for (int i = 0; i < 100; i++) {
		CHECK(prober_op_take(OP_PROBE, &taken));
		CHECK(prober_op_take(OP_NAMES, &taken));
	}
	CHECK(prober_op_take(OP_MAPS, &taken));
	CHECK(prober_op_take(OP_PROBE, &taken));
}

static void test_unknown_ops_refused(void)
{
	uint32_t taken = 0;

	CHECK(!prober_op_take(0, &taken));
	CHECK(!prober_op_take(OP__COUNT, &taken));
	CHECK(!prober_op_take(31, &taken));
	CHECK(!prober_op_take(32, &taken));		/* past the bits */
	CHECK(!prober_op_take(UINT32_MAX, &taken));
	CHECK(taken == 0);
}

int main(void)
{
	RUN(test_hand_overs_once);
	RUN(test_questions_any_number_of_times);
	RUN(test_unknown_ops_refused);
	return CHECK_DONE();
}
