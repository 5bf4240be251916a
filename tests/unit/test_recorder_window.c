/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_recorder_window.c - `top --since` over stored seconds in which
 * processes come and go (connection churn, or a user forking short-lived
 * processes): the window keeps a bounded number of rows, folds the least
 * busy into "(other)" without losing their time, and a step reads a
 * bounded number of rows however many a stored second holds.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "broker/recorder.h"
#include "tests/unit/check.h"

#define SECONDS 60
#define PIDS_PER_SECOND 300		/* two rows each: 36,000 rows in all */
#define ROW_NS 30000000ull

static char dir[] = "/tmp/pgoff-test-window.XXXXXX";

/* SECONDS stored seconds, each of PIDS_PER_SECOND pids never seen before */
static struct recorder *churned_store(void)
{
	struct recorder_opts o = {
		.min_ns = 10000000, .max_bytes = 1ull << 30,
		.max_age_ns = 86400ull * 1000000000ull,
	};
	struct recorder *r = NULL;
	uint64_t mono = 1000000000ull;
	uint32_t pid = 100000;
	int fd;

	if (!mkdtemp(dir) || (fd = open(dir, O_DIRECTORY | O_RDONLY)) < 0 ||
	    recorder_open(&r, fd, &o))
		return NULL;
	for (int s = 0; s < SECONDS; s++, mono += 1000000000ull) {
		struct agg_row *rows = calloc(2 * PIDS_PER_SECOND, sizeof(*rows));

		for (int i = 0; rows && i < 2 * PIDS_PER_SECOND; i++) {
			struct agg_row *x = &rows[i];

			x->pid = pid + i / 2;
			x->cluster = 1;
			x->pg_major = 15;
			x->pg_known = true;
			x->pg_wait_event_info = i % 2 ? 0x06000000u : 0x05000000u;
			strcpy(x->data_dir, "/data");
			strcpy(x->title.backend_type, "client backend");
			x->count = 3;
			x->total_ns = ROW_NS;
			x->hist[14] = 3;
		}
		pid += PIDS_PER_SECOND;
		recorder_aggregate(r, rows, rows ? 2 * PIDS_PER_SECOND : 0, mono);
	}
	return r;
}

static void test_churn_is_folded_not_lost(void)
{
	struct recorder *r = churned_store();
	struct recorder_window *w = NULL;
	json_object *reply = json_object_new_object(), *rows, *v;
	uint64_t sum_ns = 0;
	int steps = 1;
	bool other = false;

	CHECK(r && reply);
	CHECK(recorder_window_start(r, 1, INT64_MAX - 1, PGOFF_STATS_BY_PID,
				    &w) == 0);
	while (recorder_window_step(r, w, RECORDER_WINDOW_STEP))
		steps++;
	/* 600 rows a second: a step stops at its rows' bound, not after
	 * all 60 seconds (RECORDER_WINDOW_STEP records) */
	fprintf(stderr, "# %d steps\n", steps);
	CHECK(steps >= 2);
	CHECK(recorder_window_reply(r, w, reply, 64u << 20, NULL, 0, 0) == 0);
	CHECK(json_object_object_get_ex(reply, "seconds", &v) &&
	      json_object_get_int64(v) == SECONDS);
	CHECK(json_object_object_get_ex(reply, "total", &v));
	fprintf(stderr, "# %d rows kept\n", json_object_get_int(v));
	CHECK(json_object_get_int(v) <= 4096);
	CHECK(json_object_object_get_ex(reply, "folded", &v) &&
	      json_object_get_int64(v) > 0);
	CHECK(json_object_object_get_ex(reply, "rows", &rows));
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i), *t;

		if (json_object_object_get_ex(row, "backend_type", &t) &&
		    !strcmp(json_object_get_string(t), "(other)"))
			other = true;
		if (json_object_object_get_ex(row, "time_ns", &t))
			sum_ns += (uint64_t)json_object_get_int64(t);
	}
	fprintf(stderr, "# time %llu ns of %llu\n", (unsigned long long)sum_ns,
		(unsigned long long)(SECONDS * 2ull * PIDS_PER_SECOND * ROW_NS));
	CHECK(other);
	CHECK(sum_ns == SECONDS * 2ull * PIDS_PER_SECOND * ROW_NS);
	recorder_window_free(w);
	json_object_put(reply);
	recorder_close(r);
}

int main(void)
{
	RUN(test_churn_is_folded_not_lost);
	if (dir[sizeof(dir) - 7] != 'X') {
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	return check_failed_tests != 0;
}
