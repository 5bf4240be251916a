/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_pg_registry.c - the list of processes named postgres that are not
 * traced: oldest first whatever is taken out of it (ps shows the newest);
 * past its 4096 the ones kept stay, and the rest are counted at each scan
 * (not churned through the table and the log). A fake /proc holds
 * postmasters of one user, who may have one cluster traced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/pg_registry.h"
#include "protocol/log.h"
#include "tests/unit/check.h"

#define TRACED		100	/* the user's one cluster */
#define MANY		4100	/* more postmasters than refusals kept */

static char proc_root[64];

static void write_file(uint32_t pid, const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", proc_root, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A postmaster of uid 1000 started at start (clock ticks). */
static void fake_postmaster(uint32_t pid, unsigned start)
{
	char stat[160];

	/* after the ppid, 17 fields, then the start time (field 22) */
	snprintf(stat, sizeof(stat), "%u (postgres) S 1 0 0 0 0 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 0 %u 0\n", pid, start);
	write_file(pid, "stat", stat);
	write_file(pid, "status", "Name:\tpostgres\nUid:\t1000\t1000\t1000\t1000\n");
}

/* A registry with TRACED's cluster traced, at most one cluster a user:
 * every other postmaster is refused without being asked about. */
static struct pg_registry *with_one_cluster(void)
{
	struct pg_registry *r = NULL;
	struct pg_cluster_info info;
	uint32_t asked = 0;

	fake_postmaster(TRACED, 7);
	if (pg_registry_new(&r, proc_root, 1) || pg_registry_scan(r, 0))
		return NULL;
	/* the other postmasters are asked about in turn: TRACED is one */
	while (pg_registry_next_probe(r, 0, &asked) && asked != TRACED) {
		memset(&info, 0, sizeof(info));
		info.postmaster_pid = asked;
		info.status = -ENOENT;		/* gone: not remembered */
		pg_registry_probed(r, &info, NULL, 0, 0);
	}
	if (asked != TRACED)
		return NULL;
	memset(&info, 0, sizeof(info));
	info.postmaster_pid = TRACED;
	info.uid = 1000;
	info.id = 1;
	info.major = 15;
	if (!pg_registry_probed(r, &info, NULL, 0, 0))
		return NULL;
	return r;
}

static void refused_pids(struct pg_registry *r, uint32_t *pids, size_t max,
			 size_t *n)
{
	const struct pg_refusal *f = pg_registry_refusals(r, n);

	for (size_t i = 0; i < *n && i < max; i++)
		pids[i] = f[i].pid;
}

static void test_order_kept_when_one_goes(void)
{
	struct pg_registry *r;
	uint32_t pids[8];
	size_t n = 0;

	fake_postmaster(200, 7);
	fake_postmaster(300, 7);
	fake_postmaster(400, 7);
	r = with_one_cluster();
	CHECK(r != NULL);
	CHECK(pg_registry_scan(r, 1000) == 0);
	refused_pids(r, pids, 8, &n);
	CHECK(n == 3 && pids[0] == 200 && pids[1] == 300 && pids[2] == 400);
	/* 200 exits and its pid comes back as a new postmaster: its old
	 * refusal goes, the new one is the newest */
	fake_postmaster(200, 9);
	CHECK(pg_registry_scan(r, 3000) == 0);
	refused_pids(r, pids, 8, &n);
	if (n == 3)
		printf("# refused, oldest first: %u %u %u\n", pids[0], pids[1], pids[2]);
	CHECK(n == 3 && pids[0] == 300 && pids[1] == 400 && pids[2] == 200);
	CHECK(pg_registry_refusals_unkept(r) == 0);
	pg_registry_free(r);
}

static void test_full_keeps_the_first_counts_the_rest(void)
{
	struct pg_registry *r;
	const struct pg_refusal *f;
	size_t n = 0;

	for (uint32_t pid = 1000; pid < 1000 + MANY; pid++)
		fake_postmaster(pid, 7);
	r = with_one_cluster();
	CHECK(r != NULL);
	/* 3 from the test before, MANY here: 4096 kept, the lowest pids
	 * (a scan goes by pid), the others counted */
	for (int scan = 1; scan <= 3; scan++) {
		CHECK(pg_registry_scan(r, 1000 * scan) == 0);
		f = pg_registry_refusals(r, &n);
		printf("# scan %d: %zu refusals kept, %zu more not kept\n", scan,
		       n, pg_registry_refusals_unkept(r));
		CHECK(n == 4096);
		CHECK(pg_registry_refusals_unkept(r) == (size_t)(MANY + 3 - 4096));
		CHECK(f[0].pid == 200 && f[n - 1].pid == 1000 + 4096 - 3 - 1);
	}
	/* the table has room again once some of them are gone */
	for (uint32_t pid = 1000; pid < 1010; pid++) {
		char path[128];

		snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
		unlink(path);
	}
	/* (a scan lets go of the gone at its end) */
	CHECK(pg_registry_scan(r, 5000) == 0 && pg_registry_scan(r, 6000) == 0);
	f = pg_registry_refusals(r, &n);
	printf("# 10 gone: %zu kept, %zu not kept\n", n, pg_registry_refusals_unkept(r));
	CHECK(n == MANY + 3 - 10 && pg_registry_refusals_unkept(r) == 0);
	CHECK(f[n - 1].pid == 1000 + MANY - 1);
	pg_registry_free(r);
}

int main(void)
{
	char cmd[96];

	log_init("test_pg_registry", LOG_LEVEL_ERROR);	/* one line a refusal */
	snprintf(proc_root, sizeof(proc_root), "/dev/shm/pgoff-test-registry.XXXXXX");
	if (!mkdtemp(proc_root))
		return 1;
	RUN(test_order_kept_when_one_goes);
	RUN(test_full_keeps_the_first_counts_the_rest);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", proc_root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", proc_root);
	return CHECK_DONE();
}
