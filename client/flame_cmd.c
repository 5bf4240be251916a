// SPDX-License-Identifier: GPL-2.0-only
/*
 * flame_cmd.c - pgoffctl flame: record off-CPU intervals with their
 * stacks for a while, then write a flame graph (SVG), folded stacks or
 * a pprof profile (client/pprof.h).
 * Each sample is the PostgreSQL wait, the kernel wait type, with
 * --user-stack PostgreSQL's own frames, then the kernel stack, each from
 * its outermost frame; its weight the interval's
 * length in microseconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "client/cli.h"
#include "client/conn.h"
#include "client/event_frames.h"
#include "client/flame.h"
#include "client/io_util.h"
#include "client/pprof.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/since.h"
#include "common/units.h"

static void flame_usage(FILE *f)
{
	fprintf(f,
"usage: pgoffctl flame [options] > offcpu.svg\n"
"Record off-CPU intervals of PostgreSQL processes with their kernel stacks\n"
"and write an off-CPU flame graph: a self-contained SVG (click a frame to\n"
"zoom, Ctrl-F to search, hover for times),\n"
"rooted at the PostgreSQL wait event, then the kernel wait type, then the\n"
"stack; widths are off-CPU time. Ctrl-C ends the recording early.\n"
"\n"
"  --duration DUR    how long to record (default 10s)\n"
"  --folded          folded stacks ('a;b;c 1234', microseconds) for\n"
"                    flamegraph.pl or speedscope, instead of the SVG\n"
"  --min DURATION    leave out shorter intervals (default 100us)\n"
"  --pid N, --type LIST, --pg-wait LIST, --db LIST, --backend-type LIST,\n"
"  --query-id LIST, --container LIST\n"
"                    the filters of watch\n"
"  --user-stack      PostgreSQL's own frames (outermost first) between\n"
"                    the kernel wait type and the kernel stack\n"
"  --by query        the statement (query id) at the root, above the\n"
"                    wait event\n"
"  --idle            also idle time (left out by default, as in top):\n"
"                    processes waiting for work, clients between\n"
"                    statements\n"
"  --title TEXT      the graph's title\n"
"  --pprof FILE      a pprof profile (gzipped profile.proto: off-CPU ns and\n"
"                    counts, labelled by wait event, backend type,\n"
"                    database, cluster, query id, pid) in FILE, - for\n"
"                    standard output, for go tool pprof, Pyroscope or\n"
"                    Parca, instead of the SVG (--folded: both)\n"
"  --since WHEN      the past: the intervals pgoffd recorded (record-min\n"
"                    or longer) that ended after WHEN (10m, 02:50, or\n"
"                    RFC 3339)\n"
"  --until WHEN      with --since: that ended at WHEN or before\n"
"  --diff A B        two windows of the past, each FROM..TO (TO empty:\n"
"                    now), as differential folded stacks: 'a;b;c A_us B_us'\n"
"                    per line, for flamegraph.pl (red: grew in B)\n"
"  --socket PATH     broker socket\n"
"\n"
"examples:\n"
"  pgoffctl flame --duration 30s --db shop > shop-offcpu.svg\n"
"  pgoffctl flame --folded --pid 4242 | flamegraph.pl > 4242.svg\n"
"  pgoffctl flame --since 1h --until 30m > before.svg\n"
"  pgoffctl flame --diff 2h..1h 1h.. | flamegraph.pl > diff.svg\n"
"  pgoffctl flame --duration 30s --pprof offcpu.pb.gz && go tool pprof -top offcpu.pb.gz\n");
}

struct flame_opts {
	struct pgoff_request req;
	uint64_t duration_ns;
	bool folded;
	bool by_query;			/* the statement's frame at the root */
	bool idle;			/* --idle: idle time too */
	const char *title;
	const char *pprof;		/* --pprof FILE */
	bool past, diff;		/* --since, --diff */
	int64_t win[2][2];		/* windows: since, until (0: now) */
};

