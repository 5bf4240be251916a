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
#include "broker/serve/log_limit.h"
#include "broker/uid_rows.h"
#include "broker/pg/pg_registry.h"
#include "broker/pg/procfs.h"
#include "common/log.h"

#define MAX_CLUSTERS	1024
#define MAX_REFUSALS	4096	/* past that no more are kept: counted */
/* a user's share of them: past it, their processes named postgres are not
 * asked about either (as a user at max-clusters-per-user), only counted;
 * so one user can neither fill the table nor the prober's list */
#define MAX_REFUSALS_PER_UID	(MAX_REFUSALS / 8)
/* a user's would-be postmasters asked about in one scan: one probe runs at
 * a time, users in turn, so more would only wait; and the list has room
 * for every user's (as many as the processes seen), so no user can crowd
 * another out of it, whatever their processes' pids or number */
#define CANDIDATES_PER_UID	16
/* A process /proc no longer shows is kept this many scans: its last
 * records may still be in the ring buffer. */
#define MISSED_SCANS	2

/* Back-offs: a postmaster still starting (asked at every scan for its
 * first STARTING_TRIES, then less often), and one whose probe hung. */
#define STARTING_TRIES		10
#define STARTING_MAX_MS		32000
#define TIMEOUT_FIRST_MS	10000
#define TIMEOUT_MAX_MS		600000

/* A would-be postmaster found by a scan, to be asked about. */
struct candidate {
	uint32_t pid, uid;
	uint64_t start;
};

struct pg_registry {
	char proc_root[64];
	uint32_t max_clusters_per_uid;
	struct pg_proc *procs;		/* sorted by pid */
	size_t nprocs, cap;
	struct pg_cluster *clusters;
	size_t nclusters;
	struct pg_refusal *refusals;	/* oldest first */
	size_t nrefusals;
	size_t unkept;			/* not kept in the last scan's cycle */
	size_t unkept_now;		/* ... in this one, so far */
	bool full_told;			/* logged that no more are kept */
	struct log_limit log_limit;	/* refusal lines a second, per user */
	struct candidate *candidates;
	size_t ncandidates, cap_candidates;
	uint32_t last_uid;		/* users are asked about in turn */
	uint32_t asked;			/* the pid the prober is asked about */
	uint64_t asked_start;		/* and its start time */
	uint32_t asked_uid;		/* and its user, as /proc said */
	size_t next_names;		/* clusters are read in turn */
	/* lines of a cgroup file here (pgoffd's own): one more in a
	 * postmaster's is a newline in a cgroup's name; 0: unknown, no
	 * container is named */
	size_t cgroup_lines;
};

/* One process named postgres seen in a scan. */
struct seen {
	uint32_t pid, ppid;
	uint64_t start;		/* its start time: tells a reused pid */
};

/* A cgroup file, whole: up to a line of PATH_MAX for each of the
 * hierarchies; cut short, it names nothing (container_parse). */
#define CGROUP_MAX	(64 * 1024)

static ssize_t read_cgroup(const char *proc_root, const char *who, char **text)
{
	char path[96];
	size_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/cgroup", proc_root, who);
	*text = malloc(CGROUP_MAX);
	fd = *text ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
	if (fd < 0) {
		free(*text);
		*text = NULL;
		return -1;
	}
	for (;;) {
		ssize_t got = read(fd, *text + n, CGROUP_MAX - n);

		if (got <= 0 || (n += (size_t)got) == CGROUP_MAX)
			break;
	}
	close(fd);
	return (ssize_t)n;
}

static size_t own_cgroup_lines(const char *proc_root)
{
	char *text;
	ssize_t n = read_cgroup(proc_root, "self", &text);
	size_t lines = n > 0 ? container_cgroup_lines(text, (size_t)n) : 0;

	free(text);
	if (!lines)
		log_warnx("cannot read %s/self/cgroup: no cluster's container "
			  "will be named", proc_root);
	return lines;
}

