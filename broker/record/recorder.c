// SPDX-License-Identifier: GPL-2.0-only
/* recorder.c - what pgoffd records, and where; see recorder.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "broker/record/agg_record.h"
#include "broker/record/event_dict.h"
#include "broker/record/owner_share.h"
#include "broker/record/recorder.h"
#include "broker/priv/safe_dir.h"
#include "common/log.h"
#include "protocol/protocol.h"

struct recorder {
	struct store *store;
	struct store *agg;		/* the aggregation, once a second */
	struct recorder_opts opts;
	struct agg_vec prev;		/* the last second's rows, sorted */
	uint64_t prev_mono;		/* when they were read; 0: never */
	uint64_t agg_seq;		/* the aggregation's own numbering */
	uint64_t agg_failed;		/* seconds not recorded: memory */
	int dirfd;			/* for the seq file */
	uint64_t seq_reserved;		/* seqs below it may have been given */
	bool seq_warned;
	/* the state directory's file system, as last looked at, and the
	 * limits record-max-size and record-keep-free make of it */
	uint64_t fs_bytes;		/* 0: not known */
	uint64_t max_bytes, keep_free_bytes;
	bool fs_warned;			/* fstatvfs failed, said */
	/* each cluster owner's part of the events' store */
	struct owner_share *owners;
	int64_t owners_saved_ms;	/* CLOCK_MONOTONIC; 0: not since start */
	bool owners_warned;		/* saving failed, said */
};

/* Seqs are reserved this many at a time in the seq file: after a crash
 * pgoffd goes on past the reservation, so no seq is ever given twice
 * (a client's watch --resume SEQ means one event), even for events that
 * were never stored. */
#define SEQ_BLOCK	65536ull
#define SEQ_FILE	"seq"
#define SEQ_NEW		SEQ_FILE ".new"
#define AGG_EXT		".agg"
/* Each owner's runs of seqs in the record (owner_share.h), saved every
 * OWNERS_SAVE_MS: after a crash, what came after counts for no owner. */
#define OWNERS_FILE	"owners"
#define OWNERS_NEW	OWNERS_FILE ".new"
#define OWNERS_SAVE_MS	10000

/* Read as root at start: a regular file of one name, or nothing. */
static uint64_t read_seq_file(int dirfd)
{
	char buf[32];
	uint64_t v = 0;
	struct stat st;
	ssize_t n;
	int fd = openat(dirfd, SEQ_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		log_warnx("record store: %s ignored: not a regular file of one "
			  "name", SEQ_FILE);
		close(fd);
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%" SCNu64, &v) != 1)
		return 0;
	return v;
}

/*
 * Written aside, synced, then renamed over: the old value or the new one.
 * The first time as root: into a file made here (O_EXCL), never one a
 * name already led to (a hard link to another file).
 */
static int write_seq_file(int dirfd, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v), err = 0;
	int fd;

	if (unlinkat(dirfd, SEQ_NEW, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dirfd, SEQ_NEW, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n || fsync(fd))
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && renameat(dirfd, SEQ_NEW, dirfd, SEQ_FILE))
		err = -errno;
	return err;
}

uint64_t recorder_seq_start(struct recorder *r)
{
	uint64_t start = store_last_seq(r->store), reserved;

	reserved = read_seq_file(r->dirfd);
	if (reserved > start)
		start = reserved;
	r->seq_reserved = start;
	recorder_seq_used(r, start);
	return start;
}

void recorder_seq_used(struct recorder *r, uint64_t seq)
{
	int err;

	if (seq < r->seq_reserved)
		return;
	err = write_seq_file(r->dirfd, seq + SEQ_BLOCK);
	if (err && !r->seq_warned)
		log_warnx("record store: cannot write %s: %s; after a crash, "
			  "seqs from %" PRIu64 " on may be given again",
			  SEQ_FILE, strerror(-err), seq);
	r->seq_warned = err != 0;
	/* on failure, tried again a block later, not at every event */
	r->seq_reserved = seq + SEQ_BLOCK;
}

static int64_t now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Names pgoffd makes in its state directory. */
static bool own_name(const char *name)
{
	return strcmp(name, SEQ_FILE) == 0 || strcmp(name, SEQ_NEW) == 0 ||
	       strcmp(name, OWNERS_FILE) == 0 || strcmp(name, OWNERS_NEW) == 0 ||
	       store_segment_name(name, NULL) ||
	       store_segment_name(name, AGG_EXT);
}

