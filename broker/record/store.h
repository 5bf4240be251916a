/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store.h - the flight recorder's append-only store: records in segment
 * files under pgoffd's state directory, each with a CRC-32, so that after
 * kill -9 or a power cut everything up to the last whole record reads
 * back. Segments rotate at a size; the oldest whole segment goes first
 * when the store is over its size or age. Single-threaded: pgoffd's loop
 * writes, and reads for replays between writes.
 */
#ifndef PGOFF_STORE_H
#define PGOFF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STORE_MAGIC	0x52464f50u	/* "POFR" little-endian */
/* A payload is one event line (never longer than the broker sends), or a
 * batch of them (STORE_F_BATCH) no longer than that either. */
#define STORE_MAX_PAYLOAD (256u * 1024u)
#define STORE_SEG_MAX	(16ull << 20)

/* On disk, little-endian (the host's: the store is not portable). */
struct store_hdr {
	uint32_t magic;
	uint32_t len;		/* payload bytes */
	uint32_t crc;		/* CRC-32 of seq, wall_ns, len, flags when
				   not 0, then payload (as stored) */
	uint32_t flags;		/* STORE_F_*; 0 before compression */
	uint64_t seq;		/* the event's seq (a batch: its first's) */
	int64_t wall_ns;	/* CLOCK_REALTIME when stored (a batch: its
				   first event's) */
};

/* The payload is compressed, with the store's dictionary; store_next
 * gives it as it was. Flags say the codec: a raw deflate stream (what
 * pgoffd wrote before it used Zstandard, still read), or a Zstandard
 * frame (written now). One record has one of them; any other value is a
 * corrupt record. */
#define STORE_F_DEFLATE	1u
#define STORE_F_ZSTD	2u
/*
 * A batch: events stored together (pgoffd's of up to 50 ms), in one
 * record and (with STORE_F_ZSTD) one Zstandard frame, which is smaller
 * and several times cheaper than a record and a frame per event. Its payload is a struct store_batch as
 * it is, then the body, compressed or not: the events' lines one after
 * another, then a struct store_batch_ev for each, in order. Each event
 * keeps its own seq and wall time; store_next gives them one by one.
 */
#define STORE_F_BATCH	4u

struct store_batch {
	uint32_t count;		/* events: 2 or more */
	uint32_t plain_len;	/* the body's bytes, decompressed */
	uint64_t last_seq;	/* the last event's seq */
	int64_t last_wall;	/* and its wall time */
};

struct store_batch_ev {
	uint64_t seq;		/* above the one before */
	int64_t wall_ns;
	uint32_t off;		/* its line in the body: right after the
				   one before, the first at 0 */
	uint32_t len;		/* its line's bytes */
};

/* A batch's body is at most this: no batch decompresses past it. */
#define STORE_BATCH_MAX	(STORE_MAX_PAYLOAD - sizeof(struct store_batch))

enum store_check {
	STORE_OK,		/* a whole, intact record */
	STORE_TORN,		/* the bytes end inside a record */
	STORE_CORRUPT,		/* not a record: bad magic, length or CRC */
};

/* Header + payload into buf (cap bytes). Returns the record's size, 0 if
 * it does not fit or len > STORE_MAX_PAYLOAD. */
size_t store_frame(void *buf, size_t cap, uint64_t seq, int64_t wall_ns,
		   const void *payload, size_t len);
/* The same, with the payload as stored under flags (STORE_F_*). */
size_t store_frame_flags(void *buf, size_t cap, uint64_t seq, int64_t wall_ns,
			 uint32_t flags, const void *payload, size_t len);
/* Whether buf (avail bytes) starts with a record; *h filled on STORE_OK. */
enum store_check store_check(const void *buf, size_t avail,
			     struct store_hdr *h);

