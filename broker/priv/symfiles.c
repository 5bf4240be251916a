// SPDX-License-Identifier: GPL-2.0-only
/* symfiles.c - a cluster's mapped files, opened for symbols; see symfiles.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/priv/fs_kind.h"
#include "broker/priv/symfiles.h"

static int32_t open_one(const struct pg_map *m, int *fd)
{
	struct stat st;

	if (m->path[0] != '/')
		return -ENOENT;
	/* O_NONBLOCK: a FIFO or a leased file put at the path never waits */
	*fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0)
		return errno == ENOENT ? -ENOENT : -EPERM;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
		close(*fd);
		return -EPERM;
	}
	if ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->ino) {
		close(*fd);
		return -ESTALE;
	}
	if (!fs_kind_local(*fd)) {
		close(*fd);
		return -EREMOTE;
	}
	return 0;
}

size_t symfiles_open(const struct pg_cluster_info *c,
		     int32_t idx[PG_PROBE_MAX_MAPS],
		     int fds[PG_PROBE_MAX_MAPS])
{
	uint32_t nmaps = c->nmaps < PG_PROBE_MAX_MAPS ? c->nmaps :
			 PG_PROBE_MAX_MAPS;
	size_t n = 0;

	for (uint32_t i = 0; i < PG_PROBE_MAX_MAPS; i++)
		idx[i] = -ENOENT;
	for (uint32_t i = 0; i < nmaps; i++) {
		const struct pg_map *m = &c->maps[i];
		uint32_t j;
		int fd;

		for (j = 0; j < i; j++)
			if (c->maps[j].dev == m->dev && c->maps[j].ino == m->ino)
				break;
		if (j < i) {		/* the same file: tried once */
			idx[i] = idx[j];
			continue;
		}
		idx[i] = open_one(m, &fd);
		if (!idx[i]) {
			idx[i] = (int32_t)n;
			fds[n++] = fd;
		}
	}
	return n;
}
