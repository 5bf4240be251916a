// SPDX-License-Identifier: GPL-2.0-only
/*
 * sd_notify.c - systemd's readiness protocol, without libsystemd: the
 * whole protocol pgoffd needs is one datagram on a Unix socket.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "broker/sd_notify.h"

int sd_notify_state(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	ssize_t n;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	/* a path, or '@' for the abstract namespace (a leading NUL) */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	if (n < 0)
		err = -errno;
	close(fd);
	return err ? err : 1;
}
