// SPDX-License-Identifier: GPL-2.0-only
/*
 * stretch_store DIR EXT SECONDS: make the store of EXT (".seg", the
 * events, or ".agg", the per-second aggregation) in pgoffd's state
 * directory DIR span SECONDS, ending now, by repeating what it holds (a
 * short recording) with new seqs and wall-clock times, so that a query
 * over an hour can be timed from a minute of real load. Read and written
 * with pgoffd's own store code: events go back in batches of 50 ms, as
 * pgoffd writes them. Prints "N records, B bytes, S s" (N: events).
 * Run with pgoffd stopped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "broker/record/event_dict.h"
#include "broker/record/store.h"

#define BATCH_NS (50 * 1000000ll)	/* pgoffd's RECORDER_BATCH_MS */

struct rec {
	int64_t wall;
	size_t len;
	char *line;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "stretch_store: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct store *open_store(const char *dir, const char *ext)
{
	struct store_opts o = {
		.max_bytes = 1ull << 40,		/* nothing removed */
		.max_age_ns = 365 * 86400 * 1000000000ll,
		.ext = ext,
		.compress = true,
		.dict = strcmp(ext, ".seg") ? NULL : event_dict,
		.dict_len = strcmp(ext, ".seg") ? 0 : event_dict_len,
	};
	struct store *s;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		die(dir, errno);
	err = store_open(&s, fd, &o);
	if (err)
		die("store_open", -err);
	return s;
}

static size_t read_all(const char *dir, const char *ext, struct rec **out)
{
	struct store *s = open_store(dir, ext);
	struct store_cursor c;
	struct store_hdr h;
	char *buf = malloc(STORE_MAX_PAYLOAD + 1);
	size_t n = 0, cap = 0;
	int rc;

	if (!buf)
		die("malloc", ENOMEM);
	store_cursor_init(s, &c, 0);
	while ((rc = store_next(s, &c, &h, buf, STORE_MAX_PAYLOAD + 1)) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			*out = realloc(*out, cap * sizeof(**out));
			if (!*out)
				die("realloc", ENOMEM);
		}
		(*out)[n].wall = h.wall_ns;
		(*out)[n].len = h.len;
		(*out)[n].line = malloc(h.len);
		if (!(*out)[n].line)
			die("malloc", ENOMEM);
		memcpy((*out)[n++].line, buf, h.len);
	}
	if (rc < 0)
		die("store_next", -rc);
	store_cursor_close(&c);
	store_close(s);
	free(buf);
	return n;
}

static void remove_segments(const char *dir, const char *ext)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t el = strlen(ext), l;

	if (!d)
		die(dir, errno);
	while ((e = readdir(d))) {
		l = strlen(e->d_name);
		if (l > el && !strcmp(e->d_name + l - el, ext) &&
		    unlinkat(dirfd(d), e->d_name, 0))
			die(e->d_name, errno);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	struct rec *recs = NULL;
	struct store_info info;
	struct timespec now;
	int64_t span, start, w, batch_start = 0;
	uint64_t seq = 0, copies;
	struct store *s;
	size_t n, i, k;
	int err;

	if (argc != 4 || atof(argv[3]) <= 0) {
		fprintf(stderr, "usage: stretch_store DIR .seg|.agg SECONDS\n");
		return 2;
	}
	n = read_all(argv[1], argv[2], &recs);
	if (!n) {
		fprintf(stderr, "stretch_store: no records in %s/*%s\n", argv[1], argv[2]);
		return 1;
	}
	span = recs[n - 1].wall - recs[0].wall;
	if (span < 1)
		span = 1;
	copies = (uint64_t)(atof(argv[3]) * 1e9 / (double)span + 0.999);
	if (!copies)
		copies = 1;
	remove_segments(argv[1], argv[2]);
	s = open_store(argv[1], argv[2]);
	clock_gettime(CLOCK_REALTIME, &now);
	start = (int64_t)now.tv_sec * 1000000000ll + now.tv_nsec - (int64_t)copies * span;
	for (k = 0; k < copies; k++) {
		for (i = 0; i < n; i++) {
			w = start + (int64_t)k * span + (recs[i].wall - recs[0].wall);
			if (store_pending_first_seq(s) && w - batch_start >= BATCH_NS)
				store_flush(s);
			if (!store_pending_first_seq(s))
				batch_start = w;
			err = store_add(s, ++seq, w, recs[i].line, recs[i].len,
					w / 1000000);
			if (err)
				die("store_add", -err);
		}
	}
	store_flush(s);
	store_info(s, &info);
	store_close(s);
	if (info.records != seq) {
		fprintf(stderr, "stretch_store: %" PRIu64 " events written, the store holds %" PRIu64 "\n",
			seq, info.records);
		return 1;
	}
	printf("%" PRIu64 " records, %" PRIu64 " bytes, %.0f s\n", seq, info.bytes,
	       (double)copies * (double)span / 1e9);
	for (i = 0; i < n; i++)
		free(recs[i].line);
	free(recs);
	return 0;
}
