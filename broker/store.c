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
#include "broker/store.h"
#include "protocol/log.h"

#define SEG_NAME_LEN	20		/* 16 hex digits + ".seg" */
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
	int64_t retry_ms;
	uint64_t dropped_disk_full, dropped_error, removed;
	ZSTD_CCtx *cctx;		/* made at first use */
	ZSTD_CDict *cdict;		/* the dictionary, digested once */
	unsigned char *zout;		/* compressed payload being appended */
	size_t zout_cap;
	ZSTD_DCtx *dctx;
	ZSTD_DDict *ddict;
	z_stream inf;			/* for records of an older pgoffd */
	unsigned char *zin;		/* compressed payload being read */
	bool inf_ok;
};

/*
 * A payload compressed into s->zout; 0 and *out_len, or -errno (then it
 * is stored as it is). Zstandard with the dictionary digested once:
 * pgoffd's loop writes thousands a second, and a record is a few hundred
 * bytes, so most of the saving is in the dictionary, and most of
 * deflate's time was in loading it again for every record. Level 4: on
 * stored events, as small as deflate's or smaller (levels 1-3 are up to
 * 7 % larger on long waits' lines), in half of deflate's time. No frame
 * checksum, size or dictionary id: the record's CRC and length say those.
 */
#define ZSTD_LEVEL	4

/* The compressor and its dictionary; 0, or -ENOMEM with none made. */
static int make_compressor(struct store *s)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_CDict *d = c && s->opts.dict ?
			ZSTD_createCDict(s->opts.dict, s->opts.dict_len,
					 ZSTD_LEVEL) : NULL;
	size_t cap = ZSTD_compressBound(STORE_MAX_PAYLOAD);
	unsigned char *out = malloc(cap);

	if (!c || !out || (s->opts.dict && !d) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel,
						ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0))) {
		ZSTD_freeCCtx(c);
		ZSTD_freeCDict(d);
		free(out);
		return -ENOMEM;
	}
	s->cctx = c;
	s->cdict = d;
	s->zout = out;
	s->zout_cap = cap;
	return 0;
}

static int compress_payload(struct store *s, const void *in, size_t len,
			    size_t *out_len)
{
	size_t n;

	if (!s->cctx && make_compressor(s))
		return -ENOMEM;
	/* referenced again for every frame: a reference lasts one */
	if (s->cdict && ZSTD_isError(ZSTD_CCtx_refCDict(s->cctx, s->cdict)))
		return -EIO;
	n = ZSTD_compress2(s->cctx, s->zout, s->zout_cap, in, len);
	if (ZSTD_isError(n))
		return -EIO;
	*out_len = n;
	return 0;
}

/* s->zin (len bytes, Zstandard) into buf (cap bytes, NUL-terminated);
 * its length, or -EINVAL when it does not decompress into what fits. */
static ssize_t decompress_payload(struct store *s, size_t len, char *buf,
				  size_t cap)
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
						  s->zin, len, s->ddict) :
		       ZSTD_decompressDCtx(s->dctx, buf, cap - 1, s->zin, len);
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
	struct store_hdr h = { .magic = STORE_MAGIC, .len = (uint32_t)len,
			       .seq = seq, .wall_ns = wall_ns };

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
	     h->flags != STORE_F_ZSTD))
		return STORE_CORRUPT;
	return STORE_OK;
}

enum store_check store_check(const void *buf, size_t avail,
			     struct store_hdr *h)
{
	enum store_check r = check_hdr(buf, avail, h);

