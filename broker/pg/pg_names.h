/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_names.h - the wait event names one cluster's server made up at run
 * time (custom wait events, extensions' LWLock tranches), as pgoffd
 * keeps them: read by the prober from that cluster's shared memory
 * (pg_shmem_names.h), made safe to print, looked up by wait_event_info.
 * Each cluster has its own: a name read from one never labels another.
 *
 * They are read when the cluster is found, and again (at most once a
 * second) when a wait event the tables do not name may have a name the
 * server made since (an extension registers its event at first use).
 */
#ifndef PGOFF_PG_NAMES_H
#define PGOFF_PG_NAMES_H

#include <stdbool.h>
#include <stdint.h>
#include "broker/priv/pg_shmem_names.h"

/* Reads of one cluster's names at most this often; after a read that
 * failed (a segment that lies, a read that hung until the prober's
 * deadline), 2 s, then twice as long after each failure up to 10 min. */
#define PG_NAMES_REFRESH_MS	1000
#define PG_NAMES_BACKOFF_MS	2000
#define PG_NAMES_BACKOFF_MAX_MS	600000

struct pg_names {
	struct pg_run_name *v;		/* n, by wait_event_info */
	uint32_t n;
	bool read;			/* an answer came (status says how) */
	bool truncated;			/* the server had more than kept */
	bool wanted;			/* a read is due: never read, or a name
					 * may have appeared since */
	int32_t status;			/* of the last read: 0, or -errno */
	int64_t asked_ms;		/* when the prober was last asked; 0 */
	uint32_t backoff_ms;		/* 0, or the wait after failed reads */
	char why[160];			/* status != 0 */
};

/*
 * The prober's answer becomes the cluster's names: each made printable
 * (control characters as '?', valid UTF-8), sorted, the first of a
 * repeated id kept. A failed read keeps no names and says why.
 * Returns 0 or -ENOMEM (the old names stay).
 */
int pg_names_take(struct pg_names *n, const struct pg_run_names *answer);
/* The name of wait_event_info, or NULL. */
const char *pg_names_find(const struct pg_names *n, uint32_t info);
void pg_names_free(struct pg_names *n);

/*
 * Whether a wait event of a major that the tables do not name
 * (pg_wait_event_name NULL, or an extension's tranche shown as
 * "extension") may be named by a name the server made after the last
 * read: a custom wait event (17+), an LWLock tranche of 19. In 14-18 a
 * tranche is in shared memory only if requested before start.
 */
bool pg_names_may_appear(int major, uint32_t info);

#endif
