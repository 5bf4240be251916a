/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_probe.h - what only a privileged process may read about a process
 * that calls itself postgres: its executable, its data directory, its
 * memory map and postmaster.pid, and whether it may be traced at all.
 *
 * Everything read here belongs to a process that any local user may
 * have started: the executable, the directory and the files in it are
 * hostile until checked. Files are opened only if they are regular files
 * (no symlink, FIFO or device is ever opened), with size caps, and read
 * with read/pread (no mapping a truncation could turn into SIGBUS). A
 * read that blocks anyway (a FUSE file system) is the prober's deadline
 * to end (prober.h).
 *
 * Trust: a postmaster is traced when its four uids are one (not a
 * setuid program), and its executable is a root-owned regular file that
 * only root can write (a distribution's PostgreSQL), or its uid is in
 * trust-uids, or its data directory is one of trust-data-dirs.
 */
#ifndef PGOFF_PG_PROBE_H
#define PGOFF_PG_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "broker/priv/pg_shmem_names.h"
#include "broker/priv/pg_trust.h"

/*
 * An executable file mapping of the postmaster, from /proc/PID/maps
 * (which only the prober may read): its backends, forked without exec,
 * share it, so user stacks are symbolized against these.
 */
#define PG_PROBE_MAX_MAPS	80
#define PG_PROBE_MAP_PATH	128
struct pg_map {
	uint64_t start, end;		/* addresses [start, end) */
	uint64_t offset;		/* file offset of start */
	uint64_t dev, ino;
	char path[PG_PROBE_MAP_PATH];	/* as maps shows it; "" if longer */
};

struct pg_cluster_info {
	uint32_t postmaster_pid;
	int32_t status;			/* 0, or -errno: see pg_probe_cluster */
	uint32_t id;			/* the cluster's id, given by the prober */
	uint32_t uid;			/* the postmaster's (its four uids are one) */
	uint32_t account_uid;		/* the user answerable (userns_owner.h):
					 * uid, or its user namespace's owner;
					 * the prober's read, not the worker's */
	uint32_t traced;		/* processes the prober put into the kernel's table */
	int32_t port;			/* 0 if postmaster.pid was unreadable */
	int32_t major;			/* from the binary; 0 if unknown */
	uint64_t exe_dev, exe_ino;	/* the executable every process must share */
	uint64_t wait_event_ptr;	/* run-time address of my_wait_event_info */
	uint64_t query_ptr;		/* run-time address of debug_query_string */
	uint64_t status_ptr;		/* run-time address of MyBEEntry; 0: not
					 * read (status_missing says why) */
	uint64_t tranches_ptr;		/* NamedLWLockTrancheArray, 14-18 */
	uint64_t ntranches_ptr;		/* NamedLWLockTrancheRequests; 0: none */
	/* what the cluster's id is made of (cluster_ident.h) */
	uint64_t dir_dev, dir_ino;	/* the data directory (its cwd) */
	uint64_t system_identifier;	/* global/pg_control's first 8 bytes */
	uint32_t has_sysid;		/* 1: read; else sysid_missing says why */
	uint32_t pad2;
	char sysid_missing[96];
	char data_dir[256];
	char version[32];
	char pg_missing[96];		/* why PostgreSQL fields are unavailable */
	char status_missing[96];	/* why the status entry is not read */
	char account_missing[96];	/* why account_uid is uid: not known */
	char why[160];			/* status != 0: why it is not traced */
	uint32_t nmaps;			/* executable mappings, by address */
	uint32_t maps_truncated;	/* 1: more than PG_PROBE_MAX_MAPS */
	struct pg_map maps[PG_PROBE_MAX_MAPS];
};

/* Caps on what a hostile process can make the prober read. */
#define PG_PROBE_MAX_BINARY	(256 << 20)
#define PG_PROBE_MAX_LOCKFILE	4096
#define PG_PROBE_MAX_CONTROL	8192	/* PG_CONTROL_FILE_SIZE */

/*
 * Probe pid (needs the prober's privileges). Fills out; returns 0 or
 * -errno, also in out->status, with out->why set for the refusals:
 * -ENOENT gone; -ENOEXEC not a postgres binary; -EPERM not trusted (or
 * its uids differ); -EAGAIN a postmaster not yet in its data directory
 * (postmaster.pid missing or naming another pid): ask again later.
 */
int pg_probe_cluster(const char *proc_root, uint32_t pid,
		     const struct pg_trust *trust,
		     struct pg_cluster_info *out);

/*
 * The names c's server made up at run time (pg_shmem_names.h), read from
 * its shared memory through /proc/PID/mem (read only: needs the
 * prober's CAP_SYS_PTRACE), but only while the postmaster is still the
 * one probed: c's pid, started at start (/proc/PID/stat), its four uids
 * c's, its executable c's file. The segment is the first shared mapping
 * of the postmaster that starts with PostgreSQL's header. first_tranche:
 * the major's LWTRANCHE_FIRST_USER_DEFINED. Returns out->status.
 */
int pg_probe_names(const char *proc_root, const struct pg_cluster_info *c,
		   uint64_t start, int first_tranche, struct pg_run_names *out);

/* Called for each process of a cluster (see pg_probe_descendants). */
typedef int (*pg_probe_proc_fn)(void *ctx, uint32_t pid);

/*
 * The processes below the postmaster of c that are the same PostgreSQL:
 * its uids, its executable (device and inode), no exec since. fn is
 * called for each; a non-zero return stops the walk. Returns how many
 * were found, or -errno.
 */
int pg_probe_descendants(const char *proc_root,
			 const struct pg_cluster_info *c,
			 pg_probe_proc_fn fn, void *ctx);

#endif