/*
 * An entry of the state directory, looked at before root acts on it:
 * NULL with *fd open on it when it is a regular file of one name that
 * pgoffd makes (checked again through the fd: not replaced since), NULL
 * with *fd -1 when it is gone, or why it is left as it is. A device or
 * FIFO is never opened.
 */
static const char *own_file(int dirfd, const char *name, int *fd)
{
	struct stat was, st;

	*fd = -1;
	if (!own_name(name))
		return "not a name pgoffd makes";
	if (fstatat(dirfd, name, &was, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? NULL : strerror(errno);
	if (S_ISLNK(was.st_mode))
		return "a symbolic link";
	if (!S_ISREG(was.st_mode))
		return "not a regular file";
	if (was.st_nlink != 1)
		return "it has other names (a hard link)";
	*fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		     O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT ? NULL : strerror(errno);
	if (fstat(*fd, &st) || st.st_dev != was.st_dev ||
	    st.st_ino != was.st_ino || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1) {
		close(*fd);
		*fd = -1;
		return "replaced while it was looked at";
	}
	return NULL;
}

/* Entries left as they are, said one a line up to this, then counted. */
#define LEFT_SAID_MAX 8

/*
 * As root: pgoffd's own files in the directory become uid's (an older
 * pgoffd, or another --user, made them). Nothing else is touched: a hard
 * link put there (to a file of root's) is not given away.
 */
static int chown_entries(int dirfd, uid_t uid, gid_t gid)
{
	int dfd = dup(dirfd);
	size_t left = 0;
	struct dirent *d;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	/* dup() shares the offset with dirfd: read from the start, and
	 * leave it at the start for the store's own listing */
	rewinddir(dir);
	while ((d = readdir(dir))) {
		const char *why;
		struct stat st;
		int fd;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		why = own_file(dirfd, d->d_name, &fd);
		if (why && ++left <= LEFT_SAID_MAX)
			log_warnx("state directory: %s left as it is: %s",
				  d->d_name, why);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && (st.st_uid != uid || st.st_gid != gid) &&
		    fchown(fd, uid, gid))
			log_warn("record store: cannot give %s to uid %u",
				 d->d_name, (unsigned int)uid);
		close(fd);
	}
	if (left > LEFT_SAID_MAX)
		log_warnx("state directory: %zu more entries left as they are "
			  "(not pgoffd's own files)", left - LEFT_SAID_MAX);
	rewinddir(dir);
	closedir(dir);
	return 0;
}

int recorder_prepare_dir(const char *path, uid_t uid, gid_t gid, char *err,
			 size_t errlen)
{
	char err_root[300];
	struct stat st;
	int fd = safe_dir_open(path, uid, gid, false, err, errlen), ret;

	if (fd < 0) {
		/* new, or made by systemd's StateDirectory=: root's */
		int first = fd;

		fd = safe_dir_open(path, 0, gid, true, err_root,
				   sizeof(err_root));
		if (fd < 0) {
			/* root's, but unsound: that is the reason to give */
			if (first == -SAFE_DIR_OTHER_OWNER &&
			    fd != -SAFE_DIR_OTHER_OWNER)
				snprintf(err, errlen, "%s", err_root);
			return fd;
		}
	}
	if (fstat(fd, &st))
		goto failed;
	/* the mode first, while root owns it: root changes the mode of
	 * another's directory only with CAP_FOWNER, which the unit lacks */
	if (st.st_uid != uid && (fchmod(fd, 0700) || fchown(fd, uid, gid)))
		goto failed;
	if (st.st_uid == uid && (st.st_mode & 077))
		log_warnx("state directory %s has mode %04o: 0700 is enough",
			  path, (unsigned int)(st.st_mode & 07777));
	chown_entries(fd, uid, gid);
	return fd;
failed:
	ret = -errno;
	snprintf(err, errlen, "cannot give %s to uid %u with mode 0700: %s",
		 path, (unsigned int)uid, strerror(-ret));
	close(fd);
	return ret;
}

/* The file system of dirfd: its size and what an unprivileged user (a
 * database's owner, pgoffd's user) may still write. 0 or -errno. */
static int fs_space(int dirfd, uint64_t *size, uint64_t *avail)
{
	struct statvfs v;

	*size = *avail = 0;
	if (fstatvfs(dirfd, &v))
		return -errno;
	*size = (uint64_t)v.f_blocks * v.f_frsize;
	*avail = (uint64_t)v.f_bavail * v.f_frsize;
	return 0;
}

/*
 * record-keep-free: the file system keeps that much free for what else it
 * holds (PostgreSQL's WAL, often), room bytes to be written besides. While
 * it does not, the oldest segment of either store goes, the older first;
 * never the one a store writes. 0 when enough is free (or it cannot be
 * told, or record-keep-free is 0), -ENOSPC when not even that frees
 * enough. A store's make_room, and
 * recorder_tick's check.
 */
static int make_room(void *ctx, uint64_t room)
{
	struct recorder *r = ctx;
	uint64_t size, avail, freed = 0, need;
	size_t n = 0;

	if (!r->keep_free_bytes || !r->store || !r->agg ||
	    fs_space(r->dirfd, &size, &avail))
		return 0;	/* record-keep-free 0: off */
	need = r->keep_free_bytes + room;
	while (avail + freed < need) {
		int64_t we, wa;
		bool e = store_oldest_wall(r->store, &we);
		bool a = store_oldest_wall(r->agg, &wa);

		if (!e && !a)
			break;
		freed += store_remove_oldest_seg(e && (!a || we <= wa) ?
						 r->store : r->agg);
		n++;
	}
	if (n)
		log_warnx("record store: %zu oldest segments (%" PRIu64 " bytes) "
			  "removed to keep %" PRIu64 " bytes free on the state "
			  "directory's file system (record-keep-free); %" PRIu64
			  " were free", n, freed, r->keep_free_bytes, avail);
	return avail + freed >= need ? 0 : -ENOSPC;
}

/* What a setting makes of a file system of fs_bytes (0: not known): the
 * lower of its bytes and its share; with neither known, dflt. */
static uint64_t share_of(const struct fs_share *f, uint64_t fs_bytes,
			 uint64_t dflt)
{
	uint64_t part = fs_bytes / 100 * f->percent;

	if (!fs_bytes || f->percent >= 100)
		return f->bytes != UINT64_MAX ? f->bytes : dflt;
	return part < f->bytes ? part : f->bytes;
}

/* The events' store wrote a record (store_opts.written). */
static void written(void *ctx, uint64_t last_seq, uint64_t bytes)
{
	struct recorder *r = ctx;

	if (r->owners)
		owner_share_written(r->owners, last_seq, bytes);
}

/* record-max-size is shared: half for the events, half for the
 * aggregation, so that neither crowds the other out */
static void store_opts(struct recorder *r, struct store_opts *so, bool agg)
{
	uint64_t max = r->max_bytes;

	memset(so, 0, sizeof(*so));
	so->max_bytes = agg ? max / 2 : max - max / 2;
	so->max_age_ns = (int64_t)r->opts.max_age_ns;
	so->ext = agg ? AGG_EXT : NULL;
	/* compressed: a stored event takes a fifth of its line */
	so->compress = true;
	so->dict = agg ? NULL : event_dict;
	so->dict_len = agg ? 0 : event_dict_len;
	so->make_room = make_room;
	so->room_ctx = r;
	so->written = agg ? NULL : written;
	so->written_ctx = r;
}

/*
 * The file system looked at again: the limits follow its size (a share
 * of it), the stores' cap with them. Unknown (fstatvfs failed, said
 * once): the byte limits, 1 GiB where there is none, nothing kept free.
 */
static void look_at_fs(struct recorder *r, int dirfd)
{
	uint64_t size, avail, max;
	struct store_opts so;
	int err = fs_space(dirfd, &size, &avail);

	if (err && !r->fs_warned)
		log_warnx("record store: cannot tell the state directory's file "
			  "system's size (%s): record-max-size and "
			  "record-keep-free go by their byte values",
			  strerror(-err));
	r->fs_warned = err != 0;
	if (!err)
		r->fs_bytes = size;
	max = share_of(&r->opts.max, r->fs_bytes, 1ULL << 30);
	r->keep_free_bytes = share_of(&r->opts.keep_free, r->fs_bytes, 0);
	if (max == r->max_bytes)
		return;
	r->max_bytes = max;
	if (!r->store || !r->agg)
		return;		/* still opening: store_opts reads it */
	store_opts(r, &so, false);
	store_set_limits(r->store, &so);
	store_opts(r, &so, true);
	store_set_limits(r->agg, &so);
}

/* Retention's removals forgotten in each owner's part. */
static void look_at_owners(struct recorder *r)
{
	struct store_info i;

	store_info(r->store, &i);
	owner_share_forget(r->owners, i.first_seq);
}

/* Each owner's part saved (mono_ms 0: at close, whatever the time). */
static void save_owners(struct recorder *r, int64_t mono_ms)
{
	int err;

	if (!owner_share_dirty(r->owners) ||
	    (mono_ms && mono_ms - r->owners_saved_ms < OWNERS_SAVE_MS))
		return;
	r->owners_saved_ms = mono_ms;
	err = owner_share_save(r->owners, r->dirfd, OWNERS_FILE);
	if (err && !r->owners_warned)
		log_warnx("record store: cannot save each owner's part of the "
			  "record (%s): after a restart what is stored now "
			  "counts for no owner", strerror(-err));
	r->owners_warned = err != 0;
}

/* The events' store as its owners share it (owner_share.h). */
static void owner_record(const struct recorder *r,
			 struct owner_share_record *rec)
{
	rec->cap = r->max_bytes - r->max_bytes / 2;	/* see store_opts */
	rec->next_removed_last_seq = store_next_removed_last_seq(r->store);
}

/* What some owner's lines of a batch take compressed alone: called from
 * the store's written(), once the batch is on disk. */
static ssize_t batch_cost(void *ctx, const void *lines, size_t len)
{
	struct recorder *r = ctx;

	return store_batch_cost(r->store, lines, len);
}

int recorder_open(struct recorder **out, int dirfd,
		  const struct recorder_opts *o)
{
	struct recorder *r = calloc(1, sizeof(*r));
	struct store_opts so;
	int err, agg_fd;

	if (!r) {
		close(dirfd);
		return -ENOMEM;
	}
	r->dirfd = -1;
	r->opts = *o;
	look_at_fs(r, dirfd);
	store_opts(r, &so, false);
	/* the aggregation's store shares the directory (and its lock:
	 * a dup() holds the same) */
	agg_fd = dup(dirfd);
	err = agg_fd < 0 ? -errno : store_open(&r->store, dirfd, &so);
	if (err) {
		if (agg_fd >= 0)
			close(agg_fd);
		else
			close(dirfd);
		free(r);
		return err;
	}
	store_opts(r, &so, true);
	err = store_open(&r->agg, agg_fd, &so);
	if (err) {
		store_close(r->store);
		free(r);
		return err;
	}
	r->dirfd = fcntl(agg_fd, F_DUPFD_CLOEXEC, 0);
	if (r->dirfd < 0) {
		err = -errno;
		recorder_close(r);
		return err;
	}
	r->agg_seq = store_last_seq(r->agg);
	err = owner_share_new(&r->owners);
	if (err) {
		recorder_close(r);
		return err;
	}
	owner_share_set_cost_fn(r->owners, batch_cost, r);
	/* a file that is not whole is said and left out */
	owner_share_load(r->owners, r->dirfd, OWNERS_FILE);
	look_at_owners(r);
	*out = r;
	return 0;
}

void recorder_close(struct recorder *r)
{
	if (!r)
		return;
	/* the last batch written first: its bytes go to their owners */
	if (r->store)
		store_flush(r->store);
	if (r->owners && r->dirfd >= 0)
		save_owners(r, 0);
	store_close(r->store);
	store_close(r->agg);
	owner_share_free(r->owners);
	if (r->dirfd >= 0)
		close(r->dirfd);
	agg_vec_free(&r->prev);
	free(r);
}

void recorder_set_opts(struct recorder *r, const struct recorder_opts *o)
{
	struct store_opts so;

	r->opts = *o;
	look_at_fs(r, r->dirfd);
	store_opts(r, &so, false);
	store_set_limits(r->store, &so);
	store_opts(r, &so, true);
	store_set_limits(r->agg, &so);
}

void recorder_widen(const struct recorder *r, struct kernel_filter *k)
{
	struct filter all = { .view = PGOFF_VIEW_BOTH,
			      .min_duration_ns = r->opts.min_ns,
			      .requested_min_ns = r->opts.min_ns };

	/* with record-queries off, recording alone never captures SQL */
	kernel_filter_add(k, &all, r->opts.queries != RECORD_QUERIES_OFF);
	kernel_filter_done(k);
}

/* The line to store: which, is record-queries' and record-user-stacks'.
 * Without the line SQL asks for (memory), the line without SQL. */
static const char *stored_line(struct recorder *r,
			       const struct event_lines *lines, size_t *len)
{
	bool us = r->opts.user_stacks && lines->with_ustack;
	bool full = r->opts.queries == RECORD_QUERIES_FULL;
	bool redacted = r->opts.queries == RECORD_QUERIES_REDACTED;
	const char *line = us ? lines->with_ustack : lines->plain;

	*len = us ? lines->with_ustack_len : lines->plain_len;
	if (full && (us ? lines->with_query_ustack : lines->with_query)) {
		line = us ? lines->with_query_ustack : lines->with_query;
		*len = us ? lines->with_query_ustack_len :
			    lines->with_query_len;
	} else if (redacted &&
		   (us ? lines->with_redacted_ustack : lines->with_redacted)) {
		line = us ? lines->with_redacted_ustack : lines->with_redacted;
		*len = us ? lines->with_redacted_ustack_len :
			    lines->with_redacted_len;
	}
	return line;
}

bool recorder_widen_ustack(const struct recorder *r, struct kernel_filter *u)
{
	struct filter all = { .view = PGOFF_VIEW_BOTH, .user_stack = true };

	if (!r->opts.user_stacks)
		return false;
	kernel_filter_add(u, &all, false);
	kernel_filter_done(u);
	return true;
}

bool recorder_record(struct recorder *r, const struct event_lines *lines,
		     const struct event_meta *meta, uint64_t seq)
{
	uint32_t owner = meta->has_owner ? meta->owner : OWNER_SHARE_UNKNOWN;
	int64_t mono_ms = now_ns(CLOCK_MONOTONIC) / 1000000;
	struct owner_share_record rec;
	const char *line;
	size_t len;

	if (meta->duration_ns < r->opts.min_ns)
		return false;
	line = stored_line(r, lines, &len);
	owner_record(r, &rec);
	if (!owner_share_admit(r->owners, &rec, owner, seq, line, len))
		return false;	/* counted: record_dropped_owner_share */
	/* a failure is counted by the store and said once */
	if (store_add(r->store, seq, now_ns(CLOCK_REALTIME), line, len,
		      mono_ms))
		owner_share_not_taken(r->owners, seq);
	return true;
}

int64_t recorder_flush_wait_ms(const struct recorder *r, int64_t now_ms)
{
	int64_t since = store_pending_since(r->store);

	if (since < 0)
		return -1;
	return since + RECORDER_BATCH_MS > now_ms ?
	       since + RECORDER_BATCH_MS - now_ms : 0;
}

void recorder_flush(struct recorder *r)
{
	if (!recorder_flush_wait_ms(r, now_ns(CLOCK_MONOTONIC) / 1000000))
		store_flush(r->store);
}

/* RFC 3339 UTC with microseconds of a wall-clock time; null for 0. */
static json_object *wall_time(int64_t ns)
{
	char buf[80];
	time_t sec = (time_t)(ns / 1000000000LL);
	struct tm tm;

	if (!ns || !gmtime_r(&sec, &tm))
		return NULL;
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (long long)(ns % 1000000000LL / 1000));
	return json_object_new_string(buf);
}

