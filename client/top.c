// SPDX-License-Identifier: GPL-2.0-only
/*
 * top.c - pgoffctl top and metrics: the commands built on pgoffd's stats
 * op (the kernel's aggregation), which never stream events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "client/cli.h"
#include "client/conn.h"
#include "client/json_out.h"
#include "client/stats_view.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/since.h"
#include "common/units.h"

static void top_usage(FILE *f)
{
	fprintf(f,
"usage: pgoffctl top [options]\n"
"Where PostgreSQL processes' off-CPU time went in the last interval, from\n"
"pgoffd's in-kernel aggregation. On a terminal the view is redrawn until\n"
"q or Ctrl-C; otherwise one table per interval, separated by a blank line.\n"
"\n"
"  --interval DUR    length of an interval (default 2s; at least 100ms)\n"
"  --by KEY          backend (default): one row per process; wait: per\n"
"                    PostgreSQL wait event and kernel wait type; database;\n"
"                    query: per statement (query id, as\n"
"                    pg_stat_statements.queryid); query,wait: per\n"
"                    statement and wait\n"
"  --once            print one interval and exit\n"
"  --json            one JSON object per interval\n"
"  --pid N           only this process (repeatable)\n"
"  --db LIST         only these databases (comma-separated)\n"
"  --query-id LIST   only these statements (query ids, comma-separated)\n"
"  --container LIST  only clusters in these containers: their ids, or\n"
"                    the first 12 digits or more (as docker ps shows them)\n"
"  --limit N         at most N rows (default: what the terminal holds)\n"
"  --idle            also the idle time (left out by default, as ASH does):\n"
"                    background processes waiting for work (PostgreSQL's\n"
"                    Activity waits), the postmaster's loop, and client\n"
"                    backends between statements (idle, idle in\n"
"                    transaction), in rows of their own with their state\n"
"  --since WHEN      the past: one table from what pgoffd recorded since\n"
"                    WHEN (a duration back from now such as 10m, a local\n"
"                    time of day such as 02:50, or an RFC 3339 time such\n"
"                    as 2026-12-04T02:50:00Z)\n"
"  --until WHEN      with --since: up to WHEN (default: now; a time of\n"
"                    day is the first one after --since)\n"
"  --at WHEN         the past around WHEN: --window long, centred on it\n"
"  --window DUR      with --at (default 1m)\n"
"  --socket PATH     broker socket\n"
"\n"
"On a terminal, keys: g the next grouping (1 to 5: backend, wait, database,\n"
"query, query and wait), s sort by the next column (time, count, p99, p50),\n"
"i idle time shown or not, space pause, ? help, q quit.\n"
"\n"
"OFF%%: share of the interval the process spent off the CPU. AAS: average\n"
"active sessions in that wait at once (idle time is left out and counted\n"
"apart: see --idle), TIME their time in it: off the CPU, and on a CPU as\n"
"pgoffd samples it (WAIT on_cpu rows). COUNT: off-CPU intervals (a lock wait\n"
"woken by the deadlock check counts twice). P50/P99: interval lengths,\n"
"upper bounds of log2 buckets (within a factor of 2).\n"
"\n"
"examples:\n"
"  pgoffctl top --by wait\n"
"  pgoffctl top --container 3f1c2b9a8e7d --by database\n"
"  pgoffctl top --once --json --interval 5s | jq '.rows[0]'\n"
"  pgoffctl top --since 2026-12-04T02:50:00Z --until 2026-12-04T03:00:00Z\n"
"  pgoffctl top --at 10m --window 2m --by wait\n");
}

static void metrics_usage(FILE *f)
{
	fprintf(f,
"usage: pgoffctl metrics [--per-pid] [--socket PATH]\n"
"pgoffd's totals since it started, in the Prometheus text format:\n"
"pgoff_offcpu_seconds_total and pgoff_offcpu_intervals_total by cluster\n"
"(data directory), cluster_id (what tells two clusters at one path apart),\n"
"owner (uid), container, pod_uid, database, backend_type, wait_event_type,\n"
"wait_event, wait and idle (true: waiting for work, or a client between\n"
"statements); pgoff_lost_events_total by cause; pgoff_traced_processes;\n"
"pgoff_clients. Processes that exited stay counted.\n"
"\n"
"  --per-pid         one series per process too (label pid): unbounded\n"
"                    cardinality, and exited processes are left out\n"
"\n"
"example (node_exporter's textfile collector):\n"
"  pgoffctl metrics > $DIR/pgoff.prom.$$ && mv $DIR/pgoff.prom.$$ $DIR/pgoff.prom\n");
}

struct top_opts {
	uint64_t interval_ns;
	enum sv_by by;
	bool once, json;
	uint32_t pids[64];
	size_t npids;
	char dbs[16][64];
	size_t ndbs;
	uint64_t query_ids[16];
	size_t nquery_ids;
	struct pgoff_names containers;	/* id prefixes (--container) */
	bool idle;			/* --idle: show the idle time too */
	/* on a terminal, changed by keys */
	enum top_sort { SORT_TIME, SORT_COUNT, SORT_P99, SORT_P50,
			SORT__N } sort;
	bool paused;			/* space: the table stays as it is */
	bool help;			/* ?: the keys instead of the table */
	uint64_t limit;
	bool past;			/* --since or --at: one table, stored */
	int64_t since_ns, until_ns;	/* wall clock; until 0: now */
};

