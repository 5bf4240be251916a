// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shared memory reader against fake segments in a file: segments laid
 * out as PostgreSQL 15, 17 and 19 lay theirs out (the offsets written
 * here from the sources and binaries pg_shmem_names.c names, not taken
 * from it), then the ways a cluster's owner can make them lie: chains
 * that loop, pointers out of the segment, huge counts, names without
 * their NUL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/priv/pg_shmem_names.h"
#include "tests/unit/check.h"

#define BASE		0x7f0000000000ull	/* where the fake segment is "mapped" */
#define SEG_LEN		(1u << 20)
#define VARS_AT		(SEG_LEN + 4096)	/* the postmaster's variables, after it */
#define FILE_LEN	(SEG_LEN + 8192)

#define MAGIC		679834894u
#define HDR_LEN		0x350
#define EXT		0x07000000u
#define INJ		0x0B000000u
#define LWL		0x01000000u

static unsigned char *mem;	/* the file's bytes: offset = address - BASE */
static uint64_t next_free;	/* bump allocator, addresses */

static uint64_t alloc(size_t len)
{
	uint64_t at = (next_free + 63) & ~63ull;

	next_free = at + len;
	if (next_free - BASE > SEG_LEN) {
		fprintf(stderr, "fake segment full\n");
		abort();
	}
	return at;
}

static void *at(uint64_t addr)
{
	return mem + (addr - BASE);
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(at(addr), &v, 8);
}

static void put32(uint64_t addr, uint32_t v)
{
	memcpy(at(addr), &v, 4);
}

static uint64_t get64(uint64_t addr)
{
	uint64_t v;

	memcpy(&v, at(addr), 8);
	return v;
}

/* A segment: its header (17: index at 32; 19: content at 16). */
static void segment(int major)
{
	memset(mem, 0, FILE_LEN);
	next_free = BASE + 512;
	put32(BASE, MAGIC);
	put64(BASE + 8, SEG_LEN);
	if (major == 19) {
		put64(BASE + 16, 128);		/* content_offset */
		next_free = BASE + 256;
	}
}

/* A shared dynahash of n entries of entrysize (their first len bytes
 * from data), 2 buckets a segment so that several segments are walked.
 * Returns its HASHHDR's address; *elems the elements' addresses. */
static uint64_t hash(int major, uint64_t keysize, uint64_t entrysize,
		     const void *data, size_t len, unsigned n, uint64_t *elems)
{
	uint64_t hdr = alloc(HDR_LEN + 16 * 8), dir;
	uint32_t nbuckets = 8, sshift = major == 19 ? 8 : 1;
	uint32_t ssize = 1u << sshift, nsegs = (nbuckets + ssize - 1) / ssize;

	put64(hdr + 0x300, 16);			/* dsize */
	put64(hdr + 0x308, nsegs);		/* nsegs */
	put32(hdr + 0x310, nbuckets - 1);	/* max_bucket */
	put64(hdr + 0x320, keysize);
	put64(hdr + 0x328, entrysize);
	if (major == 19) {
		dir = alloc(16 * 8);
		put64(hdr + 0x348, dir);
	} else {
		put64(hdr + 0x340, ssize);
		put32(hdr + 0x348, sshift);
		dir = hdr + HDR_LEN;
	}
	for (uint32_t s = 0; s < nsegs; s++)
		put64(dir + 8 * s, alloc(ssize * 8));
	for (unsigned i = 0; i < n; i++) {
		uint32_t b = i % nbuckets;
		uint64_t head = get64(dir + 8 * (b >> sshift)) + 8 * (b & (ssize - 1));
		uint64_t e = alloc(16 + entrysize);

		memcpy(at(e + 16), (const char *)data + i * len, len);
		put64(e, get64(head));	/* pushed on the chain */
		put64(head, e);
		if (elems)
			elems[i] = e;
	}
	return hdr;
}

struct index_ent {
	char key[48];
	uint64_t location, size, allocated;
};

/* ShmemIndex with some other structures and the given ones: its
 * HASHHDR's address. */
