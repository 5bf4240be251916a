/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_store.c - the record store: framing, the CRC check, torn and
 * corrupt tails, retention, and a store in a temporary directory
 * written, reopened, damaged and read back.
 */
#define _GNU_SOURCE
#include "broker/record/store.h"
#include "common/log.h"
#include "tests/unit/check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static void test_frame_roundtrip(void)
{
	char buf[256];
	struct store_hdr h;
	size_t n = store_frame(buf, sizeof(buf), 42, 1234, "{\"a\":1}", 7);

	CHECK(n == sizeof(h) + 7);
	CHECK(store_check(buf, n, &h) == STORE_OK);
	CHECK(h.seq == 42 && h.wall_ns == 1234 && h.len == 7);
	CHECK(memcmp(buf + sizeof(h), "{\"a\":1}", 7) == 0);
	/* more bytes after it: still one record */
	CHECK(store_check(buf, sizeof(buf), &h) == STORE_OK);
	CHECK(store_frame(buf, 10, 1, 1, "x", 1) == 0);
}

static void test_torn(void)
{
	char buf[256];
	struct store_hdr h;
	size_t n = store_frame(buf, sizeof(buf), 1, 2, "payload", 7);

	for (size_t k = 0; k < n; k++)
		CHECK(store_check(buf, k, &h) == STORE_TORN);
}

static void test_corrupt(void)
{
	char buf[256];
	struct store_hdr h;
	size_t n = store_frame(buf, sizeof(buf), 1, 2, "payload", 7);

	for (size_t k = 0; k < n; k++) {
		if (k >= 12 && k < 16)
			continue;	/* reserved: checked as zero below */
		buf[k] ^= 0x40;
		/* a longer length may just look torn: never whole */
		if (k >= 4 && k < 8)
			CHECK(store_check(buf, sizeof(buf), &h) != STORE_OK);
		else
			CHECK(store_check(buf, sizeof(buf), &h) == STORE_CORRUPT);
		buf[k] ^= 0x40;
	}
	buf[12] = 1;
	CHECK(store_check(buf, n, &h) == STORE_CORRUPT);
	/* a length past the limit is refused before any payload is read */
	memset(buf, 0, sizeof(buf));
	h = (struct store_hdr){ .magic = STORE_MAGIC,
				.len = STORE_MAX_PAYLOAD + 1 };
	memcpy(buf, &h, sizeof(h));
	CHECK(store_check(buf, sizeof(buf), &h) == STORE_CORRUPT);
	CHECK(store_check("garbage", 7, &h) == STORE_CORRUPT);
}

static void test_retention(void)
{
	struct store_seg s[4] = {
		{ .bytes = 100, .records = 1, .last_wall = 10 },
		{ .bytes = 100, .records = 1, .last_wall = 20 },
		{ .bytes = 100, .records = 1, .last_wall = 30 },
		{ .bytes = 100, .records = 1, .last_wall = 40 },
	};

	CHECK(store_retention(s, 4, 400, 0, 1000, 40) == 0);
	CHECK(store_retention(s, 4, 399, 0, 1000, 40) == 1);
	CHECK(store_retention(s, 4, 400, 1, 1000, 40) == 1);
	CHECK(store_retention(s, 4, 150, 0, 1000, 40) == 3);
	/* never the newest, whatever the limits */
	CHECK(store_retention(s, 4, 0, 0, 0, 1000) == 3);
	/* by age: older than now - max_age */
	CHECK(store_retention(s, 4, 1000, 0, 15, 40) == 2);
	CHECK(store_retention(s, 1, 0, 0, 0, 1000) == 0);
	CHECK(store_retention(s, 0, 0, 0, 0, 1000) == 0);
}

static char dir[64];

