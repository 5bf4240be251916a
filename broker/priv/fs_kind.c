// SPDX-License-Identifier: GPL-2.0-only
/* fs_kind.c - file systems whose reads never wait on a user; see fs_kind.h. */
#include <linux/magic.h>
#include <stddef.h>
#include <sys/vfs.h>
#include "broker/priv/fs_kind.h"

#ifndef EROFS_SUPER_MAGIC_V1
#define EROFS_SUPER_MAGIC_V1	0xE0F5E1E2
#endif
#define ZFS_SUPER_MAGIC		0x2FC12FC1	/* not in linux/magic.h */

bool fs_kind_local(int fd)
{
	/* an allowlist: a file system not named here is not read */
	static const unsigned long local[] = {
		EXT4_SUPER_MAGIC,	/* ext2, ext3, ext4 */
		XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, F2FS_SUPER_MAGIC,
		TMPFS_MAGIC, RAMFS_MAGIC, SQUASHFS_MAGIC,
		EROFS_SUPER_MAGIC_V1, ZFS_SUPER_MAGIC,
	};
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return false;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((unsigned long)sf.f_type == local[i])
			return true;
	return false;
}
