/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prober.h - the privileged prober process and pgoffd's end of it.
 *
 * Privilege separation: after setup pgoffd runs with no capabilities as
 * an unprivileged user; the prober is a process forked before anything
 * else is opened that keeps CAP_SYS_PTRACE (read-only /proc access: exe,
 * cwd, maps of other users' processes) and CAP_DAC_READ_SEARCH (a 0700
 * data directory). Its only input is a pid from pgoffd, or the id of a
 * cluster it traced (its run-time names, read from its shared memory).
 *
 * It is also the only process that holds the kernel's table of traced
 * processes: pgoffd closes its descriptor once the prober has its own,
 * so a compromised pgoffd cannot point the BPF programs' reads at
 * another process. pgoffd learns what is traced from the answers and
 * from the kernel's records.
 *
 * It also holds, once setup is over, the program that PostgreSQL's wait
 * probes run (broker/priv/usdt.h). Whoever holds it may place a uprobe in any
 * file it can open: pgoffd, which parses clients' JSON, closes its own,
 * and so do the workers that read hostile processes. When one finds a
 * postmaster whose binary is new, the prober forks another worker that
 * links that binary after usdt_link's checks and hands the link back;
 * the prober keeps it.
 *
 * It never blocks pgoffd: pgoffd asks without waiting and reads the
 * answer in its event loop. It is never blocked itself: each question
 * is answered by a short-lived worker it forks, killed (SIGKILL ends
 * even a FUSE or NFS wait) if it has not answered within the deadline.
 */
#ifndef PGOFF_PROBER_H
#define PGOFF_PROBER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "broker/priv/pg_probe.h"
#include "broker/priv/usdt.h"

#define PROBER_DEADLINE_MS	3000
#define PROBER_MAX_PIDS		4096

/* An answer: the cluster, and the processes the prober put into the
 * kernel's table (pgoffd holds no descriptor of it to ask). */
struct prober_answer {
	struct pg_cluster_info info;
	uint32_t binary_new;		/* 1: its binary was new: see usdt */
	struct usdt_result usdt;
	uint32_t npids;			/* at most PROBER_MAX_PIDS listed */
	uint32_t pids[PROBER_MAX_PIDS];
	/*
	 * For each of info.maps: a descriptor of its file for its symbols
	 * (symfiles.h), the caller's to close (usyms_offer), or -errno:
	 * -EALREADY an earlier map's file, -ETIMEDOUT the worker that opens
	 * them did not answer in time, else symfiles_open's.
	 */
	int32_t map_fd[PG_PROBE_MAX_MAPS];
	uint32_t files_refused;		/* files refused, or all if timed out */
};

/* The names a cluster's server made up at run time (pg_shmem_names.h). */
struct prober_names {
	uint32_t cluster;		/* the cluster asked about */
	uint32_t pid;			/* its postmaster */
	struct pg_run_names names;	/* names.status says why there are none */
};

/* What the prober was asked last, while the answer is awaited. */
enum prober_question { PROBER_NOTHING, PROBER_CLUSTER, PROBER_NAMES };

struct prober_opts {
	const char *proc_root;		/* "/proc" */
	uid_t uid;			/* run as (pgoffd's user) */
	gid_t gid;
	struct pg_trust trust;
	uint32_t max_procs_per_uid;	/* processes traced per user */
	uint32_t max_threads_per_uid;	/* their threads in the thread table */
};

struct prober;

/* Fork the prober. Call as root, first of all. Returns 0 or -errno. */
int prober_start(struct prober **out, const struct prober_opts *o);
/*
 * Hand it the kernel's tables it fills, once they exist: the targets map,
 * the per-user quota array and the targets' slot counters (see
 * bpf/offcpu.h); pgoffd then closes its own descriptors of the targets
 * map and its counters. Returns 0 or -errno.
 */
int prober_give_maps(struct prober *p, int targets_fd, int quotas_fd,
		     int target_slots_fd);

/*
 * Hand it the wait probes' program (prog_fd), and the binaries pgoffd
 * linked or refused already, which are not linked again. pgoffd then
 * closes its own descriptor. Returns 0 or -errno.
 */
int prober_give_usdt(struct prober *p, int prog_fd, const struct usdt *known);

/*
 * Ask about pid; never blocks. -EBUSY while an answer is awaited. A
 * cluster whose user (the account uid: userns_owner.h) has max_clusters
 * traced already is not traced: its answer's status is -EDQUOT.
 */
int prober_ask(struct prober *p, uint32_t pid, uint32_t max_clusters);
/*
 * Ask for the run-time names of a cluster the prober traced (its id and
 * postmaster, as its answer said): a worker reads the postmaster's
 * shared memory, read only, after checking that it is still the
 * postmaster that was probed. The prober reads no other process for
 * this. Never blocks; -EBUSY while an answer is awaited.
 */
int prober_ask_names(struct prober *p, uint32_t cluster, uint32_t pid);
/* Which kind of answer is awaited (PROBER_NOTHING: none). */
enum prober_question prober_asked(const struct prober *p);
bool prober_busy(const struct prober *p);
/* Readable when an answer came (for epoll). */
int prober_fd(const struct prober *p);
/*
 * The answer, if it came: 0 with out filled (its map_fd descriptors are
 * the caller's), -EAGAIN not yet, -EIO the prober is gone. Never blocks.
 */
int prober_answer(struct prober *p, struct prober_answer *out);
/* The names answer, as prober_answer. */
int prober_names_answer(struct prober *p, struct prober_names *out);
/* Close the descriptors of an answer's map_fd not taken yet. */
void prober_close_files(struct prober_answer *a);
/* Wait up to ms for the answer to prober_ask (setup only, before
 * serving; -EINVAL while names are awaited). */
int prober_wait(struct prober *p, int ms, struct prober_answer *out);

/* End the prober (and a worker of it) at once; reap it. NULL-safe. */
void prober_stop(struct prober *p);
int prober_pid(const struct prober *p);

#endif