	if (r != STORE_OK)
		return r;
	if (avail - sizeof(*h) < h->len)
		return STORE_TORN;
	if (record_crc(h, (const char *)buf + sizeof(*h)) != h->crc)
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

static bool parse_seg_name(const struct store *s, const char *name,
			   uint64_t *first_seq)
{
	uint64_t v = 0;

	if (strlen(name) != SEG_NAME_LEN || strcmp(name + 16, seg_ext(s)))
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

/* A segment file, read-only: a regular file, no link followed. */
static int open_seg(const struct store *s, uint64_t first_seq, int flags)
{
	char name[SEG_NAME_LEN + 1];
	struct stat st;
	int fd;

	seg_name(s, name, sizeof(name), first_seq);
	fd = openat(s->dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
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
		seg->records++;
		seg->last_seq = h.seq;
		seg->last_wall = h.wall_ns;
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
			  fd == -EINVAL ? "not a regular file" : strerror(-fd));
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
	if (s->fd >= 0)
		close(s->fd);
	close(s->dirfd);
	ZSTD_freeCCtx(s->cctx);
	ZSTD_freeCDict(s->cdict);
	ZSTD_freeDCtx(s->dctx);
	ZSTD_freeDDict(s->ddict);
	if (s->inf_ok)
		inflateEnd(&s->inf);
	free(s->zout);
	free(s->zin);
	free(s->segs);
	free(s);
}

void store_set_limits(struct store *s, const struct store_opts *o)
{
	s->opts = *o;
}

static void remove_oldest(struct store *s, size_t k, const char *why)
{
	if (!k)
		return;	/* segs may be NULL: no memmove of nothing */
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

static void stop(struct store *s, int err, int64_t mono_ms)
{
	if (!s->stopped)
		log_warnx("record store: recording stopped: %s; live streaming "
			  "goes on, recording is tried again in %d s",
			  strerror(-err), RETRY_MS / 1000);
	s->stopped = true;
	s->retry_ms = mono_ms + RETRY_MS;
}

int store_append(struct store *s, uint64_t seq, int64_t wall_ns,
		 const char *payload, size_t len, int64_t mono_ms)
{
	struct store_hdr h = { .magic = STORE_MAGIC, .len = (uint32_t)len,
			       .seq = seq, .wall_ns = wall_ns };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)payload, len } };
	uint64_t size;
	struct store_seg *cur;
	size_t zlen;
	ssize_t n;
	int err = 0;

	if (len > STORE_MAX_PAYLOAD) {
		s->dropped_error++;
		return -EMSGSIZE;
	}
	if (s->stopped && mono_ms < s->retry_ms)
		goto dropped;
	/* compressed when that is smaller; else (or on failure) as it is */
	if (s->opts.compress && compress_payload(s, payload, len, &zlen) == 0 &&
	    zlen < len) {
		h.len = (uint32_t)zlen;
		h.flags = STORE_F_ZSTD;
		iov[1].iov_base = s->zout;
		iov[1].iov_len = zlen;
	}
	size = sizeof(h) + h.len;
	cur = s->fd >= 0 ? &s->segs[s->nsegs - 1] : NULL;
	/* after an error: a fresh segment, as a torn write may linger;
	 * but one still empty (its first write failed) is used again */
	if (!cur || (cur->records && (s->stopped ||
				      cur->bytes + size > seg_limit(s)))) {
		err = start_seg(s, seq);
		if (err)
			goto failed;
		remove_oldest(s, store_retention(s->segs, s->nsegs,
						 s->opts.max_bytes, size,
						 s->opts.max_age_ns, wall_ns),
			      "size or age");
		cur = &s->segs[s->nsegs - 1];
	}
	h.crc = record_crc(&h, iov[1].iov_base);
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
		cur->first_seq = seq;
		cur->first_wall = wall_ns;
	}
	cur->records++;
	cur->last_seq = seq;
	cur->last_wall = wall_ns;
	cur->bytes += size;
	s->last_seq = seq;
	/* the cap holds with the segment being written in it */
	remove_oldest(s, store_retention(s->segs, s->nsegs, s->opts.max_bytes,
					 0, s->opts.max_age_ns, wall_ns),
		      "size or age");
	return 0;
failed:
	stop(s, err, mono_ms);