/* What the store knows of one segment. */
struct store_seg {
	uint64_t id;			/* its file's name: the seq it was made for */
	uint64_t first_seq, last_seq;
	int64_t first_wall, last_wall;
	uint64_t bytes;			/* readable: up to the last good record */
	uint64_t records;		/* events: a batch counts each of its */
};

/*
 * How many of the oldest segments to remove (never the newest, n - 1):
 * while the total is above max_bytes - room (room: the bytes about to be
 * written), or the segment's newest record is older than now - max_age_ns.
 */
size_t store_retention(const struct store_seg *segs, size_t n,
		       uint64_t max_bytes, uint64_t room, int64_t max_age_ns,
		       int64_t now_wall);

struct store;

/* Whether name is one of a store's segment files, ext as in store_opts
 * (NULL: ".seg"). */
bool store_segment_name(const char *name, const char *ext);

struct store_opts {
	uint64_t max_bytes;		/* record-max-size */
	int64_t max_age_ns;		/* record-max-age */
	uint64_t seg_bytes;		/* 0: min(STORE_SEG_MAX, max_bytes / 4) */
	const char *ext;		/* segment files' ".xxx" (4 characters,
					   static); NULL: ".seg" */
	bool compress;			/* compress what is appended */
	const char *dict;		/* the compression's preset dictionary
					   (static; never changed once records
					   use it) */
	size_t dict_len;
	/*
	 * Called before a new segment is started, for the bytes about to be
	 * written (NULL: never): 0 to go on, or -ENOSPC when the file system
	 * has no room to spare (record-keep-free: see recorder.c); the write
	 * then fails, its events counted in dropped_keep_free, and recording
	 * stops as after a write error.
	 */
	int (*make_room)(void *ctx, uint64_t bytes);
	void *room_ctx;
	/*
	 * Called after each record is written, or fails to be (NULL: never):
	 * the events added up to last_seq took bytes on disk (0: they were
	 * dropped, counted). So the recorder knows what each event cost
	 * once compressed.
	 */
	void (*written)(void *ctx, uint64_t last_seq, uint64_t bytes);
	void *written_ctx;
};

/*
 * Open the store in dirfd (taken over: closed by store_close), checking
 * every segment; a torn or corrupt tail of the newest is cut, a corrupt
 * record elsewhere ends that segment; each said in one log line. Writes
 * go to a new segment. Returns 0 or -errno (only for memory or the
 * directory itself: what a segment holds never fails the open).
 */
int store_open(struct store **out, int dirfd, const struct store_opts *o);
void store_close(struct store *s);
void store_set_limits(struct store *s, const struct store_opts *o);

/*
 * Append a record. A full disk, too little free space (make_room) or an
 * I/O error stops writing, counted, until retry (10 s later, then at each
 * call); returns -errno then.
 */
int store_append(struct store *s, uint64_t seq, int64_t wall_ns,
		 const char *payload, size_t len, int64_t mono_ms);
/*
 * Add an event to the batch being made (seqs rising); store_flush writes
 * it as one record (an event alone as store_append would), and so does
 * store_add when the next would not fit. An event must be written before
 * anyone is sent it: after a kill -9 the record then holds every event a
 * client saw (a torn batch at the tail was sent to no one). Failures are
 * store_append's, counted per event (at store_flush for a batch).
 */
int store_add(struct store *s, uint64_t seq, int64_t wall_ns,
	      const char *line, size_t len, int64_t mono_ms);
void store_flush(struct store *s);
/* The bytes lines (len: one after another, as in a batch's body) would
 * take on disk compressed as a batch is (len when the store does not
 * compress), or -errno: what some lines cost, for the recorder's part of
 * each cluster owner. From opts.written too (the record is on disk). */
ssize_t store_batch_cost(struct store *s, const void *lines, size_t len);
/* The mono_ms the first event of the batch being made was added at;
 * -1: none is. */