static uint64_t index_of(int major, const char *const *names,
		     const uint64_t *locations, const uint64_t *sizes, unsigned n)
{
	struct index_ent e[12];
	unsigned k = 0;
	const char *others[] = { "Buffer Descriptors", "ProcArray",
				 "WaitEventCustomCounterData" };

	memset(e, 0, sizeof(e));
	for (unsigned i = 0; i < 3; i++, k++) {
		snprintf(e[k].key, sizeof(e[k].key), "%s", others[i]);
		e[k].location = BASE + 4096 + 64 * i;
		e[k].size = 64;
	}
	for (unsigned i = 0; i < n; i++, k++) {
		snprintf(e[k].key, sizeof(e[k].key), "%s", names[i]);
		e[k].location = locations[i];
		e[k].size = sizes[i];
	}
	return hash(major, 48, major == 19 ? 80 : 72, e, sizeof(e[0]), k, NULL);
}

struct custom_ent {
	uint32_t info;
	char name[64];
};

static const struct custom_ent dblink[] = {
	{ EXT | 1, "DblinkGetConnect" },
	{ EXT | 2, "DblinkGetResult" },
	{ INJ | 3, "my-injection-point" },
};

static char path[64];
static int fd = -1;

/* The fake memory written to the file, and a view of it. */
static struct pg_shm_view view(void)
{
	struct pg_shm_view v = { .fd = fd, .delta = -(int64_t)BASE,
				 .seg_lo = BASE, .seg_hi = BASE + SEG_LEN };

	if (pwrite(fd, mem, FILE_LEN, 0) != FILE_LEN)
		abort();
	return v;
}

static uint64_t custom_table(int major, const struct custom_ent *c, unsigned n)
{
	return hash(major, 4, 68, c, sizeof(c[0]), n, NULL);
}

/* 17: ShmemIndex at PGShmemHeader.index, the custom table in it; the
 * named tranches in the postmaster's variables */
static uint64_t custom17;

static void build17(const struct custom_ent *c, unsigned n)
{
	const char *names[] = { "WaitEventCustom hash by wait event information" };
	uint64_t loc[1], size[1] = { 8192 };
	uint64_t arr, name;

	segment(17);
	custom17 = loc[0] = custom_table(17, c, n);
	put64(BASE + 32, index_of(17, names, loc, size, 1));
	arr = alloc(16);
	name = alloc(32);
	strcpy(at(name), "pg_stat_statements");
	put32(arr, 92);			/* trancheId: 17's first user-defined */
	put64(arr + 8, name);
	put64(BASE + VARS_AT, arr);	/* NamedLWLockTrancheArray */
	put32(BASE + VARS_AT + 8, 1);	/* NamedLWLockTrancheRequests */
}

static struct pg_shm_view view17(void)
{
	struct pg_shm_view v = view();

	v.tranches_var = BASE + VARS_AT;
	v.ntranches_var = BASE + VARS_AT + 8;
	return v;
}

/*
 * With PGOFF_SHMEM_CORPUS=DIR, the segment built so far is written to
 * DIR/NAME as fuzz_shmem_names reads its inputs: the postmaster's two
 * variables (16 bytes), then the segment, its total size what is
 * written (make shmem-names-corpus).
 */
static void write_corpus(const char *name)
{
	const char *dir = getenv("PGOFF_SHMEM_CORPUS");
	uint64_t used = next_free - BASE, saved = get64(BASE + 8);
	char file[256];
	FILE *f;

	if (!dir)
		return;
	snprintf(file, sizeof(file), "%s/%s", dir, name);
	put64(BASE + 8, used);
	f = fopen(file, "w");
	if (!f || fwrite(at(BASE + VARS_AT), 1, 16, f) != 16 ||
	    fwrite(mem, 1, used, f) != used || fclose(f))
		abort();
	put64(BASE + 8, saved);
}

static const char *name_of(const struct pg_run_names *o, uint32_t info)
{
	for (uint32_t i = 0; i < o->n; i++)
		if (o->names[i].wait_event_info == info)
			return o->names[i].name;
	return NULL;
}

