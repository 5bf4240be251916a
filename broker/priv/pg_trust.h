/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_trust.h - which PostgreSQL clusters pgoffd traces. Any local user
 * can run a process named postgres, even a real PostgreSQL from their
 * own binary; pgoffd reads such a process's memory only if it trusts it:
 *   - its executable is a regular file owned by root that only root may
 *     write (a distribution's PostgreSQL): no settings needed;
 *   - or the postmaster runs as a uid in trust-uids (a self-built
 *     PostgreSQL owned by postgres);
 *   - or its data directory is one of trust-data-dirs.
 * Pure: the caller gives the facts; unit-tested.
 */
#ifndef PGOFF_PG_TRUST_H
#define PGOFF_PG_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define PG_TRUST_MAX 16

struct pg_trust {
	uint32_t uids[PG_TRUST_MAX];
	size_t nuids;
	char dirs[PG_TRUST_MAX][256];	/* data directories, as the host sees them */
	size_t ndirs;
};

/*
 * "postgres, 1001": user names (getpwnam) or numbers, comma-separated,
 * into t->uids. Returns 0, or -EINVAL with err naming the bad entry.
 */
int pg_trust_parse_uids(struct pg_trust *t, const char *list, char *err,
			size_t errlen);
/* "/srv/pg/a, /srv/pg/b": absolute paths, comma-separated. */
int pg_trust_parse_dirs(struct pg_trust *t, const char *list, char *err,
			size_t errlen);

bool pg_trust_has_uid(const struct pg_trust *t, uint32_t uid);

/*
 * NULL when a postmaster of uid, running the executable exe (its
 * status), in a data directory that is (dir_trusted) or is not one of
 * trust-data-dirs, is trusted; else why not, written into buf.
 */
const char *pg_trust_refusal(const struct pg_trust *t, const struct stat *exe,
			     uint32_t uid, bool dir_trusted, char *buf,
			     size_t len);

#endif
