/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.h - pgoff_exporter's pprof endpoint: the off-CPU intervals of
 * the last N seconds as a gzipped profile.proto (client/pprof.h), with
 * the frames and labels of pgoffctl flame --pprof.
 *
 * They come from pgoffd's flight record (a subscription with since_ns,
 * read to its "replayed" mark), on a connection of the request's own:
 * a request takes as long as the replay, not N seconds, and no scrape of
 * /metrics waits for it. The window is the N seconds that ended
 * PROFILE_SETTLE_MS before the request, by the intervals' end times, so
 * that what pgoffd writes in batches is stored by then and consecutive
 * scrapes N seconds apart tile time with nothing counted twice.
 */
#ifndef PGOFF_EXPORTER_PROFILE_H
#define PGOFF_EXPORTER_PROFILE_H

#include <stddef.h>

#define PROFILE_DEFAULT_SECONDS	15
#define PROFILE_MAX_SECONDS	300
#define PROFILE_SETTLE_MS	1000
/* pgoffd's replay must end by then, or the request fails (the
 * connection's idle timeout, 30 s, is further) */
#define PROFILE_REPLAY_DEADLINE_MS 20000

/*
 * The profile of the seconds (1..PROFILE_MAX_SECONDS) that ended
 * PROFILE_SETTLE_MS ago, idle time left out, from pgoffd at socket:
 * *gz (malloc'd, the caller's), *len bytes. Returns 0, or -errno with
 * err (a sentence for the HTTP answer): -ECONNREFUSED pgoffd is not
 * there or refused us, -ENOTSUP it refused the replay (it keeps no
 * flight record), -ETIMEDOUT the replay did not end in time, -EPIPE
 * the connection broke, -ENOMEM, -EINVAL.
 */
int profile_collect(const char *socket, unsigned seconds, unsigned char **gz,
		    size_t *len, char *err, size_t errlen);

#endif
