// SPDX-License-Identifier: GPL-2.0-only
/* owner_share.c - the record shared between cluster owners; see
 * owner_share.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/record/owner_share.h"
#include "common/log.h"

#define VERSION_LINE	"pgoff-owners 1\n"
/* A saved file longer than this many runs is not pgoffd's. */
#define MAX_RUNS	(1u << 22)

struct run {
	uint32_t owner;			/* index in owners */
	uint64_t first, last;		/* seqs */
	uint64_t bytes;			/* on disk */
};

struct owner {
	uint32_t uid;
	uint64_t bytes;			/* on disk, in the record */
	uint64_t pending;		/* bytes of lines not yet written */
	uint64_t npending;		/* and their events (a line may be
					 * empty) */
	double per_line;		/* its last batch's disk per line byte
					 * (1 before its first) */
	/* in the batch being shared (share_batch) */
	bool in_batch;
	uint64_t batch_lines;		/* its lines' bytes in it */
	uint64_t batch_events;		/* and its events */
	double batch_frac;		/* its share's part of a byte */
	size_t batch_at;		/* where they go in the scratch */
	uint64_t batch_cost;		/* their weight */
	uint64_t oldest;		/* first seq of its oldest run */
	size_t open;			/* its run being added to; SIZE_MAX */
	uint64_t stored, refused;	/* events since start */
};

/* An event admitted, not yet written. */
struct pending {
	uint32_t owner;
	uint32_t len;
	uint64_t seq;
	size_t off;			/* its line in lines; SIZE_MAX: not
					 * kept (by length only) */
};

struct owner_share {
	struct run *runs;		/* by first seq */
	size_t nruns, cap;
	struct owner *owners;
	size_t nowners;
	size_t in_record;		/* owners with bytes or pending */
	uint64_t bytes;
	struct pending *pend;		/* by seq */
	size_t npend, pend_cap;
	char *lines;			/* the pending events' lines */
	size_t lines_len, lines_cap;
	char *scratch;			/* a batch's lines, by owner */
	size_t scratch_cap;
	uint32_t *batch;		/* the owners in it */
	owner_share_cost_fn cost;	/* NULL: shared by length */
	void *cost_ctx;
	uint64_t refused;
	bool dirty;
};

