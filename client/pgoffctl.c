// SPDX-License-Identifier: GPL-2.0-only
/*
 * pgoffctl - the unprivileged client of pgoffd.
 *
 *   pgoffctl status | ps | history
 *   pgoffctl watch --pid 4242 --type lock --min 5ms --count 1 --timeout 60s
 *   pgoffctl top | flame | metrics	(top.c, flame_cmd.c)
 *
 * Here: the command table, status, ps, history and watch. stdout carries
 * data only; messages go to stderr. Exit codes: see conn.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "client/cli.h"
#include "client/conn.h"
#include "client/json_out.h"
#include "client/render.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/since.h"
#include "common/units.h"

static void watch_usage(FILE *f)
{
	fprintf(f,
"usage: pgoffctl watch [options]\n"
"Print off-CPU intervals of PostgreSQL processes as they end.\n"
"\n"
"  --view VIEW       waits (default): each PostgreSQL wait whole, merged\n"
"                    from its off-CPU intervals, and the intervals outside\n"
"                    any PostgreSQL wait; intervals: every off-CPU interval,\n"
"                    with its kernel stack and SQL; both\n"
"  --pid N           only this process (repeatable)\n"
"  --type LIST       only these waits: lock, io, net, poll, sleep, ipc,\n"
"                    memory, cpu, other (comma-separated)\n"
"  --pg-wait LIST    only these PostgreSQL wait events, as in\n"
"                    pg_stat_activity: Lock, Lock:transactionid, IO:DataFileRead\n"
"  --db LIST         only backends connected to these databases\n"
"  --backend-type LIST  only these backend types ('client backend',\n"
"                    autovacuum worker, …, as in pg_stat_activity)\n"
"  --query-id LIST   only waits in these statements, by query id as\n"
"                    pg_stat_statements.queryid shows it (-42)\n"
"  --container LIST  only clusters in these containers: their ids, or\n"
"                    the first 12 digits or more (as docker ps shows them)\n"
"  --min DURATION    only waits and intervals at least this long (default 1ms);\n"
"                    units ns, us, ms, s, m: 500us, 5ms, 1.5s\n"
"  --user-stack      intervals also carry PostgreSQL's own call path\n"
"                    (user_stack, leaf first), walked when they begin;\n"
"                    (without --view: both)\n"
"  --since WHEN      first the stored events since WHEN, in order, then\n"
"                    live with none missed or repeated: a duration back\n"
"                    from now (10m, 2h, 1d), a local time of day (02:50,\n"
"                    the latest one past) or an RFC 3339 time\n"
"                    (2026-12-04T02:55:00Z); what pgoffd recorded, waits\n"
"                    and intervals of record-min (10ms) or more, no SQL\n"
"  --resume SEQ      as --since, from the event after seq SEQ (the last\n"
"                    one seen, even before a pgoffd restart); events no\n"
"                    longer stored are told as lost (expired)\n"
"  --count N         exit 0 after N events\n"
"  --timeout DUR     exit 4 if --count events did not come in time\n"
"                    (without --count: exit 0 after DUR)\n"
"  --json            one JSON object per line (see PROTOCOL.md)\n"
"  --follow          when pgoffd restarts, reconnect (every second) and\n"
"                    subscribe again, saying so on stderr; events in the\n"
"                    gap are not seen (without it: exit 1)\n"
"  --socket PATH     broker socket\n"
"\n"
"examples:\n"
"  pgoffctl watch --pid 4242 --min 100ms\n"
"  pgoffctl watch --db shop --pg-wait Lock --min 50ms\n"
"  pgoffctl watch --type io,lock --backend-type 'client backend'\n"
"  pgoffctl watch --container 3f1c2b9a8e7d --pg-wait Lock\n"
"  pgoffctl watch --pid 4242 --min 1s --count 1 --timeout 60s --json\n");
}

/* A command that is one request and its reply: status, ps, history. */
struct query_cmd {
	enum pgoff_op op;
	void (*usage)(FILE *f);
	void (*render)(FILE *out, json_object *reply);
};

static void status_usage(FILE *f)
{
	fputs("usage: pgoffctl status [--json] [--socket PATH]\n"
	      "The broker: version, uptime, clients, traced processes, losses.\n",
	      f);
}

