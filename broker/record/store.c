// SPDX-License-Identifier: GPL-2.0-only
/* store.c - the flight recorder's segment files; see store.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "broker/record/store.h"
#include "common/log.h"

#define SEG_NAME_LEN	20		/* 16 hex digits + ".seg" */

/* Why events were not stored: each is counted under one. */
enum drop_cause {
	DROP_ERROR,		/* an I/O error, memory, a record too long */
	DROP_DISK_FULL,		/* ENOSPC, EDQUOT (a short write too) */
	DROP_KEEP_FREE,		/* make_room: record-keep-free */
	DROP_CAUSES,
};
#define RETRY_MS	10000
#define SEG_MIN		(64u * 1024u)

struct store {
	int dirfd;
	int fd;				/* the segment written, -1: none yet */
	struct store_seg *segs;		/* oldest first; the last is written */
	size_t nsegs, cap;
	struct store_opts opts;
	uint64_t last_seq;
	bool stopped;
	enum drop_cause stop_cause;	/* why it stopped */
	int64_t retry_ms;
	uint64_t dropped[DROP_CAUSES];	/* events, by cause */
	uint64_t removed, removed_keep_free;
	struct store_cursor *cursors;	/* the open ones (store_cursor_init) */
	uint64_t unreadable;
	ZSTD_CCtx *cctx;		/* made at first use */
	ZSTD_CDict *cdict;		/* the dictionary, digested once */
	ZSTD_CDict *cdict_batch;	/* the same at the batches' level */
	unsigned char *zout;		/* payload being appended */
	size_t zout_cap;
	ZSTD_DCtx *dctx;
	ZSTD_DDict *ddict;
	z_stream inf;			/* for records of an older pgoffd */
	unsigned char *zin;		/* compressed payload being read */
	bool inf_ok;
	/* the batch being made (store_add) */
	char *pend;			/* its lines; then its body */
	struct store_batch_ev *pend_ev;
	size_t pend_len;		/* bytes of lines */
	uint32_t pend_n;
	int64_t pend_mono;		/* when the last was added */
	int64_t pend_first_mono;	/* and the first */
	/* the batch a reader read last, decompressed: readers take turns,
	 * and each reads on from where it was (its seg_id, off) */
	char *plain;
	struct store_batch plain_b;
	uint64_t plain_seg, plain_off;
	size_t plain_rec;		/* its record's bytes on disk */
	bool plain_ok;
};

/*
 * Payloads are compressed with Zstandard and the dictionary digested
 * once: pgoffd's loop writes thousands of events a second, and a line is
 * a few hundred bytes, so most of the saving is in the dictionary, and
 * most of deflate's time was in loading it again for every record. An
 * event alone, level 4: on stored events as small as deflate's or smaller
 * (levels 1-3 are up to 7 % larger on long waits' lines), in half of
 * deflate's time. A batch, BATCH_LEVEL: see its measure below. No frame
 * checksum, size or dictionary id: the record's CRC and length say those.
 */
#define ZSTD_LEVEL	4
#define BATCH_LEVEL	1

/* s->zout, which holds any payload with room for a batch's header. */
static int make_zout(struct store *s)
{
	size_t cap = sizeof(struct store_batch) +
		     ZSTD_compressBound(STORE_MAX_PAYLOAD);

	if (!s->zout && !(s->zout = malloc(cap)))
		return -ENOMEM;
	s->zout_cap = cap;
	return 0;
}

/* The compressor and its dictionaries; 0, or -ENOMEM with none made. */
static int make_compressor(struct store *s)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_CDict *d = c && s->opts.dict ?
			ZSTD_createCDict(s->opts.dict, s->opts.dict_len,
					 ZSTD_LEVEL) : NULL;
	ZSTD_CDict *db = d ? ZSTD_createCDict(s->opts.dict, s->opts.dict_len,
					      BATCH_LEVEL) : NULL;

	if (!c || (s->opts.dict && (!d || !db)) || make_zout(s) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0))) {
		ZSTD_freeCCtx(c);
		ZSTD_freeCDict(d);
		ZSTD_freeCDict(db);
		return -ENOMEM;
	}
	s->cctx = c;
	s->cdict = d;
	s->cdict_batch = db;
	return 0;
}

/* in (len bytes) compressed at level (with the dictionary, if any, of
 * that level) into s->zout from byte at on; 0 and *out_len, or -errno
 * (then it is stored as it is). */
static int compress_payload(struct store *s, int level, const void *in,
			    size_t len, size_t at, size_t *out_len)
{
	ZSTD_CDict *d = level == ZSTD_LEVEL ? s->cdict : s->cdict_batch;
	size_t n;

	if (!s->cctx && make_compressor(s))
		return -ENOMEM;
	/* referenced again for every frame: a reference lasts one; the
	 * level is the dictionary's, or this one without a dictionary */
	if (d ? ZSTD_isError(ZSTD_CCtx_refCDict(s->cctx, d)) :
	    ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx,
						ZSTD_c_compressionLevel, level)))
		return -EIO;
	n = ZSTD_compress2(s->cctx, s->zout + at, s->zout_cap - at, in, len);
	if (ZSTD_isError(n))
		return -EIO;
	*out_len = n;
	return 0;
}

ssize_t store_batch_cost(struct store *s, const void *lines, size_t len)
{
	size_t n;
	int err;

	if (!s->opts.compress)
		return (ssize_t)len;
	if (len > STORE_BATCH_MAX)
		return -E2BIG;
	err = compress_payload(s, BATCH_LEVEL, lines, len, 0, &n);
	return err ? err : (ssize_t)(n < len ? n : len);
}

