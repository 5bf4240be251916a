/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * recorder.h - the flight recorder: pgoffd stores every episode and
 * off-CPU interval at or above record-min, with or without subscribers,
 * into the store (store.h) in its state directory; the SQL text as
 * record-queries says (off: the line without "query"; redacted: its
 * literals as $n; full: as it is). Beside it, in a second
 * store (".agg" segments), the kernel's aggregation once a second
 * (agg_record.h), for top over the past.
 */
#ifndef PGOFF_RECORDER_H
#define PGOFF_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "broker/kernel/aggregate.h"
#include "broker/config.h"
#include "broker/kernel/event.h"
#include "broker/serve/filter.h"
#include "broker/record/store.h"

struct recorder;

struct recorder_opts {
	uint64_t min_ns;		/* record-min */
	struct fs_share max;		/* record-max-size */
	uint64_t max_age_ns;		/* record-max-age */
	enum record_queries queries;	/* record-queries */
	bool user_stacks;		/* record-user-stacks */
	struct fs_share keep_free;	/* record-keep-free */
};

/*
 * As root, before privileges are dropped: open (or create) the state
 * directory, 0700, owned by uid:gid with pgoffd's own files in it
 * (systemd's StateDirectory= makes it root's): regular files of one
 * name, named as pgoffd names its segments and seq file, changed through
 * an fd opened without following links. Anything else (a hard link, a
 * symbolic link, a FIFO, another name) is left as it is, said in the
 * log. A symbolic link, or a directory another user owns or may write,
 * is refused. Returns an fd, or -errno with err filled.
 */
int recorder_prepare_dir(const char *path, uid_t uid, gid_t gid, char *err,
			 size_t errlen);
/* The store in dirfd (taken over). Returns 0 or -errno. */
int recorder_open(struct recorder **out, int dirfd,
		  const struct recorder_opts *o);
void recorder_close(struct recorder *r);
void recorder_set_opts(struct recorder *r, const struct recorder_opts *o);

/*
 * The seq events go on from after a start: past every one stored and
 * every one reserved in the state directory's seq file (a crash may have
 * given some that were not stored). recorder_seq_used, for each seq
 * given, reserves the next block when it is reached.
 */
uint64_t recorder_seq_start(struct recorder *r);
void recorder_seq_used(struct recorder *r, uint64_t seq);

/* Widen the kernel's filter so that it sends what is recorded. */
void recorder_widen(const struct recorder *r, struct kernel_filter *k);
/* With record-user-stacks, widen the user-stack filter to every interval
 * (the duration is not known when the stack is walked); true if so. */
bool recorder_widen_ustack(const struct recorder *r, struct kernel_filter *u);
/* An event as published (seq: the one in its line), added (true) to the batch
 * that the store writes before any client is sent it (see store_add),
 * and recorder_flush, at each loop round, once its first event is
 * RECORDER_BATCH_MS old. */
bool recorder_record(struct recorder *r, const struct event_lines *lines,
		     const struct event_meta *meta, uint64_t seq);
void recorder_flush(struct recorder *r);
/* Milliseconds until recorder_flush has a batch to write (-1: none
 * pending): the loop sleeps no longer, so a batch waits RECORDER_BATCH_MS
 * whatever the ring's pace. */
int64_t recorder_flush_wait_ms(const struct recorder *r, int64_t now_ms);
/*
 * A loop round (the ring is read every 2 ms) stores about 15 events at
 * 7,000 a second, and a batch of 15 cost 1.3 us an event and 47 B; one of
 * 350, 0.5 us and 33 B. A kill -9 loses what is not written: at most
 * this, events no client was sent.
 */
#define RECORDER_BATCH_MS	50
/*
 * Once a second: age retention, and the state directory's file system
 * looked at again (fstatvfs): the size cap follows its size, and while it
 * has less than record-keep-free free the oldest segments of the record
 * go (also before each new segment); when even that leaves too little,
 * recording stops, counted, and is tried again 10 s later.
 */
void recorder_tick(struct recorder *r);

/*
 * Once a second: the aggregation by pid (stats_rows: rows taken over,
 * freed here) read at mono_ns; what it gained since the last call is
 * stored as one record.
 */
void recorder_aggregate(struct recorder *r, struct agg_row *rows, size_t n,
			uint64_t mono_ns);

/*
 * A stats reply over the past, summed over several loop rounds (an hour
 * is about 3,600 records and 0.2 s): the stored seconds that ended in
 * (since_wall, until_wall]; until_wall 0 is up to now, and then what the
 * aggregation gained since the last stored second counts too, so that
 * the window misses nothing.
 */
struct recorder_window;
/* Returns 0 or -ENOMEM. */
int recorder_window_start(struct recorder *r, int64_t since_wall,
			  int64_t until_wall, enum pgoff_stats_by by,
			  struct recorder_window **out);
/* Sum up to max_records more stored seconds; true while more remain. */
bool recorder_window_step(struct recorder *r, struct recorder_window *w,
			  unsigned int max_records);
/* Up to now: the live rows are wanted for the reply. */
bool recorder_window_to_now(const struct recorder_window *w);
/*
 * After the last step, in the same loop round: the reply's rows (as
 * agg_rows_encode gives them, at most budget bytes), from_ns/to_ns (the
 * span they cover), covered_ns (the time recorded in it) and seconds.
 * now_rows: for a window up to now, the aggregation by pid read at
 * mono_ns (sorted here). Returns 0 or -errno (a read error, memory).
 */
int recorder_window_reply(struct recorder *r, struct recorder_window *w,
			  json_object *reply, size_t budget,
			  struct agg_row *now_rows, size_t n_now,
			  uint64_t mono_ns);
void recorder_window_free(struct recorder_window *w);
/* Records summed per loop round: about 10 ms of pgoffd's time. */
#define RECORDER_WINDOW_STEP	120

uint64_t recorder_min(const struct recorder *r);
/* record-queries: the SQL lines the events must have (event_ctx). */
enum record_queries recorder_queries(const struct recorder *r);
struct store *recorder_store(struct recorder *r);
/* The history reply's fields. */
void recorder_history(struct recorder *r, json_object *reply);
/* The status counters: record_dropped_disk_full, _keep_free, _error (each
 * event counted once), the same for seconds of the aggregation, and
 * record_segments_removed_keep_free. */
void recorder_counters(struct recorder *r, json_object *counters);

#endif