/* "FROM..TO", TO empty for now. */
static int parse_window(const char *arg, int64_t w[2])
{
	char from[80];
	const char *dots = strstr(arg, "..");

	if (!dots || (size_t)(dots - arg) >= sizeof(from) || dots == arg) {
		log_warnx("--diff: '%s' is not a window FROM..TO, such as "
			  "2h..1h or 1h..", arg);
		return -1;
	}
	memcpy(from, arg, (size_t)(dots - arg));
	from[dots - arg] = '\0';
	w[1] = 0;
	if (cli_parse_when("--diff", from, &w[0]) ||
	    (dots[2] && cli_parse_until("--diff", dots + 2, w[0], &w[1])))
		return -1;
	if (w[1] && w[1] <= w[0]) {
		log_warnx("--diff: '%s' ends before it starts", arg);
		return -1;
	}
	return 0;
}

/* What the options ask for together: one output on stdout, and windows
 * that go together (--since [--until], or --diff A B). */
static int check_outputs_and_windows(struct flame_opts *o, const char *since,
				     const char *until)
{
	if (o->diff && o->pprof) {
		log_warnx("flame: --pprof writes one window's profile, not --diff");
		return EXIT_USAGE;
	}
	if (o->folded && o->pprof && strcmp(o->pprof, "-") == 0) {
		log_warnx("flame: --folded and --pprof - would both write to "
			  "standard output; give --pprof a file");
		return EXIT_USAGE;
	}
	if ((until && !since) || (o->diff && (since || o->win[1][0] == 0))) {
		log_warnx("flame: --until goes with --since; --diff takes two "
			  "windows and no --since");
		return EXIT_USAGE;
	}
	if (since) {
		o->past = true;
		if (cli_parse_window("flame", since, until, &o->win[0][0],
				     &o->win[0][1]))
			return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int parse_flame(int argc, char **argv, struct flame_opts *o,
		       const char **sock)
{
	static const struct option opts[] = {
		FILTER_OPTIONS,
		{ "duration", required_argument, NULL, 'd' },
		{ "folded", no_argument, NULL, 'F' },
		{ "title", required_argument, NULL, 'n' },
		{ "since", required_argument, NULL, 'S' },
		/* not 'U': FILTER_OPTIONS' --user-stack */
		{ "until", required_argument, NULL, 'u' },
		{ "diff", required_argument, NULL, 'X' },
		{ "by", required_argument, NULL, 'b' },
		{ "idle", no_argument, NULL, 'I' },
		{ "pprof", required_argument, NULL, 'P' },
		CLI_OPTIONS,
		{ 0 }
	};
	struct pgoff_filter *f = &o->req.subscribe;
	const char *since = NULL, *until = NULL;
	int opt, ret;

	o->req.op = PGOFF_OP_SUBSCRIBE;
	f->view = PGOFF_VIEW_INTERVALS;	/* the stacks are there */
	f->min_duration_ns = 100000;
	o->duration_ns = 10000000000ULL;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int r = filter_option(opt, optarg, f);

		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (opt) {
		case 'd':
			if (pgoff_parse_duration(optarg, &o->duration_ns) ||
			    !o->duration_ns ||
			    o->duration_ns > 86400000000000ULL) {
				log_warnx("--duration: '%s' is not a duration "
					  "from 1ns to 24h, such as 30s or 5m",
					  optarg);
				return EXIT_USAGE;
			}
			break;
		case 'F':
			o->folded = true;
			break;
		case 'n':
			o->title = optarg;
			break;
		case 'I':
			o->idle = true;
			break;
		case 'P':
			if (!*optarg) {
				log_warnx("--pprof: give a file name, or - for "
					  "standard output");
				return EXIT_USAGE;
			}
			o->pprof = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "query") != 0) {
				log_warnx("--by: '%s' is not query", optarg);
				return EXIT_USAGE;
			}
			o->by_query = true;
			break;
		case 'S':
			since = optarg;
			break;
		case 'u':
			until = optarg;
			break;
		case 'X':
			/* --diff A B: B is the next argument */
			o->diff = true;
			if (parse_window(optarg, o->win[0]) ||
			    (optind < argc && argv[optind][0] != '-' &&
			     parse_window(argv[optind++], o->win[1])))
				return EXIT_USAGE;
			break;
		default:
			ret = cli_option(opt, optarg, sock, flame_usage);
			if (ret != CLI_NEXT)
				return ret;
		}
	}
	ret = cli_no_args("flame", argc, argv);
	if (ret != EXIT_OK)
		return ret;
	return check_outputs_and_windows(o, since, until);
}

