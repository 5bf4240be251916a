// SPDX-License-Identifier: GPL-2.0-only
/* agg_record.c - the per-second aggregation record; see agg_record.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "broker/record/agg_record.h"
#include "broker/grow_buf.h"

int agg_vec_push(struct agg_vec *a, const struct agg_row *row)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct agg_row *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = *row;
	return 0;
}

void agg_vec_free(struct agg_vec *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_key(const struct agg_row *a, const struct agg_row *b)
{
	int d;

	/* what rows by pid are told apart by (aggregate.c's identity) */
	if ((d = cmp_u32(a->pid, b->pid)) ||
	    (d = cmp_u64(a->query_id, b->query_id)) ||
	    (d = cmp_u32(a->query_folded, b->query_folded)) ||
	    (d = cmp_u32(a->pg_known, b->pg_known)) ||
	    (d = cmp_u32(a->pg_wait_event_info, b->pg_wait_event_info)) ||
	    (d = cmp_u32(a->idle, b->idle)))
		return d;
	if (a->idle && ((d = cmp_u32(a->pg_status, b->pg_status)) ||
			(d = cmp_u32(a->pg_state, b->pg_state))))
		return d;
	return cmp_u32(a->wait, b->wait);
}

static int cmp_key_q(const void *a, const void *b)
{
	return cmp_key(a, b);
}

void aggrec_sort(struct agg_row *rows, size_t n)
{
	if (n)	/* qsort(NULL, 0, …) is undefined */
		qsort(rows, n, sizeof(*rows), cmp_key_q);
}

/* cur minus prev; false when nothing is new. */
static bool row_sub(struct agg_row *d, const struct agg_row *prev)
{
	bool any = false;

	/* pid reused: all of it is new (an on_cpu row has no count: its
	 * time, which has no part going on, went down) */
	if (d->count < prev->count ||
	    (d->wait == PGOFF_WAIT_ON_CPU && d->total_ns < prev->total_ns))
		return d->count || d->total_ns;
	d->count -= prev->count;
	d->total_ns = d->total_ns > prev->total_ns ?
		      d->total_ns - prev->total_ns : 0;
	for (size_t i = 0; i < PGOFF_AGG_BUCKETS; i++)
		d->hist[i] = d->hist[i] > prev->hist[i] ?
			     d->hist[i] - prev->hist[i] : 0;
	any = d->count || d->total_ns;
	return any;
}

int aggrec_delta(const struct agg_row *prev, size_t np,
		 const struct agg_row *cur, size_t nc, struct agg_vec *out)
{
	size_t i = 0;

	for (size_t j = 0; j < nc; j++) {
		struct agg_row d = cur[j];
		int c = 1;

		while (i < np && (c = cmp_key(&prev[i], &cur[j])) < 0)
			i++;
		if (i < np && c == 0 ? !row_sub(&d, &prev[i]) :
		    !(d.count || d.total_ns))
			continue;
		if (agg_vec_push(out, &d))
			return -ENOMEM;
	}
	return 0;
}

/* LEB128: small numbers, which most are, take one byte */
static void put_u(struct grow_buf *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n] = v & 0x7f;
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	grow_buf_put(b, t, n);
}

static void put_s(struct grow_buf *b, const char *s, size_t max)
{
	size_t len = strnlen(s, max - 1);

	put_u(b, len);
	grow_buf_put(b, s, len);
}

static bool same_proc(const struct agg_row *a, const struct agg_row *b)
{
	return a->pid == b->pid && a->cluster == b->cluster &&
	       a->pg_major == b->pg_major &&
	       !strcmp(a->data_dir, b->data_dir) &&
	       !cluster_ident_cmp(&a->ident, &b->ident) &&
	       !memcmp(&a->title, &b->title, sizeof(a->title));
}

/* A row's statement in one number: folded, status read, st_state. */
#define STMT_FOLDED	1u
#define STMT_STATUS	2u
#define STMT_STATE_SHIFT 2	/* 3 bits */
#define STMT_IDLE	(1u << 5)

