// SPDX-License-Identifier: GPL-2.0-only
/* cli.c - pgoffctl's command layer; see cli.h. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "client/cli.h"
#include "client/conn.h"
#include "common/log.h"
#include "common/since.h"

int cli_option(int opt, const char *arg, const char **sock,
	       void (*usage)(FILE *f))
{
	switch (opt) {
	case 's':
		*sock = arg;
		return CLI_NEXT;
	case 'h':
		usage(stdout);
		return CLI_HELP;
	default:	/* getopt_long said what it did not know */
		usage(stderr);
		return EXIT_USAGE;
	}
}

int cli_no_args(const char *cmd, int argc, char **argv)
{
	if (optind < argc) {
		log_warnx("%s: unexpected argument '%s'", cmd, argv[optind]);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cli_run(const struct cli_cmd *cmds, int argc, char **argv,
	    const char *sock)
{
	for (const struct cli_cmd *c = cmds; c->name; c++) {
		int ret;

		if (strcmp(c->name, argv[0]) != 0)
			continue;
		optind = 0;	/* glibc: parse afresh, not where a run stopped */
		ret = c->run(argc, argv, sock);
		return ret == CLI_HELP ? EXIT_OK : ret;
	}
	log_warnx("unknown command '%s' (try pgoffctl --help)", argv[0]);
	return EXIT_USAGE;
}

void cli_list(FILE *f, const struct cli_cmd *cmds)
{
	for (const struct cli_cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-9s %s\n", c->name, c->summary);
}

const char *socket_path(const char *opt)
{
	const char *env = getenv("PGOFF_SOCKET");

	return opt ? opt : (env && *env ? env : DEFAULT_SOCKET);
}

/* stdout went away (| head): that is how pipes end, not an error. */
void check_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (errno == EPIPE)
			exit(EXIT_OK);
		log_warn("writing output");
		exit(EXIT_ERROR);
	}
}

#define NS_PER_S 1000000000LL

/*
 * Today's local time of day secs, or the day before's when that is after
 * ref (after: the first one after ref, today's or the next day's).
 * mktime on the calendar fields: a DST change moves the day's length,
 * never the clock time asked for.
 */
int64_t cli_clock_time(int secs, int64_t ref_ns, bool after)
{
	time_t ref = (time_t)(ref_ns / NS_PER_S), t;
	struct tm tm;

	localtime_r(&ref, &tm);
	tm.tm_hour = secs / 3600;
	tm.tm_min = secs / 60 % 60;
	tm.tm_sec = secs % 60;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (after ? t * NS_PER_S <= ref_ns : t * NS_PER_S > ref_ns) {
		tm.tm_mday += after ? 1 : -1;
		tm.tm_isdst = -1;
		t = mktime(&tm);
	}
	return (int64_t)t * NS_PER_S;
}

static int64_t now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (int64_t)now.tv_sec * NS_PER_S + now.tv_nsec;
}

/* arg into *ns: a time of day is the latest one at or before ref_ns, or
 * with after the first one after it. */
static int parse_when(const char *opt, const char *arg, int64_t ref_ns,
		      bool after, int64_t *ns)
{
	int secs;

	if (!pgoff_parse_clock(arg, &secs)) {
		*ns = cli_clock_time(secs, ref_ns, after);
		return 0;
	}
	if (pgoff_parse_since(arg, now_ns(), ns) || *ns < 0) {
		log_warnx("%s: '%s' is neither a duration such as 10m, 2h or "
			  "1d, a local time of day such as 02:50, nor an RFC "
			  "3339 time such as 2026-12-04T02:55:00Z", opt, arg);
		return -1;
	}
	return 0;
}

int cli_parse_when(const char *opt, const char *arg, int64_t *ns)
{
	return parse_when(opt, arg, now_ns(), false, ns);
}

int cli_parse_until(const char *opt, const char *arg, int64_t since_ns,
		    int64_t *ns)
{
	return parse_when(opt, arg, since_ns, true, ns);
}

int cli_parse_window(const char *cmd, const char *since, const char *until,
		     int64_t *since_ns, int64_t *until_ns)
{
	if (cli_parse_when("--since", since, since_ns) ||
	    (until && cli_parse_until("--until", until, *since_ns, until_ns)))
		return -1;
	if (until && *until_ns <= *since_ns) {
		log_warnx("%s: --until %s is not after --since %s", cmd, until,
			  since);
		return -1;
	}
	return 0;
}
