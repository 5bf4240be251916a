/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fs_kind.h - whether pgoffd's loop may read a file that a cluster owner
 * chose: only on a file system whose reads wait for a local disk at
 * most, never for a user's process (FUSE) or a network (NFS, CIFS,
 * autofs). Overlayfs is left out too: its layers may be a FUSE mount
 * that a user made in a namespace of their own.
 */
#ifndef PGOFF_FS_KIND_H
#define PGOFF_FS_KIND_H

#include <stdbool.h>

/* Whether fd's file system is one of those; false if fstatfs fails. */
bool fs_kind_local(int fd);

#endif
