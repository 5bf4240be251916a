/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ring_pace.h - when pgoffd reads the BPF ring buffer.
 *
 * The kernel never wakes pgoffd for a record (BPF_RB_NO_WAKEUP: a wakeup
 * costs the traced thread a self-IPI per record), so pgoffd reads the
 * ring on its own while records may come: every RING_PACE_MS while they
 * do, twice as late after each read that found nothing, down to one read
 * per RING_IDLE_PACE_MS. A burst's records then go to each client in one
 * send, and a subscriber to a quiet server costs about 30 wakeups a
 * second, not 500. A change of subscriptions starts again at the fast
 * pace: a new subscriber's first records are not held back by the quiet
 * spell before it. While only the flight recorder reads what comes (no
 * live subscriber), records come RING_RECORD_PACE_MS apart: it writes
 * them 50 ms at a time anyway, and the wakeups were a quarter of pgoffd's
 * time storing every event (a read that fills its budget is followed by
 * another at once, so a burst still drains at the ring's speed).
 */
#ifndef PGOFF_BROKER_RING_PACE_H
#define PGOFF_BROKER_RING_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define RING_PACE_MS 2
#define RING_RECORD_PACE_MS 16
#define RING_IDLE_PACE_MS 32

struct ring_pace {
	int64_t last_ms;	/* when the ring was last read */
	int64_t every_ms;	/* the pace now */
	int64_t busy_ms;	/* the pace while records come */
};

void ring_pace_init(struct ring_pace *p);
/* Milliseconds until the next read is due (0: now). */
int64_t ring_pace_wait_ms(const struct ring_pace *p, int64_t now_ms);
/* After a read at now_ms that found got records. */
void ring_pace_read(struct ring_pace *p, int64_t now_ms, int got);
/* Subscriptions changed: the next read is due within RING_PACE_MS, and
 * later ones RING_PACE_MS apart while records come if live is true
 * (someone watches live), else RING_RECORD_PACE_MS. */
void ring_pace_reset(struct ring_pace *p, bool live);

#endif