static struct pg_run_names out;

static int read_names(const struct pg_shm_view *v, int major, int first)
{
	int err = pg_shmem_names_read(v, major, first, &out);

	if (err)
		fprintf(stderr, "  read: %d %s\n", err, out.why);
	return err;
}

static void test_valid_17(void)
{
	struct pg_shm_view v;

	build17(dblink, 3);
	write_corpus("valid-17");
	v = view17();
	CHECK(pg_shmem_segment_check(&v) == 0);
	CHECK(read_names(&v, 17, 92) == 0);
	CHECK(out.n == 4 && !out.truncated);
	CHECK_STR(name_of(&out, EXT | 1), "DblinkGetConnect");
	CHECK_STR(name_of(&out, EXT | 2), "DblinkGetResult");
	CHECK_STR(name_of(&out, INJ | 3), "my-injection-point");
	CHECK_STR(name_of(&out, LWL | 92), "pg_stat_statements");
}

/* 18 lays it out as 17 does */
static void test_valid_18(void)
{
	struct pg_shm_view v;

	build17(dblink, 2);
	v = view17();
	CHECK(read_names(&v, 18, 92) == 0);
	CHECK(out.n == 3);
}

/* 15: no custom wait events, the named tranches only */
static void test_valid_15(void)
{
	struct pg_shm_view v;

	build17(dblink, 3);
	put32(get64(BASE + VARS_AT), 73);	/* 15's first user-defined */
	write_corpus("valid-15");
	v = view17();
	CHECK(read_names(&v, 15, 73) == 0);
	CHECK(out.n == 1);
	CHECK_STR(name_of(&out, LWL | 73), "pg_stat_statements");
}

/* 19: ShmemIndex through the allocator's data; tranches in "LWLock
 * tranches" (name[64] + int, 256 of them, the count after) */
static void build19(const struct custom_ent *c, unsigned n, unsigned ntranches)
{
	const char *names[] = { "WaitEventCustom hash by wait event information",
				"LWLock tranches" };
	uint64_t loc[2], size[2] = { 8192, 256 * 68 + 8 };

	segment(19);
	loc[0] = custom_table(19, c, n);
	loc[1] = alloc(size[1]);
	for (unsigned i = 0; i < ntranches && i < 256; i++)
		snprintf(at(loc[1] + 68 * i), 64, "tranche_%u", i);
	put32(loc[1] + 256 * 68, ntranches);
	put64(BASE + 128 + 16, index_of(19, names, loc, size, 2));	/* allocator's index */
}

static void test_valid_19(void)
{
	struct pg_shm_view v;

	build19(dblink, 3, 2);
	write_corpus("valid-19");
	v = view();
	CHECK(read_names(&v, 19, 100) == 0);
	CHECK(out.n == 5);
	CHECK_STR(name_of(&out, EXT | 2), "DblinkGetResult");
	CHECK_STR(name_of(&out, LWL | 100), "tranche_0");
	CHECK_STR(name_of(&out, LWL | 101), "tranche_1");
	CHECK(name_of(&out, LWL | 102) == NULL);
}

/* More names than a cluster keeps: the first 512, and it says so. */
static void test_cap(void)
{
	struct custom_ent *c = calloc(300, sizeof(*c));
	struct pg_shm_view v;

	for (unsigned i = 0; i < 300; i++) {
		c[i].info = EXT | (i + 1);
		snprintf(c[i].name, sizeof(c[i].name), "ev%u", i);
	}
	build19(c, 300, 256);
	v = view();
	free(c);
	CHECK(read_names(&v, 19, 100) == 0);
	CHECK(out.n == PG_RUN_NAMES_MAX && out.truncated);
}

static void expect(int err, const char *why_part)
{
	struct pg_shm_view v = view17();
	int got = pg_shmem_names_read(&v, 17, 92, &out);

	if (got != err || !strstr(out.why, why_part))
		fprintf(stderr, "  got %d \"%s\", want %d \"%s\"\n", got,
			out.why, err, why_part);
	CHECK(got == err);
	CHECK_CONTAINS(out.why, why_part);
	CHECK(out.n == 0);
}

