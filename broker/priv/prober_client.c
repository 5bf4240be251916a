// SPDX-License-Identifier: GPL-2.0-only
/*
 * prober_client.c - pgoffd's end of the prober (see prober.h): it forks
 * the prober (prober_start, as root, first of all), then, unprivileged,
 * hands it the kernel's tables, asks without waiting and reads the
 * answers, checking them: the prober is privileged, pgoffd is not. The
 * prober process itself is prober_server.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "broker/priv/pg_probe.h"
#include "broker/priv/prober.h"
#include "broker/priv/prober_ops.h"
#include "broker/priv/prober_wire.h"
#include "broker/priv/usdt.h"

struct prober {
	int fd;
	pid_t pid;
	bool busy;			/* a question is out */
	enum prober_question asked_what;
	uint32_t asked;			/* its pid */
	uint32_t asked_cluster;		/* PROBER_NAMES: the cluster */
};

int prober_start(struct prober **out, const struct prober_opts *o)
{
	struct prober *p;
	pid_t parent;
	int sv[2], err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* SEQPACKET: one message, one answer, never half of one */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		free(p);
		return -errno;
	}
	parent = getpid();
	p->pid = fork();
	if (p->pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		free(p);
		return err;
	}
	if (p->pid == 0)
		prober_serve(sv[1], parent, o);	/* never returns */
	close(sv[1]);
	p->fd = sv[0];
	*out = p;
	return 0;
}

/* One message with nfds descriptors (at most 3) in SCM_RIGHTS. */
static int send_fds(struct prober *p, const struct prober_msg *m,
		    const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = { (void *)m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(cbuf, 0, sizeof(cbuf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	if (sendmsg(p->fd, &mh, MSG_NOSIGNAL) != sizeof(*m))
		return -errno;
	return 0;
}

int prober_give_maps(struct prober *p, int targets_fd, int quotas_fd,
		     int target_slots_fd)
{
	struct prober_msg m = { .op = OP_MAPS };
	int fds[3] = { targets_fd, quotas_fd, target_slots_fd };

	return send_fds(p, &m, fds, 3);
}

int prober_give_usdt(struct prober *p, int prog_fd, const struct usdt *known)
{
	struct prober_msg m = { .op = OP_USDT };

	for (size_t i = 0; i < usdt_count(known); i++) {
		struct prober_msg k = { .op = OP_USDT_KNOWN };

		usdt_binary(known, i, &k.dev, &k.ino);
		if (send(p->fd, &k, sizeof(k), MSG_NOSIGNAL) != sizeof(k))
			return -errno;
	}
	return send_fds(p, &m, &prog_fd, 1);
}

static int ask(struct prober *p, const struct prober_msg *m,
	       enum prober_question what)
{
	if (p->busy)
		return -EBUSY;
	/* one question at a time: the socket always has room for it */
	if (send(p->fd, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    sizeof(*m))
		return -errno;
	p->busy = true;
	p->asked_what = what;
	p->asked = m->pid;
	p->asked_cluster = m->cluster;
	return 0;
}

int prober_ask(struct prober *p, uint32_t pid, uint32_t max_clusters)
{
	return ask(p, &(struct prober_msg){ .op = OP_PROBE, .pid = pid,
					    .max_clusters = max_clusters },
		   PROBER_CLUSTER);
}

int prober_ask_names(struct prober *p, uint32_t cluster, uint32_t pid)
{
	return ask(p, &(struct prober_msg){ .op = OP_NAMES, .pid = pid,
					    .cluster = cluster },
		   PROBER_NAMES);
}

enum prober_question prober_asked(const struct prober *p)
{
	return p->busy ? p->asked_what : PROBER_NOTHING;
}

bool prober_busy(const struct prober *p)
{
	return p->busy;
}

int prober_fd(const struct prober *p)
{
	return p->fd;
}

/* The descriptors that came with an answer into its map_fd; the rest
 * closed. false: the answer names one that did not come. */
static bool take_files(struct prober_answer *a, int *fds, size_t n)
{
	bool used[PG_PROBE_MAX_MAPS] = { false }, ok = true;

	for (size_t i = 0; i < PG_PROBE_MAX_MAPS; i++) {
		int32_t k = a->map_fd[i];

		if (i >= a->info.nmaps && k >= 0)
			ok = false;
		if (k < 0 || i >= a->info.nmaps)
			a->map_fd[i] = k < 0 ? k : -EIO;
		else if ((size_t)k >= n)
			ok = false, a->map_fd[i] = -EIO;
		else if (used[k])	/* an earlier map's file */
			a->map_fd[i] = -EALREADY;
		else
			used[k] = true, a->map_fd[i] = fds[k];
	}
	for (size_t k = 0; k < n; k++)
		if (!used[k])
			close(fds[k]);
	return ok;
}

int prober_answer(struct prober *p, struct prober_answer *out)
{
	struct pg_cluster_info *c = &out->info;
	int fds[PG_PROBE_MAX_MAPS];
	size_t nfds = 0;
	ssize_t n = prober_recv_fds(p->fd, out, sizeof(*out), fds,
				    PG_PROBE_MAX_MAPS, &nfds, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -EAGAIN;
	p->busy = false;
	if (n != sizeof(*out) || c->postmaster_pid != p->asked ||
	    out->npids > PROBER_MAX_PIDS || c->nmaps > PG_PROBE_MAX_MAPS) {
		for (size_t k = 0; k < nfds; k++)
			close(fds[k]);
		return -EIO;
	}
	if (!take_files(out, fds, nfds)) {
		prober_close_files(out);
		return -EIO;
	}
	c->data_dir[sizeof(c->data_dir) - 1] = '\0';
	c->version[sizeof(c->version) - 1] = '\0';
	c->pg_missing[sizeof(c->pg_missing) - 1] = '\0';
	c->sysid_missing[sizeof(c->sysid_missing) - 1] = '\0';
	c->why[sizeof(c->why) - 1] = '\0';
	c->status_missing[sizeof(c->status_missing) - 1] = '\0';
	c->account_missing[sizeof(c->account_missing) - 1] = '\0';
	return 0;
}

int prober_names_answer(struct prober *p, struct prober_names *out)
{
	struct pg_run_names *n = &out->names;
	ssize_t n_got = recv(p->fd, out, sizeof(*out), MSG_DONTWAIT);

	if (n_got < 0 && (errno == EAGAIN || errno == EINTR))
		return -EAGAIN;
	p->busy = false;
	if (n_got != sizeof(*out) || out->cluster != p->asked_cluster ||
	    out->pid != p->asked || n->n > PG_RUN_NAMES_MAX)
		return -EIO;
	n->why[sizeof(n->why) - 1] = '\0';
	for (uint32_t i = 0; i < n->n; i++)
		n->names[i].name[PG_RUN_NAME_LEN - 1] = '\0';
	return 0;
}

void prober_close_files(struct prober_answer *a)
{
	for (size_t i = 0; i < PG_PROBE_MAX_MAPS; i++) {
		if (a->map_fd[i] >= 0)
			close(a->map_fd[i]);
		a->map_fd[i] = -EBADF;
	}
}

int prober_wait(struct prober *p, int ms, struct prober_answer *out)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	if (p->busy && p->asked_what != PROBER_CLUSTER)
		return -EINVAL;
	if (poll(&pfd, 1, ms) != 1)
		return -EAGAIN;
	return prober_answer(p, out);
}

void prober_stop(struct prober *p)
{
	if (!p)
		return;
	close(p->fd);
	/* at once: it may wait for a worker up to its deadline */
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	free(p);
}

int prober_pid(const struct prober *p)
{
	return p->pid;
}
