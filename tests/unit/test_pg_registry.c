/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_pg_registry.c - which processes named postgres are asked about, and
 * the table of those not traced: a user's processes are asked about 16 a
 * scan, users in turn, so no user (however many processes, at whatever
 * pids, that are never kept) crowds another out; a zombie is not asked
 * about; the table is oldest first whatever is taken out of it (ps shows
 * the newest), a user holds at most a share of it (charged to the user
 * /proc names, whatever the prober answered), past which their processes
 * are not asked about; and when it is full the ones kept stay, whatever
 * the prober answers about more: the rest are counted. A fake /proc (in
 * /dev/shm: thousands of fake postmasters in a fraction of a second).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/pg/pg_registry.h"
#include "common/log.h"
#include "tests/unit/check.h"

#define SHARE		512	/* a user's share of the 4096 kept */

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

/* A process named postgres of uid started at start (clock ticks), its
 * parent 1, in state (S, or Z for a zombie). */
static void fake_process(uint32_t pid, uint32_t uid, unsigned start, char state)
{
	char text[160];

	/* after the ppid, 17 fields, then the start time (field 22) */
	snprintf(text, sizeof(text), "%u (postgres) %c 1 0 0 0 0 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 0 %u 0\n", pid, state, start);
	write_file(pid, "stat", text);
	snprintf(text, sizeof(text), "Name:\tpostgres\nUid:\t%u\t%u\t%u\t%u\n",
		 uid, uid, uid, uid);
	write_file(pid, "status", text);
}

static void fake_postmaster(uint32_t pid, uint32_t uid, unsigned start)
{
	fake_process(pid, uid, start, 'S');
}

static void gone(uint32_t pid)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
	unlink(path);
}

/* A fresh fake /proc for each test. */
static void new_proc_root(void)
{
	char cmd[96];

	if (proc_root[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", proc_root);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", proc_root);
	}
	snprintf(proc_root, sizeof(proc_root), "/dev/shm/pgoff-test-registry.XXXXXX");
	if (!mkdtemp(proc_root)) {
		perror(proc_root);
		exit(1);
	}
}

/* The prober's answer: status, for uid, counted for account. */
static const struct pg_cluster *answer_as(struct pg_registry *r, uint32_t pid,
					  uint32_t uid, uint32_t account,
					  int status)
{
	struct pg_cluster_info info;

	memset(&info, 0, sizeof(info));
	info.postmaster_pid = pid;
	info.uid = uid;
	info.account_uid = account;
	info.status = status;
	info.id = pid;
	info.major = 15;
	if (status)
		snprintf(info.why, sizeof(info.why), "refused (%d)", status);
	return pg_registry_probed(r, &info, NULL, 0, 0);
}

/* The prober's answer to what it was asked about: status, for uid
 * (whose account, as a postmaster in no user namespace of a user's). */
static const struct pg_cluster *answer(struct pg_registry *r, uint32_t pid,
				       uint32_t uid, int status)
{
	return answer_as(r, pid, uid, uid, status);
}

/* Every question of this scan answered with status (the prober's uid 0,
 * as when it could not read one); how many. */
static size_t answer_all(struct pg_registry *r, int status)
{
	uint32_t pid;
	size_t n = 0;

	for (; pg_registry_next_probe(r, 0, &pid); n++)
		answer(r, pid, 0, status);
	return n;
}

/* Scans until nothing is left to ask (100 at most), each question
 * answered with status; how many were asked. *now_ms goes on a second a
 * scan. */
static size_t ask_everything(struct pg_registry *r, int status, int64_t *now_ms)
{
	size_t asked = 0, n;
	int scans = 0;

	do {
		if (pg_registry_scan(r, *now_ms) || ++scans > 100)
			return 0;
		*now_ms += 1000;
		asked += n = answer_all(r, status);
	} while (n);
	return asked;
}

static size_t kept_of(struct pg_registry *r, uint32_t uid)
{
	size_t n, k = 0;
	const struct pg_refusal *f = pg_registry_refusals(r, &n);

	for (size_t i = 0; i < n; i++)
		k += f[i].uid == uid;
	return k;
}

/* One user may have one cluster (100, traced); 200, 300 and 400 are
 * refused for that without being asked about. */
