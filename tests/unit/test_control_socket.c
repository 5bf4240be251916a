/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_control_socket.c - the listening socket: its directory made
 * owner:group 0750, the socket 0660 with the group, a live broker never
 * clobbered, a stale socket removed, and nothing done where another user
 * could have put a link or a file. The owner is the test's own uid (root
 * in pgoffd), so no privilege is needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "broker/serve/control_socket.h"
#include "common/log.h"
#include "tests/unit/check.h"

static char base[64];
static char *logbuf;
static size_t loglen;
static FILE *log_file;

static const char *at(const char *rel)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", base, rel);
	return path[i];
}

/* What pgoffd logged since the last call. */
static const char *logged(void)
{
	static char copy[4096];

	fflush(log_file);
	snprintf(copy, sizeof(copy), "%s", logbuf ? logbuf : "");
	fclose(log_file);
	free(logbuf);
	logbuf = NULL;
	log_file = open_memstream(&logbuf, &loglen);
	log_set_output(log_file);
	return copy;
}

static bool connects(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static void test_creates_dir_and_socket(void)
{
	struct stat st;
	int fd = control_socket_create(at("run/pgoffd.sock"), getegid());

	if (fd < 0)
		fprintf(stderr, "%d: %s\n", fd, logged());
	CHECK(fd >= 0);
	CHECK(stat(at("run"), &st) == 0);
	CHECK((st.st_mode & 07777) == 0750 && st.st_uid == geteuid() &&
	      st.st_gid == getegid());
	CHECK(lstat(at("run/pgoffd.sock"), &st) == 0);
	if ((st.st_mode & 07777) != 0660)
		fprintf(stderr, "socket mode %04o\n", st.st_mode & 07777);
	CHECK(S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0660 &&
	      st.st_gid == getegid());
	CHECK(connects(at("run/pgoffd.sock")));
	/* a second broker does not take over a live one */
	CHECK(control_socket_create(at("run/pgoffd.sock"), getegid()) == -EADDRINUSE);
	CHECK_CONTAINS(logged(), "another pgoffd is already serving");
	/* once it is gone, its file stays and the next start replaces it */
	close(fd);
	CHECK(lstat(at("run/pgoffd.sock"), &st) == 0);
	CHECK(!connects(at("run/pgoffd.sock")));
	fd = control_socket_create(at("run/pgoffd.sock"), getegid());
	CHECK(fd >= 0);
	CHECK_CONTAINS(logged(), "removing stale socket");
	CHECK(connects(at("run/pgoffd.sock")));
	close(fd);
}

static void test_refuses_what_it_must_not_touch(void)
{
	struct stat st;
	int fd;

	/* a file in the socket's place is left alone */
	CHECK(mkdir(at("run2"), 0750) == 0);
	fd = open(at("run2/pgoffd.sock"), O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK(control_socket_create(at("run2/pgoffd.sock"), getegid()) == -EEXIST);
	CHECK(lstat(at("run2/pgoffd.sock"), &st) == 0 && S_ISREG(st.st_mode));
	logged();
	/* the directory is a link to a victim's: nothing made there */
	CHECK(mkdir(at("victim"), 0755) == 0);
	CHECK(symlink(at("victim"), at("run3")) == 0);
	CHECK(control_socket_create(at("run3/pgoffd.sock"), getegid()) == -ELOOP);
	CHECK_CONTAINS(logged(), "/run3 is a symbolic link");
	CHECK(access(at("victim/pgoffd.sock"), F_OK) != 0);
	/* the socket itself is a link (to a file chown would give away) */
	CHECK(mkdir(at("run4"), 0750) == 0);
	CHECK(symlink(at("victim"), at("run4/pgoffd.sock")) == 0);
	CHECK(control_socket_create(at("run4/pgoffd.sock"), getegid()) == -EEXIST);
	CHECK(lstat(at("run4/pgoffd.sock"), &st) == 0 && S_ISLNK(st.st_mode));
	logged();
	/* --socket /tmp/x.sock: a sticky directory everyone writes */
	CHECK(control_socket_create("/tmp/pgoff-unit-test.sock", getegid()) == -EPERM);
	CHECK_CONTAINS(logged(), geteuid() ? "socket directory: /tmp is owned by uid 0" :
		       "socket directory: /tmp is writable by its group or others");
	CHECK(access("/tmp/pgoff-unit-test.sock", F_OK) != 0);
	CHECK(control_socket_create("relative.sock", getegid()) == -EINVAL);
	CHECK(control_socket_create(at("run/"), getegid()) == -EINVAL);
	logged();
}

int main(void)
{
	int rc;

	umask(022);
	log_file = open_memstream(&logbuf, &loglen);
	log_set_output(log_file);
	snprintf(base, sizeof(base), "/tmp/pgoff-control-socket.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(base, 0755);
	RUN(test_creates_dir_and_socket);
	RUN(test_refuses_what_it_must_not_touch);
	rc = CHECK_DONE();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", base);
	}
	log_set_output(NULL);
	fclose(log_file);
	free(logbuf);
	return rc;
}