/* in (len bytes, Zstandard) into buf (cap bytes, NUL-terminated); its
 * length, or -EINVAL when it does not decompress into what fits. */
static ssize_t decompress_payload(struct store *s, const void *in, size_t len,
				  char *buf, size_t cap)
{
	size_t n;

	if (!s->dctx) {
		ZSTD_DCtx *c = ZSTD_createDCtx();
		ZSTD_DDict *d = c && s->opts.dict ?
				ZSTD_createDDict(s->opts.dict,
						 s->opts.dict_len) : NULL;

		if (!c || (s->opts.dict && !d)) {
			ZSTD_freeDCtx(c);
			ZSTD_freeDDict(d);
			return -ENOMEM;
		}
		s->dctx = c;
		s->ddict = d;
	}
	n = s->ddict ? ZSTD_decompress_usingDDict(s->dctx, buf, cap - 1,
						  in, len, s->ddict) :
		       ZSTD_decompressDCtx(s->dctx, buf, cap - 1, in, len);
	if (ZSTD_isError(n))
		return -EINVAL;
	buf[n] = '\0';
	return (ssize_t)n;
}

/* s->zin (len bytes, deflated: an older pgoffd's record) into buf (cap
 * bytes, NUL-terminated); its length, or -EINVAL when it does not inflate
 * into what fits. */
static ssize_t inflate_payload(struct store *s, size_t len, char *buf,
			       size_t cap)
{
	z_stream *z = &s->inf;

	if (!s->inf_ok) {
		if (inflateInit2(z, -15) != Z_OK)
			return -ENOMEM;
		s->inf_ok = true;
	} else if (inflateReset(z) != Z_OK) {
		return -EIO;
	}
	if (s->opts.dict && inflateSetDictionary(z, (const Bytef *)s->opts.dict,
						 (uInt)s->opts.dict_len) != Z_OK)
		return -EIO;
	z->next_in = s->zin;
	z->avail_in = (uInt)len;
	z->next_out = (Bytef *)buf;
	z->avail_out = (uInt)(cap - 1);
	if (inflate(z, Z_FINISH) != Z_STREAM_END || z->avail_in)
		return -EINVAL;
	buf[z->total_out] = '\0';
	return (ssize_t)z->total_out;
}

static uint32_t record_crc(const struct store_hdr *h, const void *payload)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, (const Bytef *)&h->seq, sizeof(h->seq));
	crc = crc32(crc, (const Bytef *)&h->wall_ns, sizeof(h->wall_ns));
	crc = crc32(crc, (const Bytef *)&h->len, sizeof(h->len));
	if (h->flags)	/* records before flags had 0 there, not in the CRC */
		crc = crc32(crc, (const Bytef *)&h->flags, sizeof(h->flags));
	return (uint32_t)crc32(crc, payload, h->len);
}

size_t store_frame(void *buf, size_t cap, uint64_t seq, int64_t wall_ns,
		   const void *payload, size_t len)
{
	return store_frame_flags(buf, cap, seq, wall_ns, 0, payload, len);
}

size_t store_frame_flags(void *buf, size_t cap, uint64_t seq, int64_t wall_ns,
			 uint32_t flags, const void *payload, size_t len)
{
	struct store_hdr h = { .magic = STORE_MAGIC, .len = (uint32_t)len,
			       .flags = flags, .seq = seq, .wall_ns = wall_ns };

	if (len > STORE_MAX_PAYLOAD || cap < sizeof(h) + len)
		return 0;
	h.crc = record_crc(&h, payload);
	memcpy(buf, &h, sizeof(h));
	memcpy((char *)buf + sizeof(h), payload, len);
	return sizeof(h) + len;
}

/* The header alone: STORE_OK when it may start a record. */
static enum store_check check_hdr(const void *buf, size_t avail,
				  struct store_hdr *h)
{
	if (avail < sizeof(*h)) {
		/* what is there must be the start of a magic */
		uint32_t magic = STORE_MAGIC;

		return memcmp(buf, &magic, avail < 4 ? avail : 4) ?
		       STORE_CORRUPT : STORE_TORN;
	}
	memcpy(h, buf, sizeof(*h));
	if (h->magic != STORE_MAGIC || h->len > STORE_MAX_PAYLOAD ||
	    (h->flags != 0 && h->flags != STORE_F_DEFLATE &&
	     h->flags != STORE_F_ZSTD && h->flags != STORE_F_BATCH &&
	     h->flags != (STORE_F_BATCH | STORE_F_ZSTD)))
		return STORE_CORRUPT;
	return STORE_OK;
}

/* A batch record's header (*b) from its payload, if it can be one. */
static bool batch_hdr(const struct store_hdr *h, const void *payload,
		      struct store_batch *b)
{
	if (h->len < sizeof(*b))
		return false;
	memcpy(b, payload, sizeof(*b));
	return b->count >= 2 && b->plain_len <= STORE_BATCH_MAX &&
	       b->plain_len >= (uint64_t)b->count *
			       sizeof(struct store_batch_ev) &&
	       b->last_seq >= h->seq && b->last_seq - h->seq >= b->count - 1 &&
	       ((h->flags & STORE_F_ZSTD) ||
		h->len - sizeof(*b) == b->plain_len);
}

enum store_check store_check(const void *buf, size_t avail,
			     struct store_hdr *h)
{
	enum store_check r = check_hdr(buf, avail, h);
	const char *payload = (const char *)buf + sizeof(*h);
	struct store_batch b;

