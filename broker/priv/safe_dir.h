/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * safe_dir.h - open a directory, as root, that no other user can have
 * had a hand in: neither the directory nor any directory on the way to
 * it could have been replaced, renamed or filled by anyone but its owner.
 * OpenSSH's safe_path in spirit, walked from / with O_PATH|O_NOFOLLOW
 * file descriptors and openat(), so that nothing is looked up twice.
 */
#ifndef PGOFF_SAFE_DIR_H
#define PGOFF_SAFE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <sys/types.h>

#define SAFE_DIR_OTHER_OWNER EUCLEAN

/*
 * Open the directory path (absolute) and return an O_RDONLY|O_DIRECTORY
 * fd, or -errno with err filled (naming the component at fault).
 *
 * Every component is a real directory (a symbolic link is refused) owned
 * by root or owner. An ancestor may be writable by its group or others
 * only with the sticky bit (/tmp): then only the owner of an entry may
 * rename or remove it, and the next component's owner is checked too.
 * The directory itself must be owned by owner and be writable by nobody
 * else, sticky or not.
 *
 * If it does not exist and create is set, it is made (mkdirat in its
 * checked parent) and given, through its fd, group `group` and mode
 * 0750. An existing directory's group and mode are left as they are.
 * The socket's directory is root's (owner 0); the state directory is
 * pgoffd's user's, or root's until it is given to that user.
 *
 * -SAFE_DIR_OTHER_OWNER: the directory exists, sound, but another uid
 * owns it; a caller may try again for that owner.
 */
int safe_dir_open(const char *path, uid_t owner, gid_t group, bool create,
		  char *err, size_t errlen);

#endif
