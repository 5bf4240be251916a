// SPDX-License-Identifier: GPL-2.0-only
/* self_stats.c - /proc/self/stat into process_* values; see self_stats.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "broker/pg/procfs.h"
#include "exporter/self_stats.h"

/* Boot time in seconds since the epoch (/proc/stat btime). */
static int boot_time(uint64_t *out)
{
	char line[256];
	FILE *f = fopen("/proc/stat", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %" SCNu64, out) == 1) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

int self_stats_read(struct ex_process *p)
{
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct procfs_stat st;
	uint64_t btime;
	struct dirent *d;
	DIR *fds;
	int ret;

	if (tick <= 0 || page <= 0 ||
	    procfs_stat("/proc", (uint32_t)getpid(), &st))
		return -EPROTO;
	ret = boot_time(&btime);
	if (ret)
		return ret;
	p->cpu_seconds = (double)(st.utime + st.stime) / (double)tick;
	p->resident_bytes = st.rss_pages * (uint64_t)page;
	p->start_time_seconds = (double)btime + (double)st.start / (double)tick;
	p->open_fds = 0;
	fds = opendir("/proc/self/fd");
	if (!fds)
		return -errno;
	while ((d = readdir(fds)))
		p->open_fds += d->d_name[0] != '.';
	closedir(fds);
	if (p->open_fds)
		p->open_fds--;	/* the directory's own */
	return 0;
}
