// SPDX-License-Identifier: GPL-2.0-only
/* holdback.c - records waiting for their process's title; see holdback.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "broker/kernel/holdback.h"

struct held {
	uint32_t tgid;
	uint32_t size;		/* 0: let go already (a hole) */
	int64_t since_ms;
	unsigned char *data;
};

/* A ring of entries, oldest at head; holes are skipped as head passes. */
struct holdback {
	struct held *ring;
	unsigned char *store;
	size_t cap, head, count;	/* count: entries, holes included */
	size_t record_size;
	int64_t max_ms;
};

int holdback_new(struct holdback **out, size_t max_records,
		 size_t record_size, int64_t max_ms)
{
	struct holdback *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->ring = calloc(max_records, sizeof(*h->ring));
	h->store = malloc(max_records * record_size);
	if (!h->ring || !h->store) {
		holdback_free(h);
		return -ENOMEM;
	}
	for (size_t i = 0; i < max_records; i++)
		h->ring[i].data = h->store + i * record_size;
	h->cap = max_records;
	h->record_size = record_size;
	h->max_ms = max_ms;
	*out = h;
	return 0;
}

void holdback_free(struct holdback *h)
{
	if (!h)
		return;
	free(h->ring);
	free(h->store);
	free(h);
}

static struct held *at(const struct holdback *h, size_t i)
{
	return &h->ring[(h->head + i) % h->cap];
}

/* Drop the holes at the head. */
static void trim(struct holdback *h)
{
	while (h->count && !at(h, 0)->size) {
		h->head = (h->head + 1) % h->cap;
		h->count--;
	}
}

bool holdback_has(const struct holdback *h, uint32_t tgid)
{
	for (size_t i = 0; i < h->count; i++)
		if (at(h, i)->size && at(h, i)->tgid == tgid)
			return true;
	return false;
}

int holdback_put(struct holdback *h, uint32_t tgid, const void *data,
		 size_t size, int64_t now_ms)
{
	struct held *e;

	if (!size || size > h->record_size)
		return -EINVAL;
	if (h->count == h->cap)
		return -ENOSPC;
	e = at(h, h->count++);
	e->tgid = tgid;
	e->size = (uint32_t)size;
	e->since_ms = now_ms;
	memcpy(e->data, data, size);
	return 0;
}

void holdback_release(struct holdback *h, uint32_t tgid, holdback_fn fn,
		      void *ctx)
{
	for (size_t i = 0; i < h->count; i++) {
		struct held *e = at(h, i);

		if (!e->size || e->tgid != tgid)
			continue;
		fn(ctx, e->data, e->size);
		e->size = 0;
	}
	trim(h);
}

void holdback_expire(struct holdback *h, int64_t now_ms, holdback_fn fn,
		     void *ctx)
{
	while (h->count) {
		struct held *e = at(h, 0);

		if (e->size && now_ms - e->since_ms < h->max_ms)
			break;
		/* the oldest of its process: its later ones may follow it
		 * only after it, so they go with it */
		if (e->size)
			holdback_release(h, e->tgid, fn, ctx);
		trim(h);
	}
}

int64_t holdback_wait_ms(const struct holdback *h, int64_t now_ms)
{
	int64_t left;

	if (!h->count)
		return -1;
	left = at(h, 0)->since_ms + h->max_ms - now_ms;
	return left > 0 ? left : 0;
}

size_t holdback_count(const struct holdback *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->count; i++)
		n += at(h, i)->size != 0;
	return n;
}
