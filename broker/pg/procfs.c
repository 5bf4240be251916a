// SPDX-License-Identifier: GPL-2.0-only
/* procfs.c - see procfs.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "broker/pg/procfs.h"

ssize_t procfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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

int procfs_open_regular(int dirfd, const char *name, int follow_magic,
			off_t max_size, struct stat *st)
{
	char self[64];
	struct stat again;
	int pfd, fd, err;

	pfd = openat(dirfd, name, O_PATH | O_CLOEXEC |
		     (follow_magic ? 0 : O_NOFOLLOW));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		err = -errno;
		goto out;
	}
	if (S_ISLNK(st->st_mode)) {
		err = -ELOOP;
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (st->st_size > max_size) {
		err = -EFBIG;
		goto out;
	}
	/* the inode checked above, not whatever the name points to now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &again) || again.st_dev != st->st_dev ||
	    again.st_ino != st->st_ino) {
		close(fd);
		err = -ESTALE;
		goto out;
	}
	err = fd;
out:
	close(pfd);
	return err;
}

int procfs_stat(const char *proc_root, uint32_t pid, struct procfs_stat *st)
{
	char path[96], buf[512], *open_paren, *close_paren;
	unsigned long long start, utime, stime, rss = 0;
	unsigned int ppid;
	size_t len;

	snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %c %u %*d %*d %*d %*d %*u %*u %*u %*u "
		   "%*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %*u %llu",
		   &st->state, &ppid, &utime, &stime, &start, &rss) < 5)
		return -EINVAL;
	len = (size_t)(close_paren - open_paren - 1);
	if (len >= sizeof(st->comm))
		len = sizeof(st->comm) - 1;
	memcpy(st->comm, open_paren + 1, len);
	st->comm[len] = '\0';
	st->ppid = ppid;
	st->start = start;
	st->utime = utime;
	st->stime = stime;
	st->rss_pages = rss;
	return 0;
}

int procfs_uids(const char *proc_root, uint32_t pid, uint32_t uids[4])
{
	char path[96], buf[2048], *line;
	unsigned int u[4];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid);
	n = procfs_read(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%u %u %u %u", &u[0], &u[1], &u[2],
			    &u[3]) != 4)
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		uids[i] = u[i];
	return 0;
}
