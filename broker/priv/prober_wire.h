/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prober_wire.h - what the two ends of the prober's socket share, for
 * broker/priv/prober_client.c (pgoffd's end, unprivileged) and
 * broker/priv/prober_server.c (the privileged prober process) only:
 * the message pgoffd sends, the read that takes the descriptors riding
 * on an answer, and where the forked prober starts. Everything else
 * uses prober.h.
 */
#ifndef PGOFF_PROBER_WIRE_H
#define PGOFF_PROBER_WIRE_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#include "broker/priv/pg_probe.h"
#include "broker/priv/prober.h"

struct prober_msg {
	uint32_t op;
	uint32_t pid;
	uint64_t dev, ino;		/* OP_USDT_KNOWN: a binary seen */
	uint32_t cluster;		/* OP_NAMES: the prober's cluster id */
	uint32_t max_clusters;		/* OP_PROBE: max-clusters-per-user now */
};

/* Up to len bytes; the descriptors that came with them go to fds (at
 * most max; *n counts them), any past that are closed. */
static inline ssize_t prober_recv_fds(int sock, void *buf, size_t len,
				      int *fds, size_t max, size_t *n,
				      int flags)
{
	char cbuf[CMSG_SPACE(PG_PROBE_MAX_MAPS * sizeof(int))];
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);

	for (struct cmsghdr *cm = got > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (*n < max)
				fds[(*n)++] = fd;
			else
				close(fd);
		}
	}
	return got;
}

/*
 * The prober, just forked by prober_start and still root: sock is its
 * end of pgoffd's socket, parent pgoffd's pid. Drops to o->uid keeping
 * CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH and serves pgoffd's questions
 * until pgoffd is gone. Never returns.
 */
void prober_serve(int sock, pid_t parent, const struct prober_opts *o);

#endif