/* --since/--until or --at/--window into a window; checked together. */
static int past_window(struct top_opts *o, const char *since,
		       const char *until, const char *at, const char *window)
{
	uint64_t w = 60000000000ULL;
	int64_t t;

	if ((until && !since) || (window && !at) || (since && at)) {
		log_warnx("top: --until goes with --since, --window with --at, "
			  "and --since not with --at");
		return EXIT_USAGE;
	}
	if (since) {
		o->past = true;
		if (cli_parse_window("top", since, until, &o->since_ns,
				     &o->until_ns))
			return EXIT_USAGE;
	} else if (at) {
		o->past = true;
		if (cli_parse_when("--at", at, &t))
			return EXIT_USAGE;
		if (window && (pgoff_parse_ago(window, &w) || !w)) {
			log_warnx("--window: '%s' is not a duration such as "
				  "30s, 2m or 1h", window);
			return EXIT_USAGE;
		}
		o->since_ns = t - (int64_t)(w / 2);
		o->until_ns = t + (int64_t)(w - w / 2);
		if (o->since_ns < 0)
			o->since_ns = 0;
	}
	return EXIT_OK;
}

/* --pid, --db and --query-id: the rows top keeps (checked on the client,
 * as the stats reply has them all); 0 or -EINVAL, said. */
static int add_row_filter(struct top_opts *o, int opt, char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'p':
		if (pgoff_parse_u64(arg, 1, PGOFF_PID_MAX, &v) ||
		    o->npids == sizeof(o->pids) / sizeof(o->pids[0])) {
			log_warnx("--pid: '%s' is not a process id (at "
				  "most 64)", arg);
			return -EINVAL;
		}
		o->pids[o->npids++] = (uint32_t)v;
		return 0;
	case 'D':
		for (char *p = arg, *tok; (tok = strsep(&p, ","));) {
			if (!*tok || strlen(tok) >= sizeof(o->dbs[0]) ||
			    o->ndbs == sizeof(o->dbs) / sizeof(o->dbs[0])) {
				log_warnx("--db: '%s' is not a list of at "
					  "most 16 names", arg);
				return -EINVAL;
			}
			strcpy(o->dbs[o->ndbs++], tok);
		}
		return 0;
	case 'Q':
		for (char *p = arg, *tok; (tok = strsep(&p, ","));) {
			if (o->nquery_ids == sizeof(o->query_ids) /
					     sizeof(o->query_ids[0]) ||
			    pgoff_parse_query_id(tok,
				    &o->query_ids[o->nquery_ids])) {
				log_warnx("--query-id: '%s' is not a list "
					  "of at most 16 query ids (as "
					  "pg_stat_statements shows "
					  "queryid: -42)", arg);
				return -EINVAL;
			}
			o->nquery_ids++;
		}
		return 0;
	}
	return -EINVAL;
}

