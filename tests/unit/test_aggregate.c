/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_aggregate.c - rows of the kernel's aggregation in pgoffd: merged
 * by pid or by labels, retired without losing time past the label limit,
 * held monotonic as Prometheus counters, encoded within a budget.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "broker/kernel/aggregate.h"
#include "tests/unit/check.h"

static struct agg_row row(uint32_t pid, const char *db, uint32_t info,
			  uint64_t count, uint64_t ns)
{
	struct agg_row r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.cluster = 1;
	r.pg_major = 15;
	r.pg_known = true;
	r.pg_wait_event_info = info;
	r.wait = info ? PGOFF_WAIT_LOCK : PGOFF_WAIT_CPU;
	snprintf(r.data_dir, sizeof(r.data_dir), "/data");
	snprintf(r.title.database, sizeof(r.title.database), "%s", db);
	snprintf(r.title.user, sizeof(r.title.user), "u%u", pid);
	snprintf(r.title.backend_type, sizeof(r.title.backend_type),
		 "client backend");
	r.count = count;
	r.total_ns = ns;
	r.hist[3] = count;
	return r;
}

static void test_row_from_kernel_key(void)
{
	struct pgoff_agg_key k = {
		.tgid = 42, .pg_wait_event_info = 0x03000005u, .cluster = 0,
		.syscall = SYS_epoll_pwait, .state = PGOFF_AGG_SLEEP,
		.flags = PGOFF_AGG_F_PG_WAIT,
	};
	struct pgoff_agg v = { .count = 2, .total_ns = 7 };
	struct agg_row r;

	agg_row_make(&r, &k, &v, NULL, NULL);
	CHECK(r.pid == 42 && r.wait == PGOFF_WAIT_LOCK && r.pg_known);
	CHECK(r.count == 2 && r.total_ns == 7 && !r.data_dir[0]);
	k.flags = 0;	/* not read: no wait event, whatever the key holds */
	agg_row_make(&r, &k, &v, NULL, NULL);
	CHECK(!r.pg_known && r.pg_wait_event_info == 0 &&
	      r.wait == PGOFF_WAIT_POLL);
}

static void test_merge(void)
{
	struct agg_row rows[4] = {
		row(1, "a", 0x03000005u, 1, 100), row(1, "a", 0x03000005u, 2, 200),
		row(2, "a", 0x03000005u, 1, 1000), row(3, "b", 0, 1, 10),
	};
	size_t n = agg_rows_merge(rows, 4, PGOFF_STATS_BY_PID);

	CHECK(n == 3);
	CHECK(rows[0].pid == 2 && rows[1].pid == 1 && rows[1].total_ns == 300 &&
	      rows[1].count == 3 && rows[1].hist[3] == 3);
	for (size_t i = 0; i < n; i++)
		agg_row_to_labels(&rows[i]);
	n = agg_rows_merge(rows, n, PGOFF_STATS_BY_LABELS);
	CHECK(n == 2 && rows[0].total_ns == 1300 && rows[0].pid == 0 &&
	      !rows[0].title.user[0]);
}

/* The identity of cluster n (1, 2: two containers' at /data; 3: a
 * look-alike of another owner with 1's id) on a row. */
static struct agg_row in_cluster(struct agg_row r, int n)
{
	snprintf(r.ident.id, sizeof(r.ident.id), "%s",
		 n == 2 ? "9c1de0a7b3f24e61" : "13e382a564cd7b20");
	r.ident.owner = n == 3 ? 1001 : 999;
	if (n == 2)
		snprintf(r.ident.container.runtime,
			 sizeof(r.ident.container.runtime), "docker");
	return r;
}

/*
 * Clusters at one path (two containers', and a look-alike another user
 * started there) are never one row: by labels, by query, and when rows
 * are kept, each has its own (other) row.
 */
static void test_clusters_at_one_path(void)
{
	struct agg_row rows[6];
	size_t n;

	for (int i = 0; i < 6; i++) {
		rows[i] = in_cluster(row(10 + (uint32_t)i, "postgres",
					 0x03000005u, 1, 100 + (uint64_t)i),
				     i % 3 + 1);
		agg_row_to_labels(&rows[i]);
	}
	n = agg_rows_merge(rows, 6, PGOFF_STATS_BY_LABELS);
	CHECK(n == 3);
	for (size_t i = 0; i < n; i++)
		CHECK(rows[i].count == 2);
	for (int i = 0; i < 6; i++)
		rows[i] = in_cluster(row(10 + (uint32_t)i, "postgres",
					 0x03000005u, 1, 100 + (uint64_t)i),
				     i % 3 + 1);
	for (int i = 0; i < 6; i++)
		agg_row_to_query(&rows[i]);
	CHECK(agg_rows_merge(rows, 6, PGOFF_STATS_BY_QUERY) == 3);
}

/* Kept rows: each cluster's (other) row is its own, identity and all. */
static void test_keep_by_identity(void)
{
	struct agg_row rows[200];
	uint64_t folded = 0, other = 0;
	size_t n;

	for (int i = 0; i < 200; i++)
		rows[i] = in_cluster(row(10 + (uint32_t)i, "postgres",
					 0x03000005u, 1, 100 + (uint64_t)i),
				     i % 3 + 1);
	n = agg_rows_merge(rows, 200, PGOFF_STATS_BY_PID);
	n = agg_rows_keep(rows, n, 100, &folded);
	CHECK(n <= 100 && folded > 0);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].title.backend_type, AGG_OTHER))
			continue;
		other++;
		CHECK(rows[i].ident.id[0] && !strcmp(rows[i].data_dir, "/data"));
	}
	CHECK(other == 3);
}

