// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_usdt.c - what pgoffd keeps of the binaries it probed or refused,
 * and the checks usdt_link makes before it reads a file: a process's
 * exe must be the same file at the same path in pgoffd's own mount
 * namespace (a symbolic link stands in for /proc/PID/exe here), a
 * regular file there; and the prober's memory of refused binaries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "broker/priv/usdt.h"
#include "tests/unit/check.h"

static struct usdt_result result(uint64_t ino, bool probed)
{
	struct usdt_result r = { .dev = 1, .ino = ino, .probed = probed,
				 .sites = probed ? 8 : 0 };

	snprintf(r.path, sizeof(r.path), "/bin%llu/postgres",
		 (unsigned long long)ino);
	snprintf(r.why, sizeof(r.why), "%s", probed ? "" : "owned by a user");
	return r;
}

/* Refusals anyone can make never crowd out a real binary found later. */
static void test_refusals_make_room(void)
{
	struct usdt *u = NULL;
	struct usdt_result r;
	uint64_t dev, ino;

	CHECK(usdt_new(&u) == 0);
	r = result(1, true);
	usdt_note(u, &r);
	for (uint64_t i = 2; i < 2 + 2 * USDT_MAX_BINARIES; i++) {
		r = result(i, false);
		usdt_note(u, &r);
	}
	CHECK(usdt_count(u) == USDT_MAX_BINARIES);
	CHECK(usdt_forgotten(u) == USDT_MAX_BINARIES + 1);
	CHECK(usdt_known(u, 1, 1));		/* the probed one stays */
	CHECK(!usdt_known(u, 1, 2));		/* the oldest refusal went */
	CHECK(usdt_known(u, 1, 1 + 2 * USDT_MAX_BINARIES));
	r = result(1000, true);			/* a real one, found later */
	usdt_note(u, &r);
	CHECK(usdt_known(u, 1, 1000));
	usdt_binary(u, 0, &dev, &ino);
	CHECK(ino == 1);
	CHECK(usdt_skipped(u) == 0);
	usdt_free(u);
}

/* Probed ones are never forgotten: past the limit a new one is skipped. */
static void test_probed_are_kept(void)
{
	struct usdt *u = NULL;
	struct usdt_result r;

	CHECK(usdt_new(&u) == 0);
	for (uint64_t i = 1; i <= USDT_MAX_BINARIES + 3; i++) {
		r = result(i, true);
		usdt_note(u, &r);
	}
	CHECK(usdt_count(u) == USDT_MAX_BINARIES);
	CHECK(usdt_skipped(u) == 3);
	CHECK(usdt_forgotten(u) == 0);
	CHECK(usdt_known(u, 1, 1) && !usdt_known(u, 1, USDT_MAX_BINARIES + 1));
	usdt_free(u);
}

static void test_link_wants_the_file_at_its_path(void)
{
	char dir[] = "/tmp/test_usdt.XXXXXX", file[64], other[64], exe[64],
		fifo[64], link[64], why[USDT_WHY_LEN];
	unsigned int sites = 0;
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/postgres", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(exe, sizeof(exe), "%s/exe", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	f = fopen(file, "w");
	CHECK(f && fputs("not elf", f) >= 0 && fclose(f) == 0);
	f = fopen(other, "w");
	CHECK(f && fclose(f) == 0);
	CHECK(stat(file, &st) == 0);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(symlink(file, link) == 0);

	/* the process went first: not a refusal, nothing known of it */
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) == -ESRCH);

	/* the exe names a path with nothing there in our namespace */
	CHECK(symlink("/nonexistent/m/postgres", exe) == 0);
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) == -ENOENT);
	CHECK(strstr(why, "mount namespace") != NULL);
	printf("# %s\n", why);

	/* the path holds another file than the one the process runs (an
	 * overlay's view has a device of its own) */
	CHECK(unlink(exe) == 0 && symlink(other, exe) == 0);
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) == -ESTALE);
	CHECK(strstr(why, "another mount's view") != NULL);

	/*
	 * The path is the user's FIFO (their mount namespace shows root's
	 * postgres there), or a symbolic link to the very file: refused at
	 * once, saying what is there, never opened. An open of a FIFO with
	 * no writer would wait forever: the alarm ends the test instead.
	 */
	alarm(20);
	CHECK(unlink(exe) == 0 && symlink(fifo, exe) == 0);
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) == -EPERM);
	printf("# %s\n", why);
	CHECK(strstr(why, "a FIFO, not a regular file") != NULL);
	alarm(0);
	CHECK(unlink(exe) == 0 && symlink(link, exe) == 0);
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) == -EPERM);
	printf("# %s\n", why);
	CHECK(strstr(why, "a symbolic link, not a regular file") != NULL);

	/* the same file: the next check speaks (here: not root's, or no
	 * uprobe_multi without a program) */
	CHECK(unlink(exe) == 0 && symlink(file, exe) == 0);
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) < 0);
	CHECK(strstr(why, "mount namespace") == NULL);
	printf("# %s\n", why);

	unlink(exe);
	unlink(link);
	unlink(fifo);
	unlink(other);
	unlink(file);
	rmdir(dir);
}

/*
 * The prober's memory of refused binaries: a user who makes new ones
 * without end keeps only their newest few and pushes out nobody else's;
 * a full table loses the oldest of whoever holds the most.
 */
static void test_refusals_per_uid(void)
{
	static struct usdt_refusals t;
	size_t held = 0;
	uint64_t ino = 1;

	usdt_refusals_add(&t, 1, 1, ino++);		/* a victim's, the oldest */
	for (size_t i = 0; i < 10 * USDT_REFUSALS; i++)
		usdt_refusals_add(&t, 1000, 1, ino++);	/* an attacker's */
	CHECK(usdt_refusals_known(&t, 1, 1));
	CHECK(usdt_refusals_known(&t, 1, ino - 1));
	CHECK(!usdt_refusals_known(&t, 1, ino - 1 - USDT_REFUSALS_PER_UID));
	if (t.n != 1 + USDT_REFUSALS_PER_UID)
		printf("# %zu refusals kept\n", t.n);
	CHECK(t.n == 1 + USDT_REFUSALS_PER_UID);
	/* many owners fill the table: the victim's one stays */
	for (uint32_t uid = 2000; t.n < USDT_REFUSALS; uid++)
		for (size_t i = 0; i < USDT_REFUSALS_PER_UID &&
		     t.n < USDT_REFUSALS; i++)
			usdt_refusals_add(&t, uid, 1, ino++);
	usdt_refusals_add(&t, 3000, 1, ino++);
	CHECK(t.n == USDT_REFUSALS);
	CHECK(usdt_refusals_known(&t, 1, 1));
	CHECK(usdt_refusals_known(&t, 1, ino - 1));
	for (size_t i = 0; i < t.n; i++)
		held += t.r[i].uid == 1000;
	/* the attacker's oldest went: they held the most, first */
	CHECK(held == USDT_REFUSALS_PER_UID - 1);
}

int main(void)
{
	RUN(test_refusals_make_room);
	RUN(test_probed_are_kept);
	RUN(test_link_wants_the_file_at_its_path);
	RUN(test_refusals_per_uid);
	return CHECK_DONE();
}
