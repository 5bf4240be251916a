/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_shmem_names.h - the wait event names a PostgreSQL server makes up at
 * run time, read from its main shared memory segment: the custom wait
 * events of extensions and injection points (17 and later: classes
 * Extension and InjectionPoint) and the names of extensions' LWLock
 * tranches where the server keeps them there (those requested with
 * RequestNamedLWLockTranche in 14-18, every one in 19).
 *
 * The segment is its owner's: any local user who runs a PostgreSQL can
 * write whatever they like into it. So every read is bounded (sizes,
 * counts, chain lengths, NAMEDATALEN), every pointer must lie inside the
 * mapped segment before it is followed, and the reader gives up with a
 * reason at the first thing that does not fit what the major's sources
 * lay out; it never loops, and never reads outside the segment but the
 * two variables of the postmaster it is given.
 *
 * Layouts per major are in pg_shmem_names.c, with where each comes from.
 * The reader is pure: it reads through a descriptor (the postmaster's
 * /proc/PID/mem in the prober's worker, a file in the unit tests).
 */
#ifndef PGOFF_PG_SHMEM_NAMES_H
#define PGOFF_PG_SHMEM_NAMES_H

#include <stdint.h>
#include <sys/types.h>

#define PG_RUN_NAME_LEN		64	/* NAMEDATALEN, 13-19 (pg_config_manual.h) */
#define PG_RUN_NAMES_MAX	512	/* names kept of one cluster */

struct pg_run_name {
	uint32_t wait_event_info;	/* class << 24 | id */
	char name[PG_RUN_NAME_LEN];	/* NUL-terminated, as the server has it */
};

/* What was read of one cluster, as the prober hands it to pgoffd. */
struct pg_run_names {
	int32_t status;			/* 0: read; -errno: not, why says why */
	uint32_t n;			/* names[0..n) */
	uint32_t truncated;		/* more than PG_RUN_NAMES_MAX were there */
	uint32_t pad;
	char why[160];
	struct pg_run_name names[PG_RUN_NAMES_MAX];
};

/*
 * Where the reader may read. Address a is read at file offset a + delta
 * of fd (0 for /proc/PID/mem). Only [seg_lo, seg_hi), the mapping of the
 * main segment, and the two variables, each at its own address and size.
 */
struct pg_shm_view {
	int fd;
	int64_t delta;
	uint64_t seg_lo, seg_hi;
	uint64_t tranches_var;		/* 14-18: NamedLWLockTrancheArray (a
					 * pointer) in the postmaster; 0: none */
	uint64_t ntranches_var;		/* NamedLWLockTrancheRequests (an int) */
};

/* Whether names are read for this major at all. */
int pg_shmem_names_major(int major);

/*
 * Whether the mapping v->seg_lo.. starts with PostgreSQL's segment header
 * (PGShmemHeader: its magic, and a total size the mapping holds). Returns
 * 0, -ENOENT (not the main segment), or -errno of the read.
 */
int pg_shmem_segment_check(const struct pg_shm_view *v);

/*
 * Read the names of a major's server through v into out. first_tranche
 * is that major's LWTRANCHE_FIRST_USER_DEFINED (pg_wait_names).
 * Returns out->status: 0, or -ENOTSUP (no layout for the major), -ENOENT
 * (a table is not where it should be, a symbol is missing), -EINVAL
 * (something in the segment does not fit the layout), -E2BIG (past a
 * bound), -EIO (a read failed); out->why then says what, and out->n is 0.
 */
int pg_shmem_names_read(const struct pg_shm_view *v, int major,
			int first_tranche, struct pg_run_names *out);

#endif