void recorder_tick(struct recorder *r)
{
	int64_t wall = now_ns(CLOCK_REALTIME);
	int64_t mono_ms = now_ns(CLOCK_MONOTONIC) / 1000000;

	store_tick(r->store, wall);
	store_tick(r->agg, wall);
	look_at_fs(r, r->dirfd);
	look_at_owners(r);
	save_owners(r, mono_ms);
	if (make_room(r, 0)) {
		store_hold(r->store, mono_ms);
		store_hold(r->agg, mono_ms);
	}
}

/*
 * One second's rows as one record, or as several when they do not fit in
 * one (thousands of processes that changed: one local user's cluster
 * could otherwise keep every second from being stored). The first part
 * says the interval, the others 0, all with the same wall time.
 */
static void store_second(struct recorder *r, const struct agg_row *rows,
			 size_t n, uint64_t iv, int64_t wall)
{
	unsigned char *buf = NULL;
	size_t len;

	if (aggrec_encode(rows, n, iv, &buf, &len)) {
		r->agg_failed++;
		return;
	}
	if (len > STORE_MAX_PAYLOAD && n > 1) {
		free(buf);
		store_second(r, rows, n / 2, iv, wall);
		store_second(r, rows + n / 2, n - n / 2, 0, wall);
		return;
	}
	/* a failure is counted by the store and said once */
	store_append(r->agg, r->agg_seq + 1, wall, (const char *)buf, len,
		     now_ns(CLOCK_MONOTONIC) / 1000000);
	if (store_last_seq(r->agg) == r->agg_seq + 1)
		r->agg_seq++;
	free(buf);
}

