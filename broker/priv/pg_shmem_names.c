// SPDX-License-Identifier: GPL-2.0-only
/*
 * pg_shmem_names.c - run-time wait event names from a server's shared
 * memory; see pg_shmem_names.h.
 *
 * How a name is found, per major (x86-64 layouts, byte offsets):
 *
 * The main segment starts with PGShmemHeader (storage/pg_shmem.h, in
 * Debian's server-dev headers of 17.12, 18.6, 19~rc1): int32 magic
 * 679834894 at 0, Size totalsize at 8; in 17 and 18 the ShmemIndex's
 * HASHHDR at 32 (void *index); in 19 Size content_offset at 16, where
 * shmem.c's ShmemAllocatorData starts, whose HASHHDR *index is at 16
 * (19~rc1's InitShmemAllocator stores it there, its index_size at 24).
 *
 * ShmemIndex (storage/ipc/shmem.c) is a shared dynahash of
 * ShmemIndexEnt: char key[SHMEM_INDEX_KEYSIZE = 48], void *location at
 * 48, Size size at 56 (17, 18: shmem.h; 19: an 80-byte entry with the
 * same three first, as 19~rc1's InitShmemAllocator and
 * pg_get_shmem_allocations use it). It names the tables read here:
 *  - "WaitEventCustom hash by wait event information"
 *    (utils/activity/wait_event.c, 17-19): a dynahash of
 *    WaitEventCustomEntryByInfo { uint32 wait_event_info; char
 *    wait_event_name[NAMEDATALEN]; }, 68 bytes, key 4;
 *  - "LWLock tranches" (storage/lmgr/lwlock.c, 19): struct
 *    LWLockTrancheShmemData { struct { char name[NAMEDATALEN]; int
 *    main_array_idx; } user_defined[256]; int num_user_defined; ... },
 *    the count at 256 * 68 = 17408; tranche id =
 *    LWTRANCHE_FIRST_USER_DEFINED + index (19~rc1's LWLockNewTrancheId).
 * In 14-18 the tranches an extension requested with
 * RequestNamedLWLockTranche are in shared memory too, but ShmemIndex
 * does not name them: the postmaster's exported variables
 * NamedLWLockTrancheArray (a pointer) and NamedLWLockTrancheRequests (a
 * count) do; each entry is NamedLWLockTranche { int trancheId; char
 * *trancheName; } (storage/lwlock.h, the same in 15.18, 17.12, 18.6),
 * the name in the segment (lwlock.c InitializeLWLocks). Tranches an
 * extension makes later (LWLockNewTrancheId) are named in one backend's
 * memory only: other backends show "extension", as pgoff does.
 *
 * A dynahash (utils/hash/dynahash.c) in shared memory: its HASHHDR
 * (private to dynahash.c) starts with 32 FreeListData of 24 bytes, then
 * long dsize at 0x300, long nsegs at 0x308, uint32 max_bucket at 0x310,
 * Size keysize at 0x320, Size entrysize at 0x328; in 14-18, long ssize
 * at 0x340 and int sshift at 0x348 (18.6's and 15.18's dynahash.c, the
 * same; the 17.12 and 18.6 binaries' hash_seq_search read max_bucket at
 * 0x310 and hash_create sets ssize and sshift there), and the directory
 * (HASHSEGMENT[dsize]) right after the 0x350-byte header (ShmemInitHash).
 * In 19 segments have a fixed 256 buckets and the directory's address is
 * kept in the header at 0x348 (19~rc1's hash_create and hash_seq_search:
 * its hsearch.h no longer has ssize). A bucket chains HASHELEMENT {
 * HASHELEMENT *link; uint32 hashvalue; }, the entry after it at 16
 * (MAXALIGN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/priv/pg_shmem_names.h"

#define PG_SHMEM_MAGIC		679834894
#define SEG_HEADER_LEN		64

/* Bounds on what a segment can make the reader do. */
#define MAX_BUCKETS		65536	/* of one dynahash */
#define MAX_ELEMENTS		8192	/* entries visited in one dynahash */
#define MAX_TRANCHES		256	/* named tranches, 14-18; 19's array */