static int open_dir(void)
{
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static struct store *reopen(uint64_t max_bytes)
{
	struct store_opts o = { .max_bytes = max_bytes,
				.max_age_ns = 1000000000000LL,
				.seg_bytes = 4096 };
	struct store *s = NULL;

	if (store_open(&s, open_dir(), &o))
		return NULL;
	return s;
}

static int count_records(struct store *s, uint64_t *first, uint64_t *last)
{
	static char buf[STORE_MAX_PAYLOAD + 1];
	struct store_cursor c;
	struct store_hdr h;
	int n = 0;

	store_cursor_init(s, &c, 0);
	while (store_next(s, &c, &h, buf, sizeof(buf)) == 1) {
		if (!n)
			*first = h.seq;
		else if (h.seq != *last + 1)
			n = -1000;	/* out of order */
		*last = h.seq;
		n++;
	}
	store_cursor_close(&c);
	return n;
}

static void seg_path(int which, char *path, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), k = 0;

	path[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && k++ == which)
			snprintf(path, len, "%s/%s", dir, names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

static void test_files(void)
{
	char line[200], path[512];
	uint64_t first = 0, last = 0;
	struct store_info i;
	struct store *s;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	s = reopen(1 << 20);
	CHECK(s);
	for (uint64_t seq = 1; seq <= 100; seq++) {
		int n = snprintf(line, sizeof(line),
				 "{\"type\":\"offcpu\",\"seq\":%llu,\"pad\":"
				 "\"................................\"}",
				 (unsigned long long)seq);
		CHECK(store_append(s, seq, (int64_t)seq * 1000, line,
				   (size_t)n, 0) == 0);
	}
	store_info(s, &i);
	CHECK(i.records == 100 && i.first_seq == 1 && i.last_seq == 100);
	CHECK(i.segments > 2);	/* 4 KiB segments */
	CHECK(count_records(s, &first, &last) == 100 && last == 100);
	store_close(s);

	/* reopened: all there; the next seq goes on */
	s = reopen(1 << 20);
	CHECK(s && store_last_seq(s) == 100);
	CHECK(count_records(s, &first, &last) == 100);
	store_close(s);

	/* garbage at the tail of the newest: cut */
	seg_path(-1 + (int)i.segments, path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK(write(fd, "\x50\x4f\x46\x52garbage", 11) == 11);
	close(fd);
	s = reopen(1 << 20);
	CHECK(s);
	CHECK(count_records(s, &first, &last) == 100);
	store_close(s);

	/* bytes flipped inside the first segment: its rest is skipped */
	seg_path(0, path, sizeof(path));
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, "XXXX", 4, 200) == 4);
	close(fd);
	s = reopen(1 << 20);
	CHECK(s);
	store_info(s, &i);
	CHECK(i.records < 100 && i.records > 50);
	CHECK(count_records(s, &first, &last) < 0);	/* a gap: by design */
	store_close(s);
}

static void test_size_cap(void)
{
	char line[1000];
	struct store_info i;
	struct store *s = reopen(64 * 1024);

	CHECK(s);
	memset(line, 'x', sizeof(line));
	for (uint64_t seq = 1000; seq < 1500; seq++)
		CHECK(store_append(s, seq, (int64_t)seq, line, sizeof(line),
				   0) == 0);
	store_info(s, &i);
	CHECK(i.bytes <= 64 * 1024);
	CHECK(i.last_seq == 1499);
	CHECK(i.removed_segments > 0);
	store_close(s);
}

/*
 * A write that fails (a file size limit stands in for a full disk: the
 * write is cut short, then refused): recording stops, counted; no torn
 * record is left; it starts again once retried, 10 s later.
 */
static void test_write_error(void)
{
	struct rlimit old, lim;
	char line[1000];
	struct store_info i;
	struct store *s = reopen(1 << 20);
	uint64_t first = 0, last = 0;
	int before, n;

	CHECK(s);
	memset(line, 'y', sizeof(line));
	before = count_records(s, &first, &last);
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 2500;	/* two records of 1032 bytes, not three */
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	for (uint64_t seq = 2000; seq < 2005; seq++)
		store_append(s, seq, (int64_t)seq, line, sizeof(line), 0);
	store_info(s, &i);
	CHECK(!i.writing);
	/* the third, then two more, each counted once: a short write
	 * means the disk filled */
	printf("# dropped: disk full %llu, error %llu\n",
	       (unsigned long long)i.dropped_disk_full,
	       (unsigned long long)i.dropped_error);
	CHECK(i.dropped_disk_full == 3 && i.dropped_error == 0);
	/* not yet retried; then it is, and works */
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(store_append(s, 2005, 2005, line, sizeof(line), 5000) == -EAGAIN);
	CHECK(store_append(s, 2006, 2006, line, sizeof(line), 10000) == 0);
	store_info(s, &i);
	CHECK(i.writing && i.dropped_disk_full == 4 && i.dropped_error == 0);
	store_close(s);
	/* reopened: the two records before the failure and the one after,
	 * nothing torn */
	s = reopen(1 << 20);
	CHECK(s);
	n = count_records(s, &first, &last);
	CHECK(last == 2006);
	CHECK(n < 0 || n == before + 3);	/* a gap in seqs counts as < 0 */
	store_info(s, &i);
	store_close(s);
	signal(SIGXFSZ, SIG_DFL);
}

static void cleanup(void)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	char path[512];

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (names[i]->d_name[0] != '.')
			unlink(path);
		free(names[i]);
	}
	free(names);
	rmdir(dir);
}

/* A new, empty store's age sweep: nothing to remove, nothing touched
 * (under UBSan: no memmove from its segment list, which is NULL). */
static void test_empty_tick(void)
{
	struct store_info i;
	struct store *s;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	s = reopen(1 << 20);
	CHECK(s);
	store_tick(s, 1000000000000000LL);
	store_info(s, &i);
	store_close(s);
	rmdir(dir);
	CHECK(i.segments == 0 && i.records == 0);
}

/* Two stores in one directory (events' ".seg", the aggregation's
 * ".agg"), one lock through a dup()ed fd: neither reads the other's
 * segments, each numbers on from its own last seq. */
static void test_two_stores(void)
{
	struct store_opts o = { .max_bytes = 1 << 20,
				.max_age_ns = 1000000000000LL };
	struct store *ev = NULL, *agg = NULL, *again = NULL;
	uint64_t first = 0, last = 0;
	int fd, n_ev, n_agg;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	fd = open_dir();
	CHECK(fd >= 0);
	CHECK(store_open(&ev, fd, &o) == 0);
	o.ext = ".agg";
	CHECK(store_open(&agg, dup(fd), &o) == 0);
	for (uint64_t seq = 1; seq <= 10; seq++)
		CHECK(store_append(ev, 100 + seq, (int64_t)seq, "{}", 2, 0) == 0);
	for (uint64_t seq = 1; seq <= 3; seq++)
		CHECK(store_append(agg, seq, (int64_t)seq, "\x01", 1, 0) == 0);
	/* a second pgoffd on the directory is refused */
	CHECK(store_open(&again, open_dir(), &o) == -EBUSY);
	store_close(agg);
	store_close(ev);
	o.ext = NULL;
	CHECK(store_open(&ev, open_dir(), &o) == 0);
	n_ev = count_records(ev, &first, &last);
	CHECK(n_ev == 10 && first == 101 && store_last_seq(ev) == 110);
	store_close(ev);
	o.ext = ".agg";
	CHECK(store_open(&agg, open_dir(), &o) == 0);
	n_agg = count_records(agg, &first, &last);
	CHECK(n_agg == 3 && first == 1 && store_last_seq(agg) == 3);
	store_close(agg);
}

