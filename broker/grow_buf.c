// SPDX-License-Identifier: GPL-2.0-only
/* grow_buf.c - a growing byte buffer; see grow_buf.h. */
#include <stdlib.h>
#include <string.h>
#include "broker/grow_buf.h"

void grow_buf_put(struct grow_buf *b, const void *src, size_t len)
{
	if (b->failed)
		return;
	/* one byte more: a text writer ends it with a NUL in place */
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *p;

		while (cap < b->n + len + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, src, len);
	b->n += len;
}
