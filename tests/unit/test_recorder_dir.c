// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_recorder_dir.c - what root does in the state directory at start
 * (recorder_prepare_dir, recorder_open, recorder_seq_start) touches only
 * pgoffd's own files. A compromised pgoffd could have put there: a hard
 * link to another file named as the newest segment (root would cut its
 * "torn tail") or as seq.new (root would truncate and write it), a FIFO
 * and a symbolic link named as segments, a file of another name. Each is
 * left as it was (owner, size, ctime: a chown to the same owner changes
 * ctime too, so this holds run as any user), and the log names it. Run
 * as root, pgoffd's own seq file is given to the user.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "broker/record/recorder.h"
#include "common/log.h"
#include "tests/unit/check.h"

static char base[] = "/tmp/pgoff-test-dir.XXXXXX";
static char state[64];

/* The strangers put into the state directory, and what each stands for. */
static const struct {
	const char *name;
	const char *what;
} strangers[] = {
	{ "0000000000000002.seg", "a hard link to another file, named as the newest segment" },
	{ "seq.new", "a hard link to another file, named as the seq file's new copy" },
	{ "0000000000000001.seg", "a FIFO named as a segment" },
	{ "0000000000000001.agg", "a symbolic link named as a segment" },
	{ "notes.txt", "a regular file of another name" },
};
#define NSTRANGERS (sizeof(strangers) / sizeof(strangers[0]))

static int put(const char *dir, const char *name, const char *text)
{
	char path[128];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int at(char *buf, size_t len, const char *dir, const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name);
}

static void remove_base(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", base);
}

/* What must not change: owner and size, and ctime unless a name of
 * it was removed (a link in the state directory may be, never the file) */
static bool same_but_ctime(const struct stat *a, const struct stat *b)
{
	return a->st_uid == b->st_uid && a->st_gid == b->st_gid &&
	       a->st_size == b->st_size;
}