static void test_order_kept_when_one_goes(void)
{
	struct pg_registry *r = NULL;
	const struct pg_refusal *f;
	uint32_t pid;
	size_t n = 0;

	new_proc_root();
	fake_postmaster(100, 1000, 7);
	CHECK(pg_registry_new(&r, proc_root, 1) == 0 && pg_registry_scan(r, 0) == 0);
	CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 100);
	CHECK(answer(r, 100, 1000, 0) != NULL);
	fake_postmaster(200, 1000, 7);
	fake_postmaster(300, 1000, 7);
	fake_postmaster(400, 1000, 7);
	CHECK(pg_registry_scan(r, 1000) == 0);
	f = pg_registry_refusals(r, &n);
	CHECK(n == 3 && f[0].pid == 200 && f[1].pid == 300 && f[2].pid == 400);
	/* 200 exits and its pid comes back as a new postmaster: its old
	 * refusal goes, the new one is the newest */
	fake_postmaster(200, 1000, 9);
	CHECK(pg_registry_scan(r, 3000) == 0);
	f = pg_registry_refusals(r, &n);
	if (n == 3)
		printf("# refused, oldest first: %u %u %u\n", f[0].pid, f[1].pid, f[2].pid);
	CHECK(n == 3 && f[0].pid == 300 && f[1].pid == 400 && f[2].pid == 200);
	pg_registry_free(r);
}

/*
 * A cluster in a user's rootless container (postmaster uid 401000, the
 * account 1000) counts for 1000: with one cluster allowed, 1000's own
 * postmaster is then refused without a question. Another of the
 * container's subuids (401001) is asked about, since /proc cannot tell
 * whose it is; the prober's -EUSERS keeps it refused, not asked again
 * while 1000's cluster runs, and asked at once when it is gone. The
 * prober's -EDQUOT (the process quota) is not asked again.
 */
static void test_a_container_counts_for_its_user(void)
{
	struct pg_registry *r = NULL;
	const struct pg_refusal *f;
	uint32_t pid;
	size_t n = 0;

	new_proc_root();
	fake_postmaster(100, 401000, 7);
	CHECK(pg_registry_new(&r, proc_root, 1) == 0 && pg_registry_scan(r, 0) == 0);
	CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 100);
	CHECK(answer_as(r, 100, 401000, 1000, 0) != NULL);
	fake_postmaster(200, 1000, 7);
	fake_postmaster(300, 401001, 7);
	CHECK(pg_registry_scan(r, 0) == 0);
	f = pg_registry_refusals(r, &n);
	CHECK(n == 1 && f[0].pid == 200 && f[0].status == -EUSERS);
	CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 300);
	CHECK(answer_as(r, 300, 401001, 1000, -EUSERS) == NULL);	/* at 0 */
	f = pg_registry_refusals(r, &n);
	CHECK(n == 2 && f[1].pid == 300 && f[1].status == -EUSERS &&
	      f[1].account == 1000);
	CHECK(pg_registry_scan(r, 5000) == 0);
	CHECK(!pg_registry_next_probe(r, 5000, &pid));	/* 100 still runs */
	gone(100);
	for (int64_t t = 6000; t <= 8000; t += 1000)	/* until swept */
		CHECK(pg_registry_scan(r, t) == 0);
	CHECK(pg_registry_next_probe(r, 8000, &pid) && (pid == 200 || pid == 300));
	CHECK(answer_as(r, pid, pid == 200 ? 1000 : 401001, 1000, -EDQUOT) == NULL);
	CHECK(pg_registry_scan(r, 20000) == 0);
	CHECK(pg_registry_next_probe(r, 20000, &pid));	/* the other one */
	CHECK(answer_as(r, pid, pid == 200 ? 1000 : 401001, 1000, -EDQUOT) == NULL);
	CHECK(pg_registry_scan(r, 40000) == 0);
	CHECK(!pg_registry_next_probe(r, 40000, &pid));	/* never again */
	pg_registry_free(r);
}

/* One user's processes hold at most a share; past it they are not even
 * asked about, and another user's still are. */
static void test_one_user_holds_a_share(void)
{
	struct pg_registry *r = NULL;
	int64_t now = 0;
	uint32_t pid;
	size_t asked;

	new_proc_root();
	for (pid = 1000; pid < 1000 + SHARE + 88; pid++)
		fake_postmaster(pid, 2000, 7);
	CHECK(pg_registry_new(&r, proc_root, 0) == 0);
	asked = ask_everything(r, -EACCES, &now);
	printf("# asked %zu; kept %zu, not kept %zu\n", asked, kept_of(r, 2000),
	       pg_registry_refusals_unkept(r));
	/* each asked about once, up to the share; charged to uid 2000 */
	CHECK(asked == SHARE);
	CHECK(kept_of(r, 2000) == SHARE && kept_of(r, 0) == 0);
	CHECK(pg_registry_refusals_unkept(r) == 88);
	/* the 88 are not asked about; another user's is */
	fake_postmaster(5000, 3000, 7);
	CHECK(pg_registry_scan(r, now) == 0);
	CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 5000);
	CHECK(answer(r, 5000, 0, -EACCES) == NULL && kept_of(r, 3000) == 1);
	CHECK(!pg_registry_next_probe(r, 0, &pid));
	CHECK(pg_registry_scan(r, now + 1000) == 0);
	CHECK(pg_registry_refusals_unkept(r) == 88);
	pg_registry_free(r);
}

