/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * userns_owner.h - the local user answerable for a process. A rootless
 * container runs its processes as subuids (/etc/subuid) of the one user
 * who started it, in a user namespace that user made: counted by their
 * own uids, one user would be as many owners as the container has uids
 * (and as many shares of the flight record). So a process in a user
 * namespace below pgoffd's counts for the uid that made the outermost of
 * them (NS_GET_OWNER_UID), seen from pgoffd's namespace. A namespace
 * root made (a container manager's: LXD, Docker's userns-remap,
 * systemd-nspawn -U) is not root's cluster: there the postmaster's uid
 * stands, as outside a namespace.
 *
 * Prober side: /proc/PID/ns/user is opened as ptrace would be.
 */
#ifndef PGOFF_USERNS_OWNER_H
#define PGOFF_USERNS_OWNER_H

#include <stddef.h>
#include <stdint.h>

/*
 * The uid answerable for pid, whose own uid is uid: uid itself when pid
 * shares our user namespace, or its namespace cannot be read or is not
 * below ours (err then says so, else err is ""), or the outermost is
 * root's; else the owner of the
 * outermost namespace below ours on pid's path.
 */
uint32_t userns_account_uid(const char *proc_root, uint32_t pid,
			    uint32_t uid, char *err, size_t errlen);

#endif
