/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * linebuf.h - bounded newline framing for a non-blocking or blocking fd.
 * Used by both ends, so neither ever buffers an unbounded line.
 */
#ifndef PGOFF_LINEBUF_H
#define PGOFF_LINEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct linebuf {
	char *buf;
	size_t len;		/* bytes held */
	size_t start;		/* first byte not yet returned */
	size_t max;		/* longest line accepted, newline included */
};

int linebuf_init(struct linebuf *lb, size_t max);
void linebuf_free(struct linebuf *lb);
/*
 * Read once from fd. Returns bytes read (> 0), 0 at end of file, or
 * -errno (-EAGAIN when a non-blocking fd has nothing).
 */
ssize_t linebuf_fill(struct linebuf *lb, int fd);
/*
 * Next complete line, without newline and NUL-terminated in place.
 * Returns 1 with *line and *len set, 0 if no complete line yet, or
 * -EMSGSIZE if the pending line exceeds the limit (framing is lost).
 */
int linebuf_next(struct linebuf *lb, char **line, size_t *len);
/* Whether a complete line is held: linebuf_next would return it. */
bool linebuf_has_line(const struct linebuf *lb);

#endif
