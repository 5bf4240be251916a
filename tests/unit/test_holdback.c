// SPDX-License-Identifier: GPL-2.0-only
/* Records held until their process's title comes, in order, bounded. */
#include <errno.h>
#include <string.h>
#include "broker/kernel/holdback.h"
#include "tests/unit/check.h"

static char out[64];
static size_t nout;

/* Each record is one letter; let-go order is kept in out. */
static void take(void *ctx, const void *data, size_t size)
{
	(void)ctx;
	(void)size;
	if (nout < sizeof(out) - 1)
		out[nout++] = *(const char *)data;
	out[nout] = '\0';
}

static void reset(void)
{
	nout = 0;
	out[0] = '\0';
}

static void test_release_by_title(void)
{
	struct holdback *h;

	CHECK(holdback_new(&h, 8, 4, 50) == 0);
	reset();
	CHECK(!holdback_has(h, 7));
	CHECK(holdback_put(h, 7, "a", 1, 0) == 0);
	CHECK(holdback_put(h, 8, "x", 1, 1) == 0);
	CHECK(holdback_put(h, 7, "b", 1, 2) == 0);
	CHECK(holdback_has(h, 7) && holdback_has(h, 8));
	holdback_release(h, 7, take, NULL);
	CHECK_STR(out, "ab");
	CHECK(!holdback_has(h, 7));
	CHECK(holdback_count(h) == 1);
	holdback_release(h, 8, take, NULL);
	CHECK_STR(out, "abx");
	CHECK(holdback_count(h) == 0);
	CHECK(holdback_wait_ms(h, 10) == -1);
	holdback_free(h);
}

static void test_expiry_keeps_each_process_in_order(void)
{
	struct holdback *h;

	CHECK(holdback_new(&h, 8, 4, 50) == 0);
	reset();
	CHECK(holdback_put(h, 1, "a", 1, 100) == 0);
	CHECK(holdback_put(h, 2, "x", 1, 120) == 0);
	CHECK(holdback_put(h, 1, "b", 1, 140) == 0);
	CHECK(holdback_wait_ms(h, 110) == 40);
	holdback_expire(h, 149, take, NULL);
	CHECK_STR(out, "");
	/* a expires; b, of the same process, may not overtake it later */
	holdback_expire(h, 150, take, NULL);
	CHECK_STR(out, "ab");
	CHECK(holdback_wait_ms(h, 150) == 20);
	holdback_expire(h, 170, take, NULL);
	CHECK_STR(out, "abx");
	holdback_free(h);
}

static void test_bounded(void)
{
	struct holdback *h;

	CHECK(holdback_new(&h, 2, 4, 50) == 0);
	CHECK(holdback_put(h, 1, "a", 1, 0) == 0);
	CHECK(holdback_put(h, 1, "b", 1, 0) == 0);
	CHECK(holdback_put(h, 1, "c", 1, 0) == -ENOSPC);
	CHECK(holdback_put(h, 1, "toolong", 7, 0) == -EINVAL);
	reset();
	holdback_expire(h, 1000, take, NULL);
	CHECK_STR(out, "ab");
	/* the ring wraps */
	CHECK(holdback_put(h, 3, "c", 1, 0) == 0);
	CHECK(holdback_put(h, 3, "d", 1, 0) == 0);
	holdback_release(h, 3, take, NULL);
	CHECK_STR(out, "abcd");
	holdback_free(h);
}

int main(void)
{
	RUN(test_release_by_title);
	RUN(test_expiry_keeps_each_process_in_order);
	RUN(test_bounded);
	return CHECK_DONE();
}
