// SPDX-License-Identifier: GPL-2.0-only
/*
 * pg_wait_names_dump - every wait event pgoffd can name for one PostgreSQL
 * major version, as "Type:Name" lines, for the end-to-end tests to compare
 * with a live server's pg_wait_events (17+) or pg_stat_activity.
 *
 *   pg_wait_names_dump [-m MINOR] [-s] MAJOR
 *
 * -m MINOR leaves out events added after that minor release; -s prints
 * where the tables come from (pg_wait_names_source) on stderr. Names go
 * through pg_wait_event_type/pg_wait_event_name, as in pgoffd, with
 * every id of the generated tables (pg_wait_names_data.h). Exit 0, 1 for
 * a major without tables, 2 for a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "broker/pg/pg_wait_names.h"
#include "broker/pg/pg_wait_names_data.h"

static int parse_int(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 1000)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pg_wait_names_dump [-m MINOR] [-s] MAJOR\n");
}

int main(int argc, char **argv)
{
	const struct pg_wait_major_def *m = NULL;
	int major, minor = -1, show_source = 0, opt;

	while ((opt = getopt(argc, argv, "m:s")) != -1) {
		switch (opt) {
		case 'm':
			if (parse_int(optarg, &minor)) {
				usage();
				return 2;
			}
			break;
		case 's':
			show_source = 1;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind != argc - 1 || parse_int(argv[optind], &major)) {
		usage();
		return 2;
	}
	for (unsigned int i = 0; i < pg_wait_nmajor_defs; i++)
		if (pg_wait_major_defs[i].major == major)
			m = &pg_wait_major_defs[i];
	if (!m || !pg_wait_names_known_major(major)) {
		fprintf(stderr, "pg_wait_names_dump: no tables for %d\n", major);
		return 1;
	}
	if (show_source)
		fprintf(stderr, "%s\n", pg_wait_names_source(major));
	for (unsigned int c = 0; c < m->nclasses; c++) {
		const struct pg_wait_class_def *cd = &m->classes[c];

		for (unsigned int e = 0; e < cd->nevents; e++) {
			uint32_t info = (uint32_t)cd->class_id << 24 |
					cd->events[e].id;
			const char *type = pg_wait_event_type(major, info);
			const char *name = pg_wait_event_name(major, info);

			if (minor >= 0 && cd->events[e].since_minor > minor)
				continue;
			if (!type || !name) {
				fprintf(stderr, "pg_wait_names_dump: %#x has no name\n",
					info);
				return 1;
			}
			printf("%s:%s\n", type, name);
		}
	}
	return 0;
}