/* A record (h, with len and flags set; its payload p) appended to the
 * segment at path, its CRC made as pgoffd makes it (a flagged record's
 * flags are in it). */
static void append_record(const char *path, struct store_hdr *h,
			  const void *p)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	int fd;

	crc = crc32(crc, (const Bytef *)&h->seq, sizeof(h->seq));
	crc = crc32(crc, (const Bytef *)&h->wall_ns, sizeof(h->wall_ns));
	crc = crc32(crc, (const Bytef *)&h->len, sizeof(h->len));
	crc = crc32(crc, (const Bytef *)&h->flags, sizeof(h->flags));
	h->crc = (uint32_t)crc32(crc, p, h->len);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	CHECK(write(fd, h, sizeof(*h)) == (ssize_t)sizeof(*h));
	CHECK(write(fd, p, h->len) == (ssize_t)h->len);
	close(fd);
}

/* A record as the pgoffd before Zstandard wrote it: deflated with the
 * dictionary, appended to the segment at path. */
static void append_deflated(const char *path, const char *dict, uint64_t seq,
			    const char *line)
{
	unsigned char z[1024];
	struct store_hdr h = { .magic = STORE_MAGIC, .flags = STORE_F_DEFLATE,
			       .seq = seq, .wall_ns = (int64_t)seq };
	z_stream d = { 0 };

	CHECK(deflateInit2(&d, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	CHECK(deflateSetDictionary(&d, (const Bytef *)dict,
				   (uInt)strlen(dict)) == Z_OK);
	d.next_in = (Bytef *)(uintptr_t)line;
	d.avail_in = (uInt)strlen(line);
	d.next_out = z;
	d.avail_out = sizeof(z);
	CHECK(deflate(&d, Z_FINISH) == Z_STREAM_END);
	h.len = (uint32_t)d.total_out;
	deflateEnd(&d);
	append_record(path, &h, z);
}

static int test_line(char *buf, size_t len, uint64_t seq)
{
	return snprintf(buf, len, "{\"type\":\"offcpu\",\"seq\":%llu,"
			"\"wait\":\"lock\",\"pad\":\"%0400d\"}",
			(unsigned long long)seq, 7);
}

/* Compressed records: smaller on disk, read back as they were, mixed
 * with records stored as they are and deflated ones (older pgoffds'); a
 * damaged one, or one with a flag no pgoffd writes, ends its segment's
 * reading with a log line. */
static void test_compress(void)
{
	static const char dict[] = "\"type\":\"offcpu\",\"wait\":\"lock\"";
	static char buf[STORE_MAX_PAYLOAD + 1];
	struct store_opts o = { .max_bytes = 1 << 20,
				.max_age_ns = 1000000000000LL,
				.dict = dict, .dict_len = sizeof(dict) - 1 };
	char line[600], path[512];
	struct store_cursor c;
	struct store_info i;
	struct store_hdr h;
	struct store *s = NULL;
	uint32_t flags;
	int fd, n = 0;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK(store_open(&s, open_dir(), &o) == 0);
	CHECK(store_append(s, 1, 1, "{}", 2, 0) == 0);	/* plain */
	store_close(s);
	seg_path(0, path, sizeof(path));
	test_line(line, sizeof(line), 2);
	append_deflated(path, dict, 2, line);
	o.compress = true;
	CHECK(store_open(&s, open_dir(), &o) == 0);
	store_info(s, &i);
	CHECK(i.records == 2 && store_last_seq(s) == 2);
	for (uint64_t seq = 3; seq <= 20; seq++) {
		int len = test_line(line, sizeof(line), seq);

		CHECK(store_append(s, seq, (int64_t)seq, line, (size_t)len, 0) == 0);
	}
	CHECK(store_append(s, 21, 21, "x", 1, 0) == 0);	/* too short to gain */
	store_info(s, &i);
	if (i.records != 21 || i.bytes >= 21 * 32 + 19 * 100)
		fprintf(stderr, "# %llu records, %llu bytes\n",
			(unsigned long long)i.records,
			(unsigned long long)i.bytes);
	CHECK(i.records == 21 && i.bytes < 21 * 32 + 19 * 100);
	store_cursor_init(s, &c, 0);
	while (store_next(s, &c, &h, buf, sizeof(buf)) == 1) {
		CHECK(h.seq == (uint64_t)++n);
		if (h.seq == 1)
			CHECK_STR(buf, "{}");
		else if (h.seq == 21)
			CHECK_STR(buf, "x");
		else {
			test_line(line, sizeof(line), h.seq);
			CHECK_STR(buf, line);
			CHECK(h.len == strlen(line));
		}
	}
	store_cursor_close(&c);
	CHECK(n == 21);
	store_close(s);
	/* the new records are Zstandard's */
	seg_path(1, path, sizeof(path));
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pread(fd, &flags, sizeof(flags), 12) == (ssize_t)sizeof(flags));
	CHECK(flags == STORE_F_ZSTD);
	/* a codec no pgoffd writes: not a record, skipped with the rest */
	flags = STORE_F_DEFLATE | STORE_F_ZSTD;
	CHECK(pwrite(fd, &flags, sizeof(flags), 12) == (ssize_t)sizeof(flags));
	close(fd);
	CHECK(store_open(&s, open_dir(), &o) == 0);
	store_info(s, &i);
	CHECK(i.records == 2);
	store_close(s);
	/* a flag bit flipped: not the CRC's record, skipped with the rest */
	seg_path(0, path, sizeof(path));
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, "\0", 1, 12 + 32 + 2) == 1);	/* the second record's */
	close(fd);
	CHECK(store_open(&s, open_dir(), &o) == 0);
	store_info(s, &i);
	CHECK(i.records == 1);
	store_close(s);
}


