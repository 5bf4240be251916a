// SPDX-License-Identifier: GPL-2.0-only
/* Server version from a binary; symbols from the real postgres binary. */
#include <errno.h>
#include "broker/pg_elf.h"
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

int main(void)
{
	RUN(test_parse_version);
	RUN(test_real_binary);
	return CHECK_DONE();
}
