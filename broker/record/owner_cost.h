/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * owner_cost.h - what each cluster owner's recorded lines take on disk:
 * a batch (up to 50 ms of every owner's events) is compressed as one,
 * so its bytes cannot be told apart by owner. Instead, now and then an
 * owner's own lines of about a batch's time are compressed alone, as the
 * store compresses a batch; their bytes per line byte are the owner's
 * cost, by which owner_share.h weighs its lines in every batch. An owner
 * whose lines compress badly (random SQL text) then pays for its disk,
 * instead of having it shared by line length with owners whose lines
 * compress well.
 *
 * One sample runs at a time; an owner is sampled when owner_share says
 * its cost is due (each owner in turn).
 */
#ifndef PGOFF_OWNER_COST_H
#define PGOFF_OWNER_COST_H

#include <stddef.h>
#include <stdint.h>
#include "broker/record/owner_share.h"
#include "broker/record/store.h"

/* A sample ends at this many bytes of lines, or this long after it
 * began (the store's batches are of 50 ms). */
#define OWNER_COST_BYTES	(16u << 10)
#define OWNER_COST_WINDOW_MS	50

struct owner_cost;

int owner_cost_new(struct owner_cost **out);
void owner_cost_free(struct owner_cost *c);

/*
 * An event of uid's was stored, its line as stored: into the sample if
 * it is uid's, or the start of one for uid if none runs and its cost is
 * due. A sample that is full or over is measured (store_batch_cost) and
 * its cost told to the share.
 */
void owner_cost_add(struct owner_cost *c, struct owner_share *s,
		    struct store *st, uint32_t uid, const char *line,
		    size_t len, int64_t now_ms);
/* Once a second: a sample past its window is measured. */
void owner_cost_tick(struct owner_cost *c, struct owner_share *s,
		     struct store *st, int64_t now_ms);

#endif
