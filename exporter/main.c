// SPDX-License-Identifier: GPL-2.0-only
/*
 * main.c - pgoff_exporter: serves what pgoffd knows to Prometheus over
 * HTTP(S). Unprivileged: it needs only to be in pgoffd's group.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exporter/revision.h"	/* generated, in $(BUILD) */
#include "exporter/broker_client.h"
#include "exporter/http.h"
#include "exporter/web_config.h"
#include "common/log.h"
#include "common/units.h"

/* Not in the 9100-9999 range of Prometheus's default port allocations
 * (every port there is taken); see docs/MONITORING.md. */
#define DEFAULT_LISTEN "127.0.0.1:19432"
#define DEFAULT_SOCKET "/run/pgoff/pgoffd.sock"

enum { EXIT_RUNTIME = 1, EXIT_BAD_USAGE = 2 };

static void usage(FILE *f)
{
	fprintf(f,
"usage: pgoff_exporter [options]\n"
"Serves pgoffd's view of PostgreSQL's off-CPU time to Prometheus: counters\n"
"by wait, a histogram of off-CPU interval lengths, backends waiting, and\n"
"pgoffd's health; and off-CPU profiles (pprof) of the last seconds at\n"
HTTP_PROFILE_PATH "?seconds=N for Pyroscope or Parca. Runs unprivileged,\n"
"as a member of pgoffd's group.\n"
"\n"
"  --web.listen-address=HOST:PORT  where to serve (default " DEFAULT_LISTEN ";\n"
"                                  ':PORT' for every address)\n"
"  --web.telemetry-path=PATH       the metrics' path (default /metrics)\n"
"  --web.config.file=FILE          TLS and basic auth, in the Prometheus\n"
"                                  exporter toolkit's format; without\n"
"                                  basic_auth_users in it the exporter does\n"
"                                  not start\n"
"  --web.insecure-no-auth          serve without authentication: every local\n"
"                                  user (loopback is no boundary), and anyone\n"
"                                  who can reach the address, reads what the\n"
"                                  pgoff group sees\n"
"  --pgoff.socket=PATH             pgoffd's socket (default $PGOFF_SOCKET,\n"
"                                  else " DEFAULT_SOCKET ")\n"
"  --metrics.per-pid               pgoff_offcpu_*_total by process (label pid):\n"
"                                  one series per backend and wait; processes\n"
"                                  that exited are left out\n"
"  --metrics.top-queries=N         pgoff_query_offcpu_seconds_total for the N\n"
"                                  statements (query ids) with the most\n"
"                                  off-CPU time, 1 to 100 (default: none)\n"
"  --log.level=LEVEL               error, warn, info (default) or debug\n"
"  --version                       print the version and exit\n"
"\n"
"Exit status: 0 stopped by SIGTERM or SIGINT; 1 cannot serve (address in\n"
"use, bad certificate); 2 bad option or web config file, or no\n"
"basic_auth_users without --web.insecure-no-auth.\n");
}

struct options {
	const char *listen, *path, *web_config, *socket;
	bool per_pid, insecure_no_auth;
	unsigned int top_queries;
	enum log_level level;
};

/* What a path may hold: letters, digits, and / . _ - ~ */
static bool path_ok(const char *p)
{
	if (p[0] != '/' || strcmp(p, "/") == 0)
		return false;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/._-~", *p)))
			return false;
	return true;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "web.listen-address", required_argument, NULL, 'l' },
		{ "web.telemetry-path", required_argument, NULL, 't' },
		{ "web.config.file", required_argument, NULL, 'w' },
		{ "web.insecure-no-auth", no_argument, NULL, 'I' },
		{ "pgoff.socket", required_argument, NULL, 's' },
		{ "metrics.per-pid", no_argument, NULL, 'p' },
		{ "metrics.top-queries", required_argument, NULL, 'q' },
		{ "log.level", required_argument, NULL, 'L' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char *const levels[] = { "error", "warn", "info", "debug" };
	int opt;

	o->listen = DEFAULT_LISTEN;
	o->path = "/metrics";
	o->socket = getenv("PGOFF_SOCKET") ? getenv("PGOFF_SOCKET") : DEFAULT_SOCKET;
	o->level = LOG_LEVEL_INFO;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			o->listen = optarg;
			break;
		case 't':
			if (!path_ok(optarg) || strcmp(optarg, HTTP_PROFILE_PATH) == 0) {
				log_warnx("--web.telemetry-path: '%s' is not a path "
					  "below / of letters, digits, / . _ - ~, "
					  "other than " HTTP_PROFILE_PATH, optarg);
				return EXIT_BAD_USAGE;
			}
			o->path = optarg;
			break;
		case 'w':
			o->web_config = optarg;
			break;
		case 'I':
			o->insecure_no_auth = true;
			break;
		case 's':
			o->socket = optarg;
			break;
		case 'p':
			o->per_pid = true;
			break;
		case 'q': {
			uint64_t n;

			if (pgoff_parse_u64(optarg, 1, 100, &n)) {
				log_warnx("--metrics.top-queries: '%s' is not a "
					  "number from 1 to 100", optarg);
				return EXIT_BAD_USAGE;
			}
			o->top_queries = (unsigned int)n;
			break;
		}
		case 'L': {
			size_t i;

			for (i = 0; i < 4 && strcmp(optarg, levels[i]); i++)
				;
			if (i == 4) {
				log_warnx("--log.level: '%s' is not error, warn, "
					  "info or debug", optarg);
				return EXIT_BAD_USAGE;
			}
			o->level = (enum log_level)i;
			break;
		}
		case 'V':
			printf("pgoff_exporter %s (%s)\n", PGOFF_VERSION,
			       PGOFF_REVISION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return EXIT_BAD_USAGE;
		}
	}
	if (optind < argc) {
		log_warnx("unexpected argument '%s'", argv[optind]);
		return EXIT_BAD_USAGE;
	}
	return 0;
}

