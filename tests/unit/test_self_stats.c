// SPDX-License-Identifier: GPL-2.0-only
/* The exporter's process_* values, read from this process's /proc/self. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "exporter/exposition.h"
#include "exporter/self_stats.h"
#include "tests/unit/check.h"

static void test_reads_itself(void)
{
	struct ex_process p;
	volatile double burn = 0;
	time_t now = time(NULL);
	int fd = open("/dev/null", O_RDONLY);

	for (long i = 0; i < 20000000; i++)	/* some CPU time to see */
		burn += (double)i;
	CHECK(self_stats_read(&p) == 0);
	CHECK(p.cpu_seconds > 0 && p.cpu_seconds < 3600);
	CHECK(p.resident_bytes > 100 * 1024);
	CHECK(p.start_time_seconds > (double)now - 600 &&
	      p.start_time_seconds <= (double)now + 1);
	CHECK(p.open_fds >= 4);		/* stdin, stdout, stderr, /dev/null */
	if (fd >= 0)
		close(fd);
	if (p.cpu_seconds <= 0 || p.resident_bytes <= 100 * 1024)
		fprintf(stderr, "cpu %.3f s, rss %llu, start %.0f (now %lld), fds %llu\n",
			p.cpu_seconds, (unsigned long long)p.resident_bytes,
			p.start_time_seconds, (long long)now,
			(unsigned long long)p.open_fds);
}

int main(void)
{
	RUN(test_reads_itself);
	return CHECK_DONE();
}