static void ps_usage(FILE *f)
{
	fputs("usage: pgoffctl ps [--json] [--socket PATH]\n"
	      "The PostgreSQL processes pgoffd traces, as of its last scan of /proc\n"
	      "(once a second), and their clusters: each one's id (what tells it\n"
	      "apart from every other, across restarts), owner (uid), data\n"
	      "directory, container and systemd service; and which clusters share\n"
	      "one path (other containers', or a look-alike's).\n", f);
}

static void history_usage(FILE *f)
{
	fputs("usage: pgoffctl history [--json] [--socket PATH]\n"
	      "What pgoffd's flight record holds: the first and last time, bytes,\n"
	      "segments, records, and what was lost and why; pgoffctl watch\n"
	      "replays it (see its help).\n", f);
}

static const struct query_cmd status_cmd = {
	PGOFF_OP_STATUS, status_usage, render_status,
};

static const struct query_cmd ps_cmd = {
	PGOFF_OP_PS, ps_usage, render_ps,
};

static const struct query_cmd history_cmd = {
	PGOFF_OP_HISTORY, history_usage, render_status,
};

static int cmd_query(const struct query_cmd *cmd, int argc, char **argv,
		     const char *sock)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		CLI_OPTIONS,
		{ 0 }
	};
	struct pgoff_request req = { .op = cmd->op };
	bool json = false, truncated = false;
	json_object *reply, *v;
	struct conn c;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if ((ret = cli_option(opt, optarg, &sock, cmd->usage)) != CLI_NEXT)
			return ret;
	}
	ret = cli_no_args(argv[0], argc, argv);
	if (ret != EXIT_OK)
		return ret;
	ret = conn_open(&c, socket_path(sock));
	if (ret == EXIT_OK && (ret = conn_request(&c, &req, &reply)) == EXIT_OK) {
		if (json_object_object_get_ex(reply, "truncated", &v))
			truncated = json_object_get_boolean(v);
		if (json) {
			json_object_object_del(reply, "id");
			json_object_object_del(reply, "ok");
			json_out(stdout, reply);
		} else {
			cmd->render(stdout, reply);
		}
		json_object_put(reply);
		check_stdout();
		if (truncated)
			log_warnx("the list is cut short: more processes than "
				  "one reply holds (see \"total\" and "
				  "\"untraced_total\" in --json)");
	}
	conn_close(&c);
	return ret;
}

struct watch_opts {
	struct pgoff_request req;
	uint64_t count;			/* 0: unlimited */
	uint64_t timeout_ns;		/* 0: none */
	bool json;
	bool follow;			/* reconnect when the broker goes */
};

