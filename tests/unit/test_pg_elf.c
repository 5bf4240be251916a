// SPDX-License-Identifier: GPL-2.0-only
/* Server version from a binary; symbols from the real postgres binary. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/pg/pg_elf.h"
#include "tests/unit/check.h"

static void test_parse_version(void)
{
	static const char blob[] = "junk\0postgres (PostgreSQL) 15.18 (Debian"
				   " 15.18-0+deb12u1)\0more";
	char v[32];
	int major = 0;

	CHECK(pg_elf_parse_version(blob, sizeof(blob), &major, v, sizeof(v)) == 0);
	CHECK(major == 15);
	CHECK_STR(v, "15.18");
	CHECK(pg_elf_parse_version("(PostgreSQL) 17devel", 20, &major, v,
				   sizeof(v)) == 0);
	CHECK(major == 17);
	CHECK_STR(v, "17devel");
	CHECK(pg_elf_parse_version("(PostgreSQL) x", 14, &major, v,
				   sizeof(v)) == -ENOENT);
	CHECK(pg_elf_parse_version("nothing", 7, &major, v, sizeof(v)) == -ENOENT);
}

/* The installed server: the test environment has PostgreSQL 15. */
static void test_real_binary(void)
{
	struct pg_elf_info info;

	CHECK(pg_elf_read("/usr/lib/postgresql/15/bin/postgres", &info) == 0);
	CHECK(info.major == 15);
	CHECK(info.wait_event_sym != 0);
	CHECK(info.query_sym != 0);
	CHECK(info.query_sym != info.wait_event_sym);
	CHECK(pg_elf_read("/bin/sh", &info) == 0);
	CHECK(info.wait_event_sym == 0);
	CHECK(info.query_sym == 0);
	CHECK(pg_elf_read("/nonexistent", &info) == -ENOENT);
}

/* One stapsdt note as a compiler writes it (64-bit, 4-byte aligned). */
static size_t put_note(unsigned char *p, uint64_t pc, uint64_t sem,
		       const char *provider, const char *name)
{
	uint32_t namesz = 8, type = 3, descsz;
	uint64_t base = 0x1000;
	size_t pl = strlen(provider) + 1, nl = strlen(name) + 1, n = 0;

	descsz = (uint32_t)(24 + pl + nl + 1);	/* args: "" */
	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memcpy(p + 12, "stapsdt", 8);
	n = 20;
	memcpy(p + n, &pc, 8);
	memcpy(p + n + 8, &base, 8);
	memcpy(p + n + 16, &sem, 8);
	memcpy(p + n + 24, provider, pl);
	memcpy(p + n + 24 + pl, name, nl);
	p[n + 24 + pl + nl] = '\0';
	return n + ((descsz + 3) & ~3u);
}

static void test_parse_stapsdt(void)
{
	unsigned char buf[512] = { 0 };
	struct pg_usdt_note out[4];
	unsigned int total = 0;
	size_t len = 0;

	len += put_note(buf + len, 0x45e75c, 0x885972, "postgresql",
			"lock__wait__start");
	len += put_note(buf + len, 0x400000, 0, "postgresql",
			"transaction__start");
	len += put_note(buf + len, 0x462322, 0x88597e, "postgresql",
			"lwlock__wait__start");
	len += put_note(buf + len, 0x500000, 0, "other", "lock__wait__done");
	CHECK(pg_elf_parse_stapsdt(buf, len, out, 4, &total) == 2);
	CHECK(total == 4);
	CHECK(out[0].kind == PGOFF_USDT_LOCK_START && out[0].pc == 0x45e75c &&
	      out[0].sem == 0x885972 && out[0].base == 0x1000);
	CHECK(out[1].kind == PGOFF_USDT_LWLOCK_START && out[1].pc == 0x462322);
	CHECK(pg_elf_parse_stapsdt(buf, len, out, 1, &total) == -E2BIG);
	CHECK(pg_elf_parse_stapsdt(buf, 0, out, 4, &total) == 0);
	/* every cut and every corrupted byte: an answer, never a read
	 * past the buffer (ASan in make asan) */
	for (size_t cut = 0; cut <= len; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);
		int r;

		CHECK(copy);
		memcpy(copy, buf, cut);
		r = pg_elf_parse_stapsdt(copy, cut, out, 4, &total);
		free(copy);
		CHECK(r == -EINVAL || (r >= 0 && r <= 2));
	}
	srand(22);
	for (int i = 0; i < 20000; i++) {
		unsigned char copy[512];

		memcpy(copy, buf, len);
		for (int j = 0; j < 4; j++)
			copy[(size_t)rand() % len] = (unsigned char)rand();
		(void)pg_elf_parse_stapsdt(copy, len, out, 4, &total);
	}
}

/* The installed PostgreSQL 15: Debian builds it with --enable-dtrace. */
static void test_real_usdt(void)
{
	char copy[64];	/* its own name: the ASan build may run beside */
	struct pg_usdt u;
	unsigned int per_kind[PGOFF_USDT__KINDS] = { 0 };
	unsigned char b = 0;
	int fd = open("/usr/lib/postgresql/15/bin/postgres", O_RDONLY);
	char cmd[256];

	CHECK(fd >= 0);
	CHECK(pg_elf_read_usdt_fd(fd, &u) == 0);
	CHECK(u.notes >= 70);
	CHECK(u.n == 8);
	for (size_t i = 0; i < u.n; i++) {
		CHECK(u.site[i].kind < PGOFF_USDT__KINDS);
		per_kind[u.site[i].kind]++;
		/* every probe has a semaphore in .probes */
		CHECK(u.site[i].ref_ctr_offset != 0);
		CHECK(pread(fd, &b, 1, (off_t)u.site[i].offset) == 1 && b == 0x90);
	}
	close(fd);
	CHECK(per_kind[PGOFF_USDT_LOCK_START] == 1);
	CHECK(per_kind[PGOFF_USDT_LOCK_DONE] == 1);
	CHECK(per_kind[PGOFF_USDT_LWLOCK_START] == 3);
	CHECK(per_kind[PGOFF_USDT_LWLOCK_DONE] == 3);
	/* without the notes: no sites, not an error */
	snprintf(copy, sizeof(copy), "/tmp/pgoff-test-noprobes.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.stapsdt "
		 "/usr/lib/postgresql/15/bin/postgres %s", copy);
	CHECK(system(cmd) == 0);
	fd = open(copy, O_RDONLY);
	unlink(copy);
	CHECK(fd >= 0);
	CHECK(pg_elf_read_usdt_fd(fd, &u) == 0);
	CHECK(u.n == 0 && u.notes == 0);
	close(fd);
	fd = open("/bin/sh", O_RDONLY);
	CHECK(fd >= 0);
	CHECK(pg_elf_read_usdt_fd(fd, &u) == 0 && u.n == 0);
	close(fd);
}

int main(void)
{
	RUN(test_parse_stapsdt);
	RUN(test_real_usdt);
	RUN(test_parse_version);
	RUN(test_real_binary);
	return CHECK_DONE();
}
