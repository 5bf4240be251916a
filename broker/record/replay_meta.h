/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replay_meta.h - what the subscription filters look at, read back from a
 * stored event line, so that a replay is filtered as the live stream is.
 */
#ifndef PGOFF_REPLAY_META_H
#define PGOFF_REPLAY_META_H

#include <json-c/json.h>
#include "broker/serve/filter.h"

/*
 * From an event object ("offcpu" or "episode", as event.c encodes it):
 * strings borrowed from ev. Returns 0, or -EINVAL for another object
 * (a damaged or foreign record: not replayed).
 */
int replay_meta(json_object *ev, struct event_meta *m);

/*
 * A stored line (of len bytes, parsed into ev) as a subscriber may see
 * it, as live: the SQL (record-queries) only when it sees queries, the
 * user stack (record-user-stacks) only when it asked for user stacks;
 * otherwise without them and their fields. Returns line, or ev's new
 * line (borrowed from ev), its length in *len.
 */
const char *replay_line(json_object *ev, const char *line, size_t *len,
			bool sees_query, bool wants_ustack);

#endif
