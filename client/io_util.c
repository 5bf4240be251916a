// SPDX-License-Identifier: GPL-2.0-only
/* io_util.c - whole writes, for pgoffctl and pgoff_exporter; see io_util.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>
#include "client/io_util.h"

/* sock: send() with MSG_NOSIGNAL, else write(). */
static int put_all(int fd, const void *buf, size_t len, bool sock)
{
	const char *p = buf;

	while (len) {
		ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) :
				   write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int io_write_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, false);
}

int io_send_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, true);
}
