// SPDX-License-Identifier: GPL-2.0-only
/* clock.c - see clock.h. */
#include <time.h>
#include "common/clock.h"

int64_t monotonic_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