void recorder_aggregate(struct recorder *r, struct agg_row *rows, size_t n,
			uint64_t mono_ns)
{
	struct agg_vec d = { 0 };
	/* the first second after start: since the kernel's maps were new */
	uint64_t iv = r->prev_mono && mono_ns > r->prev_mono ?
		      mono_ns - r->prev_mono : 1000000000ull;

	aggrec_sort(rows, n);
	if (aggrec_delta(r->prev.v, r->prev.n, rows, n, &d))
		r->agg_failed++;
	else
		store_second(r, d.v, d.n, iv, now_ns(CLOCK_REALTIME));
	agg_vec_free(&d);
	agg_vec_free(&r->prev);
	r->prev = (struct agg_vec){ .v = rows, .n = n, .cap = n };
	r->prev_mono = mono_ns;
}

/*
 * A window keeps at most WINDOW_KEEP_ROWS rows between merges: past that,
 * the least busy are folded into one "(other)" row (their time kept,
 * their labels not). A churn of short-lived pids would otherwise grow a
 * job by 808 B a row and make every merge slower (an attacker review).
 * Rows are merged when the sum reaches WINDOW_MERGE_ROWS (about 3 MiB).
 */
#define WINDOW_KEEP_ROWS 2048
#define WINDOW_MERGE_ROWS (2 * WINDOW_KEEP_ROWS)
/* Rows decoded in one step at most: a stored second may hold thousands. */
#define WINDOW_STEP_ROWS 16384