/* One event into the graph (and the profile); -errno from flame_add or
 * pprof_add, 0 if not a sample. */
static int add_event(struct flame *g, struct pprof *pp, json_object *ev,
		     bool user, bool by_query)
{
	struct event_frames f;
	int err;

	if (!event_frames(ev, user, by_query, &f))
		return 0;
	err = flame_add(g, f.frames, f.n, f.ns / 1000);
	if (!err && pp)
		err = event_pprof_add(pp, ev, user, by_query);
	return err;
}

static volatile sig_atomic_t stopped;

static void on_stop(int sig)
{
	(void)sig;
	stopped = 1;
}

struct recording {
	uint64_t events, lost, not_added;
	uint64_t idle, idle_us;		/* idle intervals left out, their time */
	int first_error;
};

/* Whether a replayed event ended after until (0: now, none). */
static bool after(json_object *ev, int64_t until)
{
	const char *t;
	int64_t ns;

	return until && pgoff_get_string(ev, "time", &t) &&
	       pgoff_parse_rfc3339(t, &ns) == 0 && ns > until;
}

/* win: the past (since, until), or NULL for live for --duration. */
static int record(struct conn *c, const struct flame_opts *o, struct flame *g,
		  struct pprof *pp, struct recording *r, const int64_t *win)
{
	/* a replay ends with "replayed"; the deadline only if pgoffd stalls */
	int64_t end = monotonic_ms() + (win ? 600000 :
				  (int64_t)(o->duration_ns / 1000000));
	struct pgoff_request req = o->req;
	json_object *reply;
	int ret;

	if (win) {
		req.subscribe.has_since = true;
		req.subscribe.since_ns = win[0];
	}
	ret = conn_request(c, &req, &reply);
	if (ret != EXIT_OK)
		return ret;
	json_object_put(reply);
	while (!stopped) {
		int64_t left = end - monotonic_ms();
		const char *type = "";
		json_object *obj;
		int64_t n = 0;
		int err;

		if (left <= 0)
			break;
		err = conn_next(c, &obj, (int)left);
		if (err == 0 || err == -EINTR)
			continue;
		if (err < 0) {
			log_warnx("connection to pgoffd lost: %s; the graph "
				  "has what came before", strerror(-err));
			return EXIT_OK;
		}
		pgoff_get_string(obj, "type", &type);
		if (win && strcmp(type, "replayed") == 0) {
			json_object_put(obj);
			return EXIT_OK;
		}
		if (strcmp(type, "offcpu") == 0 && win && after(obj, win[1])) {
			/* past the window: not in the graph */
		} else if (strcmp(type, "offcpu") == 0 && !o->idle &&
			   event_is_idle(obj)) {
			r->idle++;
			if (pgoff_get_int64(obj, "duration_ns", &n) && n > 0)
				r->idle_us += (uint64_t)n / 1000;
		} else if (strcmp(type, "offcpu") == 0) {
			r->events++;
			err = add_event(g, pp, obj, o->req.subscribe.user_stack,
					o->by_query);
			if (err) {
				r->not_added++;
				if (!r->first_error)
					r->first_error = err;
			}
		} else if (strcmp(type, "dropped") == 0) {
			pgoff_get_int64(obj, "count", &n);
			r->lost += n > 0 ? (uint64_t)n : 0;
		} else if (strcmp(type, "bye") == 0) {
			log_warnx("pgoffd closed the stream; the graph has what "
				  "came before");
			json_object_put(obj);
			return EXIT_OK;
		}
		json_object_put(obj);
	}
	return EXIT_OK;
}

/* Say what a recording missed, or left out. */
static void report(const struct recording *r)
{
	if (r->idle)
		log_info("%" PRIu64 " idle intervals (%.3f s: waiting for work, "
			 "or a client between statements) are left out; "
			 "--idle draws them", r->idle, (double)r->idle_us / 1e6);
	if (r->lost)
		log_warnx("%" PRIu64 " events were lost (the graph misses them)",
			  r->lost);
	if (r->not_added)
		log_warnx("%" PRIu64 " events not in the graph: %s", r->not_added,
			  r->first_error == -E2BIG ? "more distinct stacks than "
			  "it holds" : strerror(-r->first_error));
}