static void test_not_a_segment(void)
{
	struct pg_shm_view v;

	build17(dblink, 3);
	put32(BASE, 0);
	v = view17();
	CHECK(pg_shmem_segment_check(&v) == -ENOENT);
	/* the SysV copy of the header: a total size it does not hold */
	put32(BASE, MAGIC);
	put64(BASE + 8, 1ull << 40);
	v = view17();
	CHECK(pg_shmem_segment_check(&v) == -ENOENT);
	expect(-ENOENT, "no PostgreSQL segment header");
}

/* The first custom entry of the table's first non-empty chain. */
static uint64_t first_custom_elem(void)
{
	uint64_t dir = custom17 + HDR_LEN;

	for (int s = 0; s < 4; s++)
		for (int b = 0; b < 2; b++)
			if (get64(get64(dir + 8 * s) + 8 * b))
				return get64(get64(dir + 8 * s) + 8 * b);
	return 0;
}

static void test_loop(void)
{
	uint64_t e;

	build17(dblink, 3);
	e = first_custom_elem();
	put64(e, e);			/* its link: itself */
	expect(-E2BIG, "loops");
}

static void test_pointer_out(void)
{
	uint64_t e;

	build17(dblink, 3);
	e = first_custom_elem();
	put64(e, BASE + SEG_LEN + 16);	/* past the end: the variables */
	expect(-EINVAL, "outside the shared memory segment");
	build17(dblink, 3);
	put64(BASE + 32, 0x1000);	/* the index, far below */
	expect(-EINVAL, "outside the shared memory segment");
	build17(dblink, 3);
	put64(custom17 + HDR_LEN, BASE + SEG_LEN - 8);	/* a segment cut by the end */
	expect(-EINVAL, "outside the shared memory segment");
	build17(dblink, 3);
	put64(custom17 + HDR_LEN, UINT64_MAX - 7);	/* wraps around */
	expect(-EINVAL, "outside the shared memory segment");
	build17(dblink, 3);
	put64(get64(BASE + VARS_AT) + 8, BASE + SEG_LEN + 64);	/* a name out */
	expect(-EINVAL, "outside the shared memory segment");
}

static void test_misaligned(void)
{
	uint64_t e;

	build17(dblink, 3);
	e = first_custom_elem();
	put64(e, get64(e) ? get64(e) + 4 : e + 4);
	expect(-EINVAL, "not aligned");
}

static void test_huge_counts(void)
{
	struct pg_shm_view v;

	build17(dblink, 3);
	put32(custom17 + 0x310, 0xFFFFFFF0u);	/* max_bucket */
	expect(-E2BIG, "buckets");
	build17(dblink, 3);
	put64(custom17 + 0x308, 0);		/* fewer segments than used */
	expect(-EINVAL, "segments used");
	build17(dblink, 3);
	put64(custom17 + 0x340, 1ull << 40);	/* ssize */
	expect(-EINVAL, "segment size");
	build17(dblink, 3);
	put32(BASE + VARS_AT + 8, 1u << 30);	/* named tranches */
	expect(-E2BIG, "named LWLock tranches");
	build17(dblink, 3);
	put32(BASE + VARS_AT + 8, (uint32_t)-1);
	expect(-E2BIG, "named LWLock tranches");
	build19(dblink, 3, 100000);
	v = view();
	CHECK(pg_shmem_names_read(&v, 19, 100, &out) == -E2BIG);
	CHECK_CONTAINS(out.why, "tranches");
}