/*
 * Layout: version, interval_ns, then the processes (pid, cluster,
 * PostgreSQL major, data directory, cluster_name, backend type, user,
 * database, and from version 3 the cluster's id, owner, container
 * runtime, id and pod UID), then the rows (index of their process, pg_known, wait event
 * info, wait, query id and statement bits (from version 2), count,
 * time, then the histogram's non-empty buckets as (bucket, count)
 * pairs). Numbers are LEB128, strings length-prefixed.
 */
int aggrec_encode(const struct agg_row *rows, size_t n, uint64_t interval_ns,
		  unsigned char **out, size_t *len)
{
	struct grow_buf b = { 0 };
	size_t *proc = malloc((n ? n : 1) * sizeof(*proc));
	size_t *first = malloc((n ? n : 1) * sizeof(*first));
	size_t nprocs = 0;

	if (!proc || !first)
		goto nomem;
	/* the processes: rows come sorted by pid (aggrec_sort), so a row is
	 * of the last process or of a new one; a search of all would cost
	 * rows x processes, and one user may have 4,096 processes */
	for (size_t i = 0; i < n; i++) {
		if (!nprocs || !same_proc(&rows[first[nprocs - 1]], &rows[i]))
			first[nprocs++] = i;
		proc[i] = nprocs - 1;
	}
	put_u(&b, AGGREC_VERSION);
	put_u(&b, interval_ns);
	put_u(&b, nprocs);
	for (size_t k = 0; k < nprocs; k++) {
		const struct agg_row *r = &rows[first[k]];

		put_u(&b, r->pid);
		put_u(&b, r->cluster);
		put_u(&b, (uint64_t)(r->pg_major > 0 ? r->pg_major : 0));
		put_s(&b, r->data_dir, sizeof(r->data_dir));
		put_s(&b, r->title.cluster_name, sizeof(r->title.cluster_name));
		put_s(&b, r->title.backend_type, sizeof(r->title.backend_type));
		put_s(&b, r->title.user, sizeof(r->title.user));
		put_s(&b, r->title.database, sizeof(r->title.database));
		put_s(&b, r->ident.id, sizeof(r->ident.id));
		put_u(&b, r->ident.owner);
		put_s(&b, r->ident.container.runtime,
		      sizeof(r->ident.container.runtime));
		put_s(&b, r->ident.container.id, sizeof(r->ident.container.id));
		put_s(&b, r->ident.container.pod_uid,
		      sizeof(r->ident.container.pod_uid));
	}
	put_u(&b, n);
	for (size_t i = 0; i < n; i++) {
		const struct agg_row *r = &rows[i];
		size_t buckets = 0;

		put_u(&b, proc[i]);
		put_u(&b, r->pg_known);
		put_u(&b, r->pg_wait_event_info);
		put_u(&b, r->wait);
		put_u(&b, r->query_id);
		put_u(&b, (r->query_folded ? STMT_FOLDED : 0) |
			  (r->pg_status ? STMT_STATUS : 0) |
			  (uint64_t)r->pg_state << STMT_STATE_SHIFT |
			  (r->idle ? STMT_IDLE : 0));
		put_u(&b, r->count);
		put_u(&b, r->total_ns);
		for (size_t h = 0; h < PGOFF_AGG_BUCKETS; h++)
			buckets += r->hist[h] != 0;
		put_u(&b, buckets);
		for (size_t h = 0; h < PGOFF_AGG_BUCKETS; h++)
			if (r->hist[h]) {
				put_u(&b, h);
				put_u(&b, r->hist[h]);
			}
	}
	if (b.failed)
		goto nomem;
	free(proc);
	free(first);
	*out = b.p;
	*len = b.n;
	return 0;
nomem:
	free(b.p);
	free(proc);
	free(first);
	return -ENOMEM;
}

struct reader {
	const unsigned char *p;
	size_t n, pos;
	bool bad;
};