/* The next line of folded stacks: path (cut at its last space), weight. */
static bool next_folded(char **cur, char **path, uint64_t *w)
{
	char *nl, *sp;

	while (**cur) {
		nl = strchr(*cur, '\n');
		if (nl)
			*nl = '\0';
		*path = *cur;
		*cur = nl ? nl + 1 : *cur + strlen(*cur);
		sp = strrchr(*path, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		*w = strtoull(sp + 1, NULL, 10);
		return true;
	}
	return false;
}

/*
 * --diff: both windows' folded stacks (each sorted bytewise by path),
 * merged into "path A B" lines, as flamegraph.pl takes them.
 */
static int write_diff(struct flame *const g[2], FILE *out)
{
	char *buf[2] = { NULL, NULL }, *cur[2], *path[2] = { NULL, NULL };
	size_t len[2];
	uint64_t w[2] = { 0, 0 };
	bool have[2];
	int err = 0;

	for (int i = 0; i < 2 && !err; i++) {
		FILE *m = open_memstream(&buf[i], &len[i]);

		if (!m)
			err = -ENOMEM;
		else if ((err = flame_write_folded(g[i], m)) == 0 && fclose(m))
			err = -ENOMEM;
		else if (err)
			fclose(m);
		cur[i] = buf[i];
	}
	for (int i = 0; i < 2 && !err; i++)
		have[i] = next_folded(&cur[i], &path[i], &w[i]);
	while (!err && (have[0] || have[1])) {
		int c = !have[0] ? 1 : !have[1] ? -1 : strcmp(path[0], path[1]);

		fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n",
			c <= 0 ? path[0] : path[1], c <= 0 ? w[0] : 0,
			c >= 0 ? w[1] : 0);
		if (c <= 0)
			have[0] = next_folded(&cur[0], &path[0], &w[0]);
		if (c >= 0)
			have[1] = next_folded(&cur[1], &path[1], &w[1]);
	}
	free(buf[0]);
	free(buf[1]);
	return err ? err : ferror(out) ? -EIO : 0;
}

static int flame_diff(const struct flame_opts *o, const char *sock)
{
	struct flame *g[2] = { flame_new(), flame_new() };
	struct recording r[2] = { 0 };
	int ret = EXIT_OK, err;

	for (int i = 0; i < 2 && ret == EXIT_OK; i++) {
		struct conn c;

		if (!g[i]) {
			log_warnx("out of memory");
			ret = EXIT_ERROR;
			break;
		}
		ret = conn_open(&c, socket_path(sock));
		if (ret == EXIT_OK)
			ret = record(&c, o, g[i], NULL, &r[i], o->win[i]);
		conn_close(&c);
		report(&r[i]);
	}
	if (ret == EXIT_OK) {
		err = write_diff(g, stdout);
		check_stdout();
		if (err) {
			log_warnx("writing the graph: %s", strerror(-err));
			ret = EXIT_ERROR;
		}
	}
	flame_free(g[0]);
	flame_free(g[1]);
	return ret;
}

/*
 * The profile's file, opened before recording so that a wrong path
 * fails at once: "-" is standard output (not a terminal); else a
 * regular file, created 0600 (it holds what pgoffd's group sees) or
 * truncated, never a FIFO or a device (whose open could block, or
 * which is not a profile's place). Returns the fd, or -1 (said why).
 */