	if (r != STORE_OK)
		return r;
	if (avail - sizeof(*h) < h->len)
		return STORE_TORN;
	if (record_crc(h, payload) != h->crc ||
	    ((h->flags & STORE_F_BATCH) && !batch_hdr(h, payload, &b)))
		return STORE_CORRUPT;
	return STORE_OK;
}

size_t store_retention(const struct store_seg *segs, size_t n,
		       uint64_t max_bytes, uint64_t room, int64_t max_age_ns,
		       int64_t now_wall)
{
	uint64_t total = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		total += segs[i].bytes;
	for (; k + 1 < n; k++) {
		bool too_big = total + room > max_bytes;
		bool too_old = segs[k].records &&
			       segs[k].last_wall < now_wall - max_age_ns;

		if (!too_big && !too_old)
			break;
		total -= segs[k].bytes;
	}
	return k;
}

/* ".seg", or the store's own extension (one directory, two stores) */
static const char *seg_ext(const struct store *s)
{
	return s->opts.ext ? s->opts.ext : ".seg";
}

static void seg_name(const struct store *s, char *buf, size_t len,
		     uint64_t first_seq)
{
	snprintf(buf, len, "%016" PRIx64 "%s", first_seq, seg_ext(s));
}

/* name is 16 lowercase hex digits then ext: *first_seq from them */
static bool parse_name(const char *name, const char *ext, uint64_t *first_seq)
{
	uint64_t v = 0;

	if (strlen(name) != SEG_NAME_LEN || strcmp(name + 16, ext))
		return false;
	for (int i = 0; i < 16; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return false;
	}
	*first_seq = v;
	return true;
}

static bool parse_seg_name(const struct store *s, const char *name,
			   uint64_t *first_seq)
{
	return parse_name(name, seg_ext(s), first_seq);
}

bool store_segment_name(const char *name, const char *ext)
{
	uint64_t seq;

	return parse_name(name, ext ? ext : ".seg", &seq);
}

/*
 * A segment file: a regular file of one name, no link followed; -EINVAL
 * if not regular, -EMLINK if it has other names. At start root opens the
 * newest to cut its tail: never a file linked in from elsewhere.
 */
