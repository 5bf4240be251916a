/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_cli.c - pgoffctl's command layer: the table runs the command named,
 * --help returns (exit 0) instead of exiting in the parser, --socket
 * reaches the command, an unknown option, an argument or a command is a
 * usage error, and --help lists the table.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include "client/cli.h"
#include "client/conn.h"
#include "tests/unit/check.h"

static FILE *usage_to;		/* where the usage went, NULL: nowhere */
static const char *seen_sock;	/* what the command would connect to */
static bool ran, json;

static void fake_usage(FILE *f)
{
	usage_to = f;
}

/* A command as pgoffctl's are written: its option, then the shared ones. */
static int cmd_fake(int argc, char **argv, const char *sock)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		CLI_OPTIONS,
		{ 0 }
	};
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if ((ret = cli_option(opt, optarg, &sock, fake_usage)) != CLI_NEXT)
			return ret;
	}
	ret = cli_no_args("fake", argc, argv);
	if (ret != EXIT_OK)
		return ret;
	seen_sock = sock;
	ran = true;
	return EXIT_TIMEOUT;	/* a code of its own, passed through */
}

static int cmd_other(int argc, char **argv, const char *sock)
{
	(void)argc, (void)argv, (void)sock;
	return EXIT_ERROR;
}

static const struct cli_cmd table[] = {
	{ "fake", cmd_fake, "a command for the test" },
	{ "other", cmd_other, "another one" },
	{ NULL, NULL, NULL }
};

/* Run "pgoffctl [--socket main_sock] ARGS..." through the table. */
static int run(const char *main_sock, int n, const char *const *args)
{
	char copies[8][64];
	char *argv[9];

	for (int i = 0; i < n; i++) {
		snprintf(copies[i], sizeof(copies[i]), "%s", args[i]);
		argv[i] = copies[i];
	}
	argv[n] = NULL;
	usage_to = NULL;
	seen_sock = NULL;
	ran = json = false;
	opterr = 0;	/* getopt's own complaint is not what is tested */
	return cli_run(table, n, argv, main_sock);
}

static void test_runs_the_named_command(void)
{
	const char *const a[] = { "fake", "--json" };

	CHECK(run(NULL, 2, a) == EXIT_TIMEOUT);
	CHECK(ran && json);
	CHECK(usage_to == NULL);
	CHECK(seen_sock == NULL);
}

static void test_help_returns_exit_ok(void)
{
	const char *const a[] = { "fake", "--help" };
	const char *const h[] = { "fake", "-h" };

	/* reaching the next line at all: the parser did not exit */
	CHECK(run(NULL, 2, a) == EXIT_OK);
	CHECK(usage_to == stdout);
	CHECK(!ran);
	CHECK(run(NULL, 2, h) == EXIT_OK);
	CHECK(usage_to == stdout && !ran);
}

static void test_socket_option(void)
{
	const char *const a[] = { "fake", "--socket", "/tmp/x.sock" };
	const char *const b[] = { "fake" };

	CHECK(run("/main.sock", 3, a) == EXIT_TIMEOUT);
	CHECK_STR(seen_sock, "/tmp/x.sock");
	/* pgoffctl --socket PATH fake: the command's default */
	CHECK(run("/main.sock", 1, b) == EXIT_TIMEOUT);
	CHECK_STR(seen_sock, "/main.sock");
}

static void test_usage_errors(void)
{
	const char *const unknown[] = { "fake", "--bogus" };
	const char *const missing[] = { "fake", "--socket" };
	const char *const extra[] = { "fake", "--json", "extra" };
	const char *const cmd[] = { "nosuch" };

	CHECK(run(NULL, 2, unknown) == EXIT_USAGE);
	CHECK(usage_to == stderr && !ran);
	CHECK(run(NULL, 2, missing) == EXIT_USAGE);
	CHECK(usage_to == stderr && !ran);
	CHECK(run(NULL, 3, extra) == EXIT_USAGE);
	CHECK(usage_to == NULL && !ran);
	CHECK(run(NULL, 1, cmd) == EXIT_USAGE);
	CHECK(!ran);
}

/* optind starts afresh for each command: a second run parses again */
static void test_runs_twice(void)
{
	const char *const a[] = { "fake", "--json" };
	const char *const b[] = { "other" };

	CHECK(run(NULL, 2, a) == EXIT_TIMEOUT && json);
	CHECK(run(NULL, 2, a) == EXIT_TIMEOUT && json);
	CHECK(run(NULL, 1, b) == EXIT_ERROR && !ran);
}

static void test_list(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cli_list(f, table);
	fclose(f);
	CHECK_STR(buf, "  fake      a command for the test\n"
		       "  other     another one\n");
	free(buf);
}

static void test_socket_path(void)
{
	unsetenv("PGOFF_SOCKET");
	CHECK_STR(socket_path(NULL), DEFAULT_SOCKET);
	CHECK_STR(socket_path("/a"), "/a");
	setenv("PGOFF_SOCKET", "/env.sock", 1);
	CHECK_STR(socket_path(NULL), "/env.sock");
	CHECK_STR(socket_path("/a"), "/a");
	setenv("PGOFF_SOCKET", "", 1);	/* empty: as unset */
	CHECK_STR(socket_path(NULL), DEFAULT_SOCKET);
	unsetenv("PGOFF_SOCKET");
}

/* --since and --until: both parsed, the end after the start. */
static void test_parse_window(void)
{
	int64_t since = 0, until = 7;

	CHECK(cli_parse_window("top", "2026-12-04T02:50:00Z", NULL, &since,
			       &until) == 0);
	CHECK(since == 1796352600000000000LL && until == 7);
	CHECK(cli_parse_window("top", "2026-12-04T02:50:00Z",
			       "2026-12-04T03:00:00Z", &since, &until) == 0);
	CHECK(until - since == 600000000000LL);
	CHECK(cli_parse_window("flame", "1h", "2h", &since, &until) == -1);
	CHECK(cli_parse_window("flame", "2026-12-04T03:00:00Z",
			       "2026-12-04T03:00:00Z", &since, &until) == -1);
	CHECK(cli_parse_window("flame", "later", NULL, &since, &until) == -1);
	CHECK(cli_parse_window("flame", "2h", "soon", &since, &until) == -1);
}

int main(void)
{
	RUN(test_runs_the_named_command);
	RUN(test_help_returns_exit_ok);
	RUN(test_socket_option);
	RUN(test_usage_errors);
	RUN(test_runs_twice);
	RUN(test_list);
	RUN(test_socket_path);
	RUN(test_parse_window);
	return CHECK_DONE();
}
