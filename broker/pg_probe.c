// SPDX-License-Identifier: GPL-2.0-only
/* pg_probe.c - the privileged reads and the prober process; see pg_probe.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "broker/pg_elf.h"
#include "broker/pg_probe.h"
#include "broker/privdrop.h"
#include "broker/procfs.h"
#include "protocol/log.h"

struct pg_prober {
	int fd;
	pid_t pid;
};

/* /proc/PID/exe, without " (deleted)" (an upgraded binary). */
static int read_exe(const char *proc_root, uint32_t pid, char *exe, size_t len)
{
	char path[96];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, pid);
	n = readlink(path, exe, len - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	exe[n] = '\0';
	if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
		exe[n - 10] = '\0';
	return 0;
}

/*
 * The pid the process has in its own pid namespace, which is the one it
 * writes into files: the last NSpid in /proc/PID/status (a postmaster in
 * a container is 1 or 7 there). Without an NSpid line (kernels before
 * 4.1), the pid itself.
 */
static uint32_t own_ns_pid(const char *proc_root, uint32_t pid)
{
	char path[96], buf[2048], *line;
	uint32_t last = pid;

	snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0)
		return pid;
	line = strstr(buf, "\nNSpid:");
	if (!line)
		return pid;
	for (char *p = line + 7, *end; *p && *p != '\n'; p = end) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		last = (uint32_t)v;
	}
	return last;
}

/*
 * postmaster.pid in the cwd: pid (negative for a single-user backend),
 * data dir, start time, port, ... one a line. A postmaster just exec'ed
 * has not yet moved into its data directory nor written the file: its cwd
 * is whatever it inherited, so that is -EAGAIN, ask again later. The
 * file is opened through /proc/PID/cwd, which also reaches into another
 * mount namespace (a container's data directory); the pid in it is the
 * postmaster's in its own pid namespace. A file that cannot be read
 * (SELinux may deny it) leaves the port 0.
 */