int owner_share_new(struct owner_share **out)
{
	struct owner_share *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->owners = calloc(OWNER_SHARE_MAX_OWNERS + 1, sizeof(*s->owners));
	s->batch = calloc(OWNER_SHARE_MAX_OWNERS + 1, sizeof(*s->batch));
	if (!s->owners || !s->batch) {
		free(s->owners);
		free(s->batch);
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void owner_share_free(struct owner_share *s)
{
	if (!s)
		return;
	free(s->runs);
	free(s->owners);
	free(s->pend);
	free(s->lines);
	free(s->scratch);
	free(s->batch);
	free(s);
}

void owner_share_set_cost_fn(struct owner_share *s, owner_share_cost_fn fn,
			     void *ctx)
{
	s->cost = fn;
	s->cost_ctx = ctx;
}

/* buf grown to hold need bytes; false: no memory */
static bool room_for(char **buf, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	char *b;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	b = realloc(*buf, c);
	if (!b)
		return false;
	*buf = b;
	*cap = c;
	return true;
}

/* uid's entry, made if new; past the cap, the one for OTHER. */
static struct owner *owner_of(struct owner_share *s, uint32_t uid)
{
	size_t i;

	for (i = 0; i < s->nowners; i++)
		if (s->owners[i].uid == uid)
			return &s->owners[i];
	if (s->nowners >= OWNER_SHARE_MAX_OWNERS && uid != OWNER_SHARE_OTHER)
		return owner_of(s, OWNER_SHARE_OTHER);
	s->owners[i] = (struct owner){ .uid = uid, .open = SIZE_MAX,
				       .per_line = 1.0 };
	s->nowners++;
	return &s->owners[i];
}

/* Whether o has events in the record, written or about to be. */
static bool present(const struct owner *o)
{
	return o->bytes || o->npending;
}

/* Whether another owner than o has events in the segment retention
 * removes next (seqs up to last; 0: it removes none). */
static bool others_in_next_removed(const struct owner_share *s,
				   const struct owner *o, uint64_t last)
{
	if (!last)
		return false;
	for (size_t i = 0; i < s->nowners; i++) {
		const struct owner *p = &s->owners[i];

		if (p != o && present(p) && p->oldest <= last)
			return true;
	}
	return false;
}

static int add_run(struct owner_share *s, struct owner *o, uint64_t seq)
{
	if (s->nruns == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct run *r = reallocarray(s->runs, cap, sizeof(*r));

		if (!r)
			return -ENOMEM;
		s->runs = r;
		s->cap = cap;
	}
	s->runs[s->nruns] = (struct run){ .owner = (uint32_t)(o - s->owners),
					  .first = seq, .last = seq };
	o->open = s->nruns++;
	if (!present(o))
		o->oldest = seq;
	return 0;
}

static int add_pending(struct owner_share *s, const struct owner *o,
		       uint64_t seq, const char *line, uint64_t len)
{
	size_t off = SIZE_MAX;

	if (s->npend == s->pend_cap) {
		size_t cap = s->pend_cap ? s->pend_cap * 2 : 256;
		struct pending *p = reallocarray(s->pend, cap, sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pend = p;
		s->pend_cap = cap;
	}
	if (line && len <= UINT32_MAX &&
	    (!len || room_for(&s->lines, &s->lines_cap, s->lines_len + len))) {
		off = s->lines_len;
		if (len)
			memcpy(s->lines + off, line, len);
		s->lines_len += len;
	}
	s->pend[s->npend++] = (struct pending){
		.owner = (uint32_t)(o - s->owners), .seq = seq, .off = off,
		.len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len };
	return 0;
}

/* o's part, on disk or about to be */
static double part_of(const struct owner *o, uint64_t more)
{
	return (double)o->bytes + (double)(o->pending + more) * o->per_line;
}

bool owner_share_admit(struct owner_share *s,
		       const struct owner_share_record *rec, uint32_t uid,
		       uint64_t seq, const char *line, uint64_t len)
{
	struct owner *o = owner_of(s, uid);
	bool in = present(o);
	size_t n = s->in_record + !in;
	struct run *r;

	if (n > 1 && part_of(o, len) > (double)(rec->cap / n) &&
	    others_in_next_removed(s, o, rec->next_removed_last_seq)) {
		o->refused++;
		s->refused++;
		return false;
	}
	o->stored++;
	r = o->open != SIZE_MAX ? &s->runs[o->open] : NULL;
	if (((!r || r->bytes >= OWNER_SHARE_RUN_BYTES) && add_run(s, o, seq)) ||
	    add_pending(s, o, seq, line, len))
		return true;	/* stored, not told apart: memory */
	s->runs[o->open].last = seq;
	s->in_record += !in;
	o->pending += len;
	o->npending++;
	s->dirty = true;
	return true;
}

void owner_share_not_taken(struct owner_share *s, uint64_t seq)
{
	struct owner *o;

	if (!s->npend || s->pend[s->npend - 1].seq != seq)
		return;
	o = &s->owners[s->pend[--s->npend].owner];
	o->pending -= s->pend[s->npend].len;
	o->npending--;
	if (s->pend[s->npend].off != SIZE_MAX)
		s->lines_len = s->pend[s->npend].off;
	s->in_record -= !present(o);
}

/*
 * The weights of the owners in the batch of the first k pending events:
 * with several owners and a cost function, what each owner's lines of it
 * take compressed alone (a batch is compressed as one, so its bytes
 * cannot be told apart by owner: an owner whose lines compress badly
 * pays for it); otherwise, or where a line was not kept, their length.
 */
static void weigh_batch(struct owner_share *s, size_t k, size_t nbatch)
{
	size_t at = 0;

	for (size_t j = 0; j < nbatch; j++) {
		struct owner *o = &s->owners[s->batch[j]];

		o->batch_cost = o->batch_lines;
		o->batch_at = at;
		at += o->batch_lines;
	}
	if (nbatch < 2 || !s->cost)
		return;
	for (size_t i = 0; i < k; i++)	/* a line not kept: all by length */
		if (s->pend[i].off == SIZE_MAX)
			return;
	if (!room_for(&s->scratch, &s->scratch_cap, at))
		return;
	for (size_t i = 0; i < k; i++) {
		struct owner *o = &s->owners[s->pend[i].owner];

		if (s->pend[i].len)
			memcpy(s->scratch + o->batch_at,
			       s->lines + s->pend[i].off, s->pend[i].len);
		o->batch_at += s->pend[i].len;
	}
	for (size_t j = 0; j < nbatch; j++) {
		struct owner *o = &s->owners[s->batch[j]];
		ssize_t n;

		if (!o->batch_lines)
			continue;
		n = s->cost(s->cost_ctx, s->scratch + o->batch_at -
			    o->batch_lines, o->batch_lines);
		if (n > 0)
			o->batch_cost = (uint64_t)n;
	}
}

/* Batch owners by the part of a byte their share was rounded down by,
 * the largest first. */
static int by_fraction(const void *a, const void *b, void *ctx)
{
	const struct owner *owners = ctx;
	double x = owners[*(const uint32_t *)a].batch_frac;
	double y = owners[*(const uint32_t *)b].batch_frac;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The owner in the batch with the most bytes. */
static struct owner *batch_largest(struct owner_share *s, size_t nbatch)
{
	struct owner *big = &s->owners[s->batch[0]];

	for (size_t j = 1; j < nbatch; j++)
		if (s->owners[s->batch[j]].batch_cost > big->batch_cost)
			big = &s->owners[s->batch[j]];
	return big;
}

/* bytes shared by the owners' weights, to the byte: each part rounded
 * down, what that leaves a byte each to the largest parts of a byte;
 * then, where there are as many bytes as owners, an owner left with none
 * takes one from the largest, so that it stays in the record while its
 * events are. The batch's order is not kept. */
static void share_batch(struct owner_share *s, size_t nbatch, uint64_t bytes)
{
	uint64_t given = 0;
	double total = 0;
	size_t j;

	for (j = 0; j < nbatch; j++)
		total += (double)s->owners[s->batch[j]].batch_cost;
	for (j = 0; j < nbatch; j++) {
		struct owner *o = &s->owners[s->batch[j]];
		double exact = total > 0 ? (double)bytes *
			       (double)o->batch_cost / total : 0;
		uint64_t part = (uint64_t)exact;

		if (part > bytes - given)
			part = bytes - given;
		o->batch_frac = exact - (double)part;
		o->batch_cost = part;
		given += part;
	}
	qsort_r(s->batch, nbatch, sizeof(*s->batch), by_fraction, s->owners);
	for (j = 0; given < bytes; j = (j + 1) % nbatch, given++)
		s->owners[s->batch[j]].batch_cost++;
	for (j = 0; j < nbatch && bytes >= nbatch; j++) {
		struct owner *o = &s->owners[s->batch[j]];
		struct owner *big = batch_largest(s, nbatch);

		if (!o->batch_cost && big->batch_cost > 1) {
			o->batch_cost = 1;
			big->batch_cost--;
		}
	}
}

/* The first k pending events are written: they and their lines go, the
 * lines of those left move to the front. */
static void drop_written(struct owner_share *s, size_t k)
{
	size_t from = s->lines_len;

	for (size_t i = k; i < s->npend; i++)
		if (s->pend[i].off != SIZE_MAX) {
			from = s->pend[i].off;
			break;
		}
	if (from) {
		memmove(s->lines, s->lines + from, s->lines_len - from);
		s->lines_len -= from;
	}
	for (size_t i = k; i < s->npend; i++)
		if (s->pend[i].off != SIZE_MAX)
			s->pend[i].off -= from;
	memmove(s->pend, s->pend + k, (s->npend - k) * sizeof(*s->pend));
	s->npend -= k;
}

void owner_share_written(struct owner_share *s, uint64_t last_seq,
			 uint64_t bytes)
{
	size_t k = 0, nbatch = 0;

	for (; k < s->npend && s->pend[k].seq <= last_seq; k++) {
		struct owner *o = &s->owners[s->pend[k].owner];

		if (!o->in_batch) {
			o->in_batch = true;
			o->batch_lines = 0;
			o->batch_events = 0;
			s->batch[nbatch++] = s->pend[k].owner;
		}
		o->batch_lines += s->pend[k].len;
		o->batch_events++;
	}
	if (!k)
		return;
	if (bytes)	/* (0: the write failed, its events are dropped) */
		weigh_batch(s, k, nbatch);
	share_batch(s, nbatch, bytes);
	for (size_t j = 0; j < nbatch; j++) {
		struct owner *o = &s->owners[s->batch[j]];
		uint64_t part = o->batch_cost;

		o->in_batch = false;
		o->pending -= o->batch_lines;
		o->npending -= o->batch_events;
		if (bytes && o->batch_lines)
			o->per_line = (double)part / (double)o->batch_lines;
		if (o->open != SIZE_MAX)
			s->runs[o->open].bytes += part;
		o->bytes += part;
		s->bytes += part;
		s->in_record -= !present(o);
	}
	drop_written(s, k);
}

void owner_share_forget(struct owner_share *s, uint64_t first_seq)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nowners; i++)
		s->owners[i].open = SIZE_MAX;
	for (size_t i = 0; i < s->nruns; i++) {
		struct run *r = &s->runs[i];
		struct owner *o = &s->owners[r->owner];

		if (first_seq && r->last < first_seq) {
			bool had = present(o);

			o->bytes -= r->bytes;
			s->bytes -= r->bytes;
			s->in_record -= had && !present(o);
			s->dirty = true;
			continue;
		}
		/* runs stay by first seq: an owner's first kept is its oldest */
		if (o->open == SIZE_MAX)
			o->oldest = r->first;
		o->open = k;
		s->runs[k++] = *r;
	}
	s->nruns = k;
}

uint64_t owner_share_bytes(const struct owner_share *s)
{
	return s->bytes;
}

uint64_t owner_share_refused(const struct owner_share *s)
{
	return s->refused;
}

bool owner_share_dirty(const struct owner_share *s)
{
	return s->dirty;
}

int owner_share_save(struct owner_share *s, int dirfd, const char *name)
{
	char tmp[256];
	FILE *f;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		return err;
	}
	fputs(VERSION_LINE, f);
	for (size_t i = 0; i < s->nruns; i++) {
		const struct run *r = &s->runs[i];

		fprintf(f, "%" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			s->owners[r->owner].uid, r->first, r->last, r->bytes);
	}
	/* on disk before the rename: after a power cut, the old file or
	 * the new one, never a torn one that would count for no owner */
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name))
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	else
		s->dirty = false;
	return err;
}