/* Why it does not start: at error level, which --log.level never hides. */
static void not_starting(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void not_starting(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
}

/*
 * Whether web (NULL: no --web.config.file) may be served: it must have
 * users, or the operator said --web.insecure-no-auth. pgoffd's socket
 * is the pgoff group's; served to every local user over loopback, it
 * would not be.
 */
static bool auth_ok(const struct options *o, const struct web_config *web,
		    char *err, size_t errlen)
{
	if (o->insecure_no_auth || (web && web->nusers))
		return true;
	snprintf(err, errlen, "%s%s: without authentication every local user "
		 "(loopback is no boundary) would read what the pgoff group "
		 "sees. Add basic_auth_users to a web config file (a bcrypt "
		 "hash: htpasswd -nBC 10 prometheus) and give it with "
		 "--web.config.file=FILE, or give --web.insecure-no-auth to "
		 "serve everyone", web ? o->web_config : "no --web.config.file",
		 web ? " has no basic_auth_users" : "");
	return false;
}

/*
 * SIGHUP: read --web.config.file again and serve with it; a file that
 * does not check out, or whose certificate or key cannot be read, changes
 * nothing. *web is the config in use, one of webs. Returns 0, -EINVAL
 * (nothing changed) or -EIO (nothing is served any more).
 */
static int reload(struct http_server *server, const struct options *o,
		  struct web_config **web, struct web_config webs[2])
{
	struct web_config *next = *web == &webs[0] ? &webs[1] : &webs[0];
	const char *path = o->web_config;
	char err[768];
	int ret;

	if (!path) {
		log_info("SIGHUP: no --web.config.file to read again");
		return 0;
	}
	if (web_config_load(path, next, err, sizeof(err))) {
		log_warnx("SIGHUP: --web.config.file: %s; still serving as before",
			  err);
		return -EINVAL;
	}
	if (!auth_ok(o, next, err, sizeof(err))) {
		log_warnx("SIGHUP: %s; still serving as before", err);
		web_config_free(next);
		return -EINVAL;
	}
	ret = http_reload(server, next, err, sizeof(err));
	if (ret) {
		log_warnx("SIGHUP: %s%s", err, ret == -EIO ? "" :
			  "; still serving as before");
		web_config_free(next);
		return ret == -EIO ? -EIO : -EINVAL;
	}
	web_config_free(*web);
	*web = next;
	log_info("SIGHUP: serving with %s as it is now (%s, %zu users)", path,
		 next->tls ? "https" : "http", next->nusers);
	return 0;
}

int main(int argc, char **argv)
{
	struct http_options ho = { .version = PGOFF_VERSION,
				   .revision = PGOFF_REVISION };
	struct web_config webs[2] = { 0 }, *web = &webs[0];
	struct broker_client broker;
	struct http_server *server = NULL;
	struct options o = { 0 };
	char err[768];
	sigset_t set;
	int ret, sig;

	log_init("pgoff_exporter", LOG_LEVEL_INFO);
	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	log_init("pgoff_exporter", o.level);
	if (o.web_config && web_config_load(o.web_config, web, err, sizeof(err))) {
		not_starting("--web.config.file: %s", err);
		return EXIT_BAD_USAGE;
	}
	if (!auth_ok(&o, o.web_config ? web : NULL, err, sizeof(err))) {
		not_starting("not starting: %s", err);
		web_config_free(web);
		return EXIT_BAD_USAGE;
	}
	if (geteuid() == 0)
		log_warnx("running as root, which it does not need: run it as a "
			  "user in pgoffd's group (the systemd unit does)");
	/* signals to this thread only: libmicrohttpd's thread inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	broker_client_init(&broker, o.socket);
	broker.top_queries = o.top_queries;
	ho.listen_address = o.listen;
	ho.telemetry_path = o.path;
	ho.web = o.web_config ? web : NULL;
	ho.broker = &broker;
	ho.per_pid = o.per_pid;
	ret = http_start(&ho, &server, err, sizeof(err));
	if (ret) {
		not_starting("%s", err);
		web_config_free(web);
		return ret == -HTTP_BAD_TLS_FILE ?
		       EXIT_BAD_USAGE : EXIT_RUNTIME;
	}
	log_info("serving %s on %s://%s%s (pgoffd at %s%s)", o.path,
		 web->tls ? "https" : "http", o.listen,
		 web->nusers ? ", basic auth" : "", o.socket,
		 o.per_pid ? "; series by pid" : "");
	if (!web->nusers)
		log_warnx("--web.insecure-no-auth: serving without authentication; "
			  "every local user, and anyone who can reach %s, reads "
			  "what the pgoff group sees", o.listen);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGHUP) {
			ret = reload(server, &o, &web, webs);
			if (ret == -EIO) {
				ret = EXIT_RUNTIME;
				break;
			}
			continue;
		}
		log_info("stopping on signal %d", sig);
		break;
	}
	http_stop(server);
	broker_client_close(&broker);
	web_config_free(&webs[0]);
	web_config_free(&webs[1]);
	return ret == EXIT_RUNTIME ? EXIT_RUNTIME : 0;
}
