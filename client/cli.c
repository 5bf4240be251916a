// SPDX-License-Identifier: GPL-2.0-only
/* cli.c - pgoffctl's command layer; see cli.h. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "client/cli.h"
#include "client/conn.h"
#include "protocol/log.h"
#include "protocol/since.h"

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

int cli_parse_when(const char *opt, const char *arg, int64_t *ns)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (pgoff_parse_since(arg, (int64_t)now.tv_sec * 1000000000LL +
			      now.tv_nsec, ns) || *ns < 0) {
		log_warnx("%s: '%s' is neither a duration such as 10m, 2h or "
			  "1d nor an RFC 3339 time such as 2026-12-04T02:55:00Z",
			  opt, arg);
		return -1;
	}
	return 0;
}

int cli_parse_window(const char *cmd, const char *since, const char *until,
		     int64_t *since_ns, int64_t *until_ns)
{
	if (cli_parse_when("--since", since, since_ns) ||
	    (until && cli_parse_when("--until", until, until_ns)))
		return -1;
	if (until && *until_ns <= *since_ns) {
		log_warnx("%s: --until %s is not after --since %s", cmd, until,
			  since);
		return -1;
	}
	return 0;
}
