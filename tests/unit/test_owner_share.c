/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_owner_share.c - the flight record shared between cluster owners:
 * one owner's flood is refused past its share while another's events sit
 * where retention would remove them, never when only its own would go;
 * one owner alone is never refused; retention gives a share back; the
 * saved runs read back, and a file pgoffd did not write is refused
 * without a hang (a FIFO, a symbolic link, garbage).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "broker/record/owner_share.h"
#include "tests/unit/check.h"

#define A 1001u
#define B 1002u
#define LINE 1000u

/* A record of cap bytes on disk, a line stored as it is. */
static struct owner_share_record record(uint64_t cap, uint64_t next_removed)
{
	return (struct owner_share_record){ .cap = cap,
					    .next_removed_last_seq = next_removed };
}

/* An event admitted, then written alone: a line's bytes on disk. */
static bool put(struct owner_share *s, const struct owner_share_record *rec,
		uint32_t uid, uint64_t seq)
{
	if (!owner_share_admit(s, rec, uid, seq, NULL, LINE))
		return false;
	owner_share_written(s, seq, LINE);
	return true;
}

static void test_one_owner_is_never_refused(void)
{
	struct owner_share *s;
	struct owner_share_record rec = record(10 * LINE, 5);

	CHECK(owner_share_new(&s) == 0);
	for (uint64_t seq = 1; seq <= 100; seq++)
		CHECK(put(s, &rec, A, seq));
	CHECK(owner_share_refused(s) == 0);
	owner_share_free(s);
}

static void test_flood_refused_past_share_while_other_is_oldest(void)
{
	struct owner_share *s;
	struct owner_share_record rec = record(100 * LINE, 0);
	uint64_t seq = 1, stored = 0;

	CHECK(owner_share_new(&s) == 0);
	/* B's week: the oldest segment (seqs 1..10) is B's */
	for (; seq <= 10; seq++)
		CHECK(put(s, &rec, B, seq));
	rec.next_removed_last_seq = 10;
	/* A floods: half of the cap, then refused and counted */
	for (; seq <= 1000; seq++)
		stored += put(s, &rec, A, seq);
	CHECK(stored == 50);
	CHECK(owner_share_refused(s) == 1000 - 10 - 50);
	/* B is not refused within its share */
	CHECK(put(s, &rec, B, seq++));
	owner_share_free(s);
}

static void test_over_share_with_only_own_events_to_remove(void)
{
	struct owner_share *s;
	struct owner_share_record rec = record(100 * LINE, 0);
	uint64_t seq = 1;

	CHECK(owner_share_new(&s) == 0);
	/* A filled the record alone (seqs 1..100); then B came */
	for (; seq <= 100; seq++)
		CHECK(put(s, &rec, A, seq));
	CHECK(put(s, &rec, B, seq++));
	/* A is past half, but the segment retention removes next (seqs
	 * 1..20) is A's alone: A goes on, its own oldest make room */
	rec.next_removed_last_seq = 20;
	CHECK(put(s, &rec, A, seq++));
	/* once that segment holds B's too, A is refused */
	rec.next_removed_last_seq = 101;
	CHECK(!put(s, &rec, A, seq++));
	owner_share_free(s);
}

static void test_retention_gives_the_share_back(void)
{
	struct owner_share *s;
	struct owner_share_record rec = record(100 * LINE, 0);
	uint64_t seq = 1;

	CHECK(owner_share_new(&s) == 0);
	for (; seq <= 10; seq++)
		CHECK(put(s, &rec, B, seq));
	rec.next_removed_last_seq = 10;
	for (; seq <= 200; seq++)
		put(s, &rec, A, seq);
	CHECK(!put(s, &rec, A, seq++));
	/* B's week aged out: A is alone, and stores again */
	owner_share_forget(s, 11);
	CHECK(owner_share_bytes(s) == 50 * LINE);
	CHECK(put(s, &rec, A, seq++));
	owner_share_free(s);
}

/* A batch's bytes are shared by its events' lines; until it is written,
 * an owner's pending lines count at its last batch's ratio. */
static void test_a_batch_is_shared_by_its_lines(void)
{
	struct owner_share *s;
	struct owner_share_record rec = record(1000 * LINE, 0);
	json_object *a;

	CHECK(owner_share_new(&s) == 0);
	CHECK(owner_share_admit(s, &rec, A, 1, NULL, 3 * LINE));
	CHECK(owner_share_admit(s, &rec, B, 2, NULL, LINE));
	CHECK(owner_share_admit(s, &rec, A, 3, NULL, 4 * LINE));	/* later batch */
	owner_share_written(s, 2, 400);
	CHECK(owner_share_bytes(s) == 400);
	a = owner_share_report(s, &rec);
	CHECK(json_object_get_int64(json_object_object_get(
		json_object_array_get_idx(a, 0), "bytes")) == 300);
	CHECK(json_object_get_int64(json_object_object_get(
		json_object_array_get_idx(a, 1), "bytes")) == 100);
	json_object_put(a);
	/* the store stopped: seq 4 not taken, seq 3 dropped by a failed write */
	CHECK(owner_share_admit(s, &rec, A, 4, NULL, LINE));
	owner_share_not_taken(s, 4);
	owner_share_written(s, 3, 0);
	CHECK(owner_share_bytes(s) == 400);
	owner_share_free(s);
}