struct recorder_window {
	struct store_cursor c;
	int64_t since_wall, until_wall;	/* INT64_MAX: up to now */
	enum pgoff_stats_by by;
	struct agg_vec sum;
	uint64_t covered, records, bad;
	uint64_t folded;		/* rows folded into "(other)" */
	int64_t first, last;
	char *buf;			/* one stored record */
	int err;
	bool done;
};

int recorder_window_start(struct recorder *r, int64_t since_wall,
			  int64_t until_wall, enum pgoff_stats_by by,
			  struct recorder_window **out)
{
	struct recorder_window *w = calloc(1, sizeof(*w));

	if (!w || !(w->buf = malloc(STORE_MAX_PAYLOAD + 1))) {
		free(w);
		return -ENOMEM;
	}
	w->since_wall = since_wall;
	w->until_wall = until_wall ? until_wall : INT64_MAX;
	w->by = by;
	store_cursor_init(r->agg, &w->c, since_wall);
	*out = w;
	return 0;
}

/* The sum merged, at most WINDOW_KEEP_ROWS of it kept, its memory given
 * back after a big second. */
static void window_merge(struct recorder_window *w)
{
	struct agg_row *v;

	w->sum.n = agg_rows_merge(w->sum.v, w->sum.n, w->by);
	w->sum.n = agg_rows_keep(w->sum.v, w->sum.n, WINDOW_KEEP_ROWS,
				 &w->folded);
	if (w->sum.cap > 2 * WINDOW_MERGE_ROWS &&
	    (v = realloc(w->sum.v, WINDOW_MERGE_ROWS * sizeof(*v)))) {
		w->sum.v = v;
		w->sum.cap = WINDOW_MERGE_ROWS;
	}
}

