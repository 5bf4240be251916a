/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symfiles.h - the files of a cluster's executable mappings, opened for
 * their symbols by the prober's worker (within its deadline, killed if a
 * FUSE or NFS path never answers) and handed to pgoffd, whose loop then
 * reads them (usyms.h) but never opens a path a cluster owner chose.
 *
 * A file is handed over only if it is the very file mapped (device,
 * inode), a regular file, and on a local file system (fs_kind.h): a read
 * of it waits for a disk at most.
 */
#ifndef PGOFF_SYMFILES_H
#define PGOFF_SYMFILES_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "broker/priv/pg_probe.h"

/*
 * Open each distinct file of c's mappings, read-only, no FIFO's or
 * lease's wait. idx[i]: map i's file's index in fds (maps of one file
 * share it), or -errno: -ENOENT no path (deleted, too long), -ESTALE not
 * the file mapped (replaced), -EPERM not a regular file, -EREMOTE on a
 * file system whose reads may wait for a user or a network. Returns how
 * many descriptors are in fds.
 */
size_t symfiles_open(const struct pg_cluster_info *c,
		     int32_t idx[PG_PROBE_MAX_MAPS],
		     int fds[PG_PROBE_MAX_MAPS]);

/* Whether idx says the file was refused (not merely gone). */
static inline int symfiles_refused(int32_t idx)
{
	return idx == -ESTALE || idx == -EPERM || idx == -EREMOTE;
}

#endif
