/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * procfs.h - small /proc (and other) files read whole, and files that
 * another user controls opened without being fooled: no symlink
 * followed, no FIFO or device opened, no size beyond a cap.
 */
#ifndef PGOFF_PROCFS_H
#define PGOFF_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Up to len - 1 bytes of path, NUL-terminated. Returns bytes or -errno. */
ssize_t procfs_read(const char *path, char *buf, size_t len);

/*
 * Open name in dirfd (AT_FDCWD: a path) for reading, only if it is a
 * regular file of at most max_size bytes. The name is first opened with
 * O_PATH and O_NOFOLLOW, which neither follows a symlink nor runs a
 * FIFO's or a device's open, and only that very inode is then opened for
 * reading, through /proc/self/fd. A magic link such as /proc/PID/exe
 * passes (follow_magic): it names the inode itself. st gets the file's
 * status. Returns an fd, or -errno: -ELOOP a symlink, -EINVAL not a
 * regular file, -EFBIG larger than max_size.
 */
int procfs_open_regular(int dirfd, const char *name, int follow_magic,
			off_t max_size, struct stat *st);

/* What /proc/PID/stat says of a process that pgoff looks at. */
struct procfs_stat {
	char state;			/* R, S, D, Z, ... */
	uint32_t ppid;
	uint64_t start;			/* start time, clock ticks after boot */
	uint64_t utime, stime;		/* CPU time, clock ticks */
	uint64_t rss_pages;		/* resident set size (0: not given) */
	char comm[16];
};

/*
 * PROC/PID/stat parsed (comm may hold spaces and parentheses: it ends at
 * the last ')'). Returns 0, -ENOENT (gone) or -EINVAL.
 */
int procfs_stat(const char *proc_root, uint32_t pid, struct procfs_stat *st);

/*
 * The uids of a process, from the Uid: line of PROC/PID/status (real,
 * effective, saved, filesystem). Returns 0 or -errno.
 */
int procfs_uids(const char *proc_root, uint32_t pid, uint32_t uids[4]);

#endif