int pg_registry_new(struct pg_registry **out, const char *proc_root,
		    uint32_t max_clusters_per_uid)
{
	struct pg_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->clusters = calloc(MAX_CLUSTERS, sizeof(*r->clusters));
	r->refusals = calloc(MAX_REFUSALS, sizeof(*r->refusals));
	if (!r->clusters || !r->refusals) {
		pg_registry_free(r);
		return -ENOMEM;
	}
	snprintf(r->proc_root, sizeof(r->proc_root), "%s", proc_root);
	r->cgroup_lines = own_cgroup_lines(proc_root);
	r->log_limit.about = "processes named postgres of";
	r->max_clusters_per_uid = max_clusters_per_uid;
	*out = r;
	return 0;
}

void pg_registry_free(struct pg_registry *r)
{
	if (!r)
		return;
	log_limit_flush(&r->log_limit, INT64_MAX);	/* what was held back */
	free(r->procs);
	for (size_t i = 0; r->clusters && i < r->nclusters; i++)
		pg_names_free(&r->clusters[i].names);
	free(r->clusters);
	free(r->refusals);
	free(r->candidates);
	free(r);
}

void pg_registry_set_limit(struct pg_registry *r, uint32_t max_clusters_per_uid)
{
	r->max_clusters_per_uid = max_clusters_per_uid;
}

/*
 * /proc/PID/stat (world-readable): is the command "postgres" (PostgreSQL
 * sets its title in argv, not comm), the parent and the start time. 0,
 * or -ENOENT for a process that is gone or is something else.
 */
static int read_stat(const struct pg_registry *r, uint32_t pid, uint32_t *ppid,
		     uint64_t *start)
{
	struct procfs_stat st;
	int err = procfs_stat(r->proc_root, pid, &st);

	if (err)
		return err;
	/* a zombie (or dead) is no postmaster: asking would find it gone,
	 * keep no row, and ask again at every scan */
	if (st.state == 'Z' || st.state == 'X')
		return -ENOENT;
	if (strcmp(st.comm, "postgres") != 0)
		return -ENOENT;
	*ppid = st.ppid;
	*start = st.start;
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

size_t pg_registry_same_path(const struct pg_registry *r,
			     const struct pg_cluster *c,
			     const struct pg_cluster **others, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nclusters; i++) {
		const struct pg_cluster *o = &r->clusters[i];

		if (o == c || strcmp(o->info.data_dir, c->info.data_dir))
			continue;
		if (n < max)
			others[n] = o;
		n++;
	}
	return n;
}

/* The clusters traced for uid: whose account it is (a rootless
 * container's count for the user whose namespace it runs in). */
static size_t clusters_of(const struct pg_registry *r, uint32_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nclusters; i++)
		n += r->clusters[i].info.account_uid == uid;
	return n;
}

static struct pg_refusal *find_refusal(struct pg_registry *r, uint32_t pid)
{
	for (size_t i = 0; i < r->nrefusals; i++)
		if (r->refusals[i].pid == pid)
			return &r->refusals[i];
	return NULL;
}

static uint32_t refusal_uid(const void *rows, size_t i)
{
	return ((const struct pg_refusal *)rows)[i].uid;
}

/* A user's share, or a full table: the rows kept stay (see refusal_for). */
static const struct uid_rows refusal_rows = {
	.max = MAX_REFUSALS, .per_uid = MAX_REFUSALS_PER_UID,
	.full = UID_ROWS_KEEP, .uid_of = refusal_uid,
};

static size_t refusals_of(const struct pg_registry *r, uint32_t uid)
{
	return uid_rows_count(&refusal_rows, r->refusals, r->nrefusals, uid);
}

/* Forget a refusal; the others stay oldest first (ps lists the newest). */
static void drop_refusal(struct pg_registry *r, struct pg_refusal *f)
{
	size_t i = (size_t)(f - r->refusals);

	memmove(f, f + 1, (r->nrefusals - i - 1) * sizeof(*f));
	r->nrefusals--;
}

/*
 * A refusal for pid of uid, new or the one there was; NULL when uid holds
 * its share or MAX_REFUSALS are kept, counted (pg_registry_refusals_
 * unkept). Those kept stay: evicting the oldest for each new one would
 * let a user with more processes than that churn the table (and the log)
 * at every scan.
 */