static int parse_top(int argc, char **argv, struct top_opts *o,
		     const char **sock)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "by", required_argument, NULL, 'b' },
		{ "once", no_argument, NULL, '1' },
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "db", required_argument, NULL, 'D' },
		{ "query-id", required_argument, NULL, 'Q' },
		{ "container", required_argument, NULL, 'C' },
		{ "limit", required_argument, NULL, 'l' },
		{ "idle", no_argument, NULL, 'I' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "at", required_argument, NULL, 'A' },
		{ "window", required_argument, NULL, 'W' },
		CLI_OPTIONS,
		{ 0 }
	};
	const char *since = NULL, *until = NULL, *at = NULL, *window = NULL;
	int opt, ret;

	o->interval_ns = 2000000000ULL;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (pgoff_parse_duration(optarg, &o->interval_ns) ||
			    o->interval_ns < 100000000ULL ||
			    o->interval_ns > 3600000000000ULL) {
				log_warnx("--interval: '%s' is not a duration "
					  "from 100ms to 1h", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'b':
			if (sv_by_parse(optarg, &o->by)) {
				log_warnx("--by: '%s' is not backend, wait, "
					  "database, query or query,wait", optarg);
				return EXIT_USAGE;
			}
			break;
		case '1':
			o->once = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'p':
		case 'D':
		case 'Q':
			if (add_row_filter(o, opt, optarg))
				return EXIT_USAGE;
			break;
		case 'C': {
			/* watch's parser and checks, into a filter of its own */
			struct pgoff_filter f = { .containers = o->containers };

			if (filter_option('C', optarg, &f) < 0)
				return EXIT_USAGE;
			o->containers = f.containers;
			break;
		}
		case 'l':
			if (pgoff_parse_u64(optarg, 1, 1000000, &o->limit)) {
				log_warnx("--limit: '%s' is not a positive number",
					  optarg);
				return EXIT_USAGE;
			}
			break;
		case 'I':
			o->idle = true;
			break;
		case 'S':
			since = optarg;
			break;
		case 'U':
			until = optarg;
			break;
		case 'A':
			at = optarg;
			break;
		case 'W':
			window = optarg;
			break;
		default:
			ret = cli_option(opt, optarg, sock, top_usage);
			if (ret != CLI_NEXT)
				return ret;
		}
	}
	ret = cli_no_args("top", argc, argv);
	if (ret != EXIT_OK)
		return ret;
	return past_window(o, since, until, at, window);
}

static bool row_wanted(const struct top_opts *o, const struct sv_row *r)
{
	bool ok = !o->npids;

	for (size_t i = 0; i < o->npids && !ok; i++)
		ok = r->pid == o->pids[i];
	if (!ok)
		return false;
	ok = !o->ndbs;
	for (size_t i = 0; i < o->ndbs && !ok; i++)
		ok = strcmp(r->database, o->dbs[i]) == 0;
	if (!ok)
		return false;
	ok = !o->nquery_ids;
	for (size_t i = 0; i < o->nquery_ids && !ok; i++)
		ok = r->query_id == o->query_ids[i];
	if (!ok)
		return false;
	ok = !o->containers.n;
	for (size_t i = 0; i < o->containers.n && !ok; i++)
		ok = sv_in_container(r, o->containers.v[i]);
	return ok;
}

static int fetch(struct conn *c, enum pgoff_stats_by by, struct sv_snapshot *s)
{
	struct pgoff_request req = { .op = PGOFF_OP_STATS };
	json_object *reply;
	char err[160];
	int ret;

	req.stats.by = by;
	ret = conn_request(c, &req, &reply);
	if (ret != EXIT_OK)
		return ret;
	if (sv_parse(reply, s, err, sizeof(err))) {
		log_warnx("pgoffd's stats reply: %s", err);
		ret = EXIT_ERROR;
	}
	json_object_put(reply);
	return ret;
}

/*
 * What to ask pgoffd for: rows by statement for the query views, which
 * keep the time of backends that exited in the interval (a client that
 * connects for one statement is gone before the next snapshot); rows by
 * process otherwise, and whenever --pid picks processes.
 */
static enum pgoff_stats_by stats_by(const struct top_opts *o)
{
	if ((o->by == SV_BY_QUERY || o->by == SV_BY_QUERY_WAIT) && !o->npids)
		return PGOFF_STATS_BY_QUERY;
	return PGOFF_STATS_BY_PID;
}

/* Terminal state, restored however top ends. */
static struct termios saved_tty;
static bool tty_raw;
static volatile sig_atomic_t stop_signal;

static void restore_tty(void)
{
	if (tty_raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	tty_raw = false;
}

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* Keys without Enter, no echo: 'q' quits. */
static void tty_keys(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty))
		return;
	t = saved_tty;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0) {
		tty_raw = true;
		atexit(restore_tty);
	}
}

