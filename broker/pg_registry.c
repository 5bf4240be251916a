// SPDX-License-Identifier: GPL-2.0-only
/* pg_registry.c - discover and follow PostgreSQL processes; see the header. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/pg_registry.h"
#include "broker/procfs.h"
#include "protocol/log.h"

#define MAX_CLUSTERS 256

struct pg_registry {
	char proc_root[64];
	pg_add_target_fn add;
	pg_probe_fn probe;
	void *ctx;
	uint32_t *rejected;		/* "postgres" roots that are not postmasters */
	size_t nrejected;
	struct pg_proc *procs;		/* sorted by pid */
	size_t nprocs, cap;
	struct pg_cluster clusters[MAX_CLUSTERS];
	size_t nclusters;
	uint32_t next_cluster_id;
};

/* One postgres process seen in a scan. */
struct seen {
	uint32_t pid, ppid;
};

static bool rejected(const struct pg_registry *r, uint32_t pid)
{
	for (size_t i = 0; i < r->nrejected; i++)
		if (r->rejected[i] == pid)
			return true;
	return false;
}

int pg_registry_new(struct pg_registry **out, const char *proc_root,
		    pg_add_target_fn add, pg_probe_fn probe, void *ctx)
{
	struct pg_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	snprintf(r->proc_root, sizeof(r->proc_root), "%s", proc_root);
	r->add = add;
	r->probe = probe;
	r->ctx = ctx;
	r->next_cluster_id = 1;
	*out = r;
	return 0;
}

void pg_registry_free(struct pg_registry *r)
{
	if (!r)
		return;
	free(r->procs);
	free(r->rejected);
	free(r);
}

/*
 * /proc/PID/stat (world-readable): is the command "postgres" (PostgreSQL
 * sets its title in argv, not comm), and the parent. 0, or -ENOENT for a
 * process that is gone or is something else.
 */
static int read_stat(const struct pg_registry *r, uint32_t pid, uint32_t *ppid)
{
	char path[96], buf[512], *open_paren, *close_paren;
	unsigned int v;

	snprintf(path, sizeof(path), "%s/%u/stat", r->proc_root, pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	/* comm may hold spaces and parentheses: it ends at the last ')' */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %*c %u", &v) != 1)
		return -EINVAL;
	*close_paren = '\0';
	if (strcmp(open_paren + 1, "postgres") != 0)
		return -ENOENT;
	*ppid = v;
	return 0;
}

static struct pg_proc *find_proc(struct pg_registry *r, uint32_t pid,
				 size_t *pos)
{
	size_t lo = 0, hi = r->nprocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return lo < r->nprocs && r->procs[lo].pid == pid ? &r->procs[lo] :
							   NULL;
}

static struct pg_cluster *find_cluster_by_postmaster(struct pg_registry *r,
						     uint32_t pid)
{
	for (size_t i = 0; i < r->nclusters; i++)
		if (r->clusters[i].info.postmaster_pid == pid)
			return &r->clusters[i];
	return NULL;
}

const struct pg_cluster *pg_registry_cluster(const struct pg_registry *r,
					     uint32_t id)
{
	for (size_t i = 0; i < r->nclusters; i++)
		if (r->clusters[i].id == id)
			return &r->clusters[i];
	return NULL;
}

/* A new postmaster, if the prober says it is one. */
static struct pg_cluster *add_cluster(struct pg_registry *r, uint32_t pid)
{
	struct pg_cluster_info info;
	struct pg_cluster *c;
	uint32_t *nr;
	int err;

	if (r->nclusters == MAX_CLUSTERS) {
		log_warnx("more than %d PostgreSQL clusters: postmaster %u "
			  "not traced", MAX_CLUSTERS, pid);
		return NULL;
	}
	err = r->probe(r->ctx, pid, &info);
	if (err == -ENOEXEC || err == -ENOENT) {
		/* not PostgreSQL after all (or gone): do not ask again */
		nr = realloc(r->rejected, (r->nrejected + 1) * sizeof(*nr));
		if (nr) {
			r->rejected = nr;
			r->rejected[r->nrejected++] = pid;
		}
		return NULL;
	}
	if (err == -EAGAIN)
		return NULL;	/* still starting: the next scan asks again */
	if (err) {
		log_warnx("cannot probe postmaster %u: %s", pid, strerror(-err));
		return NULL;
	}
	c = &r->clusters[r->nclusters++];
	c->id = r->next_cluster_id++;
	c->info = info;
	log_info("cluster %u: postmaster %u, %s, port %d, PostgreSQL %s%s%s",
		 c->id, pid, info.data_dir[0] ? info.data_dir : "?", info.port,
		 info.version[0] ? info.version : "?",
		 info.pg_missing[0] ? "; " : "", info.pg_missing);
	return c;
}

static void read_title(struct pg_registry *r, struct pg_proc *p)
{
	const struct pg_cluster *c = pg_registry_cluster(r, p->cluster);
	char path[96], buf[512];

	snprintf(path, sizeof(path), "%s/%u/cmdline", r->proc_root, p->pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0 ||
	    pg_title_parse(buf, c ? (int)c->info.major : 0, &p->title))
		return;
	/* a child still showing the postmaster's argv has no title yet */
	p->titled = strcmp(p->title.backend_type, "postmaster") != 0 ||
		    find_cluster_by_postmaster(r, p->pid) != NULL;
}

static struct pg_proc *add_proc(struct pg_registry *r, uint32_t pid,
				const struct pg_cluster *c)
{
	struct pgoff_target t = { .wait_event_ptr = c->info.wait_event_ptr,
				  .query_ptr = c->info.query_ptr,
				  .cluster = c->id };
	struct pg_proc *p;
	size_t pos;
	int err;

	if (find_proc(r, pid, &pos))
		return &r->procs[pos];
	if (r->nprocs == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct pg_proc *np = realloc(r->procs, cap * sizeof(*np));

		if (!np)
			return NULL;
		r->procs = np;
		r->cap = cap;
	}
	memmove(&r->procs[pos + 1], &r->procs[pos],
		(r->nprocs - pos) * sizeof(*p));
	r->nprocs++;
	p = &r->procs[pos];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->cluster = c->id;
	p->seen = true;
	err = r->add(r->ctx, pid, &t);
	if (err)
		log_warnx("cannot trace postgres process %u: %s", pid,
			  strerror(-err));
	read_title(r, p);
	return p;
}

static int cmp_seen(const void *a, const void *b)
{
	uint32_t x = ((const struct seen *)a)->pid;
	uint32_t y = ((const struct seen *)b)->pid;

	return x < y ? -1 : x > y;
}

static const struct seen *seen_find(const struct seen *s, size_t n,
				    uint32_t pid)
{
	struct seen key = { .pid = pid };

	return n ? bsearch(&key, s, n, sizeof(*s), cmp_seen) : NULL;
}

/* The postmaster a process descends from, within this scan. */
static uint32_t postmaster_of(const struct seen *s, size_t n, uint32_t pid)
{
	for (int depth = 0; depth < 8; depth++) {
		const struct seen *e = seen_find(s, n, pid);

		if (!e)
			return 0;
		if (!seen_find(s, n, e->ppid))
			return e->pid;
		pid = e->ppid;
	}
	return 0;
}

static int collect(struct pg_registry *r, struct seen **out, size_t *count)
{
	struct seen *s = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(r->proc_root);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		uint32_t ppid;

		if (*end || !pid || read_stat(r, (uint32_t)pid, &ppid))
			continue;
		if (n == cap) {
			struct seen *ns;

			cap = cap ? cap * 2 : 64;
			ns = realloc(s, cap * sizeof(*s));
			if (!ns) {
				free(s);
				closedir(d);
				return -ENOMEM;
			}
			s = ns;
		}
		s[n].pid = (uint32_t)pid;
		s[n++].ppid = ppid;
	}
	closedir(d);
	if (n)	/* s is NULL when no process is PostgreSQL */
		qsort(s, n, sizeof(*s), cmp_seen);
	*out = s;
	*count = n;
	return 0;
}