/* One stored second into the sum; its rows added to *rows. */
static int window_add(struct recorder_window *w, const struct store_hdr *h,
		      size_t *rows)
{
	size_t before = w->sum.n;
	uint64_t iv;
	int err = aggrec_decode(w->buf, h->len, &iv, &w->sum);

	if (err == -ENOMEM)
		return err;
	if (err) {
		w->bad++;
		return 0;
	}
	for (size_t i = before; i < w->sum.n; i++)
		agg_row_to(&w->sum.v[i], w->by);
	if (!w->records)
		w->first = h->wall_ns - (int64_t)iv;
	if (iv)		/* a second's other parts say 0 (store_second) */
		w->records++;
	w->last = h->wall_ns;
	w->covered += iv;
	*rows += w->sum.n - before;
	if (w->sum.n >= WINDOW_MERGE_ROWS)
		window_merge(w);
	return 0;
}

bool recorder_window_step(struct recorder *r, struct recorder_window *w,
			  unsigned int max_records)
{
	size_t rows = 0;

	for (unsigned int k = 0; k < max_records && rows < WINDOW_STEP_ROWS &&
	     !w->done; k++) {
		struct store_hdr h;
		uint64_t first, last;
		int ret;

		/* seconds retention removed while the window was summed */
		if (store_cursor_lost(&w->c, &first, &last))
			w->bad += last - first + 1;
		ret = store_next(r->agg, &w->c, &h, w->buf,
				 STORE_MAX_PAYLOAD + 1);

		/* a record covers the interval that ends when it was stored */
		if (ret == 1 && h.wall_ns <= w->since_wall)
			continue;
		if (ret == 1 && h.wall_ns <= w->until_wall) {
			int err = window_add(w, &h, &rows);

			if (err)
				ret = err;
		} else if (ret == 1)
			ret = 0;	/* past the window's end */
		if (ret <= 0) {	/* the store's or the window's end, or an error */
			w->err = ret;
			w->done = true;
		}
	}
	return !w->done;
}