/* One saved run added as it was; false when it does not fit those
 * before it (not pgoffd's file). */
static bool load_run(struct owner_share *s, uint32_t uid, uint64_t first,
		     uint64_t last, uint64_t bytes)
{
	struct owner *o;

	if (first > last || (s->nruns && first < s->runs[s->nruns - 1].first) ||
	    s->nruns >= MAX_RUNS || bytes > (1ull << 40))
		return false;
	o = owner_of(s, uid);
	if (add_run(s, o, first))
		return false;
	s->runs[o->open].last = last;
	s->runs[o->open].bytes = bytes;
	s->in_record += !o->bytes && bytes;
	o->bytes += bytes;
	s->bytes += bytes;
	return true;
}

int owner_share_load(struct owner_share *s, int dirfd, const char *name)
{
	char line[128];
	bool ok = true;
	FILE *f;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (!fgets(line, sizeof(line), f) || strcmp(line, VERSION_LINE))
		ok = false;
	while (ok && fgets(line, sizeof(line), f)) {
		uint32_t uid;
		uint64_t first, last, bytes;
		int end = 0;

		ok = sscanf(line, "%" SCNu32 " %" SCNu64 " %" SCNu64 " %" SCNu64
			    "\n%n", &uid, &first, &last, &bytes, &end) == 4 &&
		     line[end] == '\0' && load_run(s, uid, first, last, bytes);
	}
	fclose(f);
	for (size_t i = 0; i < s->nowners; i++)
		s->owners[i].open = SIZE_MAX;	/* new events start new runs */
	if (ok)
		return 0;
	log_warnx("record store: %s is not a file of owners' runs that pgoffd "
		  "wrote; what is stored counts for no owner", name);
	free(s->runs);
	s->runs = NULL;
	s->nruns = s->cap = s->nowners = s->in_record = 0;
	s->bytes = 0;
	return -EINVAL;
}

