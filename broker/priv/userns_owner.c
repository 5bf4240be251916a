// SPDX-License-Identifier: GPL-2.0-only
/* userns_owner.c - the uid answerable for a process; see userns_owner.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "broker/priv/userns_owner.h"

/* User namespaces nest 32 deep at most (the kernel's limit). */
#define USERNS_MAX_DEPTH	33

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Up from fd's namespace to the one whose parent is ours: its owner.
 * 0 or -errno (EPERM: fd's is not below ours); closes fd. */
static int outermost_owner(int fd, const struct stat *ours, uint32_t *owner)
{
	struct stat st;
	int parent, err = -ELOOP;
	uid_t u;

	for (int depth = 0; depth < USERNS_MAX_DEPTH; depth++) {
		parent = ioctl(fd, NS_GET_PARENT);
		if (parent < 0 || fstat(parent, &st)) {
			err = -errno;
			if (parent >= 0)
				close(parent);
			break;
		}
		if (same_file(&st, ours)) {
			close(parent);
			err = ioctl(fd, NS_GET_OWNER_UID, &u) ? -errno : 0;
			if (!err)
				*owner = (uint32_t)u;
			break;
		}
		close(fd);
		fd = parent;
	}
	close(fd);
	return err;
}

uint32_t userns_account_uid(const char *proc_root, uint32_t pid,
			    uint32_t uid, char *err, size_t errlen)
{
	char path[96];
	struct stat ours, st;
	uint32_t owner = uid;
	int fd, ret;

	err[0] = '\0';
	snprintf(path, sizeof(path), "%s/%u/ns/user", proc_root, pid);
	if (stat("/proc/self/ns/user", &ours)) {
		ret = -errno;
		goto unknown;
	}
	/* (O_NONBLOCK: where proc_root is not /proc, a FIFO does not wait) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		goto unknown;
	}
	if (same_file(&st, &ours)) {
		close(fd);
		return uid;
	}
	ret = outermost_owner(fd, &ours, &owner);
	/* a namespace root made is a container manager's (LXD, Docker's
	 * userns-remap, systemd-nspawn -U): its tenants are not root's, and
	 * each counts by its own uids, as outside a namespace */
	if (!ret)
		return owner ? owner : uid;
unknown:
	snprintf(err, errlen, "its user namespace's owner is not known (%s); "
		 "it counts as uid %u", strerror(-ret), uid);
	return uid;
}