/* What a wait for the interval ended with. */
enum top_event {
	TOP_TICK,	/* the interval is over: the next snapshot */
	TOP_QUIT,
	TOP_REDRAW,	/* a key changed the view: the same data again */
	TOP_REBASE,	/* a key changed what pgoffd is asked for */
};

static const enum sv_by top_groupings[] = { SV_BY_BACKEND, SV_BY_WAIT,
	SV_BY_DATABASE, SV_BY_QUERY, SV_BY_QUERY_WAIT };
#define TOP_GROUPINGS (sizeof(top_groupings) / sizeof(top_groupings[0]))

static const char *const sort_names[SORT__N] = { "time", "count", "p99", "p50" };

/* A key pressed on a terminal: what it changes (see top_keys_help). */
static enum top_event top_key(struct top_opts *o, char ch)
{
	enum pgoff_stats_by before = stats_by(o);
	size_t i;

	if (o->help && ch != 'q' && ch != 'Q') {
		o->help = false;	/* any key leaves the help */
		return TOP_REDRAW;
	}
	switch (ch) {
	case 'q': case 'Q':
		return TOP_QUIT;
	case '?': case 'h':
		o->help = true;
		return TOP_REDRAW;
	case ' ': case 'p':
		o->paused = !o->paused;
		return TOP_REDRAW;
	case 's':
		o->sort = (o->sort + 1) % SORT__N;
		return TOP_REDRAW;
	case 'i':
		o->idle = !o->idle;
		return TOP_REDRAW;
	case 'g':
		for (i = 0; i < TOP_GROUPINGS && top_groupings[i] != o->by; i++)
			;
		o->by = top_groupings[(i + 1) % TOP_GROUPINGS];
		break;
	case '1': case '2': case '3': case '4': case '5':
		o->by = top_groupings[ch - '1'];
		break;
	default:
		return TOP_REDRAW;
	}
	return stats_by(o) == before ? TOP_REDRAW : TOP_REBASE;
}

/* Wait until end (ms), or a key or a signal says otherwise. */
static enum top_event wait_interval(struct top_opts *o, int64_t end)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

	for (;;) {
		int64_t left = end - monotonic_ms();
		char ch;

		if (stop_signal)
			return TOP_QUIT;
		if (left <= 0)
			return TOP_TICK;
		if (!tty_raw) {
			struct timespec ts = { left / 1000, (left % 1000) * 1000000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			return TOP_QUIT;	/* the terminal went away */
		if (read(STDIN_FILENO, &ch, 1) == 1)
			return top_key(o, ch);
	}
}

static void top_keys_help(void)
{
	fputs("\033[H\033[2J"
	      "pgoffctl top - keys (any key goes back)\n\n"
	      "  g        the next grouping: backend, wait, database, query,\n"
	      "           query and wait\n"
	      "  1 ... 5  one of them: 1 backend, 2 wait, 3 database, 4 query,\n"
	      "           5 query and wait\n"
	      "  s        sort by the next column: off-CPU time, count, p99, p50\n"
	      "  i        show or hide the idle time (waiting for work, clients\n"
	      "           between statements)\n"
	      "  space    pause: the table stays as it is until space again\n"
	      "  ?        this help\n"
	      "  q        quit\n", stdout);
	check_stdout();
}

static size_t terminal_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 4)
		return ws.ws_row - 4;	/* the title, totals, header, cursor */
	return 20;
}

/* A table over the past: the span the stored seconds cover. */
struct past {
	const char *from, *to;		/* RFC 3339, from pgoffd */
	uint64_t covered_ns;		/* the time recorded in it */
	int64_t seconds;
};

/* What a table adds up to: active and idle time, and the processes. */
struct top_totals {
	uint64_t active_ns, idle_ns;
	uint32_t pids[512];		/* distinct, for rows by pid */
	size_t npids;
	bool pids_cut;
};

static void totals_add(struct top_totals *t, const struct sv_row *r)
{
	size_t i;

	if (r->idle)
		t->idle_ns += r->time_ns;
	else
		t->active_ns += r->time_ns;
	for (i = 0; i < t->npids && t->pids[i] != r->pid; i++)
		;
	if (i < t->npids || !r->pid)
		return;
	if (t->npids == sizeof(t->pids) / sizeof(t->pids[0]))
		t->pids_cut = true;
	else
		t->pids[t->npids++] = r->pid;
}

