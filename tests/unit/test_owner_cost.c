/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_owner_cost.c - what an owner's recorded lines take on disk,
 * measured as the store compresses a batch (a real store, with the
 * events' dictionary): event lines of one cluster compress to a fraction
 * of their bytes, long random SQL text hardly at all; each sample is of
 * one owner, then the next owner due; a line too long for a sample is
 * measured alone.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "broker/record/event_dict.h"
#include "broker/record/owner_cost.h"
#include "tests/unit/check.h"

#define A 1001u
#define B 1002u

static char dir[] = "/tmp/pgoff-owner-cost.XXXXXX";

/* owner i's cost as history reports it; -1: not sampled */
static double cost_of(struct owner_share *s, size_t i)
{
	struct owner_share_record rec = { .cap = 1 << 20 };
	json_object *a = owner_share_report(s, &rec);
	json_object *c = json_object_object_get(json_object_array_get_idx(a, i),
						"disk_per_line_byte");
	double v = c ? json_object_get_double(c) : -1;

	json_object_put(a);
	return v;
}

static void line_of(char *buf, size_t cap, unsigned int i, bool random_sql)
{
	int n = snprintf(buf, cap, "{\"type\":\"offcpu\",\"pid\":%u,\"wait\":"
			 "\"sleep\",\"duration_ns\":%u,\"pg\":{\"wait_event_type\":"
			 "\"Timeout\",\"wait_event\":\"PgSleep\"},\"query\":\"",
			 4242 + i % 4, 2000000 + i * 37);

	for (size_t k = 0; random_sql && k < 900; k++)
		buf[n++] = "abcdefghijklmnopqrstuvwxyz0123456789"[random() % 36];
	snprintf(buf + n, cap - (size_t)n, "%s\"}\n",
		 random_sql ? "" : "select pg_sleep($1)");
}

static void test_costs_by_owner(void)
{
	struct store_opts o = { .max_bytes = 1 << 24, .max_age_ns = 1LL << 50,
				.compress = true, .dict = event_dict,
				.dict_len = event_dict_len };
	struct owner_share *s;
	struct owner_cost *c;
	struct store *st;
	char line[2048];
	int64_t ms = 1000;

	CHECK(store_open(&st, open(dir, O_RDONLY | O_DIRECTORY), &o) == 0);
	CHECK(owner_share_new(&s) == 0 && owner_cost_new(&c) == 0);
	/* A's lines first: the sample is A's, B's lines pass it by */
	for (unsigned int i = 0; i < 400; i++, ms += i % 8 == 0) {
		line_of(line, sizeof(line), i, false);
		owner_cost_add(c, s, st, A, line, strlen(line), ms);
		line_of(line, sizeof(line), i, true);
		owner_cost_add(c, s, st, B, line, strlen(line), ms);
	}
	fprintf(stderr, "# A's cost %.3f, B's %.3f\n", cost_of(s, 0),
		cost_of(s, 1));
	CHECK(cost_of(s, 0) > 0 && cost_of(s, 0) < 0.2);
	CHECK(cost_of(s, 1) > 0.55 && cost_of(s, 1) <= 1.0);
	owner_cost_free(c);
	owner_share_free(s);
	store_close(st);
}

/* A long line alone is its owner's sample; a sample past its window is
 * measured at the tick. */
static void test_long_line_and_tick(void)
{
	struct store_opts o = { .max_bytes = 1 << 24, .max_age_ns = 1LL << 50,
				.compress = true, .dict = event_dict,
				.dict_len = event_dict_len };
	static char big[OWNER_COST_BYTES + 100];
	struct owner_share *s;
	struct owner_cost *c;
	struct store *st;
	char line[2048];

	CHECK(store_open(&st, open(dir, O_RDONLY | O_DIRECTORY), &o) == 0);
	CHECK(owner_share_new(&s) == 0 && owner_cost_new(&c) == 0);
	memset(big, 'x', sizeof(big));
	owner_cost_add(c, s, st, A, big, sizeof(big), 10);
	CHECK(cost_of(s, 0) > 0 && cost_of(s, 0) < 0.05);
	line_of(line, sizeof(line), 1, false);
	owner_cost_add(c, s, st, B, line, strlen(line), 20);
	CHECK(cost_of(s, 1) < 0);
	owner_cost_tick(c, s, st, 20 + OWNER_COST_WINDOW_MS);
	CHECK(cost_of(s, 1) > 0);
	owner_cost_free(c);
	owner_share_free(s);
	store_close(st);
}

int main(void)
{
	char cmd[sizeof(dir) + 16];

	if (!mkdtemp(dir))
		return 1;
	srandom(42);
	RUN(test_costs_by_owner);
	RUN(test_long_line_and_tick);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return CHECK_DONE();
}