static bool same(const struct stat *a, const struct stat *b)
{
	return same_but_ctime(a, b) && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void show(const char *label, const struct stat *st)
{
	printf("#   %-26s uid %u gid %u size %lld ctime %lld.%09ld\n", label,
	       (unsigned int)st->st_uid, (unsigned int)st->st_gid,
	       (long long)st->st_size, (long long)st->st_ctim.tv_sec,
	       st->st_ctim.tv_nsec);
}

static void test_only_own_files(void)
{
	struct recorder_opts o = { .min_ns = 1, .max = { 1ull << 30, 100 },
				   .max_age_ns = 86400ull * 1000000000ull };
	bool root = geteuid() == 0;
	uid_t uid = root ? 4242 : getuid();
	gid_t gid = root ? 4242 : getgid();
	struct stat before[NSTRANGERS + 2], after[NSTRANGERS + 2], seq_st;
	char path[128], other[128], why[300], *logbuf = NULL;
	size_t loglen = 0;
	struct recorder *r = NULL;
	FILE *log_file;
	int fd, err = 0;

	CHECK(mkdtemp(base));
	snprintf(state, sizeof(state), "%s/state", base);
	CHECK(mkdir(state, 0700) == 0);
	CHECK(put(base, "victim", "precious\n") == 0);
	CHECK(put(base, "victim2", "precious too\n") == 0);
	at(other, sizeof(other), base, "victim");
	CHECK(link(other, (at(path, sizeof(path), state, strangers[0].name), path)) == 0);
	at(other, sizeof(other), base, "victim2");
	CHECK(link(other, (at(path, sizeof(path), state, strangers[1].name), path)) == 0);
	CHECK(mkfifo((at(path, sizeof(path), state, strangers[2].name), path), 0600) == 0);
	at(other, sizeof(other), base, "victim");
	CHECK(symlink(other, (at(path, sizeof(path), state, strangers[3].name), path)) == 0);
	CHECK(put(state, strangers[4].name, "someone's\n") == 0);
	CHECK(put(state, "seq", "100\n") == 0);	/* pgoffd's own */

	for (size_t i = 0; i < NSTRANGERS; i++)
		CHECK(lstat((at(path, sizeof(path), state, strangers[i].name), path),
			    &before[i]) == 0);
	CHECK(stat((at(path, sizeof(path), base, "victim"), path), &before[NSTRANGERS]) == 0);
	CHECK(stat((at(path, sizeof(path), base, "victim2"), path), &before[NSTRANGERS + 1]) == 0);
	/* ctime moves with the kernel's coarse clock: a tick apart */
	nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);

	log_file = open_memstream(&logbuf, &loglen);
	CHECK(log_file);
	log_set_output(log_file);
	fd = recorder_prepare_dir(state, uid, gid, why, sizeof(why));
	if (fd >= 0 && stat((at(path, sizeof(path), state, "seq"), path), &seq_st))
		err = -1;
	if (fd >= 0)
		err = recorder_open(&r, fd, &o);
	if (fd >= 0 && !err)
		recorder_seq_start(r);	/* writes seq.new, then seq */
	recorder_close(r);
	log_set_output(NULL);
	fclose(log_file);
	printf("# pgoffd's log:\n");
	for (char *l = logbuf, *e; l && *l; l = e + 1) {
		e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l) - 1;
		printf("#   %.*s\n", (int)(e - l), l);
	}
	if (fd < 0)
		printf("# recorder_prepare_dir: %s\n", why);
	CHECK(fd >= 0 && err == 0);

	for (size_t i = 0; i < NSTRANGERS; i++) {
		bool there = lstat((at(path, sizeof(path), state, strangers[i].name), path),
				   &after[i]) == 0;

		printf("# %s (%s): %s\n", strangers[i].name, strangers[i].what,
		       !there ? "gone" : same(&before[i], &after[i]) ?
		       "untouched" : "TOUCHED");
		show("before", &before[i]);
		if (there)
			show("after", &after[i]);
		else if (i < 2)		/* the links: the file they named */
			memset(&after[i], 0, sizeof(after[i]));
	}
	CHECK(stat((at(path, sizeof(path), base, "victim"), path), &after[NSTRANGERS]) == 0);
	CHECK(stat((at(path, sizeof(path), base, "victim2"), path), &after[NSTRANGERS + 1]) == 0);
	printf("# the files linked to: victim %s, victim2 %s\n",
	       same(&before[NSTRANGERS], &after[NSTRANGERS]) ? "untouched" : "TOUCHED",
	       same_but_ctime(&before[NSTRANGERS + 1], &after[NSTRANGERS + 1]) ?
	       "untouched" : "TOUCHED");
	show("victim before", &before[NSTRANGERS]);
	show("victim after", &after[NSTRANGERS]);
	show("victim2 before", &before[NSTRANGERS + 1]);
	show("victim2 after", &after[NSTRANGERS + 1]);
	if (root)
		printf("# seq after recorder_prepare_dir: uid %u gid %u (want %u %u)\n",
		       (unsigned int)seq_st.st_uid, (unsigned int)seq_st.st_gid,
		       (unsigned int)uid, (unsigned int)gid);

	/* the files behind the hard links: never truncated nor given away
	 * (pgoffd writes seq.new anew: the link by that name is removed) */
	CHECK(same(&before[NSTRANGERS], &after[NSTRANGERS]));
	CHECK(same_but_ctime(&before[NSTRANGERS + 1], &after[NSTRANGERS + 1]));
	CHECK(after[NSTRANGERS + 1].st_nlink == 1);
	/* the strangers themselves stay as they were, said in the log */
	for (size_t i = 0; i < NSTRANGERS; i++) {
		char said[96];

		/* seq.new is pgoffd's name: it may make its own in its place */
		if (i != 1)
			CHECK(same(&before[i], &after[i]));
		snprintf(said, sizeof(said), "state directory: %s left as it is",
			 strangers[i].name);
		CHECK_CONTAINS(logbuf, said);
	}
	if (root)
		CHECK(seq_st.st_uid == uid && seq_st.st_gid == gid);
	free(logbuf);
	remove_base();
}

int main(void)
{
	log_init("pgoffd", LOG_LEVEL_INFO);
	RUN(test_only_own_files);
	return CHECK_DONE();
}
