/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_agg_record.c - the per-second aggregation record: deltas as live
 * top takes them, an encode/decode round trip, and any damaged record
 * refused without reading past it.
 */
#include "broker/record/agg_record.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <stdlib.h>

static struct agg_row row(uint32_t pid, uint32_t wei, enum pgoff_wait w,
			  uint64_t count, uint64_t ns)
{
	struct agg_row r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.cluster = 1;
	r.pg_major = 16;
	r.pg_known = wei != 0;
	r.pg_wait_event_info = wei;
	r.wait = w;
	r.count = count;
	r.total_ns = ns;
	r.hist[3] = count;
	strcpy(r.data_dir, "/var/lib/postgresql/16/main");
	strcpy(r.title.backend_type, "client backend");
	strcpy(r.title.database, pid == 7 ? "shop" : "bench");
	strcpy(r.title.user, "alice");
	/* its cluster's identity: 9 runs in a container at the same path */
	strcpy(r.ident.id, pid == 9 ? "9c1de0a7b3f24e61" : "13e382a564cd7b20");
	r.ident.owner = pid == 9 ? 999 : 105;
	if (pid == 9) {
		strcpy(r.ident.container.runtime, "containerd");
		memset(r.ident.container.id, 'a', CONTAINER_ID_LEN);
		strcpy(r.ident.container.pod_uid,
		       "0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f");
	}
	return r;
}

static void test_delta(void)
{
	struct agg_row prev[] = {
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 2, 1000),
		row(9, 0, PGOFF_WAIT_NET, 5, 500),
		row(11, 0, PGOFF_WAIT_IO, 1, 300),
	};
	struct agg_row cur[] = {
		row(9, 0, PGOFF_WAIT_NET, 5, 500),	/* nothing new */
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 3, 4000),
		row(12, 0, PGOFF_WAIT_IO, 1, 50),	/* new process */
		row(11, 0, PGOFF_WAIT_IO, 1, 200),	/* time went down alone */
	};
	struct agg_vec d = { 0 };

	aggrec_sort(prev, 3);
	aggrec_sort(cur, 4);
	CHECK(aggrec_delta(prev, 3, cur, 4, &d) == 0);
	CHECK(d.n == 2);
	CHECK(d.v[0].pid == 7 && d.v[0].count == 1 && d.v[0].total_ns == 3000);
	CHECK(d.v[0].hist[3] == 1);
	CHECK(d.v[1].pid == 12 && d.v[1].count == 1 && d.v[1].total_ns == 50);
	agg_vec_free(&d);
}

static void test_delta_pid_reused(void)
{
	struct agg_row prev[] = { row(7, 0, PGOFF_WAIT_NET, 9, 9000) };
	struct agg_row cur[] = { row(7, 0, PGOFF_WAIT_NET, 2, 100) };
	struct agg_vec d = { 0 };

	CHECK(aggrec_delta(prev, 1, cur, 1, &d) == 0);
	CHECK(d.n == 1 && d.v[0].count == 2 && d.v[0].total_ns == 100);
	agg_vec_free(&d);
}

/* An on_cpu row has no count: its time going down says the pid was
 * reused (an off-CPU row's may go down for a moment, and is not) */
static void test_delta_on_cpu_pid_reused(void)
{
	struct agg_row prev[] = { row(7, 0x0A000000, PGOFF_WAIT_ON_CPU, 0, 9000) };
	struct agg_row cur[] = { row(7, 0x0A000000, PGOFF_WAIT_ON_CPU, 0, 100) };
	struct agg_vec d = { 0 };

	CHECK(aggrec_delta(prev, 1, cur, 1, &d) == 0);
	CHECK(d.n == 1 && d.v[0].count == 0 && d.v[0].total_ns == 100);
	agg_vec_free(&d);
}

static void test_round_trip(void)
{
	struct agg_row rows[] = {
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 3, 4000000000ull),
		row(9, 0, PGOFF_WAIT_NET, 5, 500),
		row(7, 0, PGOFF_WAIT_CPU, 0, 77),	/* still going on */
	};
	struct agg_vec out = { 0 };
	unsigned char *buf;
	uint64_t iv = 0;
	size_t len;

	rows[1].hist[31] = 1ull << 40;
	aggrec_sort(rows, 3);	/* as the recorder does */
	CHECK(aggrec_encode(rows, 3, 1000000000ull, &buf, &len) == 0);
	/* two processes' labels once each (a container's id is 64 bytes),
	 * three rows: compact */
	CHECK(len < 360);
	CHECK(aggrec_decode(buf, len, &iv, &out) == 0);
	CHECK(iv == 1000000000ull && out.n == 3);
	for (size_t i = 0; i < 3; i++)
		CHECK(memcmp(&out.v[i], &rows[i], sizeof(rows[i])) == 0);
	free(buf);
	agg_vec_free(&out);
}

/* Rows of one process and wait told apart by their statement, each with
 * its query id and state, kept through a round trip and a delta. */