dropped:
	if (err == -ENOSPC || err == -EDQUOT || (!err && s->stopped &&
						 s->dropped_disk_full))
		s->dropped_disk_full++;
	s->dropped_error++;
	return err ? err : -EAGAIN;
}

void store_tick(struct store *s, int64_t now_wall)
{
	remove_oldest(s, store_retention(s->segs, s->nsegs, UINT64_MAX, 0,
					 s->opts.max_age_ns, now_wall), "age");
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
	i->dropped_disk_full = s->dropped_disk_full;
	i->dropped_error = s->dropped_error;
	i->removed_segments = s->removed;
	i->writing = !s->stopped;
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

void store_cursor_init(struct store *s, struct store_cursor *c,
		       int64_t since_wall)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	/* the first segment with a record at or after since */
	for (i = 0; i < s->nsegs && s->segs[i].last_wall < since_wall; i++)
		;
	c->seg_id = i < s->nsegs ? s->segs[i].id :
			   s->last_seq + 1;
	c->off = 0;
}

void store_cursor_init_seq(struct store *s, struct store_cursor *c,
			   uint64_t seq)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	for (i = 0; i < s->nsegs && (!s->segs[i].records ||
				     s->segs[i].last_seq <= seq); i++)
		;
	c->seg_id = i < s->nsegs ? s->segs[i].id : s->last_seq + 1;
	c->off = 0;
}

void store_cursor_close(struct store_cursor *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int store_next(struct store *s, struct store_cursor *c, struct store_hdr *h,
	       char *buf, size_t cap)
{
	for (;;) {
		const struct store_seg *g = cursor_seg(s, c);
		ssize_t n;

		if (!g)
			return 0;
		if (g->id != c->seg_id || c->fd < 0) {
			store_cursor_close(c);
			if (g->id != c->seg_id)
				c->off = 0;
			c->seg_id = g->id;
			c->fd = open_seg(s, g->id, O_RDONLY);
			if (c->fd < 0) {
				/* gone (retention): the next one */
				c->seg_id++;
				c->off = 0;
				continue;
			}
		}
		if (c->off + sizeof(*h) > g->bytes) {
			if (g == &s->segs[s->nsegs - 1])
				return 0;	/* caught up with the writer */
			store_cursor_close(c);
			c->seg_id++;
			c->off = 0;
			continue;
		}
		n = pread(c->fd, h, sizeof(*h), (off_t)c->off);
		if (n == (ssize_t)sizeof(*h) && check_hdr(h, sizeof(*h), h) ==
		    STORE_OK && h->len < cap &&
		    c->off + sizeof(*h) + h->len <= g->bytes) {
			bool z = h->flags != 0;	/* compressed */
			char *dst = buf;

			if (z && !s->zin)
				s->zin = malloc(STORE_MAX_PAYLOAD);
			if (z && !s->zin)
				return -ENOMEM;
			if (z)
				dst = (char *)s->zin;
			n = pread(c->fd, dst, h->len,
				  (off_t)(c->off + sizeof(*h)));
			if (n == (ssize_t)h->len &&
			    record_crc(h, dst) == h->crc) {
				ssize_t plain = h->len;

				if (h->flags == STORE_F_ZSTD)
					plain = decompress_payload(s, h->len,
								   buf, cap);
				else if (z)
					plain = inflate_payload(s, h->len, buf,
								cap);
				else
					buf[h->len] = '\0';
				if (plain >= 0) {
					c->off += sizeof(*h) + h->len;
					h->len = (uint32_t)plain;
					return 1;
				}
			}
		}
		/* changed under us: what is after it is not to be trusted */
		log_warnx("record store: segment %016" PRIx64 ": unreadable "
			  "record at byte %" PRIu64 ", rest of it skipped",
			  g->id, c->off);
		store_cursor_close(c);
		c->seg_id = g->id + 1;
		c->off = 0;
	}
}
