// SPDX-License-Identifier: GPL-2.0-only
/* pg_probe.c - the privileged reads of a would-be postmaster; see pg_probe.h. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "broker/pg/pg_elf.h"
#include "broker/priv/pg_probe.h"
#include "broker/pg/pg_status_layout.h"
#include "broker/pg/procfs.h"

/* Not traced: status and the reason, for the log and for ps. */
static int refuse(struct pg_cluster_info *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	c->status = err;
	return err;
}

/* /proc/PID/exe as a path, without " (deleted)" (an upgraded binary). */
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
 * postmaster.pid in the data directory (cwd: an O_PATH fd of
 * /proc/PID/cwd, which also reaches into another mount namespace): pid
 * (negative for a single-user backend), data dir, start time, port, ...
 * one a line. A postmaster just exec'ed has not yet moved into its data
 * directory nor written the file: its cwd is whatever it inherited, so
 * that is -EAGAIN, ask again later. The pid in it is the postmaster's
 * in its own pid namespace. Only a regular file of the postmaster's own
 * uid is read; one that cannot be read (SELinux may deny it) leaves the
 * port 0.
 */
static int read_lockfile(const char *proc_root, int cwd,
			 struct pg_cluster_info *c)
{
	char buf[1024], *line = buf;
	struct stat st;
	ssize_t n;
	int fd;