static int64_t bytes_of(json_object *a, size_t i)
{
	return json_object_get_int64(json_object_object_get(
		json_object_array_get_idx(a, i), "bytes"));
}

/* A cost function as the store's would be: lines of 'a' compress to a
 * tenth, lines of 'b' to eight tenths (random text); its calls counted. */
static int cost_calls;

static ssize_t fake_cost(void *ctx, const void *lines, size_t len)
{
	(void)ctx;
	cost_calls++;
	return (ssize_t)(((const char *)lines)[0] == 'a' ? len / 10 :
			 len * 8 / 10);
}

/* A batch of several owners is shared by what each one's lines take
 * compressed alone, to the byte; a batch of one owner costs no
 * compression; a batch whose bytes are few still leaves each owner a
 * byte, so that none drops out of the record while its events are in. */
static void test_a_batch_is_shared_by_cost(void)
{
	static char a_line[LINE], b_line[LINE];
	struct owner_share *s;
	struct owner_share_record rec = record(1000 * LINE, 0);
	json_object *a;

	memset(a_line, 'a', sizeof(a_line));
	memset(b_line, 'b', sizeof(b_line));
	CHECK(owner_share_new(&s) == 0);
	owner_share_set_cost_fn(s, fake_cost, NULL);
	CHECK(owner_share_admit(s, &rec, A, 1, a_line, LINE));
	CHECK(owner_share_admit(s, &rec, B, 2, b_line, LINE));
	CHECK(owner_share_admit(s, &rec, A, 3, a_line, LINE));
	CHECK(owner_share_admit(s, &rec, B, 4, b_line, LINE));	/* later */
	owner_share_written(s, 3, 1000);
	a = owner_share_report(s, &rec);
	/* A's 2000 bytes of lines take 200, B's 1000 take 800 */
	fprintf(stderr, "# parts %lld and %lld of 1000\n",
		(long long)bytes_of(a, 0), (long long)bytes_of(a, 1));
	CHECK(bytes_of(a, 0) == 200 && bytes_of(a, 1) == 800);
	CHECK(owner_share_bytes(s) == 1000);
	CHECK(cost_calls == 2);
	json_object_put(a);
	/* B's line left pending is its batch alone: no compression */
	owner_share_written(s, 4, 50);
	CHECK(cost_calls == 2 && owner_share_bytes(s) == 1050);
	/* 2 bytes for two owners whose weights are 800:1 (B's rounds up to
	 * both): one byte each, never more than the batch */
	CHECK(owner_share_admit(s, &rec, B, 5, b_line, LINE));
	CHECK(owner_share_admit(s, &rec, A, 6, a_line, 1));
	owner_share_written(s, 6, 2);
	a = owner_share_report(s, &rec);
	CHECK(bytes_of(a, 0) == 201 && bytes_of(a, 1) == 800 + 50 + 1);
	CHECK(owner_share_bytes(s) == 1052);
	json_object_put(a);
	owner_share_free(s);
}

/* Four owners, 4 bytes, weights 1000:1000:1:1: a byte each. Empty lines
 * count their owner in the record once (its share is the cap over 2). */
static void test_few_bytes_and_empty_lines(void)
{
	static char a_line[LINE], b_line[LINE];
	struct owner_share *s;
	struct owner_share_record rec = record(1000 * LINE, 0);
	json_object *a;

	memset(a_line, 'b', sizeof(a_line));
	memset(b_line, 'b', sizeof(b_line));
	CHECK(owner_share_new(&s) == 0);
	owner_share_set_cost_fn(s, fake_cost, NULL);
	CHECK(owner_share_admit(s, &rec, A, 1, a_line, LINE));
	CHECK(owner_share_admit(s, &rec, B, 2, b_line, LINE));
	CHECK(owner_share_admit(s, &rec, 3, 3, a_line, 1));
	CHECK(owner_share_admit(s, &rec, 4, 4, b_line, 1));
	owner_share_written(s, 4, 4);
	a = owner_share_report(s, &rec);
	CHECK(bytes_of(a, 0) == 1 && bytes_of(a, 1) == 1 &&
	      bytes_of(a, 2) == 1 && bytes_of(a, 3) == 1);
	json_object_put(a);
	owner_share_free(s);

	CHECK(owner_share_new(&s) == 0);
	CHECK(owner_share_admit(s, &rec, A, 1, a_line, 0));
	CHECK(owner_share_admit(s, &rec, A, 2, a_line, 0));
	CHECK(owner_share_admit(s, &rec, B, 3, b_line, LINE));
	owner_share_written(s, 3, 100);
	a = owner_share_report(s, &rec);
	CHECK(json_object_get_int64(json_object_object_get(
		json_object_array_get_idx(a, 0), "share_bytes")) ==
	      (int64_t)(1000 * LINE / 2));
	json_object_put(a);
	owner_share_free(s);
}