static double aas(uint64_t ns, uint64_t interval_ns)
{
	return interval_ns ? (double)ns / (double)interval_ns : 0;
}

/* The header's totals: what was left out is said, never dropped silently. */
static void totals_print(const struct top_totals *t, uint64_t interval_ns,
			 const struct top_opts *o, bool by_pid)
{
	printf("AAS %.2f active, %.2f idle%s", aas(t->active_ns, interval_ns),
	       aas(t->idle_ns, interval_ns),
	       o->idle ? " (shown)" : " (not shown: --idle)");
	if (by_pid)
		printf(", %s%zu processes", t->pids_cut ? "over " : "", t->npids);
	putchar('\n');
}

static void totals_json(json_object *j, const struct top_totals *t,
			uint64_t interval_ns)
{
	json_object_object_add(j, "aas_active",
		json_object_new_double(aas(t->active_ns, interval_ns)));
	json_object_object_add(j, "aas_idle",
		json_object_new_double(aas(t->idle_ns, interval_ns)));
	json_object_object_add(j, "idle_time_ns",
		json_object_new_int64((int64_t)t->idle_ns));
}

static uint64_t sort_key(const struct sv_group *g, enum top_sort s,
			 uint64_t unit_ns)
{
	switch (s) {
	case SORT_COUNT:
		return g->count;
	case SORT_P99:
		return sv_quantile_ns(g->hist, unit_ns, 0.99);
	case SORT_P50:
		return sv_quantile_ns(g->hist, unit_ns, 0.5);
	default:
		return g->time_ns;
	}
}

/* Rows by another column than time (sv_group's order), largest first. */
static void sort_groups(struct sv_group *g, size_t n, enum top_sort s,
			uint64_t unit_ns)
{
	/* insertion sort: stable, and top shows a screenful of rows */
	for (size_t i = 1; s != SORT_TIME && i < n; i++) {
		struct sv_group x = g[i];
		uint64_t k = sort_key(&x, s, unit_ns);
		size_t j = i;

		for (; j > 0 && sort_key(&g[j - 1], s, unit_ns) < k; j--)
			g[j] = g[j - 1];
		g[j] = x;
	}
}

/* A table: what changed between two snapshots, kept to be drawn again. */
struct top_table {
	struct sv_snapshot d;	/* its now_ns, hist_unit_ns, truncated: cur's */
	uint64_t interval_ns;
};

static int table_make(const struct sv_snapshot *prev,
		      const struct sv_snapshot *cur, const struct past *past,
		      struct top_table *t)
{
	t->interval_ns = past ? past->covered_ns : cur->now_ns - prev->now_ns;
	return sv_delta(prev, cur, &t->d) ? -ENOMEM : 0;
}

static int table_show(const struct top_opts *o, const struct top_table *t,
		      bool screen, const struct past *past)
{
	struct sv_snapshot d = t->d;
	struct sv_group *g;
	uint64_t interval = t->interval_ns;
	size_t limit = o->limit ? o->limit : screen ? terminal_rows() : 0;
	size_t keep = 0;
	struct top_totals tot = { 0 };
	int n;

	d.rows = calloc(t->d.n ? t->d.n : 1, sizeof(*d.rows));
	if (!d.rows)
		return -ENOMEM;
	for (size_t i = 0; i < t->d.n; i++) {
		if (!row_wanted(o, &t->d.rows[i]))
			continue;
		totals_add(&tot, &t->d.rows[i]);
		if (!t->d.rows[i].idle || o->idle)
			d.rows[keep++] = t->d.rows[i];
	}
	d.n = keep;
	n = sv_group(&d, o->by, &g);
	sv_free(&d);
	if (n < 0)
		return n;
	sort_groups(g, (size_t)n, o->sort, t->d.hist_unit_ns);
	if (o->json) {
		json_object *j = sv_top_json(g, (size_t)n, o->by, interval,
					     t->d.hist_unit_ns, o->limit);

		json_object_object_add(j, "now_ns",
				       json_object_new_int64((int64_t)t->d.now_ns));
		totals_json(j, &tot, interval);
		if (past) {
			json_object_object_add(j, "from_time", past->from ?
				json_object_new_string(past->from) : NULL);
			json_object_object_add(j, "to_time", past->to ?
				json_object_new_string(past->to) : NULL);
			json_object_object_add(j, "seconds",
				json_object_new_int64(past->seconds));
		}
		json_object_object_add(j, "truncated",
				       json_object_new_boolean(t->d.truncated));
		json_out(stdout, j);
		json_object_put(j);
	} else {
		char when[16], iv[32];
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		if (screen)
			fputs("\033[H\033[2J", stdout);
		if (past)
			printf("pgoffctl top - off-CPU time from %s to %s "
			       "(%lld s recorded), by %s%s\n",
			       past->from ? past->from : "-",
			       past->to ? past->to : "-",
			       (long long)past->seconds, sv_by_name(o->by),
			       t->d.truncated ? " (pgoffd's reply was cut "
			       "short: the least busy rows are missing)" : "");
		else
			printf("pgoffctl top - %s - off-CPU time in the last %s, by %s%s%s%s%s\n",
			       when, pgoff_format_duration(interval, iv, sizeof(iv)),
			       sv_by_name(o->by), o->sort == SORT_TIME ? "" : ", sorted by ",
			       o->sort == SORT_TIME ? "" : sort_names[o->sort],
			       t->d.truncated ?
			       " (pgoffd's reply was cut short: the least busy rows are missing)" : "",
			       screen ? (o->paused ? " - PAUSED (space goes on) - ? keys" :
					 " - ? keys, q to quit") : "");
		totals_print(&tot, interval, o, stats_by(o) == PGOFF_STATS_BY_PID);
		sv_render_top(stdout, g, (size_t)n, o->by, interval,
			      t->d.hist_unit_ns, limit);
		if (!screen && !o->once)
			putchar('\n');
	}
	free(g);
	check_stdout();
	return 0;
}

