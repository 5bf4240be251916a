/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_probe.h - what only a privileged process may read about a
 * PostgreSQL cluster: its postmaster's executable, data directory, memory
 * map and postmaster.pid (the others' /proc entries are world-readable).
 *
 * Privilege separation: after setup pgoffd runs with no capabilities as
 * an unprivileged user; the prober is a separate process that keeps
 * CAP_SYS_PTRACE (read-only /proc access: exe, cwd, maps) and
 * CAP_DAC_READ_SEARCH (a 0700 data directory), and whose only input is a
 * pid from pgoffd over a socketpair.
 */
#ifndef PGOFF_PG_PROBE_H
#define PGOFF_PG_PROBE_H

#include <stdint.h>
#include <sys/types.h>

struct pg_cluster_info {
	uint32_t postmaster_pid;
	int32_t status;			/* 0, or -errno: not a PostgreSQL postmaster */
	char data_dir[256];
	int32_t port;			/* 0 if postmaster.pid was unreadable */
	int32_t major;			/* from the binary; 0 if unknown */
	char version[32];
	uint64_t wait_event_ptr;	/* run-time address of my_wait_event_info */
	uint64_t query_ptr;		/* run-time address of debug_query_string */
	char pg_missing[96];		/* why PostgreSQL fields are unavailable */
};

/*
 * Probe in this process (needs the privileges). Fills out; 0 or -errno:
 * -ENOEXEC not a postgres binary, -EAGAIN a postmaster not yet in its
 * data directory (its postmaster.pid is missing or names another pid).
 */
int pg_probe_cluster(const char *proc_root, uint32_t pid,
		     struct pg_cluster_info *out);

struct pg_prober;

/*
 * Fork the prober: it closes every other fd, drops to uid/gid keeping the
 * two capabilities above, and answers until pgoffd closes its end or
 * dies. Call as root, before loading BPF. Returns 0 or -errno.
 */
int pg_prober_start(struct pg_prober **out, const char *proc_root,
		    uid_t uid, gid_t gid);
/* Ask the prober; waits at most 2 s. Returns 0 or -errno (then out->status). */
int pg_prober_ask(struct pg_prober *p, uint32_t pid,
		  struct pg_cluster_info *out);
/* Close the prober's socket and reap it. NULL-safe. */
void pg_prober_stop(struct pg_prober *p);
int pg_prober_pid(const struct pg_prober *p);

#endif
