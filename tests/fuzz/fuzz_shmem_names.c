// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_shmem_names.c - libFuzzer target for the reader of a server's
 * run-time wait event names: any bytes as a cluster's shared memory
 * segment, read as 15, 17, 18 and 19 lay theirs out. The input is the
 * postmaster's two variables (NamedLWLockTrancheArray, then
 * NamedLWLockTrancheRequests: 16 bytes) and the segment, "mapped" at
 * BASE, as test_pg_shmem_names writes its corpus. Whatever it reads, the
 * reader must answer 0 with at most PG_RUN_NAMES_MAX terminated names of
 * the classes it reads, or one of its documented codes with a reason and
 * no name; ASan watches that it reads nothing outside.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "broker/priv/pg_shmem_names.h"

#define BASE		0x7f0000000000ull
#define VARS_LEN	16
#define SEG_AT		4096		/* the segment's offset in the file */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;

static void check(int err, const struct pg_run_names *o)
{
	if (err != o->status)
		abort();
	if (err) {
		if ((err != -ENOENT && err != -EINVAL && err != -E2BIG &&
		     err != -EIO && err != -ENOTSUP && err != -ENOMEM) ||
		    o->n || !o->why[0] || !memchr(o->why, '\0', sizeof(o->why)))
			abort();
		return;
	}
	if (o->n > PG_RUN_NAMES_MAX)
		abort();
	for (uint32_t i = 0; i < o->n; i++) {
		uint32_t cls = o->names[i].wait_event_info >> 24;

		if (!memchr(o->names[i].name, '\0', PG_RUN_NAME_LEN) ||
		    !o->names[i].name[0] ||
		    (cls != 0x01 && cls != 0x07 && cls != 0x0B))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct { int major, first; } majors[] = {
		{ 15, 73 }, { 17, 92 }, { 18, 95 }, { 19, 100 },
	};
	static struct pg_run_names out;
	static uint8_t zero[SEG_AT];
	struct pg_shm_view v;
	uint32_t magic = 679834894u;

	if (size < VARS_LEN + 64)
		return 0;
	if (fd < 0 && (fd = memfd_create("segment", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) ||
	    pwrite(fd, data, VARS_LEN, 0) != VARS_LEN ||
	    pwrite(fd, zero, SEG_AT - VARS_LEN, VARS_LEN) != SEG_AT - VARS_LEN ||
	    pwrite(fd, data + VARS_LEN, size - VARS_LEN, SEG_AT) !=
	    (ssize_t)(size - VARS_LEN) ||
	    pwrite(fd, &magic, 4, SEG_AT) != 4)	/* past the first check */
		abort();
	v = (struct pg_shm_view){
		.fd = fd, .delta = SEG_AT - (int64_t)BASE, .seg_lo = BASE,
		.seg_hi = BASE + size - VARS_LEN,
		.tranches_var = BASE - SEG_AT, .ntranches_var = BASE - SEG_AT + 8,
	};
	for (size_t i = 0; i < sizeof(majors) / sizeof(majors[0]); i++)
		check(pg_shmem_names_read(&v, majors[i].major, majors[i].first,
					  &out), &out);
	return 0;
}