	fd = procfs_open_regular(cwd, "postmaster.pid", 0,
				 PG_PROBE_MAX_LOCKFILE, &st);
	if (fd == -ENOENT)
		return -EAGAIN;
	if (fd == -ELOOP || fd == -EINVAL || fd == -EFBIG)
		return refuse(c, -EPERM, "postmaster.pid in %s is not a "
			      "regular file of at most %d bytes", c->data_dir,
			      PG_PROBE_MAX_LOCKFILE);
	if (fd < 0)
		return 0;
	if (st.st_uid != c->uid) {
		close(fd);
		return refuse(c, -EPERM, "postmaster.pid in %s belongs to uid "
			      "%u, not to the postmaster's uid %u", c->data_dir,
			      (unsigned int)st.st_uid, c->uid);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((uint32_t)labs(atol(buf)) != own_ns_pid(proc_root,
						    c->postmaster_pid))
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

/*
 * The system identifier: the first 8 bytes of global/pg_control (its
 * ControlFileData begins with it), with postmaster.pid's rules: the
 * directory "global" opened O_PATH|O_NOFOLLOW|O_DIRECTORY in the data
 * directory (a symbolic link is refused there too), then pg_control in
 * it, a regular file of the postmaster's uid, at most
 * PG_PROBE_MAX_CONTROL bytes, read with pread. What cannot be read is
 * said in sysid_missing: the id is then made without it.
 */
static void read_sysid(int cwd, struct pg_cluster_info *c)
{
	struct stat st;
	uint64_t id;
	int dir, fd;
	ssize_t n;

	dir = openat(cwd, "global", O_PATH | O_NOFOLLOW | O_DIRECTORY |
		     O_CLOEXEC);
	if (dir < 0) {
		snprintf(c->sysid_missing, sizeof(c->sysid_missing),
			 "global in the data directory: %s", errno == ENOTDIR ?
			 "not a directory (or a symbolic link)" : strerror(errno));
		return;
	}
	fd = procfs_open_regular(dir, "pg_control", 0, PG_PROBE_MAX_CONTROL,
				 &st);
	close(dir);
	if (fd < 0) {
		snprintf(c->sysid_missing, sizeof(c->sysid_missing),
			 "global/pg_control: %s", fd == -ELOOP || fd == -EINVAL ||
			 fd == -EFBIG ? "not a regular file of at most 8 KiB" :
			 strerror(-fd));
		return;
	}
	if (st.st_uid != c->uid) {
		close(fd);
		snprintf(c->sysid_missing, sizeof(c->sysid_missing),
			 "global/pg_control belongs to uid %u, not to the "
			 "postmaster's", (unsigned int)st.st_uid);
		return;
	}
	n = pread(fd, &id, sizeof(id), 0);
	close(fd);
	if (n != (ssize_t)sizeof(id)) {
		snprintf(c->sysid_missing, sizeof(c->sysid_missing),
			 "global/pg_control: %s", n < 0 ? strerror(errno) :
			 "shorter than 8 bytes");
		return;
	}
	c->system_identifier = id;
	c->has_sysid = 1;
}

/*
 * Where the executable is mapped: the start of its offset-0 mapping,
 * found by device and inode (the path differs inside a container), or
 * by path where the two do not show the same inode (overlayfs).
 */
/*
 * The next whole line of a maps file into line, or false at its end. A
 * file name the kernel escaped (a newline is \012) can make a line
 * longer than line: such a line is skipped whole, so that its rest is
 * never read as entries of its own (which its owner would have written).
 */
static bool maps_line(FILE *f, char *line, size_t size)
{
	int ch;

	while (fgets(line, (int)size, f)) {
		if (strchr(line, '\n'))
			return true;
		while ((ch = getc(f)) != EOF && ch != '\n')
			;
	}
	return false;
}

static int load_bias(const char *proc_root, const struct pg_cluster_info *c,
		     const char *exe, uint64_t first_vaddr, uint64_t *bias)
{
	char path[96], line[PATH_MAX + 128];
	unsigned long long by_path = 0;
	bool path_seen = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, c->postmaster_pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (maps_line(f, line, sizeof(line))) {
		unsigned long long start, off, ino;
		unsigned int maj, min;
		int name_at = 0;

		if (sscanf(line, "%llx-%*x %*s %llx %x:%x %llu %n", &start, &off,
			   &maj, &min, &ino, &name_at) != 5 || off != 0)
			continue;
		if (makedev(maj, min) == c->exe_dev && ino == c->exe_ino) {
			fclose(f);
			*bias = start - first_vaddr;
			return 0;
		}
		line[strcspn(line, "\n")] = '\0';
		if (!path_seen && name_at && strcmp(line + name_at, exe) == 0) {
			by_path = start;
			path_seen = true;
		}
	}
	fclose(f);
	if (!path_seen)
		return -ENOENT;
	*bias = by_path - first_vaddr;
	return 0;
}

/* The postmaster's executable file mappings (see struct pg_map). */
static void read_exec_maps(const char *proc_root, struct pg_cluster_info *c)
{
	char path[96], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, c->postmaster_pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (maps_line(f, line, sizeof(line))) {
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int name_at = 0;
		struct pg_map *m;
		size_t len;

		/* no file has device 0:0; the symbolizer checks dev and ino */
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start,
			   &end, perms, &off, &maj, &min, &ino, &name_at) != 7 ||
		    perms[2] != 'x' || !name_at || line[name_at] != '/' ||
		    (!maj && !min))
			continue;
		if (c->nmaps == PG_PROBE_MAX_MAPS) {
			c->maps_truncated = 1;
			break;
		}
		m = &c->maps[c->nmaps++];
		m->start = start;
		m->end = end;
		m->offset = off;
		m->dev = makedev(maj, min);
		m->ino = ino;
		line[strcspn(line, "\n")] = '\0';
		len = strlen(line + name_at);
		if (len < sizeof(m->path))
			memcpy(m->path, line + name_at, len + 1);
	}
	fclose(f);
}

/* Whether the directory open at cwd is one of trust-data-dirs. */
static bool dir_trusted(const struct pg_trust *t, int cwd)
{
	struct stat here, st;

	if (!t || !t->ndirs || fstat(cwd, &here))
		return false;
	for (size_t i = 0; i < t->ndirs; i++)
		if (stat(t->dirs[i], &st) == 0 && st.st_dev == here.st_dev &&
		    st.st_ino == here.st_ino)
			return true;
	return false;
}

/* The server binary: version and symbols, from the open executable. */
static int read_binary(const char *proc_root, int exe_fd, const char *exe,
		       struct pg_cluster_info *c)
{
	struct pg_elf_info elf;
	uint64_t bias = 0;
	int err = pg_elf_read_fd(exe_fd, &elf);