static int parse_watch(int argc, char **argv, struct watch_opts *w,
		       const char **sock)
{
	static const struct option opts[] = {
		FILTER_OPTIONS,
		{ "view", required_argument, NULL, 'v' },
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "follow", no_argument, NULL, 'f' },
		{ "since", required_argument, NULL, 'S' },
		{ "resume", required_argument, NULL, 'R' },
		CLI_OPTIONS,
		{ 0 }
	};
	struct pgoff_filter *f = &w->req.subscribe;
	bool view_given = false;
	int opt, ret;

	w->req.op = PGOFF_OP_SUBSCRIBE;
	f->view = PGOFF_VIEW_WAITS;
	f->min_duration_ns = 1000000;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int r = filter_option(opt, optarg, f);

		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (opt) {
		case 'v':
			view_given = true;
			if (strcmp(optarg, "waits") == 0) {
				f->view = PGOFF_VIEW_WAITS;
			} else if (strcmp(optarg, "intervals") == 0) {
				f->view = PGOFF_VIEW_INTERVALS;
			} else if (strcmp(optarg, "both") == 0) {
				f->view = PGOFF_VIEW_BOTH;
			} else {
				log_warnx("--view: '%s' is not waits, intervals "
					  "or both", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			if (pgoff_parse_u64(optarg, 1, UINT32_MAX, &w->count)) {
				log_warnx("--count: '%s' is not a positive number",
					  optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			if (pgoff_parse_duration(optarg, &w->timeout_ns) ||
			    !w->timeout_ns) {
				log_warnx("--timeout: '%s' is not a duration such "
					  "as 30s or 5m", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			w->json = true;
			break;
		case 'f':
			w->follow = true;
			break;
		case 'S':
			if (cli_parse_when("--since", optarg, &f->since_ns))
				return EXIT_USAGE;
			f->has_since = true;
			break;
		case 'R': {
			uint64_t v;

			if (pgoff_parse_u64(optarg, 0, INT64_MAX - 1, &v)) {
				log_warnx("--resume: '%s' is not a seq", optarg);
				return EXIT_USAGE;
			}
			f->has_resume = true;
			f->resume_seq = (int64_t)v;
			break;
		}
		default:
			ret = cli_option(opt, optarg, sock, watch_usage);
			if (ret != CLI_NEXT)
				return ret;
		}
	}
	/* user stacks are on intervals: waits alone would have none */
	if (f->user_stack && !view_given)
		f->view = PGOFF_VIEW_BOTH;
	ret = cli_no_args("watch", argc, argv);
	if (ret != EXIT_OK)
		return ret;
	if (f->has_since && f->has_resume) {
		log_warnx("watch: --since or --resume, not both");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * A stream item: print an event, report a loss. Returns 1 for an event,
 * 0 for a notice, -1 when the stream ends, -3 when access was withdrawn.
 */
static int handle_item(json_object *obj, bool json)
{
	const char *type = "", *cause = "?";
	int64_t n = 0;

	pgoff_get_string(obj, "type", &type);
	if (strcmp(type, "offcpu") == 0 || strcmp(type, "episode") == 0) {
		if (json)
			json_out(stdout, obj);
		else
			render_event(stdout, obj);
		return 1;
	}
	check_stdout();	/* what came before a notice is shown before it */
	if (strcmp(type, "replayed") == 0) {
		pgoff_get_int64(obj, "count", &n);
		log_info("%lld stored events replayed; live from here",
			 (long long)n);
	} else if (strcmp(type, "dropped") == 0) {
		pgoff_get_int64(obj, "count", &n);
		pgoff_get_string(obj, "cause", &cause);
		if (strcmp(cause, PGOFF_DROP_EXPIRED) == 0)
			log_warnx("%lld events lost before this point (expired: "
				  "no longer stored; at most, seqs never stored "
				  "are counted too)", (long long)n);
		else
			log_warnx("%lld events lost before this point (%s)",
				  (long long)n, cause);
	} else if (strcmp(type, "bye") == 0) {
		pgoff_get_string(obj, "reason", &cause);
		log_warnx("pgoffd closed the stream (%s)", cause);
		return -1;
	} else if (json_object_object_get_ex(obj, "ok", NULL)) {
		/* an error nobody asked for: the broker is cutting us off */
		struct pgoff_error err;

		if (pgoff_reply_check(obj, &err)) {
			log_warnx("%s", err.message);
			return strcmp(err.code, PGOFF_ERR_FORBIDDEN) == 0 ? -3 : -1;
		}
	}
	return 0;
}

#define WATCH_LOST (-1)	/* the broker went away: --follow reconnects */

/* Subscribe and print until done: an exit code, or WATCH_LOST. */
static int watch_stream(struct conn *c, struct watch_opts *w, uint64_t *seen,
			int64_t deadline, bool resumed)
{
	json_object *reply;
	int ret = conn_request(c, &w->req, &reply);

	if (ret != EXIT_OK)
		return ret;
	json_object_put(reply);
	/* a replay once: after a reconnection, the stream goes on live */
	w->req.subscribe.has_since = false;
	w->req.subscribe.has_resume = false;
	if (resumed)	/* said once subscribed: from here on nothing is missed */
		log_warnx("reconnected to pgoffd and subscribed again; events "
			  "in the gap were not seen");
	while (!w->count || *seen < w->count) {
		int64_t left = deadline ? deadline - monotonic_ms() : -1;
		struct pgoff_error err;
		json_object *obj;
		int r, item;
		size_t len;
		char *line;

		if (deadline && left <= 0) {
			if (!w->count)
				return EXIT_OK;
			log_warnx("timeout: %llu of %llu events",
				  (unsigned long long)*seen,
				  (unsigned long long)w->count);
			return EXIT_TIMEOUT;
		}
		/* one write for all the events that came together, made
		 * before waiting: nothing shown stays in the buffer */
		if (!conn_buffered(c))
			check_stdout();
		r = conn_next_line(c, &line, &len, deadline ? (int)left : -1);
		if (r == 0 || r == -EINTR)
			continue;
		if (r < 0) {
			log_warnx("connection to pgoffd lost: %s", strerror(-r));
			return WATCH_LOST;
		}
		/* --json: an event is printed as it came, neither parsed nor
		 * encoded again (most of a reader's CPU under load) */
		if (w->json && pgoff_is_event_line(line, len)) {
			json_out_line(stdout, line, len);
			*seen += 1;
			continue;
		}
		obj = pgoff_parse_line(line, len, CONN_JSON_DEPTH, &err);
		if (!obj) {
			log_warnx("bad line from pgoffd: %s", err.message);
			return WATCH_LOST;
		}
		item = handle_item(obj, w->json);
		json_object_put(obj);
		if (item == -3)
			return EXIT_NOCONNECT;
		if (item < 0)
			return WATCH_LOST;
		*seen += (uint64_t)item;
	}
	return EXIT_OK;
}

/* --follow: try again every second until the broker is back (or the
 * deadline passes); said once each way on stderr. */
static int reconnect(struct conn *c, const char *path, int64_t deadline)
{
	log_warnx("broker gone, reconnecting (--follow)...");
	for (;;) {
		struct timespec second = { 1, 0 };
		int ret;

		if (deadline && monotonic_ms() >= deadline)
			return EXIT_OK;
		nanosleep(&second, NULL);
		ret = conn_open_quiet(c, path, true);
		if (ret == EXIT_OK)
			return EXIT_OK;
		conn_close(c);
		if (ret != EXIT_ABSENT)
			return ret;
	}
}

static int cmd_watch(int argc, char **argv, const char *sock)
{
	struct watch_opts w = { 0 };
	int64_t deadline = 0;
	uint64_t seen = 0;
	struct conn c;
	int ret;

	ret = parse_watch(argc, argv, &w, &sock);
	if (ret != EXIT_OK)
		return ret;
	ret = conn_open(&c, socket_path(sock));
	if (ret != EXIT_OK)
		goto out;
	if (w.timeout_ns)
		deadline = monotonic_ms() + (int64_t)(w.timeout_ns / 1000000);
	if (!w.json && isatty(STDOUT_FILENO))
		render_event_header(stdout);
	for (bool resumed = false;; resumed = true) {
		ret = watch_stream(&c, &w, &seen, deadline, resumed);
		if (ret != WATCH_LOST)
			break;
		if (!w.follow) {
			ret = EXIT_ERROR;
			break;
		}
		conn_close(&c);
		ret = reconnect(&c, socket_path(sock), deadline);
		if (ret != EXIT_OK || c.fd < 0)
			break;	/* an error, or the deadline passed meanwhile */
	}
	if (ret == EXIT_OK && deadline && w.count && seen < w.count)
		ret = EXIT_TIMEOUT;
out:
	conn_close(&c);
	return ret;
}

static int cmd_status(int argc, char **argv, const char *sock)
{
	return cmd_query(&status_cmd, argc, argv, sock);
}

static int cmd_ps(int argc, char **argv, const char *sock)
{
	return cmd_query(&ps_cmd, argc, argv, sock);
}

static int cmd_history(int argc, char **argv, const char *sock)
{
	return cmd_query(&history_cmd, argc, argv, sock);
}

/* pgoffctl --help lists them in this order. */
static const struct cli_cmd commands[] = {
	{ "status", cmd_status,
	  "the broker: version, uptime, clients, traced processes, losses" },
	{ "ps", cmd_ps, "the PostgreSQL processes pgoffd traces" },
	{ "watch", cmd_watch, "live off-CPU waits and intervals, one line each" },
	{ "history", cmd_history,
	  "what pgoffd's flight record holds: span, size, losses" },
	{ "top", cmd_top,
	  "where off-CPU time went in the last seconds, refreshed" },
	{ "flame", cmd_flame, "an off-CPU flame graph (SVG) or folded stacks" },
	{ "metrics", cmd_metrics, "the totals in the Prometheus text format" },
	{ NULL, NULL, NULL }
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: pgoffctl [--socket PATH] COMMAND [options]\n"
"See where PostgreSQL backends spend their time off the CPU.\n"
"\n"
"commands:\n");
	cli_list(f, commands);
	fprintf(f,
"Each command takes --help.\n"
"\n"
"The socket is --socket, else $PGOFF_SOCKET, else " DEFAULT_SOCKET ".\n"
"Exit codes: 0 ok, 1 error, 2 usage, 3 cannot connect or permission denied,\n"
"4 --timeout reached before --count events.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *sock = NULL;
	int opt;

	log_init("pgoffctl", LOG_LEVEL_INFO);
	signal(SIGPIPE, SIG_IGN);	/* EPIPE is handled where it happens */
	/* "+": options after the command belong to the command */
	while ((opt = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sock = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("pgoffctl %s\n", PGOFF_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	if (strcmp(argv[0], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	return cli_run(commands, argc, argv, sock);
}
