// SPDX-License-Identifier: GPL-2.0-only
/* linebuf.c - bounded line framing; see linebuf.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/linebuf.h"

int linebuf_init(struct linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof(*lb));
	lb->buf = malloc(max + 1);	/* + NUL written over the newline */
	if (!lb->buf)
		return -ENOMEM;
	lb->max = max;
	return 0;
}

void linebuf_free(struct linebuf *lb)
{
	free(lb->buf);
	lb->buf = NULL;
}

ssize_t linebuf_fill(struct linebuf *lb, int fd)
{
	ssize_t n;

	if (lb->start) {	/* compact: returned lines are gone */
		memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
		lb->len -= lb->start;
		lb->start = 0;
	}
	if (lb->len == lb->max)
		return -EMSGSIZE;
	do
		n = read(fd, lb->buf + lb->len, lb->max - lb->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	lb->len += (size_t)n;
	return n;
}

int linebuf_next(struct linebuf *lb, char **line, size_t *len)
{
	char *p = lb->buf + lb->start;
	size_t avail = lb->len - lb->start;
	char *nl = memchr(p, '\n', avail);

	if (!nl)
		return (lb->start == 0 && lb->len == lb->max) ? -EMSGSIZE : 0;
	*nl = '\0';
	*line = p;
	*len = (size_t)(nl - p);
	lb->start += *len + 1;
	return 1;
}

bool linebuf_has_line(const struct linebuf *lb)
{
	return lb->start < lb->len &&
	       memchr(lb->buf + lb->start, '\n', lb->len - lb->start) != NULL;
}
