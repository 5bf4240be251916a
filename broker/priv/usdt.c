// SPDX-License-Identifier: GPL-2.0-only
/*
 * usdt.c - attach PostgreSQL's wait probes. Runs as root, at start only:
 * the program's fd is dropped afterwards (broker/main.c), because
 * whoever holds it may place a uprobe at any offset of any file it can
 * name, which rewrites an instruction in every process running it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include "bpf/offcpu.h"
#include "broker/pg/pg_elf.h"
#include "broker/uid_rows.h"
#include "broker/priv/usdt.h"
#include "common/log.h"

/* Not in Debian 12's uapi headers (6.1): the kernel's values (6.6+). */
#define ATTACH_TRACE_UPROBE_MULTI 48

struct binary {
	uint64_t dev, ino;
	char path[USDT_PATH_LEN];
	bool probed;
	unsigned int sites;
	int link_fd;		/* -1: none here (the prober holds it) */
	char why[USDT_WHY_LEN];
};

struct usdt {
	struct binary bin[USDT_MAX_BINARIES];
	size_t n;
	unsigned int skipped;	/* binaries past USDT_MAX_BINARIES */
	unsigned int forgotten;	/* refusals replaced by newer ones */
};

int usdt_new(struct usdt **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void usdt_free(struct usdt *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++)
		if (u->bin[i].link_fd >= 0)
			close(u->bin[i].link_fd);
	free(u);
}

bool usdt_known(const struct usdt *u, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->bin[i].dev == dev && u->bin[i].ino == ino)
			return true;
	return false;
}

/* A slot for the file (dev, ino), or NULL: known already, or no room. */
static struct binary *new_binary(struct usdt *u, uint64_t dev, uint64_t ino,
				 const char *shown)
{
	struct binary *b;

	if (usdt_known(u, dev, ino))
		return NULL;
	if (u->n == USDT_MAX_BINARIES) {
		if (!u->skipped++)
			log_warnx("more than %d PostgreSQL binaries: %s and any "
				  "after it are not probed (their lock waits "
				  "are inferred episodes)", USDT_MAX_BINARIES,
				  shown);
		return NULL;
	}
	b = &u->bin[u->n++];
	b->dev = dev;
	b->ino = ino;
	b->link_fd = -1;
	snprintf(b->path, sizeof(b->path), "%s", shown);
	return b;
}

static void told(const struct binary *b)
{
	if (b->probed)
		log_info("PostgreSQL binary %s: %u wait probe sites attached",
			 b->path, b->sites);
	else
		log_info("PostgreSQL binary %s not probed: %s; its lock waits "
			 "are inferred episodes", b->path, b->why);
}

size_t usdt_count(const struct usdt *u)
{
	return u->n;
}

void usdt_binary(const struct usdt *u, size_t i, uint64_t *dev,
		 uint64_t *ino)
{
	*dev = u->bin[i].dev;
	*ino = u->bin[i].ino;
}

/*
 * Room for a binary the prober found after start when the list is full:
 * the oldest refused one's. Refusals cost nothing in the kernel, and
 * anyone can make new ones (a binary in a mount of their own), so they
 * must not crowd out a real PostgreSQL installed later.
 */
static struct binary *forget_oldest_refusal(struct usdt *u)
{
	for (size_t i = 0; i < u->n; i++) {
		if (u->bin[i].probed || u->bin[i].link_fd >= 0)
			continue;
		memmove(&u->bin[i], &u->bin[i + 1],
			(u->n - i - 1) * sizeof(u->bin[0]));
		u->n--;
		u->forgotten++;
		return &u->bin[u->n];
	}
	return NULL;
}

void usdt_note(struct usdt *u, const struct usdt_result *r)
{
	struct binary *b;

	if (u->n == USDT_MAX_BINARIES && !usdt_known(u, r->dev, r->ino))
		forget_oldest_refusal(u);
	b = new_binary(u, r->dev, r->ino, r->path);
	if (!b)
		return;
	b->probed = r->probed;
	b->sites = r->sites;
	snprintf(b->why, sizeof(b->why), "%s", r->why);
	told(b);
}

/* BPF_LINK_CREATE's uprobe_multi variant, laid out as the kernel's. */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 uprobe_flags;
	__u32 pid;		/* 0: every process of the file */
};