static struct pg_refusal *refusal_for(struct pg_registry *r, uint32_t pid,
				      uint32_t uid)
{
	struct pg_refusal *f = find_refusal(r, pid);

	if (f)
		return f;
	if (uid_rows_place(&refusal_rows, r->refusals, r->nrefusals, uid) ==
	    UID_ROWS_NONE) {
		if (r->nrefusals == MAX_REFUSALS && !r->full_told) {
			log_warnx("%d processes named postgres are not traced: "
				  "no more are kept (pgoffctl ps counts them)",
				  MAX_REFUSALS);
			r->full_told = true;
		}
		r->unkept_now++;
		return NULL;
	}
	f = &r->refusals[r->nrefusals++];
	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->uid = uid;
	return f;
}

/* A line about uid's process, if their lines this second are not too
 * many (a user replacing fakes as fast as they are refused): the rest
 * are counted, and told in one line. */
static bool may_tell(struct pg_registry *r, uint32_t uid, int64_t now_ms)
{
	return log_limit_allow(&r->log_limit, uid, now_ms / 1000);
}

/* Told once per process, with the reason; ps shows it as long as it lives. */
static void refuse(struct pg_registry *r, uint32_t pid, uint32_t uid,
		   int status, const char *why, int64_t retry_ms, int64_t now_ms)
{
	struct pg_refusal *f = refusal_for(r, pid, uid);

	if (!f)
		return;
	f->uid = uid;
	f->status = status;
	f->retry_ms = retry_ms;
	if (strcmp(f->why, why) != 0) {
		snprintf(f->why, sizeof(f->why), "%s", why);
		f->logged = false;
	}
	if (!f->logged) {
		if (may_tell(r, uid, now_ms))
			log_warnx("process %u (uid %u) named postgres is not "
				  "traced: %s", pid, uid, why);
		f->logged = true;
	}
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
				uint32_t cluster)
{
	struct pg_proc *p;
	size_t pos;

	if ((p = find_proc(r, pid, &pos)))
		return p;
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
	p->cluster = cluster;
	return p;
}

const struct pg_proc *pg_registry_learn(struct pg_registry *r, uint32_t pid,
					uint32_t cluster)
{
	struct pg_proc *p = find_proc(r, pid, NULL);

	if (p && p->cluster == cluster)
		return p;
	if (!pg_registry_cluster(r, cluster))
		return NULL;
	if (p) {	/* the pid was reused, in another cluster */
		memset(&p->title, 0, sizeof(p->title));
		p->titled = false;
		p->cluster = cluster;
	} else if (!(p = add_proc(r, pid, cluster))) {
		return NULL;
	}
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

/* The process named postgres a process descends from, within this scan. */
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
		uint64_t start;

		if (*end || !pid || read_stat(r, (uint32_t)pid, &ppid, &start))
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
		s[n].start = start;
		s[n++].ppid = ppid;
	}
	closedir(d);
	if (n)	/* s is NULL when no process is PostgreSQL */
		qsort(s, n, sizeof(*s), cmp_seen);
	*out = s;
	*count = n;
	return 0;
}

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* At most CANDIDATES_PER_UID of a user, the lowest pids (asked about in
 * any order); the rest are counted, and looked at again at the next scan.
 * (The list keeps its largest size: one entry a process seen.) */
static void trim_candidates(struct pg_registry *r)
{
	size_t i, j = 0, run = 0;

	if (r->ncandidates > 1)
		qsort(r->candidates, r->ncandidates, sizeof(*r->candidates),
		      cmp_candidate);
	for (i = 0; i < r->ncandidates; i++) {
		run = i && r->candidates[i].uid == r->candidates[i - 1].uid ?
		      run + 1 : 0;
		if (run < CANDIDATES_PER_UID)
			r->candidates[j++] = r->candidates[i];
		else
			r->unkept_now++;
	}
	r->ncandidates = j;
}

