// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_sd_notify.c - the readiness datagram reaches a socket named by
 * NOTIFY_SOCKET, as a path or in the abstract namespace; nothing is sent
 * without it, and a name systemd would never give is refused.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "broker/sd_notify.h"
#include "tests/unit/check.h"

/* a datagram socket bound to name (a leading '@': abstract) */
static int listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, name, len);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa,
			   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)))
		return -1;
	return fd;
}

static void expect_received(int fd, const char *want)
{
	char buf[64] = "";
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	CHECK(n == (ssize_t)strlen(want));
	CHECK_STR(buf, want);
}

static void test_path_socket_gets_ready(void)
{
	char dir[] = "/tmp/pgoff-notify.XXXXXX", path[64];
	int fd;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = listener(path);
	CHECK(fd >= 0);
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK(sd_notify_state("READY=1") == 1);
	expect_received(fd, "READY=1");
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void test_abstract_socket_gets_stopping(void)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "@pgoff-notify-test-%d", (int)getpid());
	fd = listener(name);
	CHECK(fd >= 0);
	setenv("NOTIFY_SOCKET", name, 1);
	CHECK(sd_notify_state("STOPPING=1") == 1);
	expect_received(fd, "STOPPING=1");
	close(fd);
}

static void test_nothing_without_notify_socket(void)
{
	unsetenv("NOTIFY_SOCKET");
	CHECK(sd_notify_state("READY=1") == 0);
	setenv("NOTIFY_SOCKET", "", 1);
	CHECK(sd_notify_state("READY=1") == 0);
}

static void test_relative_name_is_refused(void)
{
	setenv("NOTIFY_SOCKET", "run/notify", 1);
	CHECK(sd_notify_state("READY=1") == -EINVAL);
}

static void test_missing_socket_is_an_error(void)
{
	setenv("NOTIFY_SOCKET", "/nonexistent/pgoff/notify", 1);
	CHECK(sd_notify_state("READY=1") == -ENOENT);
}

int main(void)
{
	RUN(test_path_socket_gets_ready);
	RUN(test_abstract_socket_gets_stopping);
	RUN(test_nothing_without_notify_socket);
	RUN(test_relative_name_is_refused);
	RUN(test_missing_socket_is_an_error);
	return CHECK_DONE();
}