static void test_unterminated(void)
{
	uint64_t e, name;
	struct pg_shm_view v;

	build17(dblink, 3);
	e = first_custom_elem();
	memset(at(e + 16 + 4), 'A', 64);
	expect(-EINVAL, "not terminated");
	build17(dblink, 3);
	name = get64(get64(BASE + VARS_AT) + 8);
	memset(at(name), 'B', 64);
	expect(-EINVAL, "not terminated");
	/* a tranche name that runs into the end of the segment */
	build17(dblink, 3);
	memset(at(BASE + SEG_LEN - 10), 'C', 10);
	put64(get64(BASE + VARS_AT) + 8, BASE + SEG_LEN - 10);
	expect(-EINVAL, "not terminated");
	/* 19's tranche array */
	build19(dblink, 3, 2);
	{
		uint64_t idx_loc = 0;

		/* find "LWLock tranches" through the reader's own answer:
		 * the tranche named tranche_1 is at index 1 */
		v = view();
		CHECK(pg_shmem_names_read(&v, 19, 100, &out) == 0);
		for (uint64_t a = BASE; a < BASE + SEG_LEN - 64; a += 4)
			if (memcmp(at(a), "tranche_1", 10) == 0) {
				idx_loc = a;
				break;
			}
		CHECK(idx_loc);
		memset(at(idx_loc), 'D', 64);
		v = view();
		CHECK(pg_shmem_names_read(&v, 19, 100, &out) == -EINVAL);
		CHECK_CONTAINS(out.why, "not terminated");
	}
}

static void test_wrong_entries(void)
{
	uint64_t e;
	struct pg_shm_view v;

	build17(dblink, 3);
	put64(custom17 + 0x320, 8);		/* keysize */
	expect(-EINVAL, "key size");
	build17(dblink, 3);
	e = first_custom_elem();
	put32(e + 16, 0x03000001);		/* a Lock "custom" event */
	expect(-EINVAL, "not a custom wait event");
	build17(dblink, 3);
	put32(get64(BASE + VARS_AT), 5);	/* a built-in tranche's id */
	expect(-EINVAL, "not an extension's");
	/* no custom table in the index */
	build17(dblink, 3);
	for (uint64_t a = BASE; a < BASE + SEG_LEN - 64; a += 8)
		if (memcmp(at(a), "WaitEventCustom hash by wait", 28) == 0)
			memcpy(at(a), "X", 1);
	expect(-ENOENT, "ShmemIndex has no");
	/* 19: the allocator's data where the segment is not */
	build19(dblink, 3, 2);
	put64(BASE + 16, SEG_LEN * 2);
	v = view();
	CHECK(pg_shmem_names_read(&v, 19, 100, &out) == -EINVAL);
	CHECK_CONTAINS(out.why, "content starts at");
	/* a major without a layout, and 14-18 without the variables */
	build17(dblink, 3);
	v = view();
	CHECK(pg_shmem_names_read(&v, 20, 100, &out) == -ENOTSUP);
	CHECK(pg_shmem_names_read(&v, 17, 92, &out) == -ENOENT);
	CHECK_CONTAINS(out.why, "NamedLWLockTrancheArray");
}

/* A read that fails (past the file's end) gives up, with the reason. */
static void test_read_error(void)
{
	struct pg_shm_view v;

	build17(dblink, 3);
	v = view17();
	v.seg_hi = BASE + 4 * SEG_LEN;		/* mapped, but not readable */
	put64(BASE + 8, 2 * SEG_LEN);
	if (pwrite(fd, mem, FILE_LEN, 0) != FILE_LEN)
		abort();
	put64(first_custom_elem(), BASE + 3 * SEG_LEN);
	if (pwrite(fd, mem, FILE_LEN, 0) != FILE_LEN)
		abort();
	CHECK(pg_shmem_names_read(&v, 17, 92, &out) == -EIO);
	CHECK_CONTAINS(out.why, "cannot read");
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/pgoff-shm-test.XXXXXX");
	fd = mkstemp(path);
	mem = calloc(1, FILE_LEN);
	if (fd < 0 || !mem)
		return 1;
	unlink(path);
	RUN(test_valid_17);
	RUN(test_valid_18);
	RUN(test_valid_15);
	RUN(test_valid_19);
	RUN(test_cap);
	RUN(test_not_a_segment);
	RUN(test_loop);
	RUN(test_pointer_out);
	RUN(test_misaligned);
	RUN(test_huge_counts);
	RUN(test_unterminated);
	RUN(test_wrong_entries);
	RUN(test_read_error);
	free(mem);
	close(fd);
	return CHECK_DONE();
}