/* A would-be postmaster: to be asked about, unless it may not be now. */
static void consider(struct pg_registry *r, const struct seen *pm,
		     int64_t now_ms)
{
	struct pg_refusal *f = find_refusal(r, pm->pid);
	uint32_t uids[4];
	char why[160];

	if (f && f->start != pm->start) {	/* the pid was reused */
		drop_refusal(r, f);
		f = NULL;
	}
	if (pm->pid == r->asked || (f && (!f->retry_ms || f->retry_ms > now_ms)))
		return;
	/* its user's clusters as many as allowed, as the prober found them
	 * (by account): asked again once one of them is gone */
	if (f && f->status == -EUSERS && r->max_clusters_per_uid &&
	    clusters_of(r, f->account) >= r->max_clusters_per_uid)
		return;
	if (r->nclusters == MAX_CLUSTERS) {	/* no room to keep it */
		r->unkept_now++;
		return;
	}
	if (procfs_uids(r->proc_root, pm->pid, uids))
		return;
	if (!f && refusals_of(r, uids[0]) >= MAX_REFUSALS_PER_UID) {
		r->unkept_now++;	/* not asked about: their share is used */
		return;
	}
	if (r->max_clusters_per_uid &&
	    clusters_of(r, uids[0]) >= r->max_clusters_per_uid) {
		snprintf(why, sizeof(why), "uid %u has as many clusters traced "
			 "as max-clusters-per-user allows (%u)", uids[0],
			 r->max_clusters_per_uid);
		refuse(r, pm->pid, uids[0], -EUSERS, why, now_ms + 1000, now_ms);
		if ((f = find_refusal(r, pm->pid))) {
			f->start = pm->start;
			f->account = uids[0];
		}
		return;
	}
	/* (room for every process seen: pg_registry_scan) */
	r->candidates[r->ncandidates++] = (struct candidate){
		.pid = pm->pid, .uid = uids[0], .start = pm->start };
}

static void sweep(struct pg_registry *r, const struct seen *s, size_t n)
{
	size_t i, j = 0;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].missed < MISSED_SCANS)
			r->procs[j++] = r->procs[i];
	r->nprocs = j;
	for (i = 0, j = 0; i < r->nclusters; i++) {
		struct pg_cluster *c = &r->clusters[i];

		const struct seen *pm = seen_find(s, n, c->info.postmaster_pid);

		if (find_proc(r, c->info.postmaster_pid, NULL) &&
		    (!pm || pm->start == c->start)) {
			r->clusters[j++] = *c;
		} else {
			log_info("cluster %u (%s) is gone", c->id, c->info.data_dir);
			pg_names_free(&c->names);
		}
	}
	r->nclusters = j;
}

/* Before a scan's refusals: a refused pid that is gone frees its row (and
 * may come back as anything). */
static void sweep_refusals(struct pg_registry *r, const struct seen *s,
			   size_t n)
{
	size_t i, j;

	for (i = 0, j = 0; i < r->nrefusals; i++)
		if (seen_find(s, n, r->refusals[i].pid))
			r->refusals[j++] = r->refusals[i];
	r->nrefusals = j;
	if (j <= MAX_REFUSALS / 2)	/* told again if it fills again */
		r->full_told = false;
}

int pg_registry_scan(struct pg_registry *r, int64_t now_ms)
{
	struct seen *s = NULL;
	size_t n = 0;
	int err = collect(r, &s, &n);

	if (err)
		return err;
	if (n > r->cap_candidates) {
		struct candidate *nc = realloc(r->candidates, n * sizeof(*nc));

		if (!nc) {
			free(s);
			return -ENOMEM;
		}
		r->candidates = nc;
		r->cap_candidates = n;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].missed < UINT8_MAX)
			r->procs[i].missed++;
	r->ncandidates = 0;
	log_limit_flush(&r->log_limit, now_ms / 1000);
	r->unkept = r->unkept_now;	/* the cycle since the last scan */
	r->unkept_now = 0;
	sweep_refusals(r, s, n);
	for (size_t i = 0; i < n; i++) {
		uint32_t pm = postmaster_of(s, n, s[i].pid);
		struct pg_cluster *c;
		struct pg_proc *p;

		if (!pm)
			continue;
		c = find_cluster_by_postmaster(r, pm);
		if (c && c->start != seen_find(s, n, pm)->start)
			c = NULL;	/* its pid was reused: sweep() ends it */
		if (!c) {
			if (pm == s[i].pid)
				consider(r, &s[i], now_ms);
			continue;
		}
		p = find_proc(r, s[i].pid, NULL);
		if (!p)
			continue;	/* not (yet) known to be traced */
		p->missed = 0;
		if (!p->titled)
			read_title(r, p);
	}
	trim_candidates(r);
	sweep(r, s, n);
	free(s);
	return 0;
}