#define PG_CLASS_LWLOCK		0x01u
#define PG_CLASS_EXTENSION	0x07u
#define PG_CLASS_INJECTION	0x0Bu

#define INDEX_KEY_LEN		48	/* SHMEM_INDEX_KEYSIZE */
#define INDEX_ENTRY_NEED	64	/* key, location, size */
#define ELEMENT_HEADER		16	/* MAXALIGN(sizeof(HASHELEMENT)) */
#define CUSTOM_ENTRY		(4 + PG_RUN_NAME_LEN)

#define CUSTOM_TABLE		"WaitEventCustom hash by wait event information"
#define TRANCHE_TABLE		"LWLock tranches"

/* HASHHDR, as far as a walk needs it. */
struct dh_layout {
	uint32_t hdr_len;		/* bytes of HASHHDR read */
	uint32_t dsize, nsegs, max_bucket, keysize, entrysize;
	int32_t ssize, sshift;		/* -1: fixed_sshift */
	uint32_t fixed_sshift;
	int32_t dir;			/* the directory's pointer; -1: the
					 * directory follows the header */
};

static const struct dh_layout dh_14 = {
	.hdr_len = 0x350, .dsize = 0x300, .nsegs = 0x308, .max_bucket = 0x310,
	.keysize = 0x320, .entrysize = 0x328, .ssize = 0x340, .sshift = 0x348,
	.dir = -1,
};

static const struct dh_layout dh_19 = {
	.hdr_len = 0x350, .dsize = 0x300, .nsegs = 0x308, .max_bucket = 0x310,
	.keysize = 0x320, .entrysize = 0x328, .ssize = -1, .sshift = -1,
	.fixed_sshift = 8, .dir = 0x348,
};

struct shm_layout {
	int major;
	const struct dh_layout *hash;	/* NULL: ShmemIndex is not read */
	int32_t index_at;		/* PGShmemHeader.index; -1: in 19's
					 * allocator data */
	bool custom;			/* custom wait events (17+) */
	bool tranche_vars;		/* NamedLWLockTrancheArray (14-18) */
	bool tranche_table;		/* "LWLock tranches" (19) */
};

static const struct shm_layout layouts[] = {
	{ 14, NULL, 0, false, true, false },
	{ 15, NULL, 0, false, true, false },
	{ 16, NULL, 0, false, true, false },
	{ 17, &dh_14, 32, true, true, false },
	{ 18, &dh_14, 32, true, true, false },
	{ 19, &dh_19, -1, true, false, true },
};

static const struct shm_layout *layout_of(int major)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major)
			return &layouts[i];
	return NULL;
}

int pg_shmem_names_major(int major)
{
	return layout_of(major) != NULL;
}

/* ---- reads ---- */

struct reader {
	const struct pg_shm_view *v;
	struct pg_run_names *out;
	int first_tranche;
};

static int fail(struct reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	if (r->out->status)	/* the first reason stands */
		return r->out->status;
	va_start(ap, fmt);
	vsnprintf(r->out->why, sizeof(r->out->why), fmt, ap);
	va_end(ap);
	r->out->status = err;
	return err;
}

static bool in_segment(const struct pg_shm_view *v, uint64_t addr, uint64_t len)
{
	return addr >= v->seg_lo && addr <= v->seg_hi && len <= v->seg_hi - addr;
}