	if (err == -ENOEXEC || (!err && !elf.major))
		return refuse(c, -ENOEXEC, "%s is not a PostgreSQL server "
			      "binary", exe);
	if (err) {
		snprintf(c->pg_missing, sizeof(c->pg_missing),
			 "cannot read the postgres binary: %s", strerror(-err));
		return 0;
	}
	c->major = elf.major;
	snprintf(c->version, sizeof(c->version), "%s", elf.version);
	read_exec_maps(proc_root, c);
	if (!elf.wait_event_sym)
		snprintf(c->pg_missing, sizeof(c->pg_missing),
			 "binary exports no my_wait_event_info "
			 "(PostgreSQL < 14 or stripped)");
	else if ((err = load_bias(proc_root, c, exe, elf.first_load_vaddr,
				  &bias)))
		snprintf(c->pg_missing, sizeof(c->pg_missing),
			 "cannot find the binary's mapping: %s", strerror(-err));
	else
		c->wait_event_ptr = bias + elf.wait_event_sym;
	if (c->wait_event_ptr && elf.query_sym)
		c->query_ptr = bias + elf.query_sym;
	if (c->wait_event_ptr && elf.tranches_sym && elf.ntranches_sym) {
		c->tranches_ptr = bias + elf.tranches_sym;
		c->ntranches_ptr = bias + elf.ntranches_sym;
	}
	if (!elf.status_sym)
		snprintf(c->status_missing, sizeof(c->status_missing),
			 "binary exports no MyBEEntry (PostgreSQL < 14)");
	else if (!pg_status_layout(c->major))
		snprintf(c->status_missing, sizeof(c->status_missing),
			 "no status entry layout for PostgreSQL %d", c->major);
	else if (c->wait_event_ptr)
		c->status_ptr = bias + elf.status_sym;
	else
		snprintf(c->status_missing, sizeof(c->status_missing), "%s",
			 c->pg_missing);
	return 0;
}

int pg_probe_cluster(const char *proc_root, uint32_t pid,
		     const struct pg_trust *trust, struct pg_cluster_info *c)
{
	char path[96], exe[PATH_MAX], why[160];
	const char *base, *refusal;
	uint32_t uids[4];
	struct stat st, dir;
	int exe_fd = -1, cwd = -1, err;
	ssize_t n;

	memset(c, 0, sizeof(*c));
	c->postmaster_pid = pid;
	/* a setuid program started by a user is not that user's PostgreSQL */
	if (procfs_uids(proc_root, pid, uids))
		return refuse(c, -ENOENT, "gone");
	if (uids[1] != uids[0] || uids[2] != uids[0] || uids[3] != uids[0])
		return refuse(c, -EPERM, "its uids differ (real %u, effective "
			      "%u, saved %u, filesystem %u)", uids[0], uids[1],
			      uids[2], uids[3]);
	c->uid = uids[0];
	c->account_uid = c->uid;	/* the prober's own read replaces it */
	err = read_exe(proc_root, pid, exe, sizeof(exe));
	if (err)
		return refuse(c, -ENOENT, "gone");
	base = strrchr(exe, '/');
	if (strcmp(base ? base + 1 : exe, "postgres") != 0)
		return refuse(c, -ENOEXEC, "its executable %s is not postgres",
			      exe);
	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, pid);
	exe_fd = procfs_open_regular(AT_FDCWD, path, 1, PG_PROBE_MAX_BINARY,
				     &st);
	if (exe_fd < 0)
		return exe_fd == -ENOENT ? refuse(c, -ENOENT, "gone") :
			refuse(c, -EPERM, "its executable %s cannot be read "
			       "(%s; at most %d MiB)", exe, strerror(-exe_fd),
			       PG_PROBE_MAX_BINARY >> 20);
	c->exe_dev = st.st_dev;
	c->exe_ino = st.st_ino;

	/* the postmaster runs in its data directory */
	snprintf(path, sizeof(path), "%s/%u/cwd", proc_root, pid);
	n = readlink(path, c->data_dir, sizeof(c->data_dir) - 1);
	c->data_dir[n > 0 ? n : 0] = '\0';
	cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0) {
		err = refuse(c, -ENOENT, "gone");
		goto out;
	}
	refusal = pg_trust_refusal(trust, &st, c->uid, dir_trusted(trust, cwd),
				   why, sizeof(why));
	if (refusal) {
		err = refuse(c, -EPERM, "%s", refusal);
		goto out;
	}
	if (fstat(cwd, &dir)) {
		err = refuse(c, -ENOENT, "gone");
		goto out;
	}
	c->dir_dev = dir.st_dev;
	c->dir_ino = dir.st_ino;
	err = read_lockfile(proc_root, cwd, c);
	if (!err)	/* its own data directory: what is in it is its own */
		read_sysid(cwd, c);
	if (!err)
		err = read_binary(proc_root, exe_fd, exe, c);
