// SPDX-License-Identifier: GPL-2.0-only
/*
 * trap_site - for make bench only: a probe site like PostgreSQL's wait
 * probes (a one-byte nop in a function of its own), run in a tight loop,
 * so that the cost of a uprobe hit there can be timed (usdt_trap.sh).
 * usage: trap_site --offset     the site's offset in this file, for a uprobe
 *        trap_site ITERATIONS RUNS
 *                               ns per call of the site: min and median of
 *                               RUNS runs of ITERATIONS calls each
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the nop a uprobe is put on; the label is global so its address is known */
extern const char trap_site_nop[];

__attribute__((noinline, noclone)) static void site(void)
{
	__asm__ volatile(".globl trap_site_nop\n"
			 "trap_site_nop:\n\t"
			 "nop" ::: "memory");
}

/* The file offset of the nop: its address in the mapping of this file
 * that holds it, plus that mapping's offset (the kernel's uprobe offset). */
static int site_offset(uint64_t *off)
{
	uintptr_t at = (uintptr_t)trap_site_nop;
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	int err = -ENOENT;

	if (!maps)
		return -errno;
	while (fgets(line, sizeof(line), maps)) {
		uintptr_t lo, hi;
		uint64_t pgoff;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %" SCNx64,
			   &lo, &hi, &pgoff) == 3 && lo <= at && at < hi) {
			*off = pgoff + (at - lo);
			err = 0;
			break;
		}
	}
	fclose(maps);
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static long positive(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 100000000) {
		fprintf(stderr, "trap_site: %s must be 1..100000000, not '%s'\n",
			what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long iterations, runs;
	double *ns;

	if (argc == 2 && !strcmp(argv[1], "--offset")) {
		uint64_t off;
		int err = site_offset(&off);

		if (err) {
			fprintf(stderr, "trap_site: the site is in no mapping "
				"of /proc/self/maps: %s\n", strerror(-err));
			return 1;
		}
		printf("%" PRIu64 "\n", off);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: trap_site --offset | trap_site ITERATIONS RUNS\n");
		return 2;
	}
	iterations = positive(argv[1], "ITERATIONS");
	runs = positive(argv[2], "RUNS");
	ns = calloc((size_t)runs, sizeof(*ns));
	if (!ns) {
		fprintf(stderr, "trap_site: out of memory\n");
		return 1;
	}
	for (long r = 0; r < runs; r++) {
		uint64_t t0 = now_ns();

		for (long i = 0; i < iterations; i++)
			site();
		ns[r] = (double)(now_ns() - t0) / (double)iterations;
	}
	qsort(ns, (size_t)runs, sizeof(*ns), by_value);
	printf("%.1f %.1f\n", ns[0], ns[runs / 2]);
	free(ns);
	return 0;
}
