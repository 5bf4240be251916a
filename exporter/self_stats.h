/* SPDX-License-Identifier: GPL-2.0-only */
/* self_stats.h - the exporter's own CPU time, memory and files, from
 * /proc/self, for the process_* metrics. */
#ifndef PGOFF_EXPORTER_SELF_STATS_H
#define PGOFF_EXPORTER_SELF_STATS_H

#include "exporter/exposition.h"

/* Returns 0, or -errno when /proc/self cannot be read. */
int self_stats_read(struct ex_process *p);

#endif