static uint64_t get_u(struct reader *r, uint64_t max)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; !r->bad; shift += 7) {
		unsigned char c;

		if (r->pos == r->n || shift > 63) {
			r->bad = true;
			break;
		}
		c = r->p[r->pos++];
		if (shift == 63 && (c & 0x7e)) {	/* past 64 bits */
			r->bad = true;
			break;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	if (v > max)
		r->bad = true;
	return r->bad ? 0 : v;
}

static void get_s(struct reader *r, char *dst, size_t size)
{
	size_t len = (size_t)get_u(r, size - 1);

	if (r->bad || r->n - r->pos < len) {
		r->bad = true;
		return;
	}
	memcpy(dst, r->p + r->pos, len);
	dst[len] = '\0';
	if (memchr(dst, '\0', len))	/* a NUL inside: not ours */
		r->bad = true;
	r->pos += len;
}

int aggrec_decode(const void *buf, size_t len, uint64_t *interval_ns,
		  struct agg_vec *out)
{
	struct reader r = { .p = buf, .n = len };
	struct agg_row *procs = NULL;
	size_t nprocs, nrows, start = out->n;
	int err = -EINVAL;
	uint64_t version = get_u(&r, AGGREC_VERSION), stmt;

	if (version < 1)
		return -EINVAL;
	*interval_ns = get_u(&r, UINT64_MAX);
	/* each process and row takes some bytes: a count past that lies */
	nprocs = (size_t)get_u(&r, len);
	if (r.bad)
		return -EINVAL;
	procs = calloc(nprocs ? nprocs : 1, sizeof(*procs));
	if (!procs)
		return -ENOMEM;
	for (size_t k = 0; k < nprocs && !r.bad; k++) {
		struct agg_row *p = &procs[k];

		p->pid = (uint32_t)get_u(&r, UINT32_MAX);
		p->cluster = (uint32_t)get_u(&r, UINT32_MAX);
		p->pg_major = (int)get_u(&r, 1000);
		get_s(&r, p->data_dir, sizeof(p->data_dir));
		get_s(&r, p->title.cluster_name, sizeof(p->title.cluster_name));
		get_s(&r, p->title.backend_type, sizeof(p->title.backend_type));
		get_s(&r, p->title.user, sizeof(p->title.user));
		get_s(&r, p->title.database, sizeof(p->title.database));
		if (version < 3)
			continue;
		get_s(&r, p->ident.id, sizeof(p->ident.id));
		p->ident.owner = (uint32_t)get_u(&r, UINT32_MAX);
		get_s(&r, p->ident.container.runtime,
		      sizeof(p->ident.container.runtime));
		get_s(&r, p->ident.container.id, sizeof(p->ident.container.id));
		get_s(&r, p->ident.container.pod_uid,
		      sizeof(p->ident.container.pod_uid));
	}
	nrows = (size_t)get_u(&r, len);
	for (size_t i = 0; i < nrows && !r.bad; i++) {
		size_t k = (size_t)get_u(&r, nprocs ? nprocs - 1 : 0);
		struct agg_row row;
		size_t buckets;

		if (!nprocs || r.bad) {
			r.bad = true;
			break;
		}
		row = procs[k];
		row.pg_known = get_u(&r, 1);
		row.pg_wait_event_info = (uint32_t)get_u(&r, UINT32_MAX);
		row.wait = (enum pgoff_wait)get_u(&r, PGOFF_WAIT__COUNT - 1);
		if (version >= 2) {
			row.query_id = get_u(&r, UINT64_MAX);
			stmt = get_u(&r, 0xff);
			row.query_folded = stmt & STMT_FOLDED;
			row.pg_status = stmt & STMT_STATUS;
			row.pg_state = (uint8_t)(stmt >> STMT_STATE_SHIFT) & 7;
			row.idle = stmt & STMT_IDLE;
		}
		row.count = get_u(&r, UINT64_MAX);
		row.total_ns = get_u(&r, UINT64_MAX);
		buckets = (size_t)get_u(&r, PGOFF_AGG_BUCKETS);
		for (size_t h = 0; h < buckets && !r.bad; h++) {
			size_t b = (size_t)get_u(&r, PGOFF_AGG_BUCKETS - 1);

			row.hist[b] = get_u(&r, UINT64_MAX);
		}
		if (r.bad)
			break;
		if (agg_vec_push(out, &row)) {
			err = -ENOMEM;
			r.bad = true;
			break;
		}
	}
	if (!r.bad && r.pos != r.n)
		r.bad = true;	/* bytes after the rows: not ours */
	free(procs);
	if (r.bad) {
		out->n = start;
		return err;
	}
	return 0;
}
