// SPDX-License-Identifier: GPL-2.0-only
/* procfs.c - see procfs.h. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "broker/procfs.h"

ssize_t procfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}