/* Eight users at their share fill the table: the ones kept stay, scan
 * after scan, whatever the prober answers about a ninth user's process
 * (starting, timed out, refused); it is counted and asked about again,
 * and kept once a row is free. */
static void test_full_table_keeps_what_it_has(void)
{
	struct pg_registry *r = NULL;
	const struct pg_refusal *f;
	uint32_t pid, *before;
	int64_t now = 0;
	size_t n = 0;
	static const int answers[] = { -EAGAIN, -EAGAIN, -EAGAIN, -EAGAIN,
				       -ETIMEDOUT, -EACCES };

	new_proc_root();
	for (uint32_t u = 0; u < 8; u++)
		for (pid = 0; pid < SHARE + 2; pid++)
			fake_postmaster(10000 + u * 1000 + pid, 2000 + u, 7);
	CHECK(pg_registry_new(&r, proc_root, 0) == 0);
	ask_everything(r, -EACCES, &now);
	f = pg_registry_refusals(r, &n);
	CHECK(n == 8 * SHARE);
	before = malloc(n * sizeof(*before));
	CHECK(before != NULL);
	for (size_t i = 0; i < n; i++)
		before[i] = f[i].pid;
	fake_postmaster(90000, 3000, 7);
	for (size_t a = 0; a < sizeof(answers) / sizeof(answers[0]); a++) {
		CHECK(pg_registry_scan(r, now + 1000 * (int64_t)a) == 0);
		CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 90000);
		CHECK(answer(r, pid, 3000, answers[a]) == NULL);
		f = pg_registry_refusals(r, &n);
		CHECK(n == 8 * SHARE);
		for (size_t i = 0; i < n; i++)
			CHECK(f[i].pid == before[i]);
		CHECK(!pg_registry_next_probe(r, 0, &pid));	/* the rest not asked */
	}
	CHECK(pg_registry_scan(r, now + 9000) == 0);
	printf("# full: %zu kept, %zu not kept in the last cycle\n", n,
	       pg_registry_refusals_unkept(r));
	CHECK(pg_registry_refusals_unkept(r) == 8 * 2 + 1);
	/* rows free (the first user's processes are gone): the ninth user's
	 * refusal is kept */
	for (pid = 10000; pid < 10000 + SHARE + 2; pid++)
		gone(pid);
	CHECK(pg_registry_scan(r, now + 10000) == 0);
	CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 90000);
	CHECK(answer(r, pid, 3000, -EACCES) == NULL && kept_of(r, 3000) == 1);
	free(before);
	pg_registry_free(r);
}

/* One user's processes the prober finds gone (they keep no row), more of
 * them than any list held, at lower pids, and zombies: another user's
 * postmaster is still asked about at the first scan; no zombie ever is. */
static void test_no_user_crowds_out_another(void)
{
	struct pg_registry *r = NULL;
	uint32_t pid;
	size_t asked = 0, victim = 0;

	new_proc_root();
	for (pid = 1000; pid < 1000 + 5000; pid++)
		fake_postmaster(pid, 2000, 7);
	for (pid = 7000; pid < 7000 + 100; pid++)
		fake_process(pid, 2000, 7, 'Z');
	fake_postmaster(9000, 3000, 7);
	CHECK(pg_registry_new(&r, proc_root, 0) == 0);
	for (int scan = 0; scan < 3; scan++) {
		CHECK(pg_registry_scan(r, 1000 * scan) == 0);
		while (pg_registry_next_probe(r, 0, &pid)) {
			asked++;
			victim += pid == 9000;
			CHECK(pid < 7000 || pid >= 7100);	/* not a zombie */
			answer(r, pid, 0, pid == 9000 ? -EACCES : -ENOENT);
		}
	}
	printf("# 3 scans: %zu asked, the other user's asked %zu time(s); "
	       "not kept %zu\n", asked, victim, pg_registry_refusals_unkept(r));
	CHECK(victim == 1 && kept_of(r, 3000) == 1);
	CHECK(asked == 3 * 16 + 1);		/* 16 a scan of the first */
	CHECK(pg_registry_refusals_unkept(r) == 5000 - 16);
	pg_registry_free(r);
}

/* A user's refusals in one second: 10 lines, then one that counts the
 * rest (a user replacing fakes as fast as they are refused). */
