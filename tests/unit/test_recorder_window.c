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
#include "broker/record/recorder.h"
#include "tests/unit/check.h"

#define SECONDS 60
#define PIDS_PER_SECOND 300		/* two rows each: 36,000 rows in all */
#define ROW_NS 30000000ull

static char dir[] = "/tmp/pgoff-test-window.XXXXXX";

/* seconds stored seconds, each of per_second pids never seen before */
static struct recorder *churned_store(int seconds, int per_second)
{
	struct recorder_opts o = {
		.min_ns = 10000000, .max = { 1ull << 30, 100 },
		.max_age_ns = 86400ull * 1000000000ull,
	};
	struct recorder *r = NULL;
	uint64_t mono = 1000000000ull;
	uint32_t pid = 100000;
	int fd;

	strcpy(dir + sizeof(dir) - 7, "XXXXXX");
	if (!mkdtemp(dir) || (fd = open(dir, O_DIRECTORY | O_RDONLY)) < 0 ||
	    recorder_open(&r, fd, &o))
		return NULL;
	for (int s = 0; s < seconds; s++, mono += 1000000000ull) {
		struct agg_row *rows = calloc(2 * per_second, sizeof(*rows));

		for (int i = 0; rows && i < 2 * per_second; i++) {
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
		pid += per_second;
		recorder_aggregate(r, rows, rows ? 2 * per_second : 0, mono);
	}
	return r;
}

static void remove_dir(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
}

/* The window's rows summed: their time, and whether (other) is one. */
static uint64_t reply_time(json_object *reply, bool *other)
{
	json_object *rows, *v;
	uint64_t sum = 0;

	*other = false;
	if (!json_object_object_get_ex(reply, "rows", &rows))
		return 0;
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (json_object_object_get_ex(row, "backend_type", &v) &&
		    !strcmp(json_object_get_string(v), "(other)"))
			*other = true;
		if (json_object_object_get_ex(row, "time_ns", &v))
			sum += (uint64_t)json_object_get_int64(v);
	}
	return sum;
}

static void test_churn_is_folded_not_lost(void)
{
	struct recorder *r = churned_store(SECONDS, PIDS_PER_SECOND);
	struct recorder_window *w = NULL;
	json_object *reply = json_object_new_object(), *v;
	uint64_t sum_ns;
	int steps = 1;
	bool other;

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
	sum_ns = reply_time(reply, &other);
	fprintf(stderr, "# time %llu ns of %llu\n", (unsigned long long)sum_ns,
		(unsigned long long)(SECONDS * 2ull * PIDS_PER_SECOND * ROW_NS));
	CHECK(other);
	CHECK(sum_ns == SECONDS * 2ull * PIDS_PER_SECOND * ROW_NS);
	recorder_window_free(w);
	json_object_put(reply);
	recorder_close(r);
	remove_dir();
}

/* A second whose rows do not fit in one record (8,000 processes that
 * changed) is stored in parts, and a window reads it as one second. */
static void test_big_second_is_stored_in_parts(void)
{
	struct recorder *r = churned_store(1, 8000);
	struct recorder_window *w = NULL;
	json_object *reply = json_object_new_object(), *v;
	uint64_t sum_ns;
	bool other;

	CHECK(r && reply);
	CHECK(recorder_window_start(r, 1, INT64_MAX - 1, PGOFF_STATS_BY_PID,
				    &w) == 0);
	while (recorder_window_step(r, w, RECORDER_WINDOW_STEP))
		;
	CHECK(recorder_window_reply(r, w, reply, 64u << 20, NULL, 0, 0) == 0);
	sum_ns = reply_time(reply, &other);
	fprintf(stderr, "# time %llu ns of %llu; %s\n",
		(unsigned long long)sum_ns, 16000ull * ROW_NS,
		json_object_to_json_string(json_object_object_get(reply,
								  "seconds")));
	CHECK(json_object_object_get_ex(reply, "seconds", &v) &&
	      json_object_get_int64(v) == 1);
	CHECK(json_object_object_get_ex(reply, "covered_ns", &v) &&
	      json_object_get_int64(v) == 1000000000);
	CHECK(sum_ns == 16000ull * ROW_NS);
	recorder_window_free(w);
	json_object_put(reply);
	recorder_close(r);
	remove_dir();
}

/*
 * A steady process of one cluster (0.2 s a second) beside another
 * cluster's churn of 2,100 new processes a second at 0.9 s each: the
 * churn folds only its own cluster's rows, and the steady process is
 * told by pid with all its time.
 */
static void test_churn_folds_its_own_cluster(void)
{
	struct recorder_opts o = {
		.min_ns = 10000000, .max = { 1ull << 30, 100 },
		.max_age_ns = 86400ull * 1000000000ull,
	};
	struct recorder *r = NULL;
	struct recorder_window *w = NULL;
	json_object *reply = json_object_new_object(), *rows, *v;
	uint64_t mono = 1000000000ull, steady_ns = 0;
	uint32_t pid = 100000;
	int fd;

	strcpy(dir + sizeof(dir) - 7, "XXXXXX");
	CHECK(reply && mkdtemp(dir));
	fd = open(dir, O_DIRECTORY | O_RDONLY);
	CHECK(fd >= 0 && recorder_open(&r, fd, &o) == 0);
	for (int s = 0; s < 20; s++, mono += 1000000000ull) {
		struct agg_row *x = calloc(2101, sizeof(*x));

		CHECK(x);
		for (int i = 0; i < 2101; i++) {
			x[i].cluster = i ? 2 : 1;
			x[i].pg_major = 15;
			strcpy(x[i].data_dir, i ? "/home/mallory/pg" : "/prod");
			strcpy(x[i].title.backend_type, "client backend");
			x[i].pid = i ? pid++ : 50;
			x[i].count = 1;
			/* cumulative, as the kernel's: the steady one grows */
			x[i].total_ns = i ? 900000000ull : (s + 1) * 200000000ull;
			x[i].hist[20] = 1;
		}
		recorder_aggregate(r, x, 2101, mono);
	}
	CHECK(recorder_window_start(r, 1, INT64_MAX - 1, PGOFF_STATS_BY_PID,
				    &w) == 0);
	while (recorder_window_step(r, w, RECORDER_WINDOW_STEP))
		;
	CHECK(recorder_window_reply(r, w, reply, 64u << 20, NULL, 0, 0) == 0);
	CHECK(json_object_object_get_ex(reply, "rows", &rows));
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		json_object *row = json_object_array_get_idx(rows, i);

		if (json_object_object_get_ex(row, "pid", &v) &&
		    json_object_get_int(v) == 50 &&
		    json_object_object_get_ex(row, "time_ns", &v))
			steady_ns = (uint64_t)json_object_get_int64(v);
	}
	fprintf(stderr, "# the steady process: %llu ns of 4000000000\n",
		(unsigned long long)steady_ns);
	CHECK(steady_ns == 4000000000ull);
	recorder_window_free(w);
	json_object_put(reply);
	recorder_close(r);
	remove_dir();
}

int main(void)
{
	RUN(test_churn_is_folded_not_lost);
	RUN(test_big_second_is_stored_in_parts);
	RUN(test_churn_folds_its_own_cluster);
	return check_failed_tests != 0;
}
