// SPDX-License-Identifier: GPL-2.0-only
/*
 * ring_pace.c - the pace of pgoffd's ring buffer reads (see ring_pace.h).
 */
#include "broker/kernel/ring_pace.h"

void ring_pace_init(struct ring_pace *p)
{
	p->last_ms = 0;
	p->every_ms = RING_PACE_MS;
	p->busy_ms = RING_PACE_MS;
}

int64_t ring_pace_wait_ms(const struct ring_pace *p, int64_t now_ms)
{
	int64_t left = p->last_ms + p->every_ms - now_ms;

	return left > 0 ? left : 0;
}

void ring_pace_read(struct ring_pace *p, int64_t now_ms, int got)
{
	p->last_ms = now_ms;
	if (got > 0)
		p->every_ms = p->busy_ms;
	else if (p->every_ms < RING_IDLE_PACE_MS)
		p->every_ms *= 2;
}

void ring_pace_reset(struct ring_pace *p, bool live)
{
	p->every_ms = RING_PACE_MS;
	p->busy_ms = live ? RING_PACE_MS : RING_RECORD_PACE_MS;
}