static void test_refusal_lines_limited(void)
{
	struct pg_registry *r = NULL;
	char *buf = NULL;
	size_t len = 0, lines = 0;
	uint32_t pid;
	FILE *out;

	new_proc_root();
	fake_postmaster(100, 2000, 7);
	CHECK(pg_registry_new(&r, proc_root, 1) == 0 && pg_registry_scan(r, 0) == 0);
	CHECK(pg_registry_next_probe(r, 0, &pid) && pid == 100);
	CHECK(answer(r, 100, 2000, 0) != NULL);	/* its one cluster */
	for (pid = 200; pid < 300; pid++)
		fake_postmaster(pid, 2000, 7);
	out = open_memstream(&buf, &len);
	CHECK(out != NULL);
	log_init("test_pg_registry", LOG_LEVEL_WARN);
	log_set_output(out);
	pg_registry_scan(r, 1000);	/* 100 refused for the cap */
	pg_registry_scan(r, 2000);	/* a new second: the count */
	log_set_output(NULL);
	log_init("test_pg_registry", LOG_LEVEL_ERROR);
	fclose(out);
	for (char *c = buf; c && *c; c++)
		lines += *c == '\n';
	printf("# %zu lines: ...%s", lines, buf && len > 120 ? buf + len - 120 : "");
	CHECK(kept_of(r, 2000) == 100);
	CHECK(lines == 11);
	CHECK_CONTAINS(buf, "processes named postgres of uid 2000: suppressed 90 similar lines");
	free(buf);
	pg_registry_free(r);
}

#define ID "3f1c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3"

/* A postmaster found, with what the prober read of its cluster. */
static const struct pg_cluster *found(struct pg_registry *r, uint32_t pid,
				      uint32_t uid, const char *dir,
				      uint64_t ino)
{
	struct pg_cluster_info info;
	uint32_t asked;

	if (!pg_registry_next_probe(r, 0, &asked) || asked != pid)
		return NULL;
	memset(&info, 0, sizeof(info));
	info.postmaster_pid = pid;
	info.uid = uid;
	info.account_uid = uid;
	info.id = pid;
	info.major = 15;
	info.has_sysid = 1;
	info.system_identifier = 7321456789012345678ull;
	info.dir_dev = 0x10301;
	info.dir_ino = ino;
	snprintf(info.data_dir, sizeof(info.data_dir), "%s", dir);
	return pg_registry_probed(r, &info, NULL, 0, 0);
}

/*
 * Each cluster's identity: its id from the prober's facts, its owner, and
 * its container from its postmaster's cgroup file, which pgoffd reads
 * itself; a file reshaped by a newline in a cgroup's name names nothing.
 * Two clusters at one path are each other's look-alikes.
 */
static void test_identity_and_container(void)
{
	struct pg_registry *r = NULL;
	const struct pg_cluster *a, *b, *others[4];
	char want[CLUSTER_ID_LEN + 1], path[128];
	FILE *f;

	new_proc_root();
	snprintf(path, sizeof(path), "%s/self", proc_root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/self/cgroup", proc_root);
	f = fopen(path, "w");
	CHECK(f && fputs("1:name=systemd:/\n0::/\n", f) != EOF && !fclose(f));
	fake_postmaster(100, 999, 7);
	write_file(100, "cgroup", "1:name=systemd:/system.slice/docker-" ID
		   ".scope\n0::/system.slice/docker-" ID ".scope\n");
	CHECK(pg_registry_new(&r, proc_root, 0) == 0 && pg_registry_scan(r, 0) == 0);
	a = found(r, 100, 999, "/var/lib/postgresql/data", 131074);
	CHECK(a != NULL);
	cluster_id_make(true, 7321456789012345678ull, 0x10301, 131074, want);
	CHECK_STR(a->ident.id, want);
	CHECK(a->ident.owner == 999);
	CHECK_STR(a->ident.container.runtime, "docker");
	CHECK_STR(a->ident.container.id, ID);

	/* another container's cluster at the same path, whose cgroup name
	 * holds a newline and a line that names the first one's container */
	fake_postmaster(200, 999, 8);
	write_file(200, "cgroup", "1:name=systemd:/x\n"
		   "0::/system.slice/docker-" ID ".scope\n0::/y\n");
	CHECK(pg_registry_scan(r, 1000) == 0);
	b = found(r, 200, 999, "/var/lib/postgresql/data", 131075);
	CHECK(b != NULL);
	CHECK(strcmp(a->ident.id, b->ident.id) != 0);
	CHECK_STR(b->ident.container.id, "");
	CHECK(pg_registry_same_path(r, a, others, 4) == 1 && others[0] == b);
	CHECK(pg_registry_same_path(r, b, others, 4) == 1 && others[0] == a);
	pg_registry_free(r);
}

int main(void)
{
	log_init("test_pg_registry", LOG_LEVEL_ERROR);	/* one line a refusal */
	RUN(test_order_kept_when_one_goes);
	RUN(test_a_container_counts_for_its_user);
	RUN(test_one_user_holds_a_share);
	RUN(test_full_table_keeps_what_it_has);
	RUN(test_no_user_crowds_out_another);
	RUN(test_refusal_lines_limited);
	RUN(test_identity_and_container);
	new_proc_root();	/* removes the last one */
	rmdir(proc_root);
	return CHECK_DONE();
}