/* What the rows read now gained since the last recorded second: the
 * part of a window up to now that is not stored yet. */
static int add_unrecorded(struct recorder *r, struct recorder_window *w,
			  struct agg_row *rows, size_t n, uint64_t mono_ns)
{
	size_t before = w->sum.n;

	aggrec_sort(rows, n);
	if (aggrec_delta(r->prev.v, r->prev.n, rows, n, &w->sum))
		return -ENOMEM;
	for (size_t i = before; i < w->sum.n; i++)
		agg_row_to(&w->sum.v[i], w->by);
	if (r->prev_mono && mono_ns > r->prev_mono)
		w->covered += mono_ns - r->prev_mono;
	return 0;
}

int recorder_window_reply(struct recorder *r, struct recorder_window *w,
			  json_object *reply, size_t budget,
			  struct agg_row *now_rows, size_t n_now,
			  uint64_t mono_ns)
{
	int64_t until = w->until_wall;
	int ret = w->err;

	if (ret == 0 && w->until_wall == INT64_MAX) {
		until = now_ns(CLOCK_REALTIME);
		ret = add_unrecorded(r, w, now_rows, n_now, mono_ns);
		if (!w->records)
			w->first = until - (int64_t)w->covered;
		w->last = until;
	}
	if (ret < 0)
		return ret;
	window_merge(w);
	json_object_object_add(reply, "by", json_object_new_string(
				       pgoff_stats_by_name(w->by)));
	json_object_object_add(reply, "hist_unit_ns", json_object_new_int64(1024));
	/* a snapshot's clock as the live reply has one: here the end */
	json_object_object_add(reply, "now_ns", json_object_new_int64(w->last));
	agg_rows_encode(reply, w->sum.v, w->sum.n, w->by, budget);
	json_object_object_add(reply, "from_time", wall_time(w->first));
	json_object_object_add(reply, "to_time", wall_time(w->last));
	json_object_object_add(reply, "from_ns", json_object_new_int64(w->first));
	json_object_object_add(reply, "to_ns", json_object_new_int64(w->last));
	json_object_object_add(reply, "covered_ns",
			       json_object_new_int64((int64_t)w->covered));
	json_object_object_add(reply, "seconds",
			       json_object_new_int64((int64_t)w->records));
	json_object_object_add(reply, "unreadable",
			       json_object_new_int64((int64_t)w->bad));
	json_object_object_add(reply, "folded",
			       json_object_new_int64((int64_t)w->folded));
	return 0;
}

bool recorder_window_to_now(const struct recorder_window *w)
{
	return w->until_wall == INT64_MAX;
}

