/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * control_socket.h - create the listening socket safely and tell who is
 * on the other end of a connection.
 */
#ifndef PGOFF_CONTROL_SOCKET_H
#define PGOFF_CONTROL_SOCKET_H

#include <stdbool.h>
#include <sys/types.h>

#define PEER_MAX_GROUPS 256

struct peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t groups[PEER_MAX_GROUPS];	/* supplementary groups at connect() */
	int ngroups;
};

/*
 * Listening socket at path (absolute), mode 0660, owner root, group
 * `group`. Its directory is checked with safe_dir_open (root's alone, as
 * is every directory on the way) and created root:group 0750 if missing.
 * pgoffd cannot remove the socket once it is no longer root: the next
 * start removes a stale one; a live broker is not clobbered
 * (-EADDRINUSE). Returns the fd or -errno (message logged).
 */
int control_socket_create(const char *path, gid_t group);

/* The peer's credentials as the kernel recorded them at connect(). */
int control_socket_peer(int fd, struct peer *p);
/* uid 0, or the group as primary or supplementary group. */
bool peer_allowed(const struct peer *p, gid_t group);

#endif
