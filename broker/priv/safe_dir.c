// SPDX-License-Identifier: GPL-2.0-only
/*
 * safe_dir.c - see safe_dir.h. Each directory is checked through an fd
 * before anything inside it is looked at, and the next component is
 * opened relative to that fd with O_NOFOLLOW: a symbolic link or a
 * directory swapped in after a check is never followed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/priv/safe_dir.h"

static int fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

/* Whether others than the owner may add, rename or remove entries. */
static bool others_write(const struct stat *st)
{
	return st->st_mode & (S_IWGRP | S_IWOTH);
}

/* A directory on the way (not the last): see safe_dir.h. */
static int check_ancestor(const struct stat *st, const char *shown,
			  uid_t owner, char *err, size_t errlen)
{
	if (st->st_uid != 0 && st->st_uid != owner)
		return fail(err, errlen, EPERM, "%s is owned by uid %u: every "
			    "directory on the way to the socket must be root's",
			    shown, (unsigned int)st->st_uid);
	if (others_write(st) && !(st->st_mode & S_ISVTX))
		return fail(err, errlen, EPERM, "%s is writable by its group "
			    "or others (mode %04o) without the sticky bit: "
			    "they could replace the directories in it", shown,
			    (unsigned int)(st->st_mode & 07777));
	return 0;
}

/* The directory itself. */
static int check_last(const struct stat *st, const char *shown, uid_t owner,
		      char *err, size_t errlen)
{
	if (st->st_uid != owner)
		return fail(err, errlen, SAFE_DIR_OTHER_OWNER, "%s is owned "
			    "by uid %u, not by uid %u: remove it (pgoffd "
			    "creates it) or choose another directory", shown,
			    (unsigned int)st->st_uid, (unsigned int)owner);
	if (others_write(st))
		return fail(err, errlen, EPERM, "%s is writable by its group "
			    "or others (mode %04o): they could replace the "
			    "socket; use a directory of its own that only root "
			    "can write, such as /run/pgoff", shown,
			    (unsigned int)(st->st_mode & 07777));
	return 0;
}

/* Why name in dirfd could not be opened as a directory. */
static int explain(int dirfd, const char *name, const char *shown, int errnum,
		   char *err, size_t errlen)
{
	struct stat st;

	if ((errnum == ELOOP || errnum == ENOTDIR) &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return fail(err, errlen, ELOOP, "%s is a symbolic "
				    "link; pgoffd does not follow links as "
				    "root: give the path it points to", shown);
		return fail(err, errlen, ENOTDIR, "%s is not a directory",
			    shown);
	}
	if (errnum == ENOENT)
		return fail(err, errlen, ENOENT, "%s does not exist", shown);
	return fail(err, errlen, errnum, "%s: %s", shown, strerror(errnum));
}

/* The last component, in the checked directory parent; made if asked. */
static int open_last(int parent, const char *name, const char *shown,
		     uid_t owner, gid_t group, bool create, char *err,
		     size_t errlen)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	bool made = false;
	struct stat st;
	int fd, ret;

	fd = openat(parent, name, flags);
	if (fd < 0 && errno == ENOENT && create) {
		/* 0700 until its group and mode are set through the fd */
		if (mkdirat(parent, name, 0700) == 0)
			made = true;
		else if (errno != EEXIST)	/* else: someone was first */
			return fail(err, errlen, errno, "cannot create %s: %s",
				    shown, strerror(errno));
		fd = openat(parent, name, flags);
	}
	if (fd < 0)
		return explain(parent, name, shown, errno, err, errlen);
	if (fstat(fd, &st)) {
		int errnum = errno;

		close(fd);
		return fail(err, errlen, errnum, "%s: %s", shown,
			    strerror(errnum));
	}
	ret = check_last(&st, shown, owner, err, errlen);
	if (!ret && made && (fchown(fd, (uid_t)-1, group) || fchmod(fd, 0750)))
		ret = fail(err, errlen, errno, "cannot give %s group %u and "
			   "mode 0750: %s", shown, (unsigned int)group,
			   strerror(errno));
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int safe_dir_open(const char *path, uid_t owner, gid_t group, bool create,
		  char *err, size_t errlen)
{
	char buf[PATH_MAX], shown[PATH_MAX] = "";
	struct stat st;
	char *p = buf;
	int fd, ret;

	if (path[0] != '/')
		return fail(err, errlen, EINVAL, "%s is not an absolute path",
			    path);
	if (strlen(path) >= sizeof(buf))
		return fail(err, errlen, ENAMETOOLONG, "%s is too long", path);
	memcpy(buf, path, strlen(path) + 1);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		int errnum = errno;

		if (fd >= 0)
			close(fd);
		return fail(err, errlen, errnum, "/: %s", strerror(errnum));
	}
	for (;;) {
		char *name;
		bool last;
		int next;

		while (*p == '/')
			p++;
		if (!*p) {	/* the path is / itself */
			close(fd);
			fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return fail(err, errlen, errno, "/: %s",
					    strerror(errno));
			ret = fstat(fd, &st) ?
			      fail(err, errlen, errno, "/: %s",
				   strerror(errno)) :
			      check_last(&st, "/", owner, err, errlen);
			if (ret)
				close(fd);
			return ret ? ret : fd;
		}
		name = p;
		while (*p && *p != '/')
			p++;
		if (*p)
			*p++ = '\0';
		while (*p == '/')
			p++;
		last = !*p;
		if (strcmp(name, ".") == 0 && !last)
			continue;
		if (strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
			close(fd);
			return fail(err, errlen, EINVAL, "%s: '.' and '..' are "
				    "not allowed in the socket's path", path);
		}
		/* the directory name is in: checked before it is looked in */
		ret = check_ancestor(&st, shown[0] ? shown : "/", owner, err,
				     errlen);
		if (ret) {
			close(fd);
			return ret;
		}
		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown),
			 "/%s", name);
		if (last) {
			next = open_last(fd, name, shown, owner, group, create,
					 err, errlen);
			close(fd);
			return next;
		}
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		if (next < 0) {
			ret = explain(fd, name, shown, errno, err, errlen);
			close(fd);
			return ret;
		}
		close(fd);
		fd = next;
		if (fstat(fd, &st)) {
			int errnum = errno;

			close(fd);
			return fail(err, errlen, errnum, "%s: %s", shown,
				    strerror(errnum));
		}
	}
}