static int open_seg(const struct store *s, uint64_t first_seq, int flags)
{
	char name[SEG_NAME_LEN + 1];
	struct stat st;
	int fd, err;

	seg_name(s, name, sizeof(name), first_seq);
	fd = openat(s->dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		    O_NOCTTY, 0600);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) || !S_ISREG(st.st_mode) ? -EINVAL :
	      st.st_nlink != 1 ? -EMLINK : 0;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int add_seg(struct store *s, const struct store_seg *seg)
{
	if (s->nsegs == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct store_seg *n = realloc(s->segs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->segs = n;
		s->cap = cap;
	}
	s->segs[s->nsegs++] = *seg;
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct store_seg *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Read a segment's records, checking each; seg->bytes ends at the last
 * good one. *bad: where a bad record starts (or the file size), *torn:
 * it ran past the end of the file.
 */
static int scan_seg(int fd, struct store_seg *seg, uint64_t *size,
		    bool *torn)
{
	size_t cap = (1u << 20) + sizeof(struct store_hdr) + STORE_MAX_PAYLOAD;
	size_t have = 0, pos = 0;
	char *buf = malloc(cap);
	uint64_t base = 0;	/* file offset of buf[0] */
	struct stat st;
	bool eof = false;

	*torn = false;
	*size = 0;
	if (!buf)
		return -ENOMEM;
	if (fstat(fd, &st)) {
		free(buf);
		return -errno;
	}
	*size = (uint64_t)st.st_size;
	for (;;) {
		struct store_hdr h;
		enum store_check r = store_check(buf + pos, have - pos, &h);

		if (r == STORE_TORN && !eof) {
			ssize_t n;

			memmove(buf, buf + pos, have - pos);
			have -= pos;
			base += pos;
			pos = 0;
			n = pread(fd, buf + have, cap - have,
				  (off_t)(base + have));
			if (n < 0) {
				free(buf);
				return -errno;
			}
			eof = n == 0;
			have += (size_t)n;
			continue;
		}
		if (r != STORE_OK) {
			*torn = r == STORE_TORN && have > pos;
			break;
		}
		if (!seg->records) {
			seg->first_seq = h.seq;
			seg->first_wall = h.wall_ns;
		}
		if (h.flags & STORE_F_BATCH) {	/* store_check read it */
			struct store_batch b;

			batch_hdr(&h, buf + pos + sizeof(h), &b);
			seg->records += b.count;
			seg->last_seq = b.last_seq;
			seg->last_wall = b.last_wall;
		} else {
			seg->records++;
			seg->last_seq = h.seq;
			seg->last_wall = h.wall_ns;
		}
		pos += sizeof(h) + h.len;
	}
	seg->bytes = base + pos;
	free(buf);
	return 0;
}

/* One segment found at open; the newest's bad tail is cut. */
static int load_seg(struct store *s, uint64_t first_seq, bool newest)
{
	char name[SEG_NAME_LEN + 1];
	struct store_seg seg = { .id = first_seq };
	uint64_t size;
	bool torn;
	int fd = open_seg(s, first_seq, newest ? O_RDWR : O_RDONLY);
	int err;

	seg_name(s, name, sizeof(name), first_seq);
	if (fd < 0) {
		log_warnx("record store: %s skipped: %s", name,
			  fd == -EINVAL ? "not a regular file" :
			  fd == -EMLINK ? "it has other names (a hard link)" :
			  fd == -ELOOP ? "a symbolic link" :
			  strerror(-fd));
		return 0;
	}
	err = scan_seg(fd, &seg, &size, &torn);
	if (err) {
		log_warnx("record store: %s skipped: %s", name, strerror(-err));
		close(fd);
		return err == -ENOMEM ? err : 0;
	}
	if (seg.bytes < size && newest) {
		if (ftruncate(fd, (off_t)seg.bytes))
			log_warn("record store: %s: cannot cut its tail", name);
		else
			log_warnx("record store: %s: %s tail of %" PRIu64
				  " bytes cut after %" PRIu64 " records", name,
				  torn ? "torn" : "corrupt", size - seg.bytes,
				  seg.records);
	} else if (seg.bytes < size) {
		log_warnx("record store: %s: a corrupt record at byte %" PRIu64
			  ": the %" PRIu64 " bytes after it are not read",
			  name, seg.bytes, size - seg.bytes);
	}
	close(fd);
	if (!seg.records) {
		/* nothing in it to keep */
		if (unlinkat(s->dirfd, name, 0))
			log_warn("record store: cannot remove empty %s", name);
		return 0;
	}
	if (seg.last_seq > s->last_seq)
		s->last_seq = seg.last_seq;
	return add_seg(s, &seg);
}

static int load(struct store *s)
{
	int dfd = dup(s->dirfd), err = 0;
	uint64_t *found = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	rewinddir(dir);	/* dup() shares the offset: read from the start */
	while ((d = readdir(dir))) {
		uint64_t seq;

		if (!parse_seg_name(s, d->d_name, &seq))
			continue;
		if (n == cap) {
			uint64_t *m = realloc(found, (cap ? cap * 2 : 16) *
						     sizeof(*m));

			if (!m) {
				err = -ENOMEM;
				goto out;
			}
			found = m;
			cap = cap ? cap * 2 : 16;
		}
		found[n++] = seq;
	}
	for (size_t i = 0; i < n; i++)	/* few: insertion sort */
		for (size_t j = i; j > 0 && found[j - 1] > found[j]; j--) {
			uint64_t t = found[j];

			found[j] = found[j - 1];
			found[j - 1] = t;
		}
	for (size_t i = 0; i < n && !err; i++)
		err = load_seg(s, found[i], i + 1 == n);
	if (s->nsegs)	/* qsort(NULL, 0, …) is undefined */
		qsort(s->segs, s->nsegs, sizeof(*s->segs), cmp_seg);
out:
	free(found);
	closedir(dir);
	return err;
}

static uint64_t seg_limit(const struct store *s)
{
	uint64_t b = s->opts.max_bytes / 4;

	if (s->opts.seg_bytes)		/* the unit tests' small segments */
		return s->opts.seg_bytes;
	if (b > STORE_SEG_MAX)
		b = STORE_SEG_MAX;
	return b < SEG_MIN ? SEG_MIN : b;
}

int store_open(struct store **out, int dirfd, const struct store_opts *o)
{
	struct store *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		close(dirfd);
		return -ENOMEM;
	}
	s->dirfd = dirfd;
	s->fd = -1;
	s->opts = *o;
	/* one writer: a second pgoffd would cut the first one's tail */
	if (flock(dirfd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		store_close(s);
		return err;
	}
	err = load(s);
	if (err) {
		store_close(s);
		return err;
	}
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	/* cursors still open (not closed first) hold no fd, nor the store */
	while (s->cursors)
		store_cursor_close(s->cursors);
	store_flush(s);
	if (s->fd >= 0)
		close(s->fd);
	close(s->dirfd);
	ZSTD_freeCCtx(s->cctx);
	ZSTD_freeCDict(s->cdict);
	ZSTD_freeCDict(s->cdict_batch);
	ZSTD_freeDCtx(s->dctx);
	ZSTD_freeDDict(s->ddict);
	if (s->inf_ok)
		inflateEnd(&s->inf);
	free(s->zout);
	free(s->zin);
	free(s->pend);
	free(s->pend_ev);
	free(s->plain);
	free(s->segs);
	free(s);
}

void store_set_limits(struct store *s, const struct store_opts *o)
{
	s->opts = *o;
}

static void close_fd(struct store_cursor *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/*
 * The k oldest segments are going: every cursor on one of them has its fd
 * closed and is moved to the oldest segment left; the seqs it had not
 * read are noted, from the first it had not read of a removed segment
 * to the last before the oldest left.
 */
static void cursors_outlived(struct store *s, size_t k)
{
	const struct store_seg *left = &s->segs[k];	/* never removed */
	uint64_t held = left->records ? left->first_seq : s->last_seq + 1;

	if (s->plain_ok && s->plain_seg < left->id)
		s->plain_ok = false;
	for (struct store_cursor *c = s->cursors; c; c = c->next) {
		uint64_t from = 0;

		if (c->seg_id >= left->id)
			continue;
		for (size_t i = 0; i < k && !from; i++) {
			const struct store_seg *g = &s->segs[i];

			if (g->id >= c->seg_id && g->records &&
			    g->last_seq > c->last_seq)
				from = g->first_seq > c->last_seq ?
				       g->first_seq : c->last_seq + 1;
		}
		if (from && from < held) {
			if (!c->lost_first)
				c->lost_first = from;
			c->lost_last = held - 1;
		}
		close_fd(c);
		c->seg_id = left->id;
		c->off = 0;
		c->in_batch = 0;
	}
}

static void remove_oldest(struct store *s, size_t k, const char *why)
{
	if (!k)
		return;	/* segs may be NULL: no memmove of nothing */
	cursors_outlived(s, k);
	for (size_t i = 0; i < k; i++) {
		char name[SEG_NAME_LEN + 1];

		seg_name(s, name, sizeof(name), s->segs[i].id);
		if (unlinkat(s->dirfd, name, 0) && errno != ENOENT)
			log_warn("record store: cannot remove %s", name);
		s->removed++;
	}
	log_debug("record store: %zu oldest segments removed (%s)", k, why);
	memmove(s->segs, s->segs + k, (s->nsegs - k) * sizeof(*s->segs));
	s->nsegs -= k;
}

/* A new segment for records from seq on. */
static int start_seg(struct store *s, uint64_t seq)
{
	struct store_seg seg = { .id = seq, .first_seq = seq };
	char name[SEG_NAME_LEN + 1];
	int fd, err;

	seg_name(s, name, sizeof(name), seq);
	fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = add_seg(s, &seg);
	if (err) {
		close(fd);
		unlinkat(s->dirfd, name, 0);
		return err;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = fd;
	return 0;
}

static enum drop_cause cause_of(int err)
{
	return err == -ENOSPC || err == -EDQUOT ? DROP_DISK_FULL : DROP_ERROR;
}

static void stop(struct store *s, enum drop_cause cause, int err,
		 int64_t mono_ms)
{
	if (!s->stopped && cause == DROP_KEEP_FREE)
		log_warnx("record store: recording stopped: its file system "
			  "would have less than record-keep-free free, even "
			  "without the record's older segments; live streaming "
			  "goes on, recording is tried again in %d s",
			  RETRY_MS / 1000);
	else if (!s->stopped)
		log_warnx("record store: recording stopped: %s; live streaming "
			  "goes on, recording is tried again in %d s",
			  strerror(-err), RETRY_MS / 1000);
	s->stopped = true;
	s->stop_cause = cause;
	s->retry_ms = mono_ms + RETRY_MS;
}

/* n events not stored, once each: for the cause recording stopped for. */
static void count_dropped(struct store *s, enum drop_cause cause, uint64_t n)
{
	s->dropped[cause] += n;
}

/*
 * A record (h, its payload p of h->len bytes: its CRC is made here) at
 * the end of the segment written; last_seq, last_wall, events: what it
 * holds. 0, or -errno with its events counted as dropped.
 */
static int write_record(struct store *s, struct store_hdr *h, const void *p,
			uint64_t last_seq, int64_t last_wall, uint32_t events,
			int64_t mono_ms)
{
	struct iovec iov[2] = { { h, sizeof(*h) }, { (void *)p, h->len } };
	uint64_t size = sizeof(*h) + h->len;
	struct store_seg *cur = s->fd >= 0 ? &s->segs[s->nsegs - 1] : NULL;
	enum drop_cause cause = DROP_ERROR;
	ssize_t n;
	int err;

	/* after an error: a fresh segment, as a torn write may linger;
	 * but one still empty (its first write failed) is used again */
	if (!cur || (cur->records && (s->stopped ||
				      cur->bytes + size > seg_limit(s)))) {
		if (s->opts.make_room &&
		    s->opts.make_room(s->opts.room_ctx, size)) {
			cause = DROP_KEEP_FREE;
			err = -ENOSPC;
			goto failed;
		}
		err = start_seg(s, h->seq);
		if (err)
			goto failed;
		remove_oldest(s, store_retention(s->segs, s->nsegs,
						 s->opts.max_bytes, size,
						 s->opts.max_age_ns, last_wall),
			      "size or age");
		cur = &s->segs[s->nsegs - 1];
	}
	h->crc = record_crc(h, p);
	n = pwritev(s->fd, iov, 2, (off_t)cur->bytes);
	if (n != (ssize_t)size) {
		err = n < 0 ? -errno : -ENOSPC;	/* short: the disk filled */
		if (ftruncate(s->fd, (off_t)cur->bytes))
			log_warn("record store: cannot cut a short write");
		goto failed;
	}
	if (s->stopped)
		log_info("record store: recording again");
	s->stopped = false;
	if (!cur->records) {
		cur->first_seq = h->seq;
		cur->first_wall = h->wall_ns;
	}
	cur->records += events;
	cur->last_seq = last_seq;
	cur->last_wall = last_wall;
	cur->bytes += size;
	s->last_seq = last_seq;
	/* the cap holds with the segment being written in it */
	remove_oldest(s, store_retention(s->segs, s->nsegs, s->opts.max_bytes,
					 0, s->opts.max_age_ns, last_wall),
		      "size or age");
	if (s->opts.written)
		s->opts.written(s->opts.written_ctx, last_seq, size);
	return 0;
failed:
	if (cause != DROP_KEEP_FREE)
		cause = cause_of(err);
	stop(s, cause, err, mono_ms);
	count_dropped(s, cause, events);
	if (s->opts.written)
		s->opts.written(s->opts.written_ctx, last_seq, 0);
	return err;
}

/* An event dropped before any write: the recorder is told too. */
static int dropped_unwritten(struct store *s, enum drop_cause cause,
			     uint64_t seq, int err)
{
	count_dropped(s, cause, 1);
	if (s->opts.written)
		s->opts.written(s->opts.written_ctx, seq, 0);
	return err;
}

int store_append(struct store *s, uint64_t seq, int64_t wall_ns,
		 const char *payload, size_t len, int64_t mono_ms)
{
	struct store_hdr h = { .magic = STORE_MAGIC, .len = (uint32_t)len,
			       .seq = seq, .wall_ns = wall_ns };
	const void *p = payload;
	size_t zlen;

	if (len > STORE_MAX_PAYLOAD)
		return dropped_unwritten(s, DROP_ERROR, seq, -EMSGSIZE);
	if (s->stopped && mono_ms < s->retry_ms)
		return dropped_unwritten(s, s->stop_cause, seq, -EAGAIN);
	/* compressed when that is smaller; else (or on failure) as it is */
	if (s->opts.compress &&
	    compress_payload(s, ZSTD_LEVEL, payload, len, 0, &zlen) == 0 &&
	    zlen < len) {
		h.len = (uint32_t)zlen;
		h.flags = STORE_F_ZSTD;
		p = s->zout;
	}
	return write_record(s, &h, p, seq, wall_ns, 1, mono_ms);
}

/* Room for the batch being made: its lines, then its table in the end. */
static int make_batch(struct store *s)
{
	if (!s->pend)
		s->pend = malloc(STORE_BATCH_MAX);
	if (!s->pend_ev)
		s->pend_ev = malloc(STORE_BATCH_MAX /
				    sizeof(struct store_batch_ev) *
				    sizeof(struct store_batch_ev));
	return s->pend && s->pend_ev && make_zout(s) == 0 ? 0 : -ENOMEM;
}

int store_add(struct store *s, uint64_t seq, int64_t wall_ns,
	      const char *line, size_t len, int64_t mono_ms)
{
	const size_t ev = sizeof(struct store_batch_ev);
	int err;

	if (s->pend_n && s->pend_len + (s->pend_n + 1) * ev + len >
			 STORE_BATCH_MAX)
		store_flush(s);
	if (len + ev > STORE_BATCH_MAX)	/* in no batch: a record alone */
		return store_append(s, seq, wall_ns, line, len, mono_ms);
	if (s->stopped && mono_ms < s->retry_ms) {
		count_dropped(s, s->stop_cause, 1);
		return -EAGAIN;
	}
	err = make_batch(s);
	if (!err && s->pend_n && seq <= s->pend_ev[s->pend_n - 1].seq)
		err = -EINVAL;	/* a batch's seqs rise */
	if (err) {
		count_dropped(s, DROP_ERROR, 1);
		return err;
	}
	if (!s->pend_n)
		s->pend_first_mono = mono_ms;
	memcpy(s->pend + s->pend_len, line, len);
	s->pend_ev[s->pend_n++] = (struct store_batch_ev){
		.seq = seq, .wall_ns = wall_ns, .off = (uint32_t)s->pend_len,
		.len = (uint32_t)len };
	s->pend_len += len;
	s->pend_mono = mono_ms;
	return 0;
}

/*
 * BATCH_LEVEL 1: batches of 70 stored lines of pgoffd's (651 bytes) with
 * their table, the caches emptied before each flush as pgoffd's loop
 * leaves them, took 571-640 ns and 35.6 B an event at level 1, 563-797
 * ns and 36.9 B at 2, 730 ns and 37.6 B at 3, 1,125 ns and 38.6 B at 4
 * (adding and writing included).
 */
void store_flush(struct store *s)
{
	struct store_hdr h = { .magic = STORE_MAGIC, .flags = STORE_F_BATCH };
	const struct store_batch_ev *first = s->pend_ev, *last;
	size_t table = s->pend_n * sizeof(*first), plain, zlen;
	struct store_batch b;
	unsigned char *body;

	if (!s->pend_n)
		return;
	last = first + s->pend_n - 1;
	if (s->pend_n == 1) {	/* alone: a record as it always was */
		s->pend_n = 0;
		s->pend_len = 0;
		store_append(s, first->seq, first->wall_ns, s->pend,
			     first->len, s->pend_mono);
		return;
	}
	plain = s->pend_len + table;
	memcpy(s->pend + s->pend_len, s->pend_ev, table);
	b = (struct store_batch){ .count = s->pend_n,
				  .plain_len = (uint32_t)plain,
				  .last_seq = last->seq,
				  .last_wall = last->wall_ns };
	body = s->zout + sizeof(b);
	if (s->opts.compress &&
	    compress_payload(s, BATCH_LEVEL, s->pend, plain, sizeof(b),
			     &zlen) == 0 && zlen < plain) {
		h.flags |= STORE_F_ZSTD;
	} else {
		memcpy(body, s->pend, plain);
		zlen = plain;
	}
	memcpy(s->zout, &b, sizeof(b));
	h.len = (uint32_t)(sizeof(b) + zlen);
	h.seq = first->seq;
	h.wall_ns = first->wall_ns;
	s->pend_n = 0;
	s->pend_len = 0;
	write_record(s, &h, s->zout, b.last_seq, b.last_wall, b.count,
		     s->pend_mono);
}

int64_t store_pending_since(const struct store *s)
{
	return s->pend_n ? s->pend_first_mono : -1;
}

uint64_t store_pending_first_seq(const struct store *s)
{
	return s->pend_n ? s->pend_ev[0].seq : 0;
}

void store_tick(struct store *s, int64_t now_wall)
{
	remove_oldest(s, store_retention(s->segs, s->nsegs, UINT64_MAX, 0,
					 s->opts.max_age_ns, now_wall), "age");
}

bool store_oldest_wall(const struct store *s, int64_t *wall)
{
	if (s->nsegs < 2)
		return false;
	*wall = s->segs[0].records ? s->segs[0].first_wall : INT64_MIN;
	return true;
}

uint64_t store_remove_oldest_seg(struct store *s)
{
	uint64_t bytes;

	if (s->nsegs < 2)
		return 0;
	bytes = s->segs[0].bytes;
	remove_oldest(s, 1, "free space");
	s->removed_keep_free++;
	return bytes;
}

void store_hold(struct store *s, int64_t mono_ms)
{
	stop(s, DROP_KEEP_FREE, -ENOSPC, mono_ms);
}

void store_info(const struct store *s, struct store_info *i)
{
	memset(i, 0, sizeof(*i));
	for (size_t k = 0; k < s->nsegs; k++) {
		const struct store_seg *g = &s->segs[k];

		if (!g->records)
			continue;
		if (!i->records) {
			i->first_seq = g->first_seq;
			i->first_wall = g->first_wall;
		}
		i->segments++;
		i->bytes += g->bytes;
		i->records += g->records;
		i->last_seq = g->last_seq;
		i->last_wall = g->last_wall;
	}
	i->dropped_disk_full = s->dropped[DROP_DISK_FULL];
	i->dropped_keep_free = s->dropped[DROP_KEEP_FREE];
	i->dropped_error = s->dropped[DROP_ERROR];
	i->removed_segments = s->removed;
	i->removed_keep_free = s->removed_keep_free;
	i->unreadable = s->unreadable;
	i->writing = !s->stopped;
}

uint64_t store_next_removed_last_seq(const struct store *s)
{
	for (size_t k = 0; k + 1 < s->nsegs; k++)
		if (s->segs[k].records)
			return s->segs[k].last_seq;
	return 0;
}

uint64_t store_last_seq(const struct store *s)
{
	return s->last_seq;
}

/* The segment c reads, or the first after it; NULL: none. */
static const struct store_seg *cursor_seg(const struct store *s,
					  const struct store_cursor *c)
{
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].id >= c->seg_id)
			return &s->segs[i];
	return NULL;
}

/*
 * c at segment i's start, or, past the last, where the next record will
 * be written: the end of the newest segment (events added and not yet
 * written, and whatever is written from now on, come after it; a new
 * segment is found after it too), or the first segment to come.
 */
static void cursor_at(struct store *s, struct store_cursor *c, size_t i)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->store = s;
	c->next = s->cursors;
	if (c->next)
		c->next->prev = c;
	s->cursors = c;
	if (i < s->nsegs) {
		c->seg_id = s->segs[i].id;
	} else if (s->nsegs) {
		c->seg_id = s->segs[s->nsegs - 1].id;
		c->off = s->segs[s->nsegs - 1].bytes;
		c->last_seq = s->last_seq;	/* as if it had read them */
	} else {
		c->seg_id = s->last_seq + 1;
	}
}

void store_cursor_init(struct store *s, struct store_cursor *c,
		       int64_t since_wall)
{
	size_t i;

	/* the first segment with a record at or after since */
	for (i = 0; i < s->nsegs && s->segs[i].last_wall < since_wall; i++)
		;
	cursor_at(s, c, i);
}

void store_cursor_init_seq(struct store *s, struct store_cursor *c,
			   uint64_t seq)
{
	size_t i;

	for (i = 0; i < s->nsegs && (!s->segs[i].records ||
				     s->segs[i].last_seq <= seq); i++)
		;
	cursor_at(s, c, i);
	if (c->last_seq < seq)	/* what it skips is not lost to it */
		c->last_seq = seq;
}

void store_cursor_close(struct store_cursor *c)
{
	struct store *s = c->store;

	close_fd(c);
	if (!s)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->cursors = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->store = NULL;
	c->prev = c->next = NULL;
}

bool store_cursor_lost(struct store_cursor *c, uint64_t *first,
		       uint64_t *last)
{
	if (!c->lost_first)
		return false;
	*first = c->lost_first;
	*last = c->lost_last;
	c->lost_first = c->lost_last = 0;
	return true;
}

/*
 * The batch whose record (h, its payload p) is at c's place into
 * s->plain, checked: every event's seq above the one before, from h's
 * to the batch's last, and its line right after the one before; nothing
 * decompresses past STORE_BATCH_MAX. Returns 0, or -EINVAL.
 */
static int load_batch(struct store *s, const struct store_cursor *c,
		      const struct store_hdr *h, const unsigned char *p)
{
	const size_t ev_size = sizeof(struct store_batch_ev);
	struct store_batch b;
	struct store_batch_ev ev = { 0 };
	uint64_t off = 0;
	size_t table;

	s->plain_ok = false;
	if (!batch_hdr(h, p, &b))
		return -EINVAL;
	if (!s->plain && !(s->plain = malloc(STORE_BATCH_MAX + 1)))
		return -ENOMEM;
	if (h->flags & STORE_F_ZSTD) {
		ssize_t n = decompress_payload(s, p + sizeof(b),
					       h->len - sizeof(b), s->plain,
					       STORE_BATCH_MAX + 1);

		if (n != (ssize_t)b.plain_len)
			return -EINVAL;
	} else {
		memcpy(s->plain, p + sizeof(b), b.plain_len);
	}
	table = b.plain_len - b.count * ev_size;
	for (uint32_t i = 0; i < b.count; i++) {
		uint64_t prev = ev.seq;

		memcpy(&ev, s->plain + table + i * ev_size, ev_size);
		if ((i ? ev.seq <= prev : (ev.seq != h->seq ||
					   ev.wall_ns != h->wall_ns)) ||
		    ev.off != off || ev.len > table - off)
			return -EINVAL;
		off += ev.len;
	}
	if (off != table || ev.seq != b.last_seq || ev.wall_ns != b.last_wall)
		return -EINVAL;
	s->plain_b = b;
	s->plain_seg = c->seg_id;
	s->plain_off = c->off;
	s->plain_rec = sizeof(*h) + h->len;
	s->plain_ok = true;
	return 0;
}

/* The next event of the batch in s->plain into h and buf; c moves on. */
static int batch_event(struct store *s, struct store_cursor *c,
		       struct store_hdr *h, char *buf, size_t cap)
{
	const struct store_batch *b = &s->plain_b;
	const size_t ev_size = sizeof(struct store_batch_ev);
	struct store_batch_ev ev;

	memcpy(&ev, s->plain + b->plain_len - (b->count - c->in_batch) *
	       ev_size, ev_size);
	if (ev.len >= cap)
		return -EINVAL;
	memcpy(buf, s->plain + ev.off, ev.len);
	buf[ev.len] = '\0';
	h->seq = ev.seq;
	h->wall_ns = ev.wall_ns;
	h->len = ev.len;
	if (++c->in_batch == b->count) {
		c->off += s->plain_rec;
		c->in_batch = 0;
	}
	return 1;
}

/*
 * The record at c's place in segment g (or, inside a batch, its next
 * event) into h and buf, c moved past it. Returns 1, -EINVAL when it is
 * not a whole record (changed under us, or corrupt), or -ENOMEM.
 */
static int read_record(struct store *s, struct store_cursor *c,
		       const struct store_seg *g, struct store_hdr *h,
		       char *buf, size_t cap)
{
	ssize_t n, plain;
	char *dst = buf;
	bool z;
	int err;

	if (c->in_batch && s->plain_ok && s->plain_seg == c->seg_id &&
	    s->plain_off == c->off)
		return batch_event(s, c, h, buf, cap);
	n = pread(c->fd, h, sizeof(*h), (off_t)c->off);
	if (n != (ssize_t)sizeof(*h) || check_hdr(h, sizeof(*h), h) != STORE_OK ||
	    c->off + sizeof(*h) + h->len > g->bytes ||
	    (c->in_batch && !(h->flags & STORE_F_BATCH)))
		return -EINVAL;
	z = h->flags != 0;	/* compressed, or a batch */
	if (!z && h->len >= cap)
		return -EINVAL;
	if (z && !s->zin && !(s->zin = malloc(STORE_MAX_PAYLOAD)))
		return -ENOMEM;
	if (z)
		dst = (char *)s->zin;
	n = pread(c->fd, dst, h->len, (off_t)(c->off + sizeof(*h)));
	if (n != (ssize_t)h->len || record_crc(h, dst) != h->crc)
		return -EINVAL;
	if (h->flags & STORE_F_BATCH) {
		err = load_batch(s, c, h, s->zin);
		if (err)
			return err;
		/* a reader that was inside it goes on from there */
		if (c->in_batch >= s->plain_b.count)
			return -EINVAL;
		return batch_event(s, c, h, buf, cap);
	}
	plain = h->len;
	if (h->flags == STORE_F_ZSTD)
		plain = decompress_payload(s, s->zin, h->len, buf, cap);
	else if (z)
		plain = inflate_payload(s, h->len, buf, cap);
	else
		buf[h->len] = '\0';
	if (plain < 0)
		return -EINVAL;
	c->off += sizeof(*h) + h->len;
	h->len = (uint32_t)plain;
	return 1;
}

int store_next(struct store *s, struct store_cursor *c, struct store_hdr *h,
	       char *buf, size_t cap)
{
	for (;;) {
		const struct store_seg *g = cursor_seg(s, c);
		int r;

		if (!g)
			goto end;
		if (g->id != c->seg_id || c->fd < 0) {
			close_fd(c);
			if (g->id != c->seg_id) {
				c->off = 0;
				c->in_batch = 0;
			}
			c->seg_id = g->id;
			c->fd = open_seg(s, g->id, O_RDONLY);
			if (c->fd < 0) {
				/* gone (retention): the next one */
				c->seg_id++;
				c->off = 0;
				c->in_batch = 0;
				continue;
			}
		}
		if (c->off + sizeof(*h) > g->bytes) {
			if (g == &s->segs[s->nsegs - 1])
				goto end;
			close_fd(c);
			c->seg_id++;
			c->off = 0;
			c->in_batch = 0;
			continue;
		}
		r = read_record(s, c, g, h, buf, cap);
		if (r == 1)
			c->last_seq = h->seq;
		if (r == 1 || r == -ENOMEM)
			return r;
		/* changed under us: what is after it is not to be trusted */
		s->unreadable++;
		log_warnx("record store: segment %016" PRIx64 ": unreadable "
			  "record at byte %" PRIu64 ", rest of it skipped",
			  g->id, c->off);
		close_fd(c);
		c->seg_id = g->id + 1;
		c->off = 0;
		c->in_batch = 0;
		continue;
end:
		if (!s->pend_n)
			return 0;	/* caught up with the writer */
		/* what was added is read too: a replay that ends here
		 * hands over to live with nothing missed */
		store_flush(s);
	}
}