static int read_lockfile(const char *proc_root, uint32_t pid,
			 struct pg_cluster_info *c)
{
	char path[128], buf[1024], *line = buf;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%u/cwd/postmaster.pid", proc_root, pid);
	n = procfs_read(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return -EAGAIN;
	if (n <= 0)
		return 0;
	if ((uint32_t)labs(atol(buf)) != own_ns_pid(proc_root, pid))
		return -EAGAIN;		/* not (yet) its own data directory */
	for (int i = 0; i < 3 && line; i++) {
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (line)
		c->port = atoi(line);
	return 0;
}

/* Where the executable is mapped: the start of its offset-0 mapping. */
static int load_bias(const char *proc_root, uint32_t pid, const char *exe,
		     uint64_t first_vaddr, uint64_t *bias)
{
	char path[96], line[PATH_MAX + 128];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, off;
		int name_at = 0;

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*u %n", &start, &off,
			   &name_at) != 2 || !name_at)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (off == 0 && strcmp(line + name_at, exe) == 0) {
			*bias = start - first_vaddr;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int pg_probe_cluster(const char *proc_root, uint32_t pid,
		     struct pg_cluster_info *c)
{
	char path[96], exe[PATH_MAX];
	struct pg_elf_info elf;
	const char *base;
	uint64_t bias = 0;
	ssize_t n;
	int err;

	memset(c, 0, sizeof(*c));
	c->postmaster_pid = pid;
	err = read_exe(proc_root, pid, exe, sizeof(exe));
	base = strrchr(exe, '/');
	if (err || strcmp(base ? base + 1 : exe, "postgres") != 0) {
		/* comm said postgres; the executable does not */
		c->status = err ? err : -ENOEXEC;
		return c->status;
	}
	/* the postmaster runs in its data directory */
	snprintf(path, sizeof(path), "%s/%u/cwd", proc_root, pid);
	n = readlink(path, c->data_dir, sizeof(c->data_dir) - 1);
	c->data_dir[n > 0 ? n : 0] = '\0';
	err = read_lockfile(proc_root, pid, c);
	if (err) {
		c->status = err;
		return err;
	}

	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, pid);
	err = pg_elf_read(path, &elf);
	if (err) {
		snprintf(c->pg_missing, sizeof(c->pg_missing),
			 "cannot read the postgres binary: %s", strerror(-err));
		return 0;
	}
	c->major = elf.major;
	snprintf(c->version, sizeof(c->version), "%s", elf.version);
	if (!elf.wait_event_sym)
		snprintf(c->pg_missing, sizeof(c->pg_missing),
			 "binary exports no my_wait_event_info "
			 "(PostgreSQL < 14 or stripped)");
	else if ((err = load_bias(proc_root, pid, exe, elf.first_load_vaddr,
				  &bias)))
		snprintf(c->pg_missing, sizeof(c->pg_missing),
			 "cannot find the binary's mapping: %s", strerror(-err));
	else
		c->wait_event_ptr = bias + elf.wait_event_sym;
	if (c->wait_event_ptr && elf.query_sym)
		c->query_ptr = bias + elf.query_sym;
	return 0;
}

/* The prober's life: pids in, cluster facts out, until pgoffd is gone. */
static void serve(int fd, const char *proc_root)
{
	for (;;) {
		struct pg_cluster_info info;
		uint32_t pid;
		ssize_t n = recv(fd, &pid, sizeof(pid), 0);

		if (n == 0)
			_exit(0);
		if (n != sizeof(pid)) {
			if (n < 0 && errno == EINTR)
				continue;
			_exit(n < 0 ? 1 : 0);
		}
		pg_probe_cluster(proc_root, pid, &info);
		if (send(fd, &info, sizeof(info), MSG_NOSIGNAL) != sizeof(info))
			_exit(1);
	}
}

int pg_prober_start(struct pg_prober **out, const char *proc_root,
		    uid_t uid, gid_t gid)
{
	static const cap_value_t keep[] = { CAP_SYS_PTRACE,
					    CAP_DAC_READ_SEARCH };
	struct pg_prober *p;
	pid_t parent;
	int sv[2], err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* SEQPACKET: one request, one reply, never half of one */
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
	if (p->pid == 0) {
		log_init("pgoffd[probe]", log_get_level());
		/* pgoffd's end closing is the signal to exit; PDEATHSIG (set
		 * after the uid change, which clears it) covers a stuck read */
		if (dup2(sv[1], 3) < 0 || close_range(4, ~0U, 0) ||
		    privdrop(uid, gid, keep, 2) ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
			_exit(1);
		if (getppid() != parent)	/* pgoffd died before that */
			_exit(0);
		signal(SIGPIPE, SIG_IGN);
		serve(3, proc_root);
	}
	close(sv[1]);
	p->fd = sv[0];
	*out = p;
	return 0;
}

int pg_prober_ask(struct pg_prober *p, uint32_t pid,
		  struct pg_cluster_info *out)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	ssize_t n;

	memset(out, 0, sizeof(*out));
	out->status = -EIO;
	if (send(p->fd, &pid, sizeof(pid), MSG_NOSIGNAL) != sizeof(pid))
		return -EIO;
	/* a late reply to an earlier, timed-out question is skipped */
	do {
		if (poll(&pfd, 1, 2000) != 1) {
			out->status = -ETIMEDOUT;
			return -ETIMEDOUT;
		}
		n = recv(p->fd, out, sizeof(*out), 0);
		if (n != sizeof(*out)) {
			out->status = -EIO;
			return -EIO;
		}
	} while (out->postmaster_pid != pid);
	out->data_dir[sizeof(out->data_dir) - 1] = '\0';
	out->version[sizeof(out->version) - 1] = '\0';
	out->pg_missing[sizeof(out->pg_missing) - 1] = '\0';
	return out->status;
}

void pg_prober_stop(struct pg_prober *p)
{
	if (!p)
		return;
	close(p->fd);
	waitpid(p->pid, NULL, 0);
	free(p);
}

int pg_prober_pid(const struct pg_prober *p)
{
	return p->pid;
}