out:
	if (cwd >= 0)
		close(cwd);
	close(exe_fd);
	c->status = err;
	return err;
}

static int names_fail(struct pg_run_names *out, int err, const char *why,
		      int why_err)
{
	snprintf(out->why, sizeof(out->why), "%s%s%s", why,
		 why_err ? ": " : "", why_err ? strerror(why_err) : "");
	out->status = err;
	return err;
}

/* Whether pid is still the postmaster c, started at start. */
static int still_postmaster(const char *proc_root,
			    const struct pg_cluster_info *c, uint64_t start,
			    struct pg_run_names *out)
{
	struct procfs_stat ps;
	uint32_t uids[4];
	struct stat st;
	char path[96];

	if (procfs_stat(proc_root, c->postmaster_pid, &ps) || ps.start != start)
		return names_fail(out, -ESRCH, "the postmaster is gone", 0);
	if (procfs_uids(proc_root, c->postmaster_pid, uids) ||
	    uids[0] != c->uid || uids[1] != c->uid || uids[2] != c->uid ||
	    uids[3] != c->uid)
		return names_fail(out, -EPERM, "the postmaster's uids changed",
				  0);
	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, c->postmaster_pid);
	if (stat(path, &st) || st.st_dev != c->exe_dev ||
	    st.st_ino != c->exe_ino)
		return names_fail(out, -ESRCH, "the postmaster runs another "
				  "executable now", 0);
	return 0;
}

/*
 * Where PostgreSQL's main segment can be: shared anonymous memory
 * (shared_memory_type = mmap: "/dev/zero (deleted)", or
 * "/anon_hugepage (deleted)" with huge pages) or a SysV segment
 * ("/SYSV0052e2c1 (deleted)"), as the kernel names them in any
 * namespace. Not a file of the cluster owner's, which could be one that
 * a FUSE server of theirs makes every read of hang.
 */
static bool segment_like(const char *name)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(name), dl = sizeof(deleted) - 1;

	if (len <= dl || strcmp(name + len - dl, deleted) != 0)
		return false;
	len -= dl;
	if ((len == 9 && strncmp(name, "/dev/zero", 9) == 0) ||
	    (len == 14 && strncmp(name, "/anon_hugepage", 14) == 0))
		return true;
	if (len != 13 || strncmp(name, "/SYSV", 5) != 0)
		return false;
	for (size_t i = 5; i < 13; i++)
		if (!isxdigit((unsigned char)name[i]))
			return false;
	return true;
}

/* The main segment: the first such shared mapping (rw-s) with its header. */
#define NAMES_MAX_CANDIDATES 16
static int find_segment(const char *proc_root, uint32_t pid,
			struct pg_shm_view *v, struct pg_run_names *out)
{
	char path[96], line[PATH_MAX + 128];
	int tried = 0, err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return names_fail(out, -errno, "cannot read its maps", errno);
	while (err && tried < NAMES_MAX_CANDIDATES &&
	       maps_line(f, line, sizeof(line))) {
		unsigned long long lo, hi;
		char perms[8];
		int name_at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, perms,
			   &name_at) != 3 || !name_at ||
		    strcmp(perms, "rw-s") != 0 || !segment_like(line + name_at))
			continue;
		tried++;
		v->seg_lo = lo;
		v->seg_hi = hi;
		err = pg_shmem_segment_check(v);
	}
	fclose(f);
	if (err)
		return names_fail(out, -ENOENT, "no shared mapping of the "
				  "postmaster starts with PostgreSQL's segment "
				  "header", 0);
	return 0;
}