static int link_sites(int prog_fd, const char *path, const struct pg_usdt *s)
{
	__u64 off[PG_USDT_MAX_SITES], ref[PG_USDT_MAX_SITES],
		cookie[PG_USDT_MAX_SITES];
	union {
		union bpf_attr attr;
		struct link_create_uprobe_multi lc;
		char room[128];
	} a;
	int fd;

	for (size_t i = 0; i < s->n; i++) {
		off[i] = s->site[i].offset;
		/* the lwlock probes run only while their semaphore is set:
		 * the kernel counts it up for as long as the link lives */
		ref[i] = s->site[i].ref_ctr_offset;
		cookie[i] = s->site[i].kind;
	}
	memset(&a, 0, sizeof(a));
	a.lc.prog_fd = (__u32)prog_fd;
	a.lc.attach_type = ATTACH_TRACE_UPROBE_MULTI;
	a.lc.path = (__u64)(uintptr_t)path;
	a.lc.offsets = (__u64)(uintptr_t)off;
	a.lc.ref_ctr_offsets = (__u64)(uintptr_t)ref;
	a.lc.cookies = (__u64)(uintptr_t)cookie;
	a.lc.cnt = (__u32)s->n;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/*
 * The path a process's exe (a /proc/PID/exe link) has in pgoffd's own
 * mount namespace, or path itself when it is not a link.
 */
static int own_namespace_path(const char *path, char *buf, size_t len,
			      const char **out)
{
	ssize_t n = readlink(path, buf, len - 1);

	if (n < 0) {
		if (errno == ENOENT)
			return -ESRCH;	/* the process exited (or is a zombie) */
		if (errno != EINVAL)
			return -errno;
		*out = path;		/* a plain path, as the installed ones */
		return 0;
	}
	if ((size_t)n == len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	*out = buf;
	return 0;
}

static bool same_file(const struct stat *st, uint64_t dev, uint64_t ino)
{
	return (uint64_t)st->st_dev == dev && (uint64_t)st->st_ino == ino;
}

static const char *file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
	case S_IFBLK:
		return "a device";
	default:
		return "another kind of file";
	}
}

int usdt_link(int prog_fd, const char *path, uint64_t dev, uint64_t ino,
	      unsigned int *sites, char *err, size_t errlen)
{
	struct pg_usdt found;
	struct stat st;
	char self[32], own[PATH_MAX];
	const char *open_path = path;
	int fd = -1, ret;

	/*
	 * Only a file that is the same file at the same path in pgoffd's
	 * mount namespace. A process in a namespace of its own may run a
	 * root-owned binary through a mount of its own (an overlay of
	 * /usr/lib/postgresql made in a user namespace): a new device and
	 * inode for the same file underneath, on which the kernel would
	 * place a second set of probes, so each hit would run twice.
	 */
	ret = own_namespace_path(path, own, sizeof(own), &open_path);
	if (ret) {
		snprintf(err, errlen, "cannot read where it is: %s",
			 ret == -ESRCH ? "the process is gone" :
			 strerror(-ret));
		goto cleanup;
	}
	/*
	 * Looked at before it is opened: in pgoffd's namespace the path may
	 * be the user's own FIFO, or a file they hold a lease on, whose
	 * open would wait for them.
	 */
	if (lstat(open_path, &st)) {
		ret = -errno;
		snprintf(err, errlen, "not found at its path in pgoffd's "
			 "mount namespace (a container's own binary?): %s",
			 strerror(-ret));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EPERM;
		snprintf(err, errlen, "its path in pgoffd's mount namespace "
			 "is %s, not a regular file", file_type(st.st_mode));
		goto cleanup;
	}
	/* the file looked at, not one put at the path since, nor another
	 * mount's view of it */
	if (!same_file(&st, dev, ino)) {
		ret = -ESTALE;
		snprintf(err, errlen, "not the file at its path in pgoffd's "
			 "mount namespace (replaced, or another mount's view "
			 "of a file)");
		goto cleanup;
	}
	/* never waits (a lease), follows no link put there since */
	fd = open(open_path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC |
		  O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !same_file(&st, dev, ino)) {
		ret = fd < 0 ? -errno : -ESTALE;
		snprintf(err, errlen, "replaced at its path in pgoffd's mount "
			 "namespace while it was opened%s%s",
			 fd < 0 ? ": " : "", fd < 0 ? strerror(-ret) : "");
		goto cleanup;
	}
	/* a file its owner may change under the probe could move the nop */
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		ret = -EPERM;
		snprintf(err, errlen, "not a regular file owned by root that "
			 "only root may write");
		goto cleanup;
	}
	if (prog_fd < 0) {
		ret = -EOPNOTSUPP;
		snprintf(err, errlen, "uprobe_multi links need Linux 6.6");
		goto cleanup;
	}
	ret = pg_elf_read_usdt_fd(fd, &found);
	if (ret) {
		snprintf(err, errlen, "its probe notes are unusable: %s",
			 strerror(-ret));
		goto cleanup;
	}
	if (!found.n) {
		ret = -ENOENT;
		snprintf(err, errlen, "no wait probes (PostgreSQL built "
			 "without --enable-dtrace)");
		goto cleanup;
	}
	/* the kernel looks the path up again: give it the file read and
	 * checked here, whatever the path (a process's exe) names now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ret = link_sites(prog_fd, self, &found);
	if (ret < 0) {
		snprintf(err, errlen, "the kernel refused the uprobes "
			 "(uprobe_multi needs Linux 6.6): %s", strerror(-ret));
		goto cleanup;
	}
	*sites = (unsigned int)found.n;
cleanup:
	if (fd >= 0)
		close(fd);
	return ret;
}

int usdt_attach(struct usdt *u, int prog_fd, const char *path,
		const char *shown)
{
	struct binary *b;
	struct stat st;
	int err;

	if (stat(path, &st))
		return -errno;
	b = new_binary(u, (uint64_t)st.st_dev, (uint64_t)st.st_ino, shown);
	if (!b)
		return -EALREADY;
	err = usdt_link(prog_fd, path, b->dev, b->ino, &b->sites, b->why,
			sizeof(b->why));
	if (err == -ESRCH) {	/* nothing known of the file: tried again
				 * when the prober finds it running */
		u->n--;
		return err;
	}
	if (err >= 0) {
		b->link_fd = err;
		b->probed = true;
		err = 0;
	}
	told(b);
	return err;
}