json_object *owner_share_report(const struct owner_share *s,
				const struct owner_share_record *rec)
{
	json_object *a = json_object_new_array();
	size_t n = s->in_record ? s->in_record : 1;

	for (size_t i = 0; i < s->nowners; i++) {
		const struct owner *o = &s->owners[i];
		json_object *e = json_object_new_object();
		bool special = o->uid == OWNER_SHARE_OTHER ||
			       o->uid == OWNER_SHARE_UNKNOWN;

		json_object_object_add(e, "uid", special ? NULL :
				       json_object_new_int64(o->uid));
		if (special)
			json_object_object_add(e, "owner", json_object_new_string(
				o->uid == OWNER_SHARE_OTHER ? "other" : "unknown"));
		json_object_object_add(e, "bytes",
				       json_object_new_int64((int64_t)o->bytes));
		json_object_object_add(e, "share_bytes",
				       json_object_new_int64((int64_t)(rec->cap / n)));
		json_object_object_add(e, "events_stored",
				       json_object_new_int64((int64_t)o->stored));
		json_object_object_add(e, "events_refused",
				       json_object_new_int64((int64_t)o->refused));
		json_object_object_add(e, "disk_per_line_byte",
			json_object_new_double(
				(double)(int64_t)(o->per_line * 1e4 + 0.5) / 1e4));
		json_object_array_add(a, e);
	}
	return a;
}