/* The events the batch tests store: seqs with gaps (events below
 * record-min take seqs too), a wall time and a line of each its own. */
#define BATCH_EVENTS	91
static uint64_t ev_seq(int i) { return 1000 + 3 * (uint64_t)i; }
static int64_t ev_wall(int i) { return 5000000 + 7 * (int64_t)i; }
static int ev_line(char *buf, size_t len, int i)
{
	return snprintf(buf, len, "{\"type\":\"offcpu\",\"seq\":%llu,"
			"\"wait\":\"lock\",\"pad\":\"%0*d\"}",
			(unsigned long long)ev_seq(i), 100 + i % 37, i);
}

/* Event i's index from its seq; -1 when none has it. */
static int ev_index(uint64_t seq)
{
	return seq >= 1000 && (seq - 1000) % 3 == 0 &&
	       (seq - 1000) / 3 < BATCH_EVENTS ? (int)((seq - 1000) / 3) : -1;
}

/* Events from..to-1 added, then written (as one loop round does). */
static void add_round(struct store *s, int from, int to)
{
	char line[600];

	for (int i = from; i < to; i++) {
		int n = ev_line(line, sizeof(line), i);

		CHECK(store_add(s, ev_seq(i), ev_wall(i), line, (size_t)n,
				0) == 0);
	}
	store_flush(s);
}

/* The batch tests' store in dir, opened again (with their dictionary). */
static struct store *batch_reopen(bool compress)
{
	static const char dict[] = "\"type\":\"offcpu\",\"wait\":\"lock\"";
	struct store_opts o = { .max_bytes = 1 << 20,
				.max_age_ns = 1000000000000LL,
				.compress = compress, .dict = dict,
				.dict_len = sizeof(dict) - 1 };
	struct store *s = NULL;

	if (store_open(&s, open_dir(), &o))
		return NULL;
	return s;
}

/* Three rounds: 50 events (a batch), 1 (a record alone), 40; stored as
 * they are or compressed. */
static struct store *batch_store(bool compress)
{
	struct store *s;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	if (!mkdtemp(dir) || !(s = batch_reopen(compress)))
		return NULL;
	add_round(s, 0, 50);
	add_round(s, 50, 51);
	add_round(s, 51, BATCH_EVENTS);
	return s;
}

/*
 * Read from c on: every event must be the next one expected (from
 * index *next on, each line and wall time as stored). Returns the
 * events read, -1 at the first that is not as expected.
 */
static int read_expected(struct store *s, struct store_cursor *c, int *next,
			 int max, uint64_t after_seq, int64_t since_wall)
{
	static char buf[STORE_MAX_PAYLOAD + 1];
	char line[600];
	struct store_hdr h;
	int n = 0;

	while (n < max && store_next(s, c, &h, buf, sizeof(buf)) == 1) {
		int i = ev_index(h.seq), len;

		if (h.seq <= after_seq || h.wall_ns < since_wall)
			continue;	/* as a reader skips them */
		len = ev_line(line, sizeof(line), i < 0 ? 0 : i);
		if (i != *next || h.wall_ns != ev_wall(i) ||
		    h.len != (uint32_t)len || strcmp(buf, line)) {
			fprintf(stderr, "# expected event %d, got seq %llu "
				"(event %d), wall %lld, len %u\n", *next,
				(unsigned long long)h.seq, i,
				(long long)h.wall_ns, h.len);
			return -1;
		}
		++*next;
		n++;
	}
	return n;
}

/* Batches read back event by event, exactly, compressed or not, and
 * after a reopen; what the store says of them counts events. */
static void test_batch_roundtrip(void)
{
	for (int compress = 0; compress < 2; compress++) {
		struct store *s = batch_store(compress);
		struct store_cursor c;
		struct store_info i;
		int next = 0;

		CHECK(s);
		store_info(s, &i);
		CHECK(i.records == BATCH_EVENTS && i.segments == 1);
		CHECK(i.first_seq == ev_seq(0) &&
		      i.last_seq == ev_seq(BATCH_EVENTS - 1));
		CHECK(i.first_wall == ev_wall(0) &&
		      i.last_wall == ev_wall(BATCH_EVENTS - 1));
		/* three records: two batches and one alone */
		if (compress && i.bytes > 3000)
			fprintf(stderr, "# %llu bytes\n",
				(unsigned long long)i.bytes);
		CHECK(i.bytes < (compress ? 3000u : 20000u));
		store_cursor_init(s, &c, 0);
		CHECK(read_expected(s, &c, &next, 1000, 0, 0) == BATCH_EVENTS);
		store_cursor_close(&c);
		store_close(s);
		s = batch_reopen(true);
		CHECK(s && store_last_seq(s) == ev_seq(BATCH_EVENTS - 1));
		store_info(s, &i);
		CHECK(i.records == BATCH_EVENTS &&
		      i.first_seq == ev_seq(0) &&
		      i.last_wall == ev_wall(BATCH_EVENTS - 1));
		next = 0;
		store_cursor_init(s, &c, 0);
		CHECK(read_expected(s, &c, &next, 1000, 0, 0) == BATCH_EVENTS);
		store_cursor_close(&c);
		store_close(s);
		cleanup();
	}
}

