/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * grow_buf.h - a byte buffer that grows as it is appended to; a failed
 * allocation sticks (failed), so a writer checks once at the end.
 */
#ifndef PGOFF_GROW_BUF_H
#define PGOFF_GROW_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct grow_buf {
	unsigned char *p;	/* malloc'd; the caller frees it */
	size_t n, cap;
	bool failed;
};

/* len bytes of src at the end, one byte of room kept after them. */
void grow_buf_put(struct grow_buf *b, const void *src, size_t len);

#endif
