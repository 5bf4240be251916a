// SPDX-License-Identifier: GPL-2.0-only
/*
 * prober_server.c - the prober process (see prober.h): forked by
 * prober_start, it runs as pgoffd's user with CAP_SYS_PTRACE and
 * CAP_DAC_READ_SEARCH only. Its loop takes pgoffd's ops (prober_ops.h
 * says when each may come) and answers each question by a short-lived
 * worker it forks, confined (seccomp, no uprobe program, bounded
 * memory) and killed at the deadline. pgoffd's end is prober_client.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpf/offcpu.h"
#include "broker/priv/pg_probe.h"
#include "broker/pg/pg_status_layout.h"
#include "broker/pg/pg_wait_names.h"
#include "broker/priv/privdrop.h"
#include "broker/priv/prober.h"
#include "broker/pg/procfs.h"
#include "broker/priv/prober_ops.h"
#include "broker/priv/prober_wire.h"
#include "broker/priv/symfiles.h"
#include "broker/priv/userns_owner.h"
#include "broker/priv/worker_seccomp.h"
#include "common/log.h"

/* A worker reads at most this much memory (libelf, a hostile binary). */
#define WORKER_MAX_MEMORY (1ul << 30)

/*
 * A cluster the prober traced, as its worker found it: what a worker
 * that reads its shared memory must find again before it reads (the
 * same postmaster) and where the named tranches are. Only these are
 * read: pgoffd names a cluster, never a process.
 */
#define PROBER_MAX_KNOWN 1024
struct known_cluster {
	uint32_t id, pid, uid;
	uint32_t account;		/* whom it counts for (userns_owner.h) */
	int32_t major;
	uint64_t start;			/* /proc/PID/stat */
	uint64_t exe_dev, exe_ino;
	uint64_t tranches_ptr, ntranches_ptr;
};

struct serve_state {
	const struct prober_opts *o;
	int targets_fd;			/* -1 until pgoffd sends the maps */
	struct pgoff_quota *quotas;	/* the shared mapping of `quotas` */
	uint64_t *target_slots;		/* of `target_slots`, see offcpu.h */
	uint32_t slot_uid[PGOFF_MAX_QUOTAS];
	bool slot_used[PGOFF_MAX_QUOTAS];
	uint32_t next_cluster;
	int usdt_prog_fd;		/* -1 until pgoffd sends it */
	size_t usdt_n;			/* binaries linked, or known at start */
	uint64_t usdt_dev[USDT_MAX_BINARIES], usdt_ino[USDT_MAX_BINARIES];
	int usdt_link[USDT_MAX_BINARIES];	/* -1: refused, or pgoffd's */
	struct usdt_refusals refused;	/* binaries refused since start */
	struct known_cluster known[PROBER_MAX_KNOWN];
	size_t nknown, next_known;	/* slots used; the next one to reuse */
	uint32_t ops_taken;		/* prober_op_take's */
	int fd;				/* pgoffd's end */
};