/*
 * A reader placed by seq or by time inside a batch gets exactly the
 * events after it; two readers reading in turns (each evicting the
 * other's batch from the store's cache) each go on from their place.
 */
static void test_batch_positions(void)
{
	struct store *s = batch_store(true);
	struct store_cursor a, b;
	int na = 0, nb = 0;

	CHECK(s);
	for (int k = -1; k < BATCH_EVENTS; k++) {
		/* after event k: at a batch's start, inside, at its end */
		uint64_t after = k < 0 ? 0 : ev_seq(k);
		struct store_cursor c;
		int next = k + 1;

		store_cursor_init_seq(s, &c, after);
		if (read_expected(s, &c, &next, 1000, after, 0) !=
		    BATCH_EVENTS - k - 1)
			fprintf(stderr, "# after seq %llu\n",
				(unsigned long long)after);
		CHECK(next == BATCH_EVENTS);
		store_cursor_close(&c);
		next = k + 1;
		store_cursor_init(s, &c, ev_wall(k + 1));
		CHECK(read_expected(s, &c, &next, 1000, 0, ev_wall(k + 1)) ==
		      BATCH_EVENTS - k - 1);
		store_cursor_close(&c);
	}
	/* a in the first batch, b in the last, in turns of 7 */
	store_cursor_init(s, &a, 0);
	store_cursor_init_seq(s, &b, ev_seq(55));
	nb = 56;
	while (na < BATCH_EVENTS || nb < BATCH_EVENTS) {
		int ra = read_expected(s, &a, &na, 7, 0, 0);
		int rb = read_expected(s, &b, &nb, 7, ev_seq(55), 0);

		CHECK(ra >= 0 && rb >= 0);
		if (ra <= 0 && rb <= 0)
			break;
	}
	CHECK(na == BATCH_EVENTS && nb == BATCH_EVENTS);
	store_cursor_close(&a);
	store_cursor_close(&b);
	store_close(s);
	cleanup();
}

/* Events added and not yet written: a reader at the end gets them (they
 * are written first), then the end. */
static void test_batch_pending_read(void)
{
	struct store *s = batch_store(true);
	struct store_cursor c;
	struct store_info i;
	char line[600];
	int next = 0, n;

	CHECK(s);
	store_cursor_init(s, &c, 0);
	CHECK(read_expected(s, &c, &next, 1000, 0, 0) == BATCH_EVENTS);
	/* more than the batch table's worth: a full batch is written on
	 * its own, the rest waits */
	store_close(s);
	s = batch_reopen(true);
	CHECK(s);
	n = ev_line(line, sizeof(line), 0);
	CHECK(store_pending_since(s) == -1);
	for (uint64_t seq = 5000; seq < 5003; seq++)
		CHECK(store_add(s, seq, 1, line, (size_t)n,
				100 + (int64_t)seq - 5000) == 0);
	CHECK(store_pending_since(s) == 100);	/* the first's: its age */
	store_info(s, &i);
	CHECK(i.last_seq == ev_seq(BATCH_EVENTS - 1));	/* not written */
	n = 0;
	{
		static char buf[STORE_MAX_PAYLOAD + 1];
		struct store_hdr h;

		store_cursor_close(&c);
		store_cursor_init_seq(s, &c, ev_seq(BATCH_EVENTS - 1));
		while (store_next(s, &c, &h, buf, sizeof(buf)) == 1)
			n += h.seq >= 5000 && h.seq < 5003 && !strcmp(buf, line);
		CHECK(store_next(s, &c, &h, buf, sizeof(buf)) == 0);
	}
	if (n != 3)
		fprintf(stderr, "# %d of the 3 events added were read\n", n);
	CHECK(n == 3);
	store_info(s, &i);
	CHECK(i.last_seq == 5002 && i.records == BATCH_EVENTS + 3);
	CHECK(store_pending_since(s) == -1);
	store_cursor_close(&c);
	store_close(s);
	cleanup();
}

/*
 * A reader placed after everything written (a client resuming from the
 * last seq it saw, or asking for a time after the last stored event)
 * gets the events added since, whether they are still pending when it
 * reads or were written after it was placed (another client's send
 * writes them), into the segment being written.
 */
static void test_batch_reader_after_all(void)
{
	struct store *s = batch_store(true);
	static char buf[STORE_MAX_PAYLOAD + 1];
	char line[600];
	int len = ev_line(line, sizeof(line), 0);
	uint64_t seq = 7000;

	CHECK(s);
	store_flush(s);
	for (int how = 0; how < 3; how++) {
		struct store_cursor c;
		struct store_hdr h;
		int n = 0;

		if (how == 2)
			store_cursor_init(s, &c, 7000 + (int64_t)seq);
		else
			store_cursor_init_seq(s, &c, store_last_seq(s));
		for (int k = 0; k < 3; k++, seq++)
			CHECK(store_add(s, seq, 7000 + (int64_t)seq, line,
					(size_t)len, 0) == 0);
		if (how == 1)
			store_flush(s);		/* before the reader's turn */
		while (store_next(s, &c, &h, buf, sizeof(buf)) == 1)
			n += h.seq >= seq - 3 && h.seq < seq;
		if (n != 3)
			fprintf(stderr, "# way %d: %d of the 3 events added "
				"after the reader was placed were read\n",
				how, n);
		CHECK(n == 3);
		store_cursor_close(&c);
	}
	store_close(s);
	cleanup();
}