/* One table, not kept. */
static int show(const struct top_opts *o, const struct sv_snapshot *prev,
		const struct sv_snapshot *cur, bool screen,
		const struct past *past)
{
	struct top_table t;
	int err = table_make(prev, cur, past, &t);

	if (!err)
		err = table_show(o, &t, screen, past);
	sv_free(&t.d);
	return err;
}

/* One table from the per-second aggregation pgoffd recorded. */
static int top_past(const struct top_opts *o, struct conn *c)
{
	struct pgoff_request req = { .op = PGOFF_OP_STATS };
	struct sv_snapshot prev = { 0 }, cur = { 0 };
	struct past past = { 0 };
	json_object *reply, *v;
	char err[160];
	int ret;

	req.stats.by = stats_by(o);
	req.stats.has_since = true;
	req.stats.since_ns = o->since_ns;
	req.stats.until_ns = o->until_ns;
	ret = conn_request(c, &req, &reply);
	if (ret != EXIT_OK)
		return ret;
	if (sv_parse(reply, &cur, err, sizeof(err))) {
		log_warnx("pgoffd's stats reply: %s", err);
		json_object_put(reply);
		return EXIT_ERROR;
	}
	if (json_object_object_get_ex(reply, "from_time", &v) &&
	    json_object_is_type(v, json_type_string))
		past.from = json_object_get_string(v);
	if (json_object_object_get_ex(reply, "to_time", &v) &&
	    json_object_is_type(v, json_type_string))
		past.to = json_object_get_string(v);
	if (json_object_object_get_ex(reply, "covered_ns", &v))
		past.covered_ns = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(reply, "seconds", &v))
		past.seconds = json_object_get_int64(v);
	if (json_object_object_get_ex(reply, "complete", &v) &&
	    !json_object_get_boolean(v))
		log_warnx("pgoffd could not read all it recorded: the table "
			  "may be short");
	if (!past.seconds)
		log_warnx("pgoffd recorded nothing in that time (see pgoffctl "
			  "history)");
	if (json_object_object_get_ex(reply, "folded", &v) &&
	    json_object_get_int64(v) > 0)
		log_warnx("%lld rows of the least busy processes are summed in "
			  "one row, (other): too many processes came and went "
			  "in that time", (long long)json_object_get_int64(v));
	if (show(o, &prev, &cur, false, &past)) {
		log_warnx("out of memory");
		ret = EXIT_ERROR;
	}
	sv_free(&cur);
	json_object_put(reply);
	return ret;
}

/*
 * The live view: a snapshot each interval, the table of what changed
 * since the previous one. Keys (a terminal) redraw the last table
 * another way at once, or, when they change what is asked of pgoffd
 * (rows by statement, or by process), start again from a new snapshot.
 */
/* top_loop's own: out of memory, reported once as EXIT_ERROR */
#define EXIT_NOMEM (-20)