static int open_profile(const char *path)
{
	struct stat st;
	int fd;

	if (strcmp(path, "-") == 0) {
		if (isatty(STDOUT_FILENO)) {
			log_warnx("--pprof -: standard output is a terminal; "
				  "redirect it to a file");
			return -1;
		}
		return STDOUT_FILENO;
	}
	/* O_NONBLOCK: a FIFO without a reader fails, instead of blocking */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		  0600);
	if (fd < 0) {
		log_warn("--pprof: cannot write %s", path);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		log_warnx("--pprof: %s is not a regular file", path);
		close(fd);
		return -1;
	}
	if (ftruncate(fd, 0) || fcntl(fd, F_SETFL, 0)) {
		log_warn("--pprof: cannot write %s", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* The profile into fd (closed, but standard output), said on stderr. */
static int write_profile(const struct flame_opts *o, struct pprof *pp,
			 const struct pprof_meta *m, int fd)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int err = pprof_encode_gzip(pp, m, &buf, &len);

	if (!err)
		err = io_write_all(fd, buf, len);
	if (fd != STDOUT_FILENO && close(fd) && !err)
		err = -errno;
	free(buf);
	if (err) {
		log_warnx("--pprof %s: %s", o->pprof, strerror(-err));
		return EXIT_ERROR;
	}
	log_info("--pprof %s: %zu samples, %" PRIu64 " intervals, %.6f s "
		 "off-CPU, %zu bytes", o->pprof, pprof_samples(pp),
		 pprof_total_count(pp), (double)pprof_total_ns(pp) / 1e9, len);
	return EXIT_OK;
}

static int64_t wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int cmd_flame(int argc, char **argv, const char *sock)
{
	struct flame_opts o = { 0 };
	struct recording r = { 0 };
	struct sigaction sa = { .sa_handler = on_stop };
	struct flame *g = NULL;
	struct pprof *pp = NULL;
	char subtitle[300], min[32], dur[32];
	const char *comments[2];
	struct pprof_meta meta = { .comments = comments };
	int64_t started_ms;
	struct conn c;
	int ret, err, fd = -1;

	ret = parse_flame(argc, argv, &o, &sock);
	if (ret != EXIT_OK)
		return ret;
	if (o.diff)
		return flame_diff(&o, sock);
	g = flame_new();
	pp = o.pprof ? pprof_new() : NULL;
	if (!g || (o.pprof && !pp)) {
		log_warnx("out of memory");
		flame_free(g);
		pprof_free(pp);
		return EXIT_ERROR;
	}
	if (o.pprof && (fd = open_profile(o.pprof)) < 0) {
		flame_free(g);
		pprof_free(pp);
		return EXIT_ERROR;
	}
	ret = conn_open(&c, socket_path(sock));
	if (ret != EXIT_OK)
		goto out;
	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: poll returns */
	sigaction(SIGTERM, &sa, NULL);
	meta.time_nanos = o.past ? o.win[0][0] : wall_ns();
	started_ms = monotonic_ms();
	ret = record(&c, &o, g, pp, &r, o.past ? o.win[0] : NULL);
	if (ret != EXIT_OK)
		goto out;
	report(&r);
	if (o.past)
		meta.duration_nanos = (o.win[0][1] ? o.win[0][1] : wall_ns()) -
				      o.win[0][0];
	else
		meta.duration_nanos = (monotonic_ms() - started_ms) * 1000000;
	if (o.past)
		snprintf(dur, sizeof(dur), "the record");
	else
		pgoff_format_duration(o.duration_ns, dur, sizeof(dur));
	snprintf(subtitle, sizeof(subtitle),
		 "%" PRIu64 " off-CPU intervals of %s or more in %s%s",
		 r.events,
		 pgoff_format_duration(o.req.subscribe.min_duration_ns, min,
				       sizeof(min)), dur,
		 r.lost || r.not_added ? "; some lost, see stderr" : "");
	if (pp) {
		comments[meta.ncomments++] = subtitle;
		if (!o.idle)
			comments[meta.ncomments++] = "idle time left out "
				"(processes waiting for work, clients between "
				"statements)";
		ret = write_profile(&o, pp, &meta, fd);
		fd = -1;
		if (!o.folded)
			goto out;	/* no SVG */
	}
	if (o.folded) {
		err = flame_write_folded(g, stdout);
	} else {
		struct flame_svg_opts so = {
			.title = o.title ? o.title : "PostgreSQL off-CPU time",
			.subtitle = subtitle,
		};

		err = flame_write_svg(g, &so, stdout);
	}
	check_stdout();
	if (err) {
		log_warnx("writing the graph: %s", strerror(-err));
		ret = EXIT_ERROR;
	}
out:
	if (fd > STDOUT_FILENO)
		close(fd);
	pprof_free(pp);
	flame_free(g);
	conn_close(&c);
	return ret;
}
