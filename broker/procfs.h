/* SPDX-License-Identifier: GPL-2.0-only */
/* procfs.h - small /proc (and other) files read whole. */
#ifndef PGOFF_PROCFS_H
#define PGOFF_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* Up to len - 1 bytes of path, NUL-terminated. Returns bytes or -errno. */
ssize_t procfs_read(const char *path, char *buf, size_t len);

#endif