/* Past the label limit, time goes to "(other)": none of it is lost. */
static void test_retire_keeps_time_past_the_limit(void)
{
	struct agg_label_rows r = { 0 };
	uint64_t total = 0, sum = 0;
	char db[16];

	for (int i = 0; i < AGG_MAX_RETIRED + 10; i++) {
		snprintf(db, sizeof(db), "db%d", i);
		struct agg_row x = row(0, db, 0, 1, 1000 + (uint64_t)i);

		total += x.total_ns;
		CHECK(agg_retire(&r, &x, PGOFF_STATS_BY_LABELS) == 0);
	}
	CHECK(r.n == AGG_MAX_RETIRED && r.overflowed == 10);
	for (size_t i = 0; i < r.n; i++)
		sum += r.rows[i].total_ns;
	CHECK(sum == total);
	CHECK(strcmp(r.rows[r.n - 1].title.backend_type, "(other)") == 0 &&
	      r.rows[r.n - 1].count == 11);
	agg_label_rows_free(&r);
}

static void test_counters_never_go_back(void)
{
	struct agg_label_rows h = { 0 };
	struct agg_row a[2] = { row(0, "a", 0, 1, 500), row(0, "b", 0, 1, 50) };
	size_t n = 2;

	CHECK(agg_hold_highest(&h, a, &n) == 0 && n == 2);
	a[0].total_ns = 400;	/* read short while an interval ended */
	a[1].total_ns = 70;
	CHECK(agg_hold_highest(&h, a, &n) == 0 && n == 2);
	CHECK(a[0].total_ns == 500 && a[1].total_ns == 70);
	a[0].total_ns = 900;
	n = 1;
	CHECK(agg_hold_highest(&h, a, &n) == 0 && a[0].total_ns == 900);
	CHECK(h.n == 2);
	agg_label_rows_free(&h);
}

/*
 * More distinct label sets than pgoffd keeps (a database name is in the
 * title before authentication: a remote client can make up thousands):
 * the history stays at AGG_MAX_HELD, and the time of the label sets past
 * it goes into "(other)", none lost, none counted twice, never going back.
 * Each read has every label set seen so far, as the kernel's and the
 * retired rows would.
 */
static void test_held_labels_are_capped(void)
{
	enum { BATCH = 512, READS = 3 * AGG_MAX_HELD / BATCH };
	struct agg_label_rows h = { 0 };
	struct agg_row *rows = calloc(READS * BATCH, sizeof(*rows));
	uint64_t last_other = 0;
	char db[32];

	CHECK(rows);
	for (size_t r = 1; r <= READS; r++) {
		size_t n = r * BATCH, held_before = h.n;
		uint64_t in = 0, out = 0, other = 0;
		bool db0 = false;

		for (size_t i = 0; i < n; i++) {
			snprintf(db, sizeof(db), "db%zu", i);
			rows[i] = row(0, db, 0, r, 1000 * r + i);
			in += rows[i].total_ns;
		}
		n = agg_rows_merge(rows, n, PGOFF_STATS_BY_LABELS);
		CHECK(agg_hold_highest(&h, rows, &n) == 0);
		for (size_t i = 0; i < n; i++) {
			out += rows[i].total_ns;
			if (strcmp(rows[i].title.backend_type, AGG_OTHER) == 0)
				other = rows[i].total_ns;
			db0 |= strcmp(rows[i].title.database, "db0") == 0;
		}
		if (h.n > AGG_MAX_HELD || out != in || other < last_other || !db0)
			fprintf(stderr, "read %zu: %zu held (was %zu), %zu rows, "
				"time in %llu out %llu, other %llu (was %llu), db0 %d\n",
				r, h.n, held_before, n, (unsigned long long)in,
				(unsigned long long)out, (unsigned long long)other,
				(unsigned long long)last_other, db0);
		CHECK(h.n <= AGG_MAX_HELD);	/* bounded */
		CHECK(out == in);		/* every nanosecond, once */
		CHECK(other >= last_other);	/* a counter */
		CHECK(db0);			/* held labels keep their row */
		CHECK(n <= AGG_MAX_HELD);
		last_other = other;
	}
	CHECK(last_other > 0 && h.overflowed > 0);
	agg_label_rows_free(&h);
	free(rows);
}

static void test_encode_budget(void)
{
	struct agg_row rows[50];
	json_object *o = json_object_new_object(), *arr;

	for (int i = 0; i < 50; i++)
		rows[i] = row((uint32_t)i + 1, "a", 0, 1, 1000 - (uint64_t)i);
	agg_rows_encode(o, rows, 50, PGOFF_STATS_BY_PID, 2000);
	arr = json_object_object_get(o, "rows");
	CHECK(json_object_array_length(arr) > 0 &&
	      json_object_array_length(arr) < 50);
	CHECK(json_object_get_boolean(json_object_object_get(o, "truncated")));
	CHECK(json_object_get_int64(json_object_object_get(o, "total")) == 50);
	CHECK(strlen(pgoff_json_line(arr, NULL)) <= 2000);
	json_object_put(o);
}

int main(void)
{
	RUN(test_row_from_kernel_key);
	RUN(test_merge);
	RUN(test_clusters_at_one_path);
	RUN(test_keep_by_identity);
	RUN(test_retire_keeps_time_past_the_limit);
	RUN(test_counters_never_go_back);
	RUN(test_held_labels_are_capped);
	RUN(test_encode_budget);
	return CHECK_DONE();
}