bool pg_registry_next_probe(struct pg_registry *r, int64_t now_ms,
			    uint32_t *pid)
{
	size_t best = SIZE_MAX;

	(void)now_ms;
	if (r->asked)
		return false;
	/* the user after the last one asked about, round the circle */
	for (size_t i = 0; i < r->ncandidates; i++) {
		const struct candidate *c = &r->candidates[i];
		const struct candidate *b = best == SIZE_MAX ? NULL :
					    &r->candidates[best];
		bool after = c->uid > r->last_uid;

		if (!b || (after && !(b->uid > r->last_uid)) ||
		    ((after == (b->uid > r->last_uid)) && c->uid < b->uid))
			best = i;
	}
	if (best == SIZE_MAX)
		return false;
	*pid = r->candidates[best].pid;
	r->last_uid = r->candidates[best].uid;
	r->asked_uid = r->candidates[best].uid;
	r->asked_start = r->candidates[best].start;
	r->candidates[best] = r->candidates[--r->ncandidates];
	r->asked = *pid;
	return true;
}

/* How long to wait before asking again: doubled each time, capped. */
static void back_off(struct pg_registry *r, const struct pg_cluster_info *info,
		     uint32_t uid, uint32_t first, uint32_t max, int64_t now_ms,
		     bool tell)
{
	struct pg_refusal *f = refusal_for(r, info->postmaster_pid, uid);
	uint32_t wait;

	if (!f)
		return;
	wait = f->backoff_ms ? f->backoff_ms * 2 : first;
	f->start = r->asked_start;
	if (wait > max)
		wait = max;
	f->backoff_ms = wait;
	f->retry_ms = now_ms + wait;
	f->status = info->status;
	f->uid = uid;
	snprintf(f->why, sizeof(f->why), "%s", info->why[0] ? info->why :
		 "postmaster.pid does not name it yet (starting)");
	if (tell && !f->logged) {
		if (may_tell(r, uid, now_ms))
			log_warnx("process %u (uid %u) named postgres: %s; asking "
				  "again in %u s", info->postmaster_pid, uid, f->why,
				  wait / 1000);
		f->logged = true;
	}
}

/*
 * The container and service of a cluster just found, from its
 * postmaster's cgroup file (world-readable: pgoffd reads it itself), if
 * the postmaster is still the one asked about (its start time).
 */
static void name_container(struct pg_registry *r, struct pg_cluster *c)
{
	char who[16], *text;
	uint32_t ppid;
	uint64_t start;
	ssize_t n;

	if (!r->cgroup_lines)
		return;
	snprintf(who, sizeof(who), "%u", c->info.postmaster_pid);
	n = read_cgroup(r->proc_root, who, &text);
	if (n > 0 && !read_stat(r, c->info.postmaster_pid, &ppid, &start) &&
	    start == c->start &&
	    container_parse(text, (size_t)n, r->cgroup_lines,
			    &c->ident.container, c->unit, sizeof(c->unit)))
		log_warnx("cluster %u: its postmaster's cgroup file is not one "
			  "the kernel wrote (a newline in a cgroup's name?): no "
			  "container is named", c->id);
	free(text);
}

/*
 * A prober's answer that is not a cluster: gone (nothing kept), starting
 * (asked again soon, then less often), too slow (backed off), its user
 * at max-clusters-per-user (asked again once one of theirs is gone), or
 * refused for good while the process lives.
 */