static void test_statements(void)
{
	struct agg_row rows[] = {
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 3, 4000),
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 1, 900),
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 1, 50),
	}, later[3];
	struct agg_vec out = { 0 }, d = { 0 };
	unsigned char *buf;
	uint64_t iv = 0;
	size_t len;

	rows[0].query_id = 0x8000000000000001ull;	/* negative in SQL */
	rows[1].query_id = 42;
	rows[2].query_folded = true;	/* past the kernel's cap */
	for (size_t i = 0; i < 3; i++) {
		rows[i].pg_status = true;
		rows[i].pg_state = 2;
	}
	aggrec_sort(rows, 3);
	CHECK(aggrec_encode(rows, 3, 1000000000ull, &buf, &len) == 0);
	CHECK(aggrec_decode(buf, len, &iv, &out) == 0 && out.n == 3);
	for (size_t i = 0; i < 3; i++)
		CHECK(memcmp(&out.v[i], &rows[i], sizeof(rows[i])) == 0);
	memcpy(later, rows, sizeof(later));
	for (size_t i = 0; i < 3; i++)
		if (later[i].query_id == 42) {
			later[i].count = 2;
			later[i].total_ns = 1900;
		}
	CHECK(aggrec_delta(rows, 3, later, 3, &d) == 0);
	CHECK(d.n == 1 && d.v[0].query_id == 42 && d.v[0].count == 1 &&
	      d.v[0].total_ns == 1000);
	free(buf);
	agg_vec_free(&out);
	agg_vec_free(&d);
}

/* A record of version 1 (before rows had statements) still reads. */
static void test_version_1(void)
{
	static const unsigned char v1[] = {
		1,			/* version */
		0xe8, 0x07,		/* interval: 1000 ns */
		1,			/* a process: */
		7, 1, 16, 1, '/', 0, 1, 'x', 0, 0,	/* pid, cluster, major,
						   data dir, name, type,
						   user, database */
		1,			/* a row: */
		0, 1, 4, 1, 3, 0x90, 0x03, 1, 3, 3,	/* process 0, known,
						   info 4, wait, count 3,
						   400 ns, bucket 3: 3 */
	};
	struct agg_vec out = { 0 };
	uint64_t iv = 0;

	CHECK(aggrec_decode(v1, sizeof(v1), &iv, &out) == 0);
	CHECK(iv == 1000 && out.n == 1);
	CHECK(out.n == 1 && out.v[0].pid == 7 && out.v[0].count == 3 &&
	      out.v[0].total_ns == 400 && out.v[0].hist[3] == 3 &&
	      !out.v[0].query_id && !out.v[0].pg_status);
	agg_vec_free(&out);
}

/* A record of version 2 (rows with statements, processes without their
 * cluster's identity) still reads: no identity, as an unknown cluster. */
static void test_version_2(void)
{
	static const unsigned char v2[] = {
		2,			/* version */
		0xe8, 0x07,		/* interval: 1000 ns */
		1,			/* a process: */
		7, 1, 16, 1, '/', 0, 1, 'x', 0, 0,	/* as version 1's */
		1,			/* a row: */
		0, 1, 4, 1, 42, 2, 3, 0x90, 0x03, 1, 3, 3,	/* process 0,
						   known, info 4, wait,
						   query id 42, status
						   read, count 3, 400 ns,
						   bucket 3: 3 */
	};
	struct agg_vec out = { 0 };
	uint64_t iv = 0;

	CHECK(aggrec_decode(v2, sizeof(v2), &iv, &out) == 0);
	CHECK(out.n == 1 && out.v[0].pid == 7 && out.v[0].query_id == 42 &&
	      out.v[0].pg_status && out.v[0].count == 3 &&
	      out.v[0].total_ns == 400 && out.v[0].hist[3] == 3);
	CHECK(out.n == 1 && !out.v[0].ident.id[0] && !out.v[0].ident.owner &&
	      !out.v[0].ident.container.id[0]);
	agg_vec_free(&out);
}

static void test_empty(void)
{
	struct agg_vec out = { 0 };
	unsigned char *buf;
	uint64_t iv;
	size_t len;

	CHECK(aggrec_encode(NULL, 0, 999, &buf, &len) == 0);
	CHECK(len <= 5);
	CHECK(aggrec_decode(buf, len, &iv, &out) == 0 && out.n == 0);
	CHECK(iv == 999);
	free(buf);
}

/* Every cut and every flipped byte: refused or decoded, never read
 * past the end (ASan), nothing appended on refusal. */
static void test_damaged(void)
{
	struct agg_row rows[] = {
		row(7, 0x03000004, PGOFF_WAIT_LOCK, 3, 4000),
		row(9, 0, PGOFF_WAIT_NET, 5, 500),
	};
	struct agg_vec out = { 0 };
	unsigned char *buf, *copy;
	uint64_t iv;
	size_t len;

	CHECK(aggrec_encode(rows, 2, 1000, &buf, &len) == 0);
	for (size_t cut = 0; cut < len; cut++) {
		copy = malloc(cut ? cut : 1);
		CHECK(copy);
		memcpy(copy, buf, cut);
		CHECK(aggrec_decode(copy, cut, &iv, &out) == -EINVAL);
		CHECK(out.n == 0);
		free(copy);
	}
	copy = malloc(len);
	CHECK(copy);
	for (size_t i = 0; i < len; i++)
		for (unsigned int bit = 0; bit < 8; bit++) {
			int r;

			memcpy(copy, buf, len);
			copy[i] ^= (unsigned char)(1u << bit);
			r = aggrec_decode(copy, len, &iv, &out);
			CHECK(r == 0 || (r == -EINVAL && out.n == 0));
			out.n = 0;
		}
	free(copy);
	free(buf);
	agg_vec_free(&out);
}

int main(void)
{
	RUN(test_delta);
	RUN(test_delta_pid_reused);
	RUN(test_delta_on_cpu_pid_reused);
	RUN(test_round_trip);
	RUN(test_statements);
	RUN(test_version_1);
	RUN(test_version_2);
	RUN(test_empty);
	RUN(test_damaged);
	return CHECK_DONE();
}