int64_t store_pending_since(const struct store *s);
/* The seq of the first event added and not yet written; 0: none. */
uint64_t store_pending_first_seq(const struct store *s);
/* Age retention, once a second. */
void store_tick(struct store *s, int64_t now_wall);
/* The oldest segment retention may remove (never the newest, which is
 * written): its first wall time in *wall; false when there is none. */
bool store_oldest_wall(const struct store *s, int64_t *wall);
/* That segment removed for the file system's free space (counted in
 * removed_keep_free); the bytes it held, 0 when there is none. */
uint64_t store_remove_oldest_seg(struct store *s);
/* Stop recording as make_room refusing would (the file system has no room
 * to spare): events are dropped, counted, until retried 10 s later. */
void store_hold(struct store *s, int64_t mono_ms);

/* The last seq of the oldest segment holding records that retention may
 * remove (never the newest); 0 when there is none. */
uint64_t store_next_removed_last_seq(const struct store *s);

struct store_info {
	size_t segments;
	uint64_t bytes, records;
	uint64_t first_seq, last_seq;
	int64_t first_wall, last_wall;		/* 0: empty */
	/* events not stored, each counted once: the file system was full
	 * (ENOSPC, EDQUOT), it had less than record-keep-free free
	 * (make_room), any other error */
	uint64_t dropped_disk_full, dropped_keep_free, dropped_error;
	uint64_t removed_segments;		/* by retention, since start */
	uint64_t removed_keep_free;		/* of which for free space */
	uint64_t unreadable;			/* records a reader found bad */
	bool writing;				/* false: stopped by an error */
};
void store_info(const struct store *s, struct store_info *i);
/* The last seq stored, read at open (0: empty): events go on after it. */
uint64_t store_last_seq(const struct store *s);

/*
 * A reader's position; survives appends, rotation and retention. The
 * store knows every open cursor (from init to close; not to be copied):
 * when retention removes the segment one is on, its fd is closed then,
 * read or not (a reader that stops reading holds no deleted file), and
 * what it had not read of the segments removed is noted as lost
 * (store_cursor_lost); it reads on from the oldest segment left.
 */
struct store_cursor {
	int fd;				/* -1: not open */
	uint64_t seg_id;		/* which segment */
	uint64_t off;			/* the record read next */
	uint32_t in_batch;		/* of its events, how many were read */
	uint64_t last_seq;		/* of the last record it gave; 0: none */
	uint64_t lost_first, lost_last;	/* seqs removed unread; 0: none */
	struct store *store;		/* while open */
	struct store_cursor *prev, *next;	/* the store's open cursors */
};
/* Position c at the first segment holding records stored at or after
 * since_wall (the reader skips the older records in it). */
void store_cursor_init(struct store *s, struct store_cursor *c,
		       int64_t since_wall);
/* Position c at the first segment holding a record after seq (the
 * reader skips the records up to seq in it). */
void store_cursor_init_seq(struct store *s, struct store_cursor *c,
			   uint64_t seq);
/* Its fd closed, the store told; again, or on a cursor never opened
 * after a store_cursor_init, is harmless. */
void store_cursor_close(struct store_cursor *c);
/*
 * Whether retention removed records c had not read yet: the seqs from
 * *first to *last (an upper bound of the events lost: seqs never stored
 * are among them; *last + 1 is the first seq the store held then). Told
 * once: cleared.
 */
bool store_cursor_lost(struct store_cursor *c, uint64_t *first,
		       uint64_t *last);
/*
 * The next record into buf (STORE_MAX_PAYLOAD + 1 bytes at least; the
 * payload NUL-terminated, decompressed if it was stored compressed:
 * h->len is then its decompressed length). Returns 1, or 0 when every
 * stored record was read (more may come), or -errno. A corrupt record
 * ends its segment. A batch gives its events one by one, h with each
 * one's seq, wall time and length; events added and not yet written are
 * written first, so that a reader at the end has seen every one added.
 */
int store_next(struct store *s, struct store_cursor *c, struct store_hdr *h,
	       char *buf, size_t cap);

#endif
