// SPDX-License-Identifier: GPL-2.0-only
/* owner_cost.c - what an owner's recorded lines take on disk; see
 * owner_cost.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "broker/record/owner_cost.h"

struct owner_cost {
	bool on;			/* a sample runs */
	uint32_t uid;			/* whose */
	int64_t started_ms;
	size_t len;
	char buf[OWNER_COST_BYTES];
};

int owner_cost_new(struct owner_cost **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void owner_cost_free(struct owner_cost *c)
{
	free(c);
}

/* lines (len bytes) of uid's, measured; nothing told when the store
 * cannot say */
static void measure(struct owner_share *s, struct store *st, uint32_t uid,
		    const char *lines, size_t len, int64_t now_ms)
{
	ssize_t bytes = len ? store_batch_cost(st, lines, len) : -EINVAL;

	if (bytes >= 0)
		owner_share_set_cost(s, uid, (double)bytes / (double)len,
				     now_ms);
}

static void end_sample(struct owner_cost *c, struct owner_share *s,
		       struct store *st, int64_t now_ms)
{
	measure(s, st, c->uid, c->buf, c->len, now_ms);
	c->on = false;
	c->len = 0;
}

void owner_cost_tick(struct owner_cost *c, struct owner_share *s,
		     struct store *st, int64_t now_ms)
{
	if (c->on && now_ms - c->started_ms >= OWNER_COST_WINDOW_MS)
		end_sample(c, s, st, now_ms);
}

void owner_cost_add(struct owner_cost *c, struct owner_share *s,
		    struct store *st, uint32_t uid, const char *line,
		    size_t len, int64_t now_ms)
{
	owner_cost_tick(c, s, st, now_ms);
	if (!c->on) {
		if (!owner_share_cost_due(s, uid, now_ms))
			return;
		if (len >= sizeof(c->buf)) {	/* a long line is a sample */
			measure(s, st, uid, line, len, now_ms);
			return;
		}
		c->on = true;
		c->uid = uid;
		c->started_ms = now_ms;
	}
	if (uid != c->uid)
		return;
	if (c->len + len > sizeof(c->buf)) {
		end_sample(c, s, st, now_ms);
		return;
	}
	memcpy(c->buf + c->len, line, len);
	c->len += len;
}