static int pread_all(const struct pg_shm_view *v, uint64_t addr, void *buf,
		     size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(v->fd, (char *)buf + got, len - got,
				  (off_t)(addr + got) + v->delta);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* len bytes at addr, which must lie inside the segment. */
static int rd(struct reader *r, uint64_t addr, void *buf, size_t len,
	      const char *what)
{
	int err;

	if (!in_segment(r->v, addr, len))
		return fail(r, -EINVAL, "%s at 0x%llx (%zu bytes) is outside "
			    "the shared memory segment", what,
			    (unsigned long long)addr, len);
	err = pread_all(r->v, addr, buf, len);
	if (err)
		return fail(r, -EIO, "cannot read %s at 0x%llx: %s", what,
			    (unsigned long long)addr, strerror(-err));
	return 0;
}

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

int pg_shmem_segment_check(const struct pg_shm_view *v)
{
	unsigned char h[SEG_HEADER_LEN];
	int err;

	if (v->seg_hi <= v->seg_lo || v->seg_hi - v->seg_lo < sizeof(h))
		return -ENOENT;
	err = pread_all(v, v->seg_lo, h, sizeof(h));
	if (err)
		return err;
	/* the small SysV segment of shared_memory_type = mmap holds a copy
	 * of the header, with the total size of the real one */
	if (u32_at(h, 0) != PG_SHMEM_MAGIC || u64_at(h, 8) < sizeof(h) ||
	    u64_at(h, 8) > v->seg_hi - v->seg_lo)
		return -ENOENT;
	return 0;
}

/* ---- names found ---- */

static void add_name(struct reader *r, uint32_t info, const char *name)
{
	struct pg_run_names *o = r->out;

	if (o->n == PG_RUN_NAMES_MAX) {
		o->truncated = 1;
		return;
	}
	o->names[o->n].wait_event_info = info;
	snprintf(o->names[o->n].name, sizeof(o->names[o->n].name), "%s", name);
	o->n++;
}

/* A name of at most NAMEDATALEN bytes, NUL included, and not empty. */
static int name_ok(struct reader *r, const char *name, size_t room,
		   const char *what, unsigned long long which)
{
	const char *nul = memchr(name, '\0', room);

	if (!nul)
		return fail(r, -EINVAL, "%s 0x%llx: its name is not "
			    "terminated within %d bytes", what, which,
			    PG_RUN_NAME_LEN);
	if (nul == name)
		return fail(r, -EINVAL, "%s 0x%llx: its name is empty", what,
			    which);
	return 0;
}

/* ---- a shared dynahash ---- */

typedef int (*entry_fn)(struct reader *r, const unsigned char *entry,
			void *ctx);

struct dh_table {
	const char *name;		/* for reasons */
	uint64_t hdr;			/* its HASHHDR */
	uint64_t keysize;		/* what it must have */
	size_t need;			/* entry bytes read */
	entry_fn fn;			/* 1: done */
	void *ctx;
};

#define ENTRY_MAX 128			/* entry bytes a walk reads */

static int walk_chain(struct reader *r, const struct dh_table *t,
		      uint64_t elem, uint32_t bucket, unsigned *visited)
{
	unsigned char buf[ELEMENT_HEADER + ENTRY_MAX];

	while (elem) {
		int err;

		if (++*visited > MAX_ELEMENTS)
			return fail(r, -E2BIG, "%s: more than %d entries (a "
				    "chain that loops?)", t->name, MAX_ELEMENTS);
		if (elem % 8)
			return fail(r, -EINVAL, "%s, bucket %u: an entry at "
				    "0x%llx, not aligned", t->name, bucket,
				    (unsigned long long)elem);
		err = rd(r, elem, buf, ELEMENT_HEADER + t->need, t->name);
		if (err)
			return err;
		err = t->fn(r, buf + ELEMENT_HEADER, t->ctx);
		if (err)
			return err;
		elem = u64_at(buf, 0);
	}
	return 0;
}

/* Every entry of the table, t->fn called on each (its first need bytes),
 * until it returns non-zero (1: done; -errno: failed). */
static int dh_walk(struct reader *r, const struct dh_layout *l,
		   const struct dh_table *t)
{
	unsigned char h[0x350];
	uint64_t dsize, nsegs, entrysize, ssize, dir, *segs = NULL,
		 *heads = NULL;
	uint32_t max_bucket, sshift, nused;
	unsigned visited = 0;
	int err;

	if (l->hdr_len > sizeof(h) || t->need > ENTRY_MAX)
		return fail(r, -EINVAL, "%s: layout too long", t->name);
	err = rd(r, t->hdr, h, l->hdr_len, t->name);
	if (err)
		return err;
	dsize = u64_at(h, l->dsize);
	nsegs = u64_at(h, l->nsegs);
	max_bucket = u32_at(h, l->max_bucket);
	entrysize = u64_at(h, l->entrysize);
	if (u64_at(h, l->keysize) != t->keysize || entrysize < t->need ||
	    entrysize > 4096)
		return fail(r, -EINVAL, "%s: key size %llu, entry size %llu, "
			    "not this major's (%llu, at least %zu)", t->name,
			    (unsigned long long)u64_at(h, l->keysize),
			    (unsigned long long)entrysize,
			    (unsigned long long)t->keysize, t->need);
	if (l->ssize >= 0) {
		ssize = u64_at(h, (size_t)l->ssize);
		sshift = u32_at(h, (size_t)l->sshift);
		if (sshift < 1 || sshift > 16 || ssize != 1ull << sshift)
			return fail(r, -EINVAL, "%s: segment size %llu, shift "
				    "%u", t->name, (unsigned long long)ssize,
				    sshift);
	} else {
		sshift = l->fixed_sshift;
		ssize = 1ull << sshift;
	}
	if (max_bucket >= MAX_BUCKETS)
		return fail(r, -E2BIG, "%s: %u buckets (at most %d are read)",
			    t->name, max_bucket + 1, MAX_BUCKETS);
	nused = (max_bucket >> sshift) + 1;
	if (nsegs < nused || dsize < nsegs || dsize > MAX_BUCKETS)
		return fail(r, -EINVAL, "%s: %u segments used, %llu allocated, "
			    "a directory of %llu", t->name, nused,
			    (unsigned long long)nsegs, (unsigned long long)dsize);
	dir = l->dir < 0 ? t->hdr + l->hdr_len : u64_at(h, (size_t)l->dir);
	segs = calloc(nused, sizeof(*segs));
	heads = calloc(ssize, sizeof(*heads));
	if (!segs || !heads) {
		err = fail(r, -ENOMEM, "%s: out of memory", t->name);
		goto out;
	}
	err = rd(r, dir, segs, nused * sizeof(*segs), t->name);
	for (uint32_t s = 0; !err && s < nused; s++) {
		uint32_t first = s << sshift;
		uint32_t n = max_bucket - first + 1 < ssize ?
			     max_bucket - first + 1 : (uint32_t)ssize;

		if (segs[s] % 8) {
			err = fail(r, -EINVAL, "%s: segment %u at 0x%llx, not "
				   "aligned", t->name, s,
				   (unsigned long long)segs[s]);
			break;
		}
		err = rd(r, segs[s], heads, n * sizeof(*heads), t->name);
		for (uint32_t b = 0; !err && b < n; b++)
			err = walk_chain(r, t, heads[b], first + b, &visited);
	}
out:
	free(segs);
	free(heads);
	return err;
}

/* ---- ShmemIndex ---- */

struct index_find {
	const char *names[2];
	uint64_t location[2], size[2];
};

static int index_entry(struct reader *r, const unsigned char *e, void *ctx)
{
	struct index_find *f = ctx;

	(void)r;
	for (int i = 0; i < 2; i++) {
		size_t len = f->names[i] ? strlen(f->names[i]) : 0;

		/* keys are NUL-padded strings: one not terminated is no match */
		if (len && !f->location[i] && memcmp(e, f->names[i], len) == 0 &&
		    e[len] == '\0') {
			f->location[i] = u64_at(e, INDEX_KEY_LEN);
			f->size[i] = u64_at(e, INDEX_KEY_LEN + 8);
		}
	}
	return 0;
}

/* ShmemIndex's HASHHDR. */
static int index_header(struct reader *r, const struct shm_layout *L,
			uint64_t *hdr)
{
	unsigned char h[SEG_HEADER_LEN], a[24];
	uint64_t total, content;
	int err;

	err = rd(r, r->v->seg_lo, h, sizeof(h), "the segment's header");
	if (err)
		return err;
	total = u64_at(h, 8);
	if (L->index_at >= 0) {
		*hdr = u64_at(h, (size_t)L->index_at);
		return 0;
	}
	content = u64_at(h, 16);
	if (content < 32 || content >= total || content % 8)
		return fail(r, -EINVAL, "the segment's header says its content "
			    "starts at %llu of %llu bytes",
			    (unsigned long long)content,
			    (unsigned long long)total);
	err = rd(r, r->v->seg_lo + content, a, sizeof(a),
		 "the shmem allocator's data");
	if (err)
		return err;
	*hdr = u64_at(a, 16);
	return 0;
}

/* ---- the tables ---- */

static int custom_entry(struct reader *r, const unsigned char *e, void *ctx)
{
	uint32_t info = u32_at(e, 0), cls = info >> 24;
	const char *name = (const char *)e + 4;
	int err;

	(void)ctx;
	/* WaitEventCustomNew: the class, and an id of 1..127 below it */
	if ((cls != PG_CLASS_EXTENSION && cls != PG_CLASS_INJECTION) ||
	    (info & 0x00FF0000u) || !(info & 0xFFFFu))
		return fail(r, -EINVAL, CUSTOM_TABLE ": an entry for 0x%08x, "
			    "not a custom wait event", info);
	err = name_ok(r, name, PG_RUN_NAME_LEN, "custom wait event", info);
	if (err)
		return err;
	add_name(r, info, name);
	return 0;
}

static int read_custom(struct reader *r, const struct shm_layout *L,
		       uint64_t location, uint64_t size)
{
	struct dh_table t = {
		.name = CUSTOM_TABLE, .hdr = location, .keysize = 4,
		.need = CUSTOM_ENTRY, .fn = custom_entry,
	};

	if (!location)
		return fail(r, -ENOENT, "ShmemIndex has no \"%s\"", CUSTOM_TABLE);
	if (size < L->hash->hdr_len)
		return fail(r, -EINVAL, CUSTOM_TABLE ": %llu bytes, less than "
			    "its header", (unsigned long long)size);
	return dh_walk(r, L->hash, &t);
}

/* 19: LWLockTrancheShmemData */
#define TRANCHE_ENTRY		(PG_RUN_NAME_LEN + 4)
#define TRANCHE_COUNT_AT	(MAX_TRANCHES * TRANCHE_ENTRY)

static int read_tranche_table(struct reader *r, uint64_t location,
			      uint64_t size)
{
	unsigned char *buf;
	uint32_t n;
	int err;

	if (!location)
		return fail(r, -ENOENT, "ShmemIndex has no \"%s\"",
			    TRANCHE_TABLE);
	if (size < TRANCHE_COUNT_AT + 4)
		return fail(r, -EINVAL, TRANCHE_TABLE ": %llu bytes, not this "
			    "major's %d", (unsigned long long)size,
			    TRANCHE_COUNT_AT + 4);
	err = rd(r, location + TRANCHE_COUNT_AT, &n, sizeof(n), TRANCHE_TABLE);
	if (err)
		return err;
	if (n > MAX_TRANCHES)
		return fail(r, -E2BIG, TRANCHE_TABLE ": %u tranches, more than "
			    "the %d it holds", n, MAX_TRANCHES);
	if (!n)
		return 0;
	buf = malloc((size_t)n * TRANCHE_ENTRY);
	if (!buf)
		return fail(r, -ENOMEM, "out of memory");
	err = rd(r, location, buf, (size_t)n * TRANCHE_ENTRY, TRANCHE_TABLE);
	for (uint32_t i = 0; !err && i < n; i++) {
		const char *name = (const char *)buf + (size_t)i * TRANCHE_ENTRY;
		uint32_t id = (uint32_t)r->first_tranche + i;

		err = name_ok(r, name, PG_RUN_NAME_LEN, "LWLock tranche", id);
		if (!err && id <= 0xFFFF)
			add_name(r, PG_CLASS_LWLOCK << 24 | id, name);
	}
	free(buf);
	return err;
}

/* 14-18: the postmaster's NamedLWLockTrancheArray */
static int read_tranche_vars(struct reader *r)
{
	const struct pg_shm_view *v = r->v;
	uint64_t array, *entries = NULL;
	int32_t n;
	int err;

	if (!v->tranches_var || !v->ntranches_var)
		return fail(r, -ENOENT, "the binary exports no "
			    "NamedLWLockTrancheArray");
	err = pread_all(v, v->ntranches_var, &n, sizeof(n));
	if (!err)
		err = pread_all(v, v->tranches_var, &array, sizeof(array));
	if (err)
		return fail(r, -EIO, "cannot read NamedLWLockTrancheArray: %s",
			    strerror(-err));
	if (n < 0 || n > MAX_TRANCHES)
		return fail(r, -E2BIG, "%d named LWLock tranches (at most %d "
			    "are read)", n, MAX_TRANCHES);
	if (!n)
		return 0;
	entries = calloc((size_t)n, 2 * sizeof(uint64_t));
	if (!entries)
		return fail(r, -ENOMEM, "out of memory");
	err = rd(r, array, entries, (size_t)n * 2 * sizeof(uint64_t),
		 "NamedLWLockTrancheArray");
	for (int32_t i = 0; !err && i < n; i++) {
		uint32_t id = (uint32_t)entries[2 * i];	/* int trancheId */
		uint64_t at = entries[2 * i + 1];
		char name[PG_RUN_NAME_LEN];
		uint64_t len = sizeof(name);

		if (id < (uint32_t)r->first_tranche || id > 0xFFFF) {
			err = fail(r, -EINVAL, "named LWLock tranche %d: id %u, "
				   "not an extension's", i, id);
			break;
		}
		/* a name may end with the segment */
		if (at >= v->seg_lo && at < v->seg_hi && v->seg_hi - at < len)
			len = v->seg_hi - at;
		memset(name, 0, sizeof(name));
		err = rd(r, at, name, (size_t)len, "a named LWLock tranche's name");
		if (!err)
			err = name_ok(r, name, (size_t)len, "LWLock tranche", id);
		if (!err)
			add_name(r, PG_CLASS_LWLOCK << 24 | id, name);
	}
	free(entries);
	return err;
}

int pg_shmem_names_read(const struct pg_shm_view *v, int major,
			int first_tranche, struct pg_run_names *out)
{
	const struct shm_layout *L = layout_of(major);
	struct reader r = { .v = v, .out = out, .first_tranche = first_tranche };
	struct index_find f = { .names = { NULL, NULL } };
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!L)
		return fail(&r, -ENOTSUP, "PostgreSQL %d keeps no names pgoff "
			    "can read in shared memory", major);
	if (first_tranche <= 0)
		return fail(&r, -ENOTSUP, "no LWLock tranche table for "
			    "PostgreSQL %d", major);
	if (pg_shmem_segment_check(v))
		return fail(&r, -ENOENT, "no PostgreSQL segment header at 0x%llx",
			    (unsigned long long)v->seg_lo);
	if (L->hash) {
		struct dh_table t = {
			.name = "ShmemIndex", .keysize = INDEX_KEY_LEN,
			.need = INDEX_ENTRY_NEED, .fn = index_entry, .ctx = &f,
		};

		f.names[0] = L->custom ? CUSTOM_TABLE : NULL;
		f.names[1] = L->tranche_table ? TRANCHE_TABLE : NULL;
		err = index_header(&r, L, &t.hdr);
		if (!err)
			err = dh_walk(&r, L->hash, &t);
	}
	if (!err && L->custom)
		err = read_custom(&r, L, f.location[0], f.size[0]);
	if (!err && L->tranche_table)
		err = read_tranche_table(&r, f.location[1], f.size[1]);
	if (!err && L->tranche_vars)
		err = read_tranche_vars(&r);
	if (err)
		out->n = 0;
	return out->status;
}
