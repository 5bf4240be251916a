// SPDX-License-Identifier: GPL-2.0-only
/*
 * control_socket.c - the socket file is the first gate (directory
 * root:GROUP 0750, socket root:GROUP 0660); SO_PEERCRED/SO_PEERGROUPS are
 * the second, so a socket whose mode was loosened still refuses outsiders.
 *
 * Everything root does here by path is done in a directory safe_dir_open
 * checked: owned by root, writable by nobody else, reached through
 * directories no other user can change. Root never follows a link, and
 * never chowns, unlinks or connects in a place another user controls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "broker/serve/control_socket.h"
#include "broker/priv/safe_dir.h"
#include "common/log.h"

/* An existing entry name in dirfd: live broker (refuse), stale (remove). */
static int handle_existing(int dirfd, const char *name, const char *path,
			   const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, ret;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("%s exists and is not a socket; not touching it", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* by path: in a directory only root can change (safe_dir_open) */
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (ret == 0) {
		log_warnx("another pgoffd is already serving %s", path);
		return -EADDRINUSE;
	}
	log_info("removing stale socket %s", path);
	if (unlinkat(dirfd, name, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

/* Members of group can reach a socket in the directory dirfd? */
static void warn_unreachable(int dirfd, const char *dir, gid_t group)
{
	struct stat st;

	if (fstat(dirfd, &st) == 0 && !(st.st_mode & S_IXOTH) &&
	    !(st.st_gid == group && (st.st_mode & S_IXGRP)))
		log_warnx("the group cannot enter %s (mode %04o, group %u): "
			  "only root will reach the socket", dir,
			  (unsigned int)(st.st_mode & 07777),
			  (unsigned int)st.st_gid);
}

int control_socket_create(const char *path, gid_t group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], why[PATH_MAX + 256];
	const char *name = strrchr(path, '/');
	mode_t old_umask;
	uid_t owner = geteuid();	/* pgoffd checked: root */
	int fd, dirfd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	if (path[0] != '/' || !name || !name[1] || strcmp(name, "/.") == 0 ||
	    strcmp(name, "/..") == 0) {
		log_warnx("socket path %s: an absolute path to a file is needed",
			  path);
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	snprintf(dir, sizeof(dir), "%.*s", (int)(name - path), path);
	name++;
	dirfd = safe_dir_open(dir[0] ? dir : "/", owner, group, true, why,
			      sizeof(why));
	if (dirfd < 0) {
		log_warnx("socket directory: %s", why);
		return dirfd;
	}
	warn_unreachable(dirfd, dir[0] ? dir : "/", group);
	err = handle_existing(dirfd, name, path, &sa);
	if (err) {
		close(dirfd);
		return err;
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		close(dirfd);
		return err;
	}
	/* the mode comes from the umask: no window with a looser socket */
	old_umask = umask(0117);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old_umask);
	/* the group through the directory fd, never following a link */
	if (!err && fchownat(dirfd, name, owner, group, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (!err && listen(fd, 64))
		err = -errno;
	close(dirfd);
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