/* A user's slot in the quota array: theirs, a free one, or -ENOSPC. */
static int quota_slot(struct serve_state *st, uint32_t uid)
{
	int free_slot = -1;

	for (int i = 0; i < PGOFF_MAX_QUOTAS; i++) {
		if (st->slot_used[i] && st->slot_uid[i] == uid)
			return i;
		/* a slot with nothing traced any more may change hands */
		if (free_slot < 0 && (!st->slot_used[i] ||
				      (__atomic_load_n(&st->quotas[i].procs, __ATOMIC_SEQ_CST) == 0 &&
				       __atomic_load_n(&st->quotas[i].threads, __ATOMIC_SEQ_CST) == 0)))
			free_slot = i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	st->slot_used[free_slot] = true;
	st->slot_uid[free_slot] = uid;
	st->quotas[free_slot].max_procs = st->o->max_procs_per_uid;
	st->quotas[free_slot].max_threads = st->o->max_threads_per_uid;
	return free_slot;
}

/* A target is added (count before the entry is made) or deleted (after). */
static void target_counted(struct serve_state *st, uint32_t tgid, int by)
{
	__atomic_fetch_add(&st->target_slots[pgoff_target_slot(tgid)],
			   (uint64_t)(int64_t)by, __ATOMIC_SEQ_CST);
}

struct trace_ctx {
	struct serve_state *st;
	struct pgoff_target target;
	struct prober_answer *a;	/* the pids are listed there */
	uint32_t traced;
	int err;
};

static void listed(struct trace_ctx *tc, uint32_t pid)
{
	tc->traced++;
	if (tc->a->npids < PROBER_MAX_PIDS)
		tc->a->pids[tc->a->npids++] = pid;
}

/*
 * Put one process into the kernel's table within its user's quota. An
 * entry the kernel made already (it forked after the postmaster was
 * added) is counted by the kernel. A process that exited meanwhile is
 * taken out again, so that its pid, reused, is never traced.
 */
static int trace_one(void *ctx, uint32_t pid)
{
	struct trace_ctx *tc = ctx;
	struct pgoff_quota *q = &tc->st->quotas[tc->target.quota];
	char path[96];

	if (__atomic_fetch_add(&q->procs, 1, __ATOMIC_SEQ_CST) >=
	    (int32_t)q->max_procs) {
		__atomic_fetch_sub(&q->procs, 1, __ATOMIC_SEQ_CST);
		tc->err = -EDQUOT;
		return 1;
	}
	target_counted(tc->st, pid, 1);
	if (bpf_map_update_elem(tc->st->targets_fd, &pid, &tc->target,
				BPF_NOEXIST)) {
		int err = -errno;

		target_counted(tc->st, pid, -1);
		__atomic_fetch_sub(&q->procs, 1, __ATOMIC_SEQ_CST);
		if (err != -EEXIST) {
			tc->err = err;
			return 1;
		}
		listed(tc, pid);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%u", tc->st->o->proc_root, pid);
	if (access(path, F_OK) && bpf_map_delete_elem(tc->st->targets_fd, &pid) == 0) {
		target_counted(tc->st, pid, -1);
		__atomic_fetch_sub(&q->procs, 1, __ATOMIC_SEQ_CST);
	} else
		listed(tc, pid);
	return 0;
}

/* The postmaster first: what it forks from then on the kernel adds. */
static void trace_cluster(struct serve_state *st, int slot,
			  struct prober_answer *a)
{
	struct pg_cluster_info *c = &a->info;
	struct trace_ctx tc = {
		.st = st,
		.a = a,
		.target = { .wait_event_ptr = c->wait_event_ptr,
			    .query_ptr = c->query_ptr, .cluster = c->id,
			    .uid = c->uid, .quota = (uint16_t)slot },
	};

	pg_status_target(c->major, c->status_ptr, &tc.target);
	/* where postgres's code is mapped: user stacks start from there
	 * where libc's code kept no frame pointers */
	for (uint32_t i = 0; i < c->nmaps && i < PG_PROBE_MAX_MAPS; i++)
		if (c->maps[i].dev == c->exe_dev && c->maps[i].ino == c->exe_ino &&
		    !tc.target.text_hi) {
			tc.target.text_lo = c->maps[i].start;
			tc.target.text_hi = c->maps[i].end;
		}
	trace_one(&tc, c->postmaster_pid);
	if (!tc.err)
		pg_probe_descendants(st->o->proc_root, c, trace_one, &tc);
	c->traced = tc.traced;
	if (tc.err == -EDQUOT)
		snprintf(c->why, sizeof(c->why), "uid %u has %u processes "
			 "traced (max-processes-per-user): some are not",
			 c->uid, st->o->max_procs_per_uid);
	else if (tc.err)
		snprintf(c->why, sizeof(c->why), "the kernel's table of traced "
			 "processes refused some: %s", strerror(-tc.err));
}

/* A worker whose time ran out may have traced part of a cluster: out. */
static void untrace_cluster(struct serve_state *st, uint32_t id)
{
	uint32_t key, next;
	void *prev = NULL;

	while (bpf_map_get_next_key(st->targets_fd, prev, &next) == 0) {
		struct pgoff_target t;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(st->targets_fd, &key, &t) ||
		    t.cluster != id)
			continue;
		if (bpf_map_delete_elem(st->targets_fd, &key) == 0) {
			target_counted(st, key, -1);
			__atomic_fetch_sub(&st->quotas[t.quota].procs, 1,
					   __ATOMIC_SEQ_CST);
		}
		prev = NULL;	/* deleted under the walk: start over */
	}
}

static bool usdt_seen(const struct serve_state *st, uint64_t dev,
		      uint64_t ino)
{
	for (size_t i = 0; i < st->usdt_n; i++)
		if (st->usdt_dev[i] == dev && st->usdt_ino[i] == ino)
			return true;
	return usdt_refusals_known(&st->refused, dev, ino);
}

/* The postmaster's binary, for the prober to link if it is new. */
static void note_binary(const struct serve_state *st, uint32_t pid,
			struct prober_answer *a)
{
	struct usdt_result *r = &a->usdt;
	char exe[96];
	ssize_t len;

	a->binary_new = 1;
	r->dev = a->info.exe_dev;
	r->ino = a->info.exe_ino;
	snprintf(exe, sizeof(exe), "%s/%u/exe", st->o->proc_root, pid);
	len = readlink(exe, r->path, sizeof(r->path) - 1);
	if (len <= 0)
		snprintf(r->path, sizeof(r->path), "%s", exe);
	else
		r->path[len] = '\0';
}

/* len bytes, with n descriptors riding on the first of them. */
static int send_with_fds(int out, const void *buf, size_t len,
			 const int *fds, size_t n)
{
	char cbuf[CMSG_SPACE(PG_PROBE_MAX_MAPS * sizeof(int))];
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t sent = 0;

	if (n > PG_PROBE_MAX_MAPS)
		return -1;
	if (n) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	}
	while (sent < len) {
		ssize_t got = sendmsg(out, &mh, MSG_NOSIGNAL);

		if (got <= 0)
			return -1;
		sent += (size_t)got;
		iov.iov_base = (char *)buf + sent;
		iov.iov_len = len - sent;
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	return 0;
}

/* An answer of len bytes, with the link's fd (if any) riding on its
 * first byte. */
static int send_answer(int out, const void *a, size_t len, int link_fd)
{
	return send_with_fds(out, a, len, &link_fd, link_fd >= 0);
}

/* What a worker that reads a hostile process may no longer do. */
static void worker_confine(struct serve_state *st)
{
	struct rlimit mem = { WORKER_MAX_MEMORY, WORKER_MAX_MEMORY };

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* what reads a hostile process never holds the uprobe program,
	 * nor can take it back from the prober with its CAP_SYS_PTRACE */
	if (st->usdt_prog_fd >= 0)
		close(st->usdt_prog_fd);
	worker_seccomp();
#ifndef __SANITIZE_ADDRESS__	/* ASan's shadow takes terabytes of it */
	setrlimit(RLIMIT_AS, &mem);
#else
	(void)mem;
#endif
}

static void worker(struct serve_state *st, uint32_t pid, uint32_t id,
		   int slot, int out)
{
	static struct prober_answer a;
	struct pg_cluster_info *c = &a.info;

	worker_confine(st);
	if (pg_probe_cluster(st->o->proc_root, pid, &st->o->trust, c) == 0) {
		c->id = id;
		if (st->targets_fd < 0) {
			/* no kernel tables yet: the facts only */
		} else if (slot < 0) {
			c->status = -ENOSPC;
			snprintf(c->why, sizeof(c->why), "more than %d users run "
				 "traced clusters", PGOFF_MAX_QUOTAS);
		} else {
			trace_cluster(st, slot, &a);
			if (!c->traced)
				c->status = -EDQUOT;
		}
		note_binary(st, pid, &a);
	}
	if (send_answer(out, &a, sizeof(a), -1))
		_exit(1);
	_exit(0);
}

/*
 * A worker that links the binary a->usdt names: usdt_link checks that
 * /proc/PID/exe is still that file, owned by root, only root may write
 * it, and links the descriptor it checked. It reads nothing a user
 * controls but the ELF notes of such a file (pg_elf, bounded).
 */
static void link_worker(struct serve_state *st, uint32_t pid,
			struct prober_answer *a, int out)
{
	struct usdt_result *r = &a->usdt;
	char exe[96];
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	worker_seccomp();
	snprintf(exe, sizeof(exe), "%s/%u/exe", st->o->proc_root, pid);
	fd = usdt_link(st->usdt_prog_fd, exe, r->dev, r->ino, &r->sites,
		       r->why, sizeof(r->why));
	r->probed = fd >= 0;
	r->err = fd < 0 ? fd : 0;
	if (send_answer(out, a, sizeof(*a), fd))
		_exit(1);
	_exit(0);
}

/* All len bytes from a worker by the deadline, with the descriptors that
 * came with them (see prober_recv_fds). */
static int read_whole(int fd, void *buf, size_t len, int *fds, size_t max,
		      size_t *nfds)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec until, now;
	size_t got = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += PROBER_DEADLINE_MS / 1000;
	while (got < len) {
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (until.tv_sec - now.tv_sec) * 1000 +
		       (until.tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0 || poll(&pfd, 1, (int)left) != 1)
			return -ETIMEDOUT;
		n = prober_recv_fds(fd, (char *)buf + got, len - got, fds, max,
				    nfds, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* What a worker is asked: it answers on out and exits. */
enum worker_kind { W_PROBE, W_LINK, W_NAMES };
struct worker_job {
	enum worker_kind kind;
	uint32_t pid, id;
	int slot;
	const struct known_cluster *k;	/* W_NAMES */
};

static void names_worker(struct serve_state *st, const struct known_cluster *k,
			 int out);

/*
 * A worker, on a socket (not a pipe: descriptors come on it): returns
 * 0 in the worker, with its end in *sock; the worker's pid in the
 * prober, with the prober's end in *sock; or -errno.
 */
static pid_t fork_worker(int *sock)
{
	int p[2], err;
	pid_t w;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
		return -errno;
	w = fork();
	if (w < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	close(p[w == 0 ? 0 : 1]);
	*sock = p[w == 0 ? 1 : 0];
	return w;
}

/* A worker's whole answer by the deadline (see read_whole), else it is
 * killed; reaped either way. 0 or -ETIMEDOUT. */
static int await_worker(pid_t w, int sock, void *buf, size_t len, int *fds,
			size_t max, size_t *nfds)
{
	int err = read_whole(sock, buf, len, fds, max, nfds) ? -ETIMEDOUT : 0;

	if (err)
		kill(w, SIGKILL);
	close(sock);
	waitpid(w, NULL, 0);
	return err;
}

/*
 * One worker's answer (len bytes) into a by the deadline (killed if it
 * has not answered), with the descriptor it sent in *link_fd (or -1):
 * the cluster's facts, a link to its binary's wait probes, or its
 * run-time names. Returns 0, -ETIMEDOUT (no whole answer), or -errno.
 */
static int run_worker(struct serve_state *st, const struct worker_job *j,
		      void *a, size_t len, int *link_fd)
{
	size_t n = 0;
	int sock, err;
	pid_t w = fork_worker(&sock);

	if (w == 0) {
		if (j->kind == W_LINK)
			link_worker(st, j->pid, a, sock);
		if (j->kind == W_NAMES)
			names_worker(st, j->k, sock);
		worker(st, j->pid, j->id, j->slot, sock);
	}
	if (w < 0)
		return (int)w;
	err = await_worker(w, sock, a, len, link_fd, 1, &n);
	if (!n)
		*link_fd = -1;
	return err;
}

/*
 * The binary of a cluster just probed, if new to the prober: linked by
 * a worker of its own, the link kept (it closes with the prober), the
 * binary remembered either way so that it is tried once. a->binary_new
 * then tells pgoffd what became of it.
 */
static void link_new_binary(struct serve_state *st, uint32_t pid,
			    uint32_t uid, struct prober_answer *a)
{
	static struct prober_answer l;
	struct usdt_result *r = &a->usdt;
	int link_fd = -1;

	r->path[sizeof(r->path) - 1] = '\0';
	if (!a->binary_new || st->usdt_prog_fd < 0 ||
	    usdt_seen(st, r->dev, r->ino)) {
		a->binary_new = 0;
		return;
	}
	r->probed = 0;
	if (st->usdt_n == USDT_MAX_BINARIES) {
		snprintf(r->why, sizeof(r->why), "more than %d PostgreSQL "
			 "binaries", USDT_MAX_BINARIES);
		usdt_refusals_add(&st->refused, uid, r->dev, r->ino);
		return;
	}
	l = *a;
	l.usdt.err = 0;
	if (run_worker(st, &(struct worker_job){ .kind = W_LINK, .pid = pid,
						  .slot = -1 },
		       &l, sizeof(l), &link_fd)) {
		snprintf(r->why, sizeof(r->why), "no answer within %d ms",
			 PROBER_DEADLINE_MS);
	} else {
		r->probed = l.usdt.probed && link_fd >= 0;
		r->sites = l.usdt.sites;
		memcpy(r->why, l.usdt.why, sizeof(r->why));
		r->why[sizeof(r->why) - 1] = '\0';
		if (l.usdt.probed && link_fd < 0)
			snprintf(r->why, sizeof(r->why), "the link was lost on "
				 "its way from the prober's worker");
	}
	if (!r->probed) {
		if (link_fd >= 0)
			close(link_fd);
		if (l.usdt.err == -ESRCH) {
			/* the postmaster went before its binary was looked
			 * at (a short-lived postgres, such as pg_ctl's
			 * checks): not a refusal, the next one tries again */
			a->binary_new = 0;
			return;
		}
		usdt_refusals_add(&st->refused, uid, r->dev, r->ino);
		return;
	}
	st->usdt_dev[st->usdt_n] = r->dev;
	st->usdt_ino[st->usdt_n] = r->ino;
	st->usdt_link[st->usdt_n++] = link_fd;
}

/* Whether k's postmaster still runs (the same process: its start time;
 * a zombie's cluster is gone, as the registry judges it). */
static bool known_alive(const struct serve_state *st,
			const struct known_cluster *k)
{
	struct procfs_stat ps;

	return procfs_stat(st->o->proc_root, k->pid, &ps) == 0 &&
	       ps.start == k->start && ps.state != 'Z' && ps.state != 'X';
}

/* The clusters traced for account whose postmasters still run, but the
 * one of postmaster pid (started at start), asked about again. */
static uint32_t clusters_of(const struct serve_state *st, uint32_t account,
			    uint32_t pid, uint64_t start)
{
	uint32_t n = 0;

	for (size_t i = 0; i < st->nknown; i++) {
		const struct known_cluster *k = &st->known[i];

		n += k->account == account &&
		     !(k->pid == pid && k->start == start) &&
		     known_alive(st, k);
	}
	return n;
}

/* Where the cluster of postmaster pid (started at start) is kept: its
 * place if it is known already (asked about again), else a free place,
 * else one whose postmaster is gone, else the oldest (clusters_of then
 * counts one less for its user; the registry's own count still holds). */
static struct known_cluster *known_place(struct serve_state *st, uint32_t pid,
					 uint64_t start)
{
	struct known_cluster *k;

	for (size_t i = 0; i < st->nknown; i++)
		if (st->known[i].pid == pid && st->known[i].start == start)
			return &st->known[i];
	if (st->nknown < PROBER_MAX_KNOWN)
		return &st->known[st->nknown++];
	for (size_t i = 0; i < st->nknown; i++)
		if (!known_alive(st, &st->known[i]))
			return &st->known[i];
	k = &st->known[st->next_known];
	st->next_known = (st->next_known + 1) % PROBER_MAX_KNOWN;
	return k;
}

/*
 * A cluster traced: kept for its run-time names and its user's count.
 * start: the postmaster's start time before the worker looked, which
 * must still be its start time after.
 */
static void remember(struct serve_state *st, const struct pg_cluster_info *c,
		     uint32_t uid, uint64_t start)
{
	struct procfs_stat ps;
	struct known_cluster *k;

	if (c->status || !c->traced ||
	    procfs_stat(st->o->proc_root, c->postmaster_pid, &ps) ||
	    ps.start != start)
		return;
	k = known_place(st, c->postmaster_pid, start);
	*k = (struct known_cluster){
		.id = c->id, .pid = c->postmaster_pid, .uid = uid,
		.account = c->account_uid,
		.major = c->major, .start = start, .exe_dev = c->exe_dev,
		.exe_ino = c->exe_ino, .tranches_ptr = c->tranches_ptr,
		.ntranches_ptr = c->ntranches_ptr,
	};
}

/* What the files worker answers; the descriptors ride along. */
struct files_reply {
	int32_t idx[PG_PROBE_MAX_MAPS];	/* symfiles_open's */
};

/*
 * A worker that opens the files of c's mappings for pgoffd's symbols,
 * with pgoffd's rights and no more: a file pgoffd's user may not read
 * is not read for it. A path into a FUSE or NFS mount that never
 * answers holds this worker until its deadline, never pgoffd.
 */
static void files_worker(struct serve_state *st,
			 const struct pg_cluster_info *c, int out)
{
	static struct files_reply r;
	int fds[PG_PROBE_MAX_MAPS];
	cap_t none = cap_init();
	size_t n;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (st->usdt_prog_fd >= 0)
		close(st->usdt_prog_fd);
	if (st->targets_fd >= 0)
		close(st->targets_fd);
	if (!none || cap_set_proc(none) || worker_seccomp())
		_exit(1);
	n = symfiles_open(c, r.idx, fds);
	if (send_with_fds(out, &r, sizeof(r), fds, n))
		_exit(1);
	_exit(0);
}

/*
 * The files of a traced cluster's mappings, opened by a worker within
 * the deadline: their descriptors into fds (*nfds), a->map_fd says
 * which map each is for (see prober.h).
 */
static void open_files(struct serve_state *st, struct prober_answer *a,
		       int fds[PG_PROBE_MAX_MAPS], size_t *nfds)
{
	const struct pg_cluster_info *c = &a->info;
	static struct files_reply r;
	uint32_t nmaps = c->nmaps < PG_PROBE_MAX_MAPS ? c->nmaps :
			 PG_PROBE_MAX_MAPS;
	int sock, err;
	pid_t w;

	*nfds = 0;
	a->files_refused = 0;
	for (size_t i = 0; i < PG_PROBE_MAX_MAPS; i++)
		a->map_fd[i] = -ENOENT;
	if (c->status || !nmaps)
		return;
	w = fork_worker(&sock);
	if (w == 0)
		files_worker(st, c, sock);
	err = w < 0 ? (int)w : await_worker(w, sock, &r, sizeof(r), fds,
					   PG_PROBE_MAX_MAPS, nfds);
	for (uint32_t i = 0; i < nmaps; i++) {
		bool first = true;

		for (uint32_t j = 0; j < i; j++)
			if (c->maps[j].dev == c->maps[i].dev &&
			    c->maps[j].ino == c->maps[i].ino)
				first = false;
		if (err)
			a->map_fd[i] = first ? err : -EALREADY;
		else if (r.idx[i] >= 0 && (size_t)r.idx[i] >= *nfds)
			a->map_fd[i] = -EIO;	/* no descriptor came */
		else
			a->map_fd[i] = r.idx[i];
		if (first && (err || symfiles_refused(a->map_fd[i])))
			a->files_refused++;
	}
	if (err) {
		for (size_t i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
	}
}

/*
 * Whether account has max clusters traced already (pgoffd's
 * max-clusters-per-user, held to 1..PROBER_MAX_KNOWN here): then c says
 * so, with -EUSERS (the worker's -EDQUOT is the process quota). Before
 * it asks, the registry can count only the clusters of the account
 * whose uid the candidate runs as: a rootless container's subuid is no
 * account's. This counts the container for the user who made it.
 */
static bool over_clusters(const struct serve_state *st, uint32_t account,
			  uint32_t max, uint64_t start,
			  struct pg_cluster_info *c)
{
	if (!max || max > PROBER_MAX_KNOWN)
		max = PROBER_MAX_KNOWN;
	if (clusters_of(st, account, c->postmaster_pid, start) < max)
		return false;
	c->status = -EUSERS;
	snprintf(c->why, sizeof(c->why), "uid %u%s has as many clusters "
		 "traced as max-clusters-per-user allows (%u)", account,
		 account != c->uid ? " (whose user namespace it runs in)" : "",
		 max);
	return true;
}

/* One question, answered by a worker within the deadline. */
static void probe(struct serve_state *st, uint32_t pid, uint32_t max_clusters,
		  struct prober_answer *a)
{
	struct pg_cluster_info *c = &a->info;
	uint32_t uids[4], id = ++st->next_cluster;
	int slot = -1, stray_fd = -1, err;
	struct procfs_stat ps;
	char account_missing[sizeof(c->account_missing)];
	uint32_t account;
	bool uid_changed;

	memset(a, 0, sizeof(*a));
	c->postmaster_pid = pid;
	if (procfs_uids(st->o->proc_root, pid, uids) ||
	    procfs_stat(st->o->proc_root, pid, &ps)) {
		c->status = -ENOENT;
		return;
	}
	/* whom the cluster counts for, read by the prober itself (the
	 * worker parses what the cluster's owner wrote): its processes
	 * count in that user's quota, whatever subuids they run as */
	account = userns_account_uid(st->o->proc_root, pid, uids[0],
				     account_missing, sizeof(account_missing));
	c->uid = uids[0];
	c->account_uid = account;
	memcpy(c->account_missing, account_missing, sizeof(account_missing));
	if (over_clusters(st, account, max_clusters, ps.start, c))
		return;		/* not traced, no worker */
	if (st->quotas)
		slot = quota_slot(st, account);
	err = run_worker(st, &(struct worker_job){ .kind = W_PROBE, .pid = pid,
						    .id = id, .slot = slot },
			 a, sizeof(*a), &stray_fd);
	if (stray_fd >= 0)	/* this worker sends none */
		close(stray_fd);
	if (err && err != -ETIMEDOUT) {
		c->status = err;
		return;
	}
	if (err) {
		memset(a, 0, sizeof(*a));
		c->postmaster_pid = pid;
		c->status = -ETIMEDOUT;
		snprintf(c->why, sizeof(c->why), "no answer within %d ms (a "
			 "file system that blocks?)", PROBER_DEADLINE_MS);
	}
	/* the worker checked (and traced) the uid it read: one that is not
	 * the uid the prober read before, and counts it by, is refused */
	uid_changed = c->status == 0 && c->uid != uids[0];
	if (uid_changed) {
		c->status = -EPERM;
		snprintf(c->why, sizeof(c->why), "its uid changed while it was "
			 "probed (%u, then %u)", uids[0], c->uid);
	}
	if ((c->status == -ETIMEDOUT || uid_changed) && st->targets_fd >= 0)
		untrace_cluster(st, id);
	c->postmaster_pid = pid;	/* the worker's word is not needed for it */
	c->data_dir[sizeof(c->data_dir) - 1] = '\0';
	c->version[sizeof(c->version) - 1] = '\0';
	c->pg_missing[sizeof(c->pg_missing) - 1] = '\0';
	c->sysid_missing[sizeof(c->sysid_missing) - 1] = '\0';
	c->why[sizeof(c->why) - 1] = '\0';
	if (a->npids > PROBER_MAX_PIDS)
		a->npids = 0;
	c->id = id;	/* the prober's, whatever the worker said */
	c->uid = uids[0];
	c->account_uid = account;
	memcpy(c->account_missing, account_missing, sizeof(account_missing));
	remember(st, c, uids[0], ps.start);
	link_new_binary(st, pid, account, a);
}

/*
 * A worker that reads the run-time names of a cluster the prober traced
 * (pg_probe_names: the same postmaster, read only through
 * /proc/PID/mem). Confined as the workers that probe are.
 */
static void names_worker(struct serve_state *st, const struct known_cluster *k,
			 int out)
{
	static struct prober_names a;
	static struct pg_cluster_info c;

	worker_confine(st);
	c.postmaster_pid = k->pid;
	c.uid = k->uid;
	c.major = k->major;
	c.exe_dev = k->exe_dev;
	c.exe_ino = k->exe_ino;
	c.tranches_ptr = k->tranches_ptr;
	c.ntranches_ptr = k->ntranches_ptr;
	a.cluster = k->id;
	a.pid = k->pid;
	pg_probe_names(st->o->proc_root, &c, k->start,
		       pg_wait_first_user_tranche(k->major), &a.names);
	if (send_answer(out, &a, sizeof(a), -1))
		_exit(1);
	_exit(0);
}

/* pgoffd asks for the names of cluster id, postmaster pid: only a
 * cluster the prober traced is read. */
static void names(struct serve_state *st, uint32_t id, uint32_t pid,
		  struct prober_names *a)
{
	const struct known_cluster *k = NULL;
	struct pg_run_names *n = &a->names;
	int stray_fd = -1, err;

	for (size_t i = 0; i < st->nknown && !k; i++)
		if (st->known[i].id == id && st->known[i].pid == pid)
			k = &st->known[i];
	memset(a, 0, sizeof(*a));
	if (!k) {
		n->status = -ESRCH;
		snprintf(n->why, sizeof(n->why), "not a cluster the prober "
			 "traced (or one it no longer remembers)");
	} else {
		err = run_worker(st, &(struct worker_job){ .kind = W_NAMES,
							    .k = k },
				 a, sizeof(*a), &stray_fd);
		if (stray_fd >= 0)
			close(stray_fd);
		if (err) {
			memset(a, 0, sizeof(*a));
			n->status = err;
			if (err == -ETIMEDOUT)
				snprintf(n->why, sizeof(n->why), "no answer "
					 "within %d ms", PROBER_DEADLINE_MS);
			else
				snprintf(n->why, sizeof(n->why), "no worker: "
					 "%s", strerror(-err));
		}
	}
	/* the worker's word, bounded */
	a->cluster = id;
	a->pid = pid;
	n->why[sizeof(n->why) - 1] = '\0';
	if (n->n > PG_RUN_NAMES_MAX || n->status)
		n->n = 0;
	for (uint32_t i = 0; i < n->n; i++)
		n->names[i].name[PG_RUN_NAME_LEN - 1] = '\0';
}

/* The maps pgoffd sends once they exist: fds in SCM_RIGHTS. */
static void take_maps(struct serve_state *st, const struct prober_msg *m,
		      struct msghdr *mh)
{
	struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
	int fds[3];

	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(fds)))
		_exit(1);
	(void)m;
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	st->quotas = mmap(NULL, PGOFF_MAX_QUOTAS * sizeof(struct pgoff_quota),
			  PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	st->target_slots = mmap(NULL, PGOFF_TARGET_SLOTS * sizeof(uint64_t),
				PROT_READ | PROT_WRITE, MAP_SHARED, fds[2], 0);
	if (st->quotas == MAP_FAILED || st->target_slots == MAP_FAILED)
		_exit(1);
	close(fds[1]);
	close(fds[2]);
	st->targets_fd = fds[0];
}

/* The wait probes' program, once pgoffd has linked what it found. */
static void take_usdt(struct serve_state *st, const struct prober_msg *m,
		      struct msghdr *mh)
{
	struct cmsghdr *cm = CMSG_FIRSTHDR(mh);

	(void)m;
	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)) || st->usdt_prog_fd >= 0)
		_exit(1);
	memcpy(&st->usdt_prog_fd, CMSG_DATA(cm), sizeof(int));
}

/* A binary pgoffd linked at start: the prober does not link it again. */
static void take_usdt_known(struct serve_state *st, const struct prober_msg *m,
			    struct msghdr *mh)
{
	(void)mh;
	if (st->usdt_n < USDT_MAX_BINARIES) {
		st->usdt_dev[st->usdt_n] = m->dev;
		st->usdt_ino[st->usdt_n] = m->ino;
		st->usdt_link[st->usdt_n++] = -1;
	}
}

static void answer_names(struct serve_state *st, const struct prober_msg *m,
			 struct msghdr *mh)
{
	static struct prober_names na;

	(void)mh;
	names(st, m->cluster, m->pid, &na);
	if (send(st->fd, &na, sizeof(na), MSG_NOSIGNAL) != sizeof(na))
		_exit(1);
}

static void answer_probe(struct serve_state *st, const struct prober_msg *m,
			 struct msghdr *mh)
{
	static struct prober_answer a;
	int files[PG_PROBE_MAX_MAPS], err;
	size_t nfiles;

	(void)mh;
	probe(st, m->pid, m->max_clusters, &a);
	open_files(st, &a, files, &nfiles);
	err = send_with_fds(st->fd, &a, sizeof(a), files, nfiles);
	for (size_t i = 0; i < nfiles; i++)
		close(files[i]);
	if (err)
		_exit(1);
}

/* What each op does (prober_ops.h says when it may come). */
typedef void (*op_fn)(struct serve_state *st, const struct prober_msg *m,
		      struct msghdr *mh);
static const op_fn op_fns[OP__COUNT] = {
	[OP_PROBE] = answer_probe,
	[OP_MAPS] = take_maps,
	[OP_USDT_KNOWN] = take_usdt_known,
	[OP_USDT] = take_usdt,
	[OP_NAMES] = answer_names,
};

/* The prober's life: pids in, cluster facts out, until pgoffd is gone. */
static void serve(int fd, const struct prober_opts *o)
{
	struct serve_state st = { .o = o, .targets_fd = -1,
				  .usdt_prog_fd = -1, .fd = fd };

	for (;;) {
		char cbuf[CMSG_SPACE(3 * sizeof(int))];
		struct prober_msg m;
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

		if (n == 0)
			_exit(0);
		if (n != sizeof(m)) {
			if (n < 0 && errno == EINTR)
				continue;
			_exit(n < 0 ? 1 : 0);
		}
		/* an op out of turn: pgoffd is not itself */
		if (!prober_op_take(m.op, &st.ops_taken))
			_exit(1);
		op_fns[m.op](&st, &m, &mh);
	}
}

/* See prober_wire.h: the first thing the forked prober runs. */
void prober_serve(int sock, pid_t parent, const struct prober_opts *o)
{
	static const cap_value_t keep[] = { CAP_SYS_PTRACE,
					    CAP_DAC_READ_SEARCH };

	log_init("pgoffd[probe]", log_get_level());
	/* pgoffd's end closing is the signal to exit; PDEATHSIG (set
	 * after the uid change, which clears it) covers a stuck read.
	 * privdrop leaves it not dumpable: the workers it forks
	 * inherit that. */
	if (dup2(sock, 3) < 0 || close_range(4, ~0U, 0) ||
	    privdrop(o->uid, o->gid, keep, 2) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		_exit(1);
	if (getppid() != parent)	/* pgoffd died before that */
		_exit(0);
	signal(SIGPIPE, SIG_IGN);
	/* a signal to pgoffd's whole group (systemd's stop, Ctrl-C)
	 * is pgoffd's to act on: the prober ends with it, not first */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	serve(3, o);
}