/* Byte offsets of the records in segment path. */
static int record_offsets(const char *path, long *off, int max)
{
	struct store_hdr h;
	long at = 0;
	int n = 0, fd = open(path, O_RDONLY);

	while (n < max && pread(fd, &h, sizeof(h), at) == (ssize_t)sizeof(h)) {
		off[n++] = at;
		at += (long)(sizeof(h) + h.len);
	}
	close(fd);
	return n;
}

/*
 * A batch torn at the tail (kill -9 while it was written) is cut whole
 * at open, every event before it kept; a byte flipped inside the newest
 * segment's last batch cuts it the same way; inside its first batch,
 * everything after it.
 */
static void test_batch_damaged(void)
{
	struct store *s = batch_store(true);
	struct store_info i;
	struct store_cursor c;
	char path[512];
	long off[8];
	int n, next = 0, fd;

	CHECK(s);
	store_close(s);
	seg_path(0, path, sizeof(path));
	CHECK(record_offsets(path, off, 8) == 3);
	/* torn: the last batch's payload ends short */
	CHECK(truncate(path, off[2] + (long)sizeof(struct store_hdr) + 40) == 0);
	s = batch_reopen(true);
	CHECK(s);
	store_info(s, &i);
	CHECK(i.records == 51 && store_last_seq(s) == ev_seq(50));
	store_cursor_init(s, &c, 0);
	CHECK(read_expected(s, &c, &next, 1000, 0, 0) == 51);
	store_cursor_close(&c);
	/* the next seqs go on after it: the torn batch was never sent */
	add_round(s, 51, BATCH_EVENTS);
	store_close(s);
	/* a byte of the last batch's compressed body flipped */
	n = record_offsets(path, off, 8);
	seg_path(1, path, sizeof(path));
	CHECK(n == 2 && record_offsets(path, off, 8) == 1);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, "\xff", 1, off[0] + (long)sizeof(struct store_hdr) +
		     (long)sizeof(struct store_batch) + 20) == 1);
	close(fd);
	s = batch_reopen(true);
	CHECK(s);
	store_info(s, &i);
	CHECK(i.records == 51 && store_last_seq(s) == ev_seq(50));
	store_close(s);
	/* the first batch's count flipped: it and what follows are cut */
	seg_path(0, path, sizeof(path));
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, "\x05", 1, (long)sizeof(struct store_hdr)) == 1);
	close(fd);
	s = batch_reopen(true);
	CHECK(s);
	store_info(s, &i);
	CHECK(i.records == 0);
	store_close(s);
	cleanup();
}

/* A batch record (its header b, then body) appended to the segment at
 * path, its CRC whole whatever the body says. */
static void append_batch(const char *path, const void *body, size_t body_len,
			 const struct store_batch *b, uint64_t seq, int64_t wall,
			 bool zstd)
{
	static unsigned char payload[STORE_MAX_PAYLOAD];
	struct store_hdr h = { .magic = STORE_MAGIC, .seq = seq,
			       .wall_ns = wall, .flags = STORE_F_BATCH |
							 (zstd ? STORE_F_ZSTD : 0) };

	memcpy(payload, b, sizeof(*b));
	memcpy(payload + sizeof(*b), body, body_len);
	h.len = (uint32_t)(sizeof(*b) + body_len);
	append_record(path, &h, payload);
}

/*
 * Batches whose CRC holds but whose body lies (a decompression bomb, a
 * table that does not add up): never decompressed past the cap, counted
 * as unreadable, the reader goes on past them.
 */
static void test_batch_lies(void)
{
	static char zeros[STORE_BATCH_MAX + 4096];
	static unsigned char z[1 << 16];
	struct store *s = batch_store(false);
	struct store_batch b = { .count = 2, .last_seq = 9001,
				 .last_wall = 1 };
	struct store_batch_ev ev[2] = { { 9000, 1, 0, 10 }, { 9001, 1, 10, 10 } };
	char body[20 + sizeof(ev)], path[512];
	size_t zn;
	struct store_cursor c;
	struct store_info i;
	int next = 0;

	CHECK(s);
	store_close(s);
	seg_path(0, path, sizeof(path));
	/* more zeros than any batch holds, in a small frame: a bomb */
	zn = ZSTD_compress(z, sizeof(z), zeros, sizeof(zeros), 1);
	CHECK(!ZSTD_isError(zn));
	b.plain_len = sizeof(body);
	append_batch(path, z, zn, &b, 9000, 1, true);
	/* a table whose second line does not follow the first */
	memset(body, 'x', 20);
	ev[1].off = 11;
	memcpy(body + 20, ev, sizeof(ev));
	append_batch(path, body, sizeof(body), &b, 9000, 1, false);
	s = batch_reopen(true);
	CHECK(s);
	store_info(s, &i);
	CHECK(i.records == BATCH_EVENTS + 4);	/* their headers are whole */
	store_cursor_init(s, &c, 0);
	CHECK(read_expected(s, &c, &next, 1000, 0, 0) == BATCH_EVENTS);
	store_cursor_close(&c);
	store_info(s, &i);
	if (i.unreadable != 1)
		fprintf(stderr, "# %llu unreadable\n",
			(unsigned long long)i.unreadable);
	CHECK(i.unreadable == 1);	/* the rest of its segment skipped */
	store_close(s);
	/* the table alone */
	seg_path(0, path, sizeof(path));
	CHECK(truncate(path, 0) == 0);
	append_batch(path, body, sizeof(body), &b, 9000, 1, false);
	s = batch_reopen(true);
	CHECK(s);
	store_cursor_init(s, &c, 0);
	next = 0;
	CHECK(read_expected(s, &c, &next, 1000, 0, 0) == 0);
	store_cursor_close(&c);
	store_info(s, &i);
	CHECK(i.unreadable == 1);
	store_close(s);
	cleanup();
}

