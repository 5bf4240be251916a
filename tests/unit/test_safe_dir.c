/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_safe_dir.c - the walk that decides where root may create, chown,
 * unlink and connect: symbolic links, directories others may write
 * (sticky or not), foreign owners, anywhere on the path, are refused with
 * a message naming the component. Runs as any user: "root" is the test's
 * own uid (the owner argument), so no privilege is needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/priv/safe_dir.h"
#include "tests/unit/check.h"

static char base[64];

static const char *at(const char *rel)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", base, rel);
	return path[i];
}

static void mkdir_mode(const char *rel, mode_t mode)
{
	if (mkdir(at(rel), 0700) || chmod(at(rel), mode))
		perror(at(rel));
}

/* safe_dir_open(path): 0, or its -errno with err naming what is at fault. */
static int try_open(const char *path, char *err, size_t errlen)
{
	int fd;

	err[0] = '\0';
	fd = safe_dir_open(path, geteuid(), getegid(), true, err, errlen);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

#define CHECK_REFUSED(path, err, words)                                    \
	do {                                                               \
		char why_[512];                                            \
		int got_ = try_open(path, why_, sizeof(why_));             \
		if (got_ != -(err) || !strstr(why_, words))                \
			fprintf(stderr, "%s: got %d (%s), want %d "        \
				"naming \"%s\"\n", path, got_, why_,       \
				-(err), words);                            \
		CHECK(got_ == -(err) && strstr(why_, words));              \
	} while (0)

static void test_creates_missing_dir_0750_with_group(void)
{
	char why[512];
	struct stat st;

	CHECK(try_open(at("run"), why, sizeof(why)) == 0);
	CHECK(stat(at("run"), &st) == 0);
	if ((st.st_mode & 07777) != 0750 || st.st_gid != getegid())
		fprintf(stderr, "mode %04o gid %u\n", st.st_mode & 07777, st.st_gid);
	CHECK((st.st_mode & 07777) == 0750 && st.st_gid == getegid() &&
	      st.st_uid == geteuid());
	/* again: it exists now, and is fine */
	CHECK(try_open(at("run"), why, sizeof(why)) == 0);
	CHECK(try_open(at("run/"), why, sizeof(why)) == 0);
}

static void test_refuses_the_directory_itself(void)
{
	mkdir_mode("gw", 0770);
	CHECK_REFUSED(at("gw"), EPERM, "/gw is writable by its group or others (mode 0770)");
	mkdir_mode("tmp", 01777);	/* a sticky /tmp as the socket's own */
	CHECK_REFUSED(at("tmp"), EPERM, "/tmp is writable");
	mkdir_mode("ok", 0755);
	if (symlink(at("ok"), at("link")))
		perror("symlink");
	CHECK_REFUSED(at("link"), ELOOP, "/link is a symbolic link");
	if (close(open(at("file"), O_CREAT | O_WRONLY, 0600)))
		perror("file");
	CHECK_REFUSED(at("file"), ENOTDIR, "/file is not a directory");
	CHECK_REFUSED("relative/dir", EINVAL, "not an absolute path");
}

static void test_refuses_an_ancestor(void)
{
	char why[512];

	mkdir_mode("open", 0777);	/* writable by others, not sticky */
	mkdir_mode("open/c", 0755);
	CHECK_REFUSED(at("open/c"), EPERM, "/open is writable by its group or others");
	CHECK_REFUSED(at("open/new"), EPERM, "/open is writable");
	/* nothing was made in it */
	CHECK(access(at("open/new"), F_OK) != 0);
	mkdir_mode("ok2", 0755);
	if (symlink(at("ok2"), at("lnk")))
		perror("symlink");
	CHECK_REFUSED(at("lnk/sub"), ELOOP, "/lnk is a symbolic link");
	CHECK(access(at("ok2/sub"), F_OK) != 0);
	CHECK_REFUSED(at("file/sub"), ENOTDIR, "/file is not a directory");
	CHECK_REFUSED(at("missing/sub"), ENOENT, "/missing does not exist");
	CHECK_REFUSED(at("ok2/../ok2/sub"), EINVAL, "'..'");
	/* sticky and writable by others, like /tmp: its entries are safe
	 * when their owner is (the test's own, here) */
	mkdir_mode("sticky", 01777);
	CHECK(try_open(at("sticky/run"), why, sizeof(why)) == 0);
	CHECK(try_open(at("./sticky//run"), why, sizeof(why)) == 0);
}

/* Someone else's directory, first as an ancestor, then as the last. */
static void test_refuses_another_owner(void)
{
	uid_t other = geteuid() + 1;
	char why[512];
	int fd;

	mkdir_mode("own", 0755);
	mkdir_mode("own/sub", 0755);
	/* (as a user, "own" is the ancestor at fault: neither root's nor
	 * other's; as root, sub is: a sound directory of another owner) */
	int expect = geteuid() == 0 ? -SAFE_DIR_OTHER_OWNER : -EPERM;

	fd = safe_dir_open(at("own/sub"), other, getegid(), false, why, sizeof(why));
	if (fd != expect || !strstr(why, "is owned by uid"))
		fprintf(stderr, "got %d (%s)\n", fd, why);
	CHECK(fd == expect && strstr(why, "is owned by uid"));
	/* an ancestor of another user's, above a directory of the owner's:
	 * only root can make that tree (CI runs the unit tests as root) */
	if (geteuid() == 0) {
		mkdir_mode("foreign", 0755);
		mkdir_mode("foreign/mine", 0755);
		CHECK(chown(at("foreign"), 12345, 12345) == 0);
		fd = safe_dir_open(at("foreign/mine"), 0, 0, false, why, sizeof(why));
		if (fd != -EPERM || !strstr(why, "/foreign is owned by uid 12345"))
			fprintf(stderr, "got %d (%s)\n", fd, why);
		CHECK(fd == -EPERM && strstr(why, "/foreign is owned by uid 12345"));
	} else if (getenv("CI") && strcmp(getenv("CI"), "true") == 0) {
		fprintf(stderr, "a foreign ancestor can only be made as root\n");
		CHECK(0);
	} else {
		printf("# not root: a foreign ancestor is not tried\n");
	}
	/* a missing directory is not made unless asked */
	fd = safe_dir_open(at("own/none"), geteuid(), getegid(), false, why, sizeof(why));
	CHECK(fd == -ENOENT && access(at("own/none"), F_OK) != 0);
}

/* The tree's ancestors (/, /tmp) are root's: the walk accepts them. */
static void test_accepts_root_ancestors(void)
{
	char why[512];
	int fd = safe_dir_open("/", 0, 0, false, why, sizeof(why));

	if (fd < 0)
		fprintf(stderr, "/: %s\n", why);
	CHECK(fd >= 0);
	close(fd);
	fd = safe_dir_open("/tmp", 0, 0, false, why, sizeof(why));
	CHECK(fd == -EPERM && strstr(why, "/tmp is writable"));
}

int main(void)
{
	int rc;

	umask(022);
	snprintf(base, sizeof(base), "/tmp/pgoff-safe-dir.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(base, 0755);
	RUN(test_creates_missing_dir_0750_with_group);
	RUN(test_refuses_the_directory_itself);
	RUN(test_refuses_an_ancestor);
	RUN(test_refuses_another_owner);
	RUN(test_accepts_root_ancestors);
	rc = CHECK_DONE();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", base);
	}
	return rc;
}