static void sweep(struct pg_registry *r)
{
	size_t i, j = 0;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].seen)
			r->procs[j++] = r->procs[i];
	r->nprocs = j;
	for (i = 0, j = 0; i < r->nclusters; i++) {
		struct pg_cluster *c = &r->clusters[i];

		if (find_proc(r, c->info.postmaster_pid, NULL))
			r->clusters[j++] = *c;
		else
			log_info("cluster %u (%s) is gone", c->id, c->info.data_dir);
	}
	r->nclusters = j;
}

int pg_registry_scan(struct pg_registry *r)
{
	struct seen *s = NULL;
	size_t n = 0;
	int err = collect(r, &s, &n);

	if (err)
		return err;
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t pm = postmaster_of(s, n, s[i].pid);
		struct pg_cluster *c = find_cluster_by_postmaster(r, pm);
		struct pg_proc *p;

		if (!pm || rejected(r, pm))
			continue;
		if (!c && !(c = add_cluster(r, pm)))
			continue;
		p = find_proc(r, s[i].pid, NULL);
		if (p && p->cluster != c->id)	/* pid reused by another cluster */
			p->cluster = c->id, p->titled = false;
		if (!p)
			p = add_proc(r, s[i].pid, c);
		if (!p)
			continue;
		p->seen = true;
		if (!p->titled)
			read_title(r, p);
	}
	/* forget rejected pids that are gone: the pid may come back as postgres */
	size_t kept = 0;

	for (size_t i = 0; i < r->nrejected; i++)
		if (seen_find(s, n, r->rejected[i]))
			r->rejected[kept++] = r->rejected[i];
	r->nrejected = kept;
	free(s);
	sweep(r);
	return 0;
}

const struct pg_proc *pg_registry_proc(struct pg_registry *r, uint32_t pid)
{
	struct pg_proc *p = find_proc(r, pid, NULL);
	struct pg_cluster *c;
	uint32_t ppid;

	if (p) {
		if (!p->titled)
			read_title(r, p);
		return p;
	}
	/* forked since the last scan: its parent is a traced postmaster */
	if (read_stat(r, pid, &ppid))
		return NULL;
	c = find_cluster_by_postmaster(r, ppid);
	if (!c) {
		const struct pg_proc *parent = find_proc(r, ppid, NULL);

		if (!parent)
			return NULL;
		c = (struct pg_cluster *)pg_registry_cluster(r, parent->cluster);
		if (!c)
			return NULL;
	}
	return add_proc(r, pid, c);
}

size_t pg_registry_proc_count(const struct pg_registry *r)
{
	return r->nprocs;
}

const struct pg_proc *pg_registry_procs(const struct pg_registry *r,
					size_t *n)
{
	*n = r->nprocs;
	return r->procs;
}

size_t pg_registry_cluster_count(const struct pg_registry *r)
{
	return r->nclusters;
}