void usdt_attach_installed(struct usdt *u, int prog_fd)
{
	glob_t g;

	if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		usdt_attach(u, prog_fd, g.gl_pathv[i], g.gl_pathv[i]);
	globfree(&g);
}

bool usdt_refusals_known(const struct usdt_refusals *t, uint64_t dev,
			 uint64_t ino)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->r[i].dev == dev && t->r[i].ino == ino)
			return true;
	return false;
}

static uint32_t refusal_uid(const void *rows, size_t i)
{
	return ((const struct usdt_refusal *)rows)[i].uid;
}

/* A user's oldest goes past their share, the oldest of whoever holds the
 * most when the table is full. */
static const struct uid_rows refusal_rows = {
	.max = USDT_REFUSALS, .per_uid = USDT_REFUSALS_PER_UID,
	.full = UID_ROWS_FORGET, .uid_of = refusal_uid,
};

void usdt_refusals_add(struct usdt_refusals *t, uint32_t uid, uint64_t dev,
		       uint64_t ino)
{
	size_t i = uid_rows_place(&refusal_rows, t->r, t->n, uid);

	if (i == UID_ROWS_NONE)
		return;
	if (i < t->n) {
		memmove(&t->r[i], &t->r[i + 1], (t->n - i - 1) * sizeof(t->r[0]));
		t->n--;
	}
	t->r[t->n].dev = dev;
	t->r[t->n].ino = ino;
	t->r[t->n++].uid = uid;
}

unsigned int usdt_skipped(const struct usdt *u)
{
	return u->skipped;
}

unsigned int usdt_forgotten(const struct usdt *u)
{
	return u->forgotten;
}

json_object *usdt_status(const struct usdt *u)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < u->n; i++) {
		const struct binary *b = &u->bin[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "path", json_object_new_string(b->path));
		json_object_object_add(o, "probed",
				       json_object_new_boolean(b->probed));
		if (b->probed)
			json_object_object_add(o, "sites",
					       json_object_new_int64(b->sites));
		else
			json_object_object_add(o, "why",
					       json_object_new_string(b->why));
		json_object_array_add(arr, o);
	}
	return arr;
}