int pg_probe_names(const char *proc_root, const struct pg_cluster_info *c,
		   uint64_t start, int first_tranche, struct pg_run_names *out)
{
	struct pg_shm_view v = { .fd = -1, .tranches_var = c->tranches_ptr,
				 .ntranches_var = c->ntranches_ptr };
	char path[96];
	int err;

	memset(out, 0, sizeof(*out));
	if (!pg_shmem_names_major(c->major))
		return pg_shmem_names_read(&v, c->major, first_tranche, out);
	err = still_postmaster(proc_root, c, start, out);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%u/mem", proc_root, c->postmaster_pid);
	v.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (v.fd < 0)
		return names_fail(out, -errno, "cannot open its memory (the "
				  "prober needs CAP_SYS_PTRACE; Yama's "
				  "ptrace_scope 3 and SELinux's process ptrace "
				  "refuse it)", errno);
	/* the memory opened is the task checked: a pid reused in between
	 * would have started later */
	err = still_postmaster(proc_root, c, start, out);
	if (!err)
		err = find_segment(proc_root, c->postmaster_pid, &v, out);
	if (!err)
		err = pg_shmem_names_read(&v, c->major, first_tranche, out);
	close(v.fd);
	return err;
}

/* One process seen in a walk of /proc. */
struct seen {
	uint32_t pid, ppid;
};

static int cmp_seen(const void *a, const void *b)
{
	uint32_t x = ((const struct seen *)a)->pid;
	uint32_t y = ((const struct seen *)b)->pid;

	return x < y ? -1 : x > y;
}

static uint32_t parent_of(const struct seen *s, size_t n, uint32_t pid)
{
	struct seen key = { .pid = pid }, *e;

	e = n ? bsearch(&key, s, n, sizeof(*s), cmp_seen) : NULL;
	return e ? e->ppid : 0;
}

/* Every process and its parent, sorted by pid. */
static int walk_proc(const char *proc_root, struct seen **out, size_t *count)
{
	struct seen *s = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(proc_root);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		struct procfs_stat st;

		if (*end || !pid || pid > UINT32_MAX ||
		    procfs_stat(proc_root, (uint32_t)pid, &st))
			continue;
		if (n == cap) {
			struct seen *ns;

			cap = cap ? cap * 2 : 256;
			ns = realloc(s, cap * sizeof(*s));
			if (!ns) {
				free(s);
				closedir(d);
				return -ENOMEM;
			}
			s = ns;
		}
		s[n].pid = (uint32_t)pid;
		s[n++].ppid = st.ppid;
	}
	closedir(d);
	if (n)
		qsort(s, n, sizeof(*s), cmp_seen);
	*out = s;
	*count = n;
	return 0;
}

/* The same PostgreSQL as its postmaster: one uid, the same executable. */
static bool same_server(const char *proc_root, uint32_t pid,
			const struct pg_cluster_info *c)
{
	char path[96];
	uint32_t uids[4];
	struct stat st;

	if (procfs_uids(proc_root, pid, uids))
		return false;
	for (int i = 0; i < 4; i++)
		if (uids[i] != c->uid)
			return false;
	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, pid);
	return stat(path, &st) == 0 && st.st_dev == c->exe_dev &&
	       st.st_ino == c->exe_ino;
}

int pg_probe_descendants(const char *proc_root,
			 const struct pg_cluster_info *c,
			 pg_probe_proc_fn fn, void *ctx)
{
	struct seen *s = NULL;
	size_t n = 0;
	int found = 0, err = walk_proc(proc_root, &s, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		uint32_t p = s[i].ppid;

		/* PostgreSQL's processes are the postmaster's children; a
		 * few levels more allow for what they fork themselves */
		for (int depth = 0; depth < 8 && p && p != c->postmaster_pid;
		     depth++)
			p = parent_of(s, n, p);
		if (p != c->postmaster_pid ||
		    !same_server(proc_root, s[i].pid, c))
			continue;
		found++;
		if (fn(ctx, s[i].pid))
			break;
	}
	free(s);
	return found;
}