static void probed_not_cluster(struct pg_registry *r,
			       const struct pg_cluster_info *info, uint32_t uid,
			       uint64_t start, int64_t now_ms)
{
	const char *why = info->why[0] ? info->why : strerror(-info->status);
	struct pg_refusal *f;

	switch (info->status) {
	case -ENOENT:
		return;
	case -EAGAIN:
		f = refusal_for(r, info->postmaster_pid, uid);
		if (!f)
			return;	/* asked about again at the next scan */
		if (++f->tries < STARTING_TRIES) {
			f->retry_ms = now_ms;	/* the next scan asks again */
			f->start = start;
			f->uid = uid;
			f->status = -EAGAIN;
			snprintf(f->why, sizeof(f->why), "postmaster.pid does "
				 "not name it yet (starting)");
			return;
		}
		back_off(r, info, uid, 1000, STARTING_MAX_MS, now_ms, false);
		return;
	case -ETIMEDOUT:
		back_off(r, info, uid, TIMEOUT_FIRST_MS, TIMEOUT_MAX_MS, now_ms,
			 true);
		return;
	case -EUSERS:	/* its user's clusters as many as allowed, counted
			 * by the prober (by account uid): as consider's */
		refuse(r, info->postmaster_pid, uid, info->status, why,
		       now_ms + 1000, now_ms);
		if ((f = find_refusal(r, info->postmaster_pid))) {
			f->start = start;
			f->account = info->account_uid;
		}
		return;
	default:
		refuse(r, info->postmaster_pid, uid, info->status, why, 0,
		       now_ms);
		if ((f = find_refusal(r, info->postmaster_pid)))
			f->start = start;
		return;
	}
}

/* The log line that says a cluster is traced, and what is known of it. */
static void tell_cluster_found(const struct pg_cluster *c,
			       const struct pg_cluster_info *info)
{
	char account[48] = "";

	if (info->account_uid != info->uid)
		snprintf(account, sizeof(account), ", in a user namespace of "
			 "uid %u", info->account_uid);
	log_info("cluster %u (%s): postmaster %u (uid %u%s%s%s), %s, port %d, "
		 "PostgreSQL %s%s%s%s%s, %u processes traced%s%s%s%s%s%s",
		 c->id, c->ident.id, info->postmaster_pid, info->uid,
		 account, info->account_missing[0] ? "; " : "",
		 info->account_missing,
		 info->data_dir[0] ? info->data_dir : "?", info->port,
		 info->version[0] ? info->version : "?",
		 c->ident.container.id[0] ? ", " : "", c->ident.container.runtime,
		 c->ident.container.id[0] ? " container " : "",
		 c->ident.container.id, info->traced,
		 info->pg_missing[0] ? "; " : "", info->pg_missing,
		 info->why[0] ? "; " : "", info->why,
		 info->has_sysid ? "" : "; its id is made without its system "
		 "identifier: ", info->sysid_missing);
}

const struct pg_cluster *pg_registry_probed(struct pg_registry *r,
					    const struct pg_cluster_info *info,
					    const uint32_t *pids, size_t npids,
					    int64_t now_ms)
{
	struct pg_cluster *c;
	struct pg_refusal *f;
	uint64_t start = r->asked_start;
	/* the user /proc said, not the prober's: it may not have read one */
	uint32_t uid = r->asked_uid;

	if (info->postmaster_pid != r->asked)
		return NULL;	/* not what was asked: ignored */
	r->asked = 0;
	if (info->status) {
		probed_not_cluster(r, info, uid, start, now_ms);
		return NULL;
	}
	if (r->nclusters == MAX_CLUSTERS ||
	    find_cluster_by_postmaster(r, info->postmaster_pid))
		return NULL;
	f = find_refusal(r, info->postmaster_pid);
	if (f)	/* it was starting: no longer a refusal */
		drop_refusal(r, f);
	c = &r->clusters[r->nclusters++];
	memset(c, 0, sizeof(*c));
	c->id = info->id;
	c->start = start;
	c->info = *info;
	if (pg_shmem_names_major(info->major)) {
		c->names.wanted = true;
	} else {
		c->names.status = -ENOTSUP;
		snprintf(c->names.why, sizeof(c->names.why), "PostgreSQL %s "
			 "keeps no names pgoff reads in shared memory",
			 info->version[0] ? info->version : "?");
	}
	cluster_id_make(info->has_sysid, info->system_identifier,
			info->dir_dev, info->dir_ino, c->ident.id);
	c->ident.owner = info->uid;
	name_container(r, c);
	tell_cluster_found(c, info);
	add_proc(r, info->postmaster_pid, c->id);
	for (size_t i = 0; i < npids; i++)
		pg_registry_learn(r, pids[i], c->id);
	return c;
}

