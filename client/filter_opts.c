// SPDX-License-Identifier: GPL-2.0-only
/* filter_opts.c - the subscription filter options of watch and flame. */
#include <stdio.h>
#include <string.h>
#include "client/cli.h"
#include "common/log.h"
#include "common/units.h"

/*
 * "a,b,c" (repeatable) into a name list. The broker checks what the names
 * mean; names containing a comma cannot be given, as in psql's lists.
 */
static int add_names(const char *opt, const char *arg, struct pgoff_names *n)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (len == 0 || len >= PGOFF_MAX_NAME) {
			log_warnx("%s: '%s' is not a list of names", opt, arg);
			return -1;
		}
		if (n->n == PGOFF_MAX_FILTER_NAMES) {
			log_warnx("%s: at most %d names", opt,
				  PGOFF_MAX_FILTER_NAMES);
			return -1;
		}
		memcpy(n->v[n->n], p, len);
		n->v[n->n++][len] = '\0';
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int filter_option(int opt, const char *arg, struct pgoff_filter *f)
{
	uint64_t v;

	switch (opt) {
	case 'p':
		if (pgoff_parse_u64(arg, 1, PGOFF_PID_MAX, &v)) {
			log_warnx("--pid: '%s' is not a process id", arg);
			return -1;
		}
		if (f->npids == PGOFF_MAX_FILTER_PIDS) {
			log_warnx("--pid: at most %d processes",
				  PGOFF_MAX_FILTER_PIDS);
			return -1;
		}
		f->pids[f->npids++] = (uint32_t)v;
		return 1;
	case 'T':
		return add_names("--type", arg, &f->types) ? -1 : 1;
	case 'W':
		return add_names("--pg-wait", arg, &f->pg_waits) ? -1 : 1;
	case 'D':
		return add_names("--db", arg, &f->databases) ? -1 : 1;
	case 'B':
		return add_names("--backend-type", arg, &f->backend_types) ? -1 : 1;
	case 'Q':
		if (add_names("--query-id", arg, &f->query_ids))
			return -1;
		for (size_t i = 0; i < f->query_ids.n; i++)
			if (pgoff_parse_query_id(f->query_ids.v[i], &v)) {
				log_warnx("--query-id: '%s' is not a query id "
					  "(as pg_stat_statements shows "
					  "queryid: -42)", f->query_ids.v[i]);
				return -1;
			}
		return 1;
	case 'C':
		if (add_names("--container", arg, &f->containers))
			return -1;
		for (size_t i = 0; i < f->containers.n; i++)
			if (!pgoff_container_prefix_valid(f->containers.v[i])) {
				log_warnx("--container: '%s' is not a container "
					  "id (12 to 64 hex digits: its start, "
					  "as docker ps shows it, or all of it)",
					  f->containers.v[i]);
				return -1;
			}
		return 1;
	case 'm':
		if (pgoff_parse_duration(arg, &f->min_duration_ns)) {
			log_warnx("--min: '%s' is not a duration such as 500us, "
				  "5ms or 1.5s", arg);
			return -1;
		}
		return 1;
	case 'U':
		f->user_stack = true;
		return 1;
	}
	return 0;
}
