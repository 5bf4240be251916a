// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_usdt.c - what pgoffd keeps of the binaries it probed or refused,
 * and the checks usdt_link makes before it reads a file: a process's
 * exe must be the same file at the same path in pgoffd's own mount
 * namespace (a symbolic link stands in for /proc/PID/exe here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "broker/usdt.h"
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
		why[USDT_WHY_LEN];
	unsigned int sites = 0;
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/postgres", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(exe, sizeof(exe), "%s/exe", dir);
	f = fopen(file, "w");
	CHECK(f && fputs("not elf", f) >= 0 && fclose(f) == 0);
	f = fopen(other, "w");
	CHECK(f && fclose(f) == 0);
	CHECK(stat(file, &st) == 0);

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

	/* the same file: the next check speaks (here: not root's, or no
	 * uprobe_multi without a program) */
	CHECK(unlink(exe) == 0 && symlink(file, exe) == 0);
	CHECK(usdt_link(-1, exe, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
			&sites, why, sizeof(why)) < 0);
	CHECK(strstr(why, "mount namespace") == NULL);
	printf("# %s\n", why);

	unlink(exe);
	unlink(other);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	RUN(test_refusals_make_room);
	RUN(test_probed_are_kept);
	RUN(test_link_wants_the_file_at_its_path);
	return CHECK_DONE();
}