static struct pg_cluster *cluster_of(struct pg_registry *r, uint32_t id)
{
	return (struct pg_cluster *)pg_registry_cluster(r, id);
}

void pg_registry_names_wanted(struct pg_registry *r, uint32_t cluster)
{
	struct pg_cluster *c = cluster_of(r, cluster);

	if (c && pg_shmem_names_major(c->info.major))
		c->names.wanted = true;
}

void pg_registry_name_unknown(struct pg_registry *r, uint32_t cluster,
			      uint32_t info)
{
	struct pg_cluster *c = cluster_of(r, cluster);

	if (c && !c->names.wanted && pg_names_may_appear(c->info.major, info) &&
	    pg_shmem_names_major(c->info.major) && !pg_names_find(&c->names, info))
		c->names.wanted = true;
}

void pg_registry_names_wanted_all(struct pg_registry *r)
{
	for (size_t i = 0; i < r->nclusters; i++)
		pg_registry_names_wanted(r, r->clusters[i].id);
}

bool pg_registry_next_names(struct pg_registry *r, int64_t now_ms,
			    uint32_t *cluster, uint32_t *pid)
{
	for (size_t k = 0; k < r->nclusters; k++) {
		size_t i = (r->next_names + k) % r->nclusters;
		struct pg_cluster *c = &r->clusters[i];

		int64_t wait = c->names.backoff_ms ? c->names.backoff_ms :
						     PG_NAMES_REFRESH_MS;

		if (!c->names.wanted || (c->names.asked_ms &&
		    now_ms - c->names.asked_ms < wait))
			continue;
		c->names.wanted = false;
		c->names.asked_ms = now_ms;
		r->next_names = i + 1;
		*cluster = c->id;
		*pid = c->info.postmaster_pid;
		return true;
	}
	return false;
}

void pg_registry_names_answer(struct pg_registry *r, uint32_t cluster,
			      uint32_t pid, const struct pg_run_names *names)
{
	struct pg_cluster *c = cluster_of(r, cluster);
	char why[sizeof(c->names.why)];
	uint32_t before;

	if (!c || c->info.postmaster_pid != pid)
		return;
	before = c->names.n;
	memcpy(why, c->names.why, sizeof(why));
	if (pg_names_take(&c->names, names)) {
		log_warnx("cluster %u: no memory for its run-time names", c->id);
		return;
	}
	/* told once, not at every read */
	if (c->names.status && strcmp(why, c->names.why) != 0)
		log_info("cluster %u: its run-time wait event names cannot be "
			 "read: %s", c->id, c->names.why);
	else if (!c->names.status && c->names.n != before)
		log_info("cluster %u: %u run-time wait event names%s", c->id,
			 c->names.n, c->names.truncated ? " (more not kept)" : "");
}

void pg_registry_title(struct pg_registry *r, uint32_t pid, uint32_t cluster,
		       const char *title)
{
	const struct pg_cluster *c = pg_registry_cluster(r, cluster);
	struct pg_proc *p = find_proc(r, pid, NULL);

	if (!c)
		return;
	if (!p && !(p = add_proc(r, pid, cluster)))
		return;
	p->cluster = cluster;
	if (pg_title_parse(title, (int)c->info.major, &p->title) == 0)
		p->titled = true;
}

const struct pg_proc *pg_registry_proc(struct pg_registry *r, uint32_t pid)
{
	struct pg_proc *p = find_proc(r, pid, NULL);

	if (p && !p->titled)
		read_title(r, p);
	return p;
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

const struct pg_refusal *pg_registry_refusals(const struct pg_registry *r,
					      size_t *n)
{
	*n = r->nrefusals;
	return r->refusals;
}

size_t pg_registry_refusals_unkept(const struct pg_registry *r)
{
	return r->unkept;
}