/* make_room as the recorder's: a file system with budget bytes for the
 * store; past it, the oldest segments go, or it refuses */
static uint64_t room_budget;
static struct store *room_store;

static int fake_room(void *ctx, uint64_t bytes)
{
	struct store_info i;

	(void)ctx;
	for (;;) {
		store_info(room_store, &i);
		if (i.bytes + bytes <= room_budget)
			return 0;
		if (!store_remove_oldest_seg(room_store))
			return -ENOSPC;
	}
}

/*
 * Room kept free: before a new segment the oldest go (counted apart from
 * the size cap's); when that is not enough the write fails, its events
 * counted once, as kept-free drops, and recording stops until the retry;
 * store_hold stops it the same way.
 */
static void test_make_room(void)
{
	struct store_opts o = { .max_bytes = 1 << 20, .max_age_ns = 1000000000000LL,
				.seg_bytes = 4096, .make_room = fake_room };
	struct store_info i;
	char line[1000];
	int64_t wall;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK(store_open(&room_store, open_dir(), &o) == 0);
	memset(line, 'r', sizeof(line));
	room_budget = 12 * 1024;
	for (uint64_t seq = 1; seq <= 40; seq++)
		CHECK(store_append(room_store, seq, (int64_t)seq, line,
				   sizeof(line), 0) == 0);
	store_info(room_store, &i);
	printf("# 40 records, 12 KiB to spare: %llu bytes in %zu segments, "
	       "%llu removed for room (%llu in all)\n",
	       (unsigned long long)i.bytes, i.segments,
	       (unsigned long long)i.removed_keep_free,
	       (unsigned long long)i.removed_segments);
	CHECK(i.removed_keep_free > 0 && i.removed_segments == i.removed_keep_free);
	CHECK(i.bytes <= room_budget + 4096 && i.last_seq == 40 && i.writing);
	CHECK(store_oldest_wall(room_store, &wall) && wall == (int64_t)i.first_seq);
	/* no room at all: the next segment is refused */
	room_budget = 0;
	for (uint64_t seq = 41; seq <= 45; seq++)
		store_append(room_store, seq, (int64_t)seq, line, sizeof(line), 0);
	store_info(room_store, &i);
	printf("# no room: dropped keep-free %llu, disk full %llu, error %llu; "
	       "%zu segment left\n", (unsigned long long)i.dropped_keep_free,
	       (unsigned long long)i.dropped_disk_full,
	       (unsigned long long)i.dropped_error, i.segments);
	CHECK(!i.writing && i.dropped_keep_free >= 1 &&
	      i.dropped_keep_free + i.records == 45 - i.first_seq + 1);
	CHECK(i.dropped_disk_full == 0 && i.dropped_error == 0);
	CHECK(i.segments == 1 && !store_oldest_wall(room_store, &wall));
	/* room again: the retry, 10 s later, writes */
	room_budget = 1 << 20;
	CHECK(store_append(room_store, 46, 46, line, sizeof(line), 20000) == 0);
	store_hold(room_store, 30000);
	CHECK(store_append(room_store, 47, 47, line, sizeof(line), 31000) == -EAGAIN);
	store_info(room_store, &i);
	CHECK(!i.writing && i.last_seq == 46 && i.dropped_error == 0);
	store_close(room_store);
	cleanup();
}

/*
 * Cursors retention overtakes: one that read a record of the oldest
 * segment, one that read nothing, one at the end. Once the oldest
 * segments go, no cursor holds an fd on them; the first two are told
 * what they lost (from the seq after the last they read, or the first
 * stored, to the one before the first held) and read on from there; the
 * third, at the end when 9 was the last stored, what came after it.
 */