static void test_owners_past_the_cap_count_as_one(void)
{
	struct owner_share *s;
	struct owner_share_record rec = record(UINT64_MAX / 2, 0);
	json_object *a;

	CHECK(owner_share_new(&s) == 0);
	for (uint32_t u = 0; u < OWNER_SHARE_MAX_OWNERS + 50; u++)
		CHECK(put(s, &rec, 10000 + u, u + 1));
	a = owner_share_report(s, &rec);
	CHECK(json_object_array_length(a) == OWNER_SHARE_MAX_OWNERS + 1);
	CHECK_STR(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(a, OWNER_SHARE_MAX_OWNERS), "owner")),
		"other");
	json_object_put(a);
	owner_share_free(s);
}

static char dir[] = "/tmp/pgoff-test-owners.XXXXXX";

static void test_saved_runs_read_back(void)
{
	struct owner_share *s, *t;
	struct owner_share_record rec = record(100 * LINE, 0);
	int fd;

	CHECK(mkdtemp(dir) && (fd = open(dir, O_DIRECTORY | O_RDONLY)) >= 0);
	CHECK(owner_share_new(&s) == 0 && owner_share_new(&t) == 0);
	for (uint64_t seq = 1; seq <= 10; seq++)
		put(s, &rec, seq % 2 ? A : B, seq);
	CHECK(owner_share_dirty(s));
	CHECK(owner_share_save(s, fd, "owners") == 0);
	CHECK(!owner_share_dirty(s));
	CHECK(owner_share_load(t, fd, "owners") == 0);
	CHECK(owner_share_bytes(t) == 10 * LINE);
	/* B past its share, A's events where retention removes next */
	rec.next_removed_last_seq = 5;
	for (uint64_t seq = 11; seq <= 100; seq++)
		put(t, &rec, B, seq);
	CHECK(owner_share_refused(t) == 100 - 10 - 45);
	owner_share_free(s);
	owner_share_free(t);
	close(fd);
}

/* What a hostile or torn file makes of a load: refused, nothing kept. */
static int load_of(const char *content, bool fifo, bool link)
{
	struct owner_share *s;
	int fd = open(dir, O_DIRECTORY | O_RDONLY), err;
	char path[sizeof(dir) + 16];

	snprintf(path, sizeof(path), "%s/bad", dir);
	unlink(path);
	if (fifo) {
		if (mkfifo(path, 0600))
			return -errno;
	} else if (link) {
		if (symlink("/etc/passwd", path))
			return -errno;
	} else {
		FILE *f = fopen(path, "w");

		if (!f)
			return -errno;
		fputs(content, f);
		fclose(f);
	}
	if (owner_share_new(&s))
		return -ENOMEM;
	err = owner_share_load(s, fd, "bad");
	if (owner_share_bytes(s))
		err = 1;	/* something kept */
	owner_share_free(s);
	close(fd);
	return err;
}

static void test_a_file_not_pgoffds_is_refused(void)
{
	CHECK(load_of("", false, false) == -EINVAL);
	CHECK(load_of("pgoff-owners 1\n1 1 1 1000\n2 5 3 10\n", false, false) ==
	      -EINVAL);		/* first after last */
	CHECK(load_of("pgoff-owners 1\n1 9 9 10\n2 5 6 10\n", false, false) ==
	      -EINVAL);		/* not by first seq */
	CHECK(load_of("pgoff-owners 1\n1 1 2 10 junk\n", false, false) ==
	      -EINVAL);
	CHECK(load_of("pgoff-owners 2\n", false, false) == -EINVAL);
	CHECK(load_of(NULL, true, false) == -EINVAL);	/* no hang */
	CHECK(load_of(NULL, false, true) == -ELOOP);
}

int main(void)
{
	RUN(test_one_owner_is_never_refused);
	RUN(test_flood_refused_past_share_while_other_is_oldest);
	RUN(test_over_share_with_only_own_events_to_remove);
	RUN(test_retention_gives_the_share_back);
	RUN(test_a_batch_is_shared_by_its_lines);
	RUN(test_a_batch_is_shared_by_cost);
	RUN(test_few_bytes_and_empty_lines);
	RUN(test_owners_past_the_cap_count_as_one);
	RUN(test_saved_runs_read_back);
	RUN(test_a_file_not_pgoffds_is_refused);
	{
		char cmd[sizeof(dir) + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	return CHECK_DONE();
}
