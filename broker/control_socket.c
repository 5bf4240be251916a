// SPDX-License-Identifier: GPL-2.0-only
/*
 * control_socket.c - the socket file is the first gate (directory 0750,
 * socket 0660, group-owned); SO_PEERCRED/SO_PEERGROUPS are the second,
 * so a socket whose mode was loosened still refuses outsiders.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "broker/control_socket.h"
#include "protocol/log.h"

static int prepare_dir(const char *path, gid_t group, uid_t owner)
{
	char copy[PATH_MAX];
	struct stat st;
	const char *dir;

	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (lstat(dir, &st) && errno == ENOENT) {
		if (mkdir(dir, 0750) || chown(dir, owner, group)) {
			log_warn("cannot create socket directory %s", dir);
			return -errno;
		}
		return 0;
	}
	if (lstat(dir, &st)) {
		log_warn("socket directory %s", dir);
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_warnx("socket directory %s is not a directory (symlinks "
			  "are refused)", dir);
		return -ENOTDIR;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		log_warnx("socket directory %s is writable by others: anyone "
			  "could replace the socket; use a directory that "
			  "only root can write", dir);
		return -EPERM;
	}
	return 0;
}

/* An existing socket file: live broker (refuse) or stale (remove). */
static int handle_existing(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, ret;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("%s exists and is not a socket; not touching it", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (ret == 0) {
		log_warnx("another pgoffd is already serving %s", path);
		return -EADDRINUSE;
	}
	log_info("removing stale socket %s", path);
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return 0;
}

int control_socket_create(const char *path, gid_t group, uid_t dir_owner)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old_umask;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	err = prepare_dir(path, group, dir_owner);
	if (err)
		return err;
	err = handle_existing(path, &sa);
	if (err)
		return err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* mode fixed before bind: no window with a looser socket */
	old_umask = umask(0117);
	err = fchmod(fd, 0660) ||
	      bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old_umask);
	if (!err && chown(path, 0, group))
		err = -errno;
	if (!err && listen(fd, 64))
		err = -errno;
	if (err) {
		errno = -err;
		log_warn("cannot listen on %s", path);
		close(fd);
		return err;
	}
	return fd;
}

int control_socket_peer(int fd, struct peer *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	memset(p, 0, sizeof(*p));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return -errno;
	p->pid = cred.pid;
	p->uid = cred.uid;
	p->gid = cred.gid;
	len = sizeof(p->groups);
	/* supplementary groups as the kernel has them, not as NSS says now */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &len) == 0)
		p->ngroups = (int)(len / sizeof(gid_t));
	else if (errno == ERANGE)	/* more groups than we look at */
		log_warnx("peer uid %u is in more than %d groups; only its "
			  "primary group is checked", p->uid, PEER_MAX_GROUPS);
	else
		return -errno;
	return 0;
}

bool peer_allowed(const struct peer *p, gid_t group)
{
	if (p->uid == 0 || p->gid == group)
		return true;
	for (int i = 0; i < p->ngroups; i++)
		if (p->groups[i] == group)
			return true;
	return false;
}