static int top_loop(struct top_opts *o, struct conn *c, bool screen)
{
	struct sv_snapshot prev = { 0 }, cur = { 0 };
	struct top_table last = { .interval_ns = 0 }, next;
	int64_t step = (int64_t)(o->interval_ns / 1000000);
	int64_t end = monotonic_ms() + step;
	int ret = fetch(c, stats_by(o), &prev);

	while (ret == EXIT_OK) {
		enum top_event ev = wait_interval(o, end);

		if (ev == TOP_QUIT)
			break;
		if (ev == TOP_REBASE) {	/* rows of another kind from now on */
			sv_free(&last.d);
			sv_free(&prev);
			ret = fetch(c, stats_by(o), &prev);
			end = monotonic_ms() + step;
		}
		if (ev != TOP_TICK) {
			if (o->help) {
				top_keys_help();
			} else if (last.d.rows) {
				if (table_show(o, &last, screen, NULL))
					ret = EXIT_NOMEM;
			} else if (screen) {
				printf("\033[H\033[2J(by %s from the next interval)\n",
				       sv_by_name(o->by));
				check_stdout();
			}
			continue;
		}
		end += step;
		ret = fetch(c, stats_by(o), &cur);
		if (ret != EXIT_OK)
			break;
		if (table_make(&prev, &cur, NULL, &next)) {
			ret = EXIT_NOMEM;
			break;
		}
		/* paused: the table shown stays, to be drawn again */
		if (!o->paused) {
			sv_free(&last.d);
			last = next;
			if (!o->help && table_show(o, &last, screen, NULL))
				ret = EXIT_NOMEM;
		} else {
			sv_free(&next.d);
		}
		sv_free(&prev);
		prev = cur;
		cur = (struct sv_snapshot){ 0 };
		if (o->once)
			break;
	}
	if (ret == EXIT_NOMEM) {
		log_warnx("out of memory");
		ret = EXIT_ERROR;
	}
	sv_free(&last.d);
	sv_free(&prev);
	sv_free(&cur);
	return ret;
}

int cmd_top(int argc, char **argv, const char *sock)
{
	struct top_opts o = { 0 };
	struct sv_snapshot cur = { 0 };
	struct sigaction sa = { .sa_handler = on_stop };
	bool screen;
	struct conn c;
	int ret;

	ret = parse_top(argc, argv, &o, &sock);
	if (ret != EXIT_OK)
		return ret;
	ret = conn_open(&c, socket_path(sock));
	if (ret != EXIT_OK)
		goto out;
	if (o.past) {
		ret = top_past(&o, &c);
		goto out;
	}
	screen = !o.json && !o.once && isatty(STDOUT_FILENO);
	/* each ends top through the loop, which restores the terminal */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	if (screen)
		tty_keys();
	ret = top_loop(&o, &c, screen);
	restore_tty();
out:
	sv_free(&cur);
	conn_close(&c);
	return ret;
}

int cmd_metrics(int argc, char **argv, const char *sock)
{
	static const struct option opts[] = {
		{ "per-pid", no_argument, NULL, 'p' },
		CLI_OPTIONS,
		{ 0 }
	};
	struct pgoff_request status = { .op = PGOFF_OP_STATUS };
	struct sv_snapshot s = { 0 };
	json_object *st = NULL;
	bool per_pid = false;
	struct conn c;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'p')
			per_pid = true;
		else if ((ret = cli_option(opt, optarg, &sock, metrics_usage)) != CLI_NEXT)
			return ret;
	}
	ret = cli_no_args("metrics", argc, argv);
	if (ret != EXIT_OK)
		return ret;
	ret = conn_open(&c, socket_path(sock));
	if (ret == EXIT_OK)
		ret = conn_request(&c, &status, &st);
	if (ret == EXIT_OK)
		ret = fetch(&c, per_pid ? PGOFF_STATS_BY_PID :
			    PGOFF_STATS_BY_LABELS, &s);
	if (ret == EXIT_OK) {
		if (s.truncated)
			log_warnx("pgoffd's reply was cut short: the series "
				  "with the least time are missing");
		if (sv_render_metrics(stdout, &s, st, per_pid)) {
			log_warnx("writing the metrics");
			ret = EXIT_ERROR;
		}
		check_stdout();
	}
	json_object_put(st);
	sv_free(&s);
	conn_close(&c);
	return ret;
}