static void test_cursor_overtaken(void)
{
	static char buf[STORE_MAX_PAYLOAD + 1];
	struct store_cursor a, b, end;
	uint64_t first = 0, last = 0;
	struct store_info i;
	struct store_hdr h;
	char line[1000];
	bool lost_a, lost_b, lost_end;
	int fd_a;
	struct store *s;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	s = reopen(16 * 1024);		/* 4 KiB segments, 3 records each */
	CHECK(s);
	memset(line, 'c', sizeof(line));
	for (uint64_t seq = 1; seq <= 9; seq++)
		CHECK(store_append(s, seq, (int64_t)seq, line, sizeof(line), 0) == 0);
	store_cursor_init(s, &a, 0);
	store_cursor_init(s, &b, 0);
	CHECK(store_next(s, &a, &h, buf, sizeof(buf)) == 1 && h.seq == 1);
	fd_a = a.fd;
	CHECK(fd_a >= 0);
	store_cursor_init_seq(s, &end, 9);
	for (uint64_t seq = 10; seq <= 30; seq++)
		CHECK(store_append(s, seq, (int64_t)seq, line, sizeof(line), 0) == 0);
	store_info(s, &i);
	lost_a = store_cursor_lost(&a, &first, &last);
	printf("# the store holds %llu-%llu; a (read seq 1, fd %d, now %d) "
	       "lost %s %llu-%llu\n", (unsigned long long)i.first_seq,
	       (unsigned long long)i.last_seq, fd_a, a.fd,
	       lost_a ? "seqs" : "nothing", (unsigned long long)first,
	       (unsigned long long)last);
	CHECK(i.first_seq > 9 && a.fd == -1 && b.fd == -1);
	CHECK(lost_a && first == 2 && last == i.first_seq - 1);
	CHECK(!store_cursor_lost(&a, &first, &last));	/* told once */
	CHECK(store_next(s, &a, &h, buf, sizeof(buf)) == 1 && h.seq == i.first_seq);
	lost_b = store_cursor_lost(&b, &first, &last);
	CHECK(lost_b && first == 1 && last == i.first_seq - 1);
	CHECK(store_next(s, &b, &h, buf, sizeof(buf)) == 1 && h.seq == i.first_seq);
	/* at the end before 10 was stored: 10 on went before it read them */
	lost_end = store_cursor_lost(&end, &first, &last);
	printf("# end: lost %s %llu-%llu\n", lost_end ? "seqs" : "nothing",
	       (unsigned long long)first, (unsigned long long)last);
	CHECK(lost_end && first == 10 && last == i.first_seq - 1);
	store_cursor_close(&a);
	store_cursor_close(&b);
	store_cursor_close(&end);
	store_cursor_close(&end);	/* twice: harmless */
	store_close(s);
	cleanup();
}

/* A batch that cannot be written: each of its events counted as lost. */
static void test_batch_write_error(void)
{
	struct rlimit old, lim;
	struct store *s = batch_store(false);
	struct store_info i;
	char line[1000];

	CHECK(s);
	memset(line, 'z', sizeof(line));
	store_info(s, &i);
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = i.bytes + 5000;	/* the batch's write is cut short */
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	for (uint64_t seq = 20000; seq < 20020; seq++)
		CHECK(store_add(s, seq, 1, line, sizeof(line), 0) == 0);
	store_flush(s);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	signal(SIGXFSZ, SIG_DFL);
	store_info(s, &i);
	CHECK(!i.writing && i.dropped_disk_full == 20 && i.dropped_error == 0);
	CHECK(i.records == BATCH_EVENTS);
	/* stopped: added events are dropped until the retry */
	CHECK(store_add(s, 20020, 1, line, sizeof(line), 5000) == -EAGAIN);
	CHECK(store_add(s, 20021, 1, line, sizeof(line), 10000) == 0);
	CHECK(store_add(s, 20022, 1, line, sizeof(line), 10000) == 0);
	store_flush(s);
	store_info(s, &i);
	CHECK(i.writing && i.dropped_disk_full == 21 && i.dropped_error == 0 &&
	      i.last_seq == 20022);
	store_close(s);
	cleanup();
}

/* What lines take compressed as a batch is (the flight record's owners
 * are charged by it): one cluster's event lines a small part of their
 * bytes, random SQL text most; uncompressed, their length; past a batch,
 * an error. */
static void test_batch_cost(void)
{
	static const char dict[] = "{\"type\":\"offcpu\",\"pid\":";
	struct store_opts o = { .max_bytes = 1 << 20, .max_age_ns = 1LL << 50,
				.compress = true, .dict = dict,
				.dict_len = sizeof(dict) - 1 };
	static char lines[STORE_BATCH_MAX + 1];
	struct store *s = NULL;
	size_t n = 0;
	ssize_t c;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-store-test.XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK(store_open(&s, open_dir(), &o) == 0);
	for (unsigned int i = 0; n < 16000; i++)
		n += (size_t)snprintf(lines + n, sizeof(lines) - n,
				      "{\"type\":\"offcpu\",\"pid\":%u,"
				      "\"wait\":\"sleep\",\"duration_ns\":%u}\n",
				      4242 + i % 4, 2000000 + i * 37);
	c = store_batch_cost(s, lines, n);
	CHECK(c > 0 && (double)c / (double)n < 0.2);
	srandom(42);
	for (size_t k = 0; k < n; k++)
		lines[k] = "abcdefghijklmnopqrstuvwxyz0123456789"[random() % 36];
	c = store_batch_cost(s, lines, n);
	CHECK((double)c / (double)n > 0.55 && c <= (ssize_t)n);
	CHECK(store_batch_cost(s, lines, STORE_BATCH_MAX + 1) == -E2BIG);
	store_close(s);
	o.compress = false;
	CHECK(store_open(&s, open_dir(), &o) == 0);
	CHECK(store_batch_cost(s, lines, n) == (ssize_t)n);
	store_close(s);
	cleanup();
}

int main(void)
{
	log_init("test_store", LOG_LEVEL_WARN);
	RUN(test_frame_roundtrip);
	RUN(test_torn);
	RUN(test_corrupt);
	RUN(test_retention);
	RUN(test_batch_cost);
	RUN(test_files);
	RUN(test_size_cap);
	RUN(test_write_error);
	cleanup();
	RUN(test_empty_tick);	/* a directory of its own */
	cleanup();
	RUN(test_two_stores);
	cleanup();
	RUN(test_compress);
	cleanup();
	RUN(test_batch_roundtrip);
	RUN(test_batch_positions);
	RUN(test_batch_pending_read);
	RUN(test_batch_reader_after_all);
	RUN(test_batch_damaged);
	RUN(test_batch_lies);
	RUN(test_batch_write_error);
	RUN(test_make_room);
	RUN(test_cursor_overtaken);
	return CHECK_DONE();
}