void recorder_window_free(struct recorder_window *w)
{
	if (!w)
		return;
	store_cursor_close(&w->c);
	agg_vec_free(&w->sum);
	free(w->buf);
	free(w);
}

enum record_queries recorder_queries(const struct recorder *r)
{
	return r->opts.queries;
}

uint64_t recorder_min(const struct recorder *r)
{
	return r->opts.min_ns;
}

struct store *recorder_store(struct recorder *r)
{
	return r->store;
}

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

/* What one of the two stores holds: its span, size and records. */
static void add_store_info(json_object *o, const struct store_info *i,
			   const char *records_key)
{
	json_object_object_add(o, "first_time", wall_time(i->first_wall));
	json_object_object_add(o, "last_time", wall_time(i->last_wall));
	add_u64(o, "bytes", i->bytes);
	add_u64(o, "segments", i->segments);
	add_u64(o, records_key, i->records);
}

void recorder_history(struct recorder *r, json_object *reply)
{
	json_object *c = json_object_new_object();
	uint64_t fs_size, fs_free;
	struct owner_share_record rec;
	struct store_info i;

	/* what the same client may have been sent is counted */
	store_flush(r->store);
	store_info(r->store, &i);
	json_object_object_add(reply, "recording",
			       json_object_new_boolean(i.writing));
	add_store_info(reply, &i, "records");
	add_u64(reply, "first_seq", i.first_seq);
	add_u64(reply, "last_seq", i.last_seq);
	add_u64(reply, "record_min_ns", r->opts.min_ns);
	add_u64(reply, "max_bytes", r->max_bytes);
	add_u64(reply, "max_age_ns", r->opts.max_age_ns);
	add_u64(reply, "keep_free_bytes", r->keep_free_bytes);
	if (fs_space(r->dirfd, &fs_size, &fs_free) == 0) {
		add_u64(reply, "fs_bytes", fs_size);
		add_u64(reply, "fs_free_bytes", fs_free);
	}
	json_object_object_add(reply, "record_queries", json_object_new_string(
		r->opts.queries == RECORD_QUERIES_FULL ? "full" :
		r->opts.queries == RECORD_QUERIES_REDACTED ? "redacted" : "off"));
	json_object_object_add(reply, "record_user_stacks",
			       json_object_new_boolean(r->opts.user_stacks));
	add_u64(c, "record_dropped_disk_full", i.dropped_disk_full);
	add_u64(c, "record_dropped_keep_free", i.dropped_keep_free);
	add_u64(c, "record_dropped_error", i.dropped_error);
	add_u64(c, "record_dropped_owner_share",
		owner_share_refused(r->owners));
	add_u64(c, "segments_removed", i.removed_segments);
	add_u64(c, "segments_removed_keep_free", i.removed_keep_free);
	add_u64(c, "unreadable", i.unreadable);
	json_object_object_add(reply, "counters", c);
	owner_record(r, &rec);
	json_object_object_add(reply, "owners",
			       owner_share_report(r->owners, &rec));
	/* the per-second aggregation, top over the past */
	store_info(r->agg, &i);
	c = json_object_new_object();
	add_store_info(c, &i, "seconds");
	add_u64(c, "segments_removed", i.removed_segments);
	add_u64(c, "segments_removed_keep_free", i.removed_keep_free);
	json_object_object_add(reply, "aggregation", c);
}

void recorder_counters(struct recorder *r, json_object *counters)
{
	struct store_info i, a;

	store_info(r->store, &i);
	store_info(r->agg, &a);
	add_u64(counters, "record_dropped_disk_full", i.dropped_disk_full);
	add_u64(counters, "record_dropped_keep_free", i.dropped_keep_free);
	add_u64(counters, "record_dropped_error", i.dropped_error);
	add_u64(counters, "record_dropped_owner_share",
		owner_share_refused(r->owners));
	add_u64(counters, "record_seconds_dropped_disk_full",
		a.dropped_disk_full);
	add_u64(counters, "record_seconds_dropped_keep_free",
		a.dropped_keep_free);
	add_u64(counters, "record_seconds_dropped_error",
		a.dropped_error + r->agg_failed);
	add_u64(counters, "record_segments_removed_keep_free",
		i.removed_keep_free + a.removed_keep_free);
}
