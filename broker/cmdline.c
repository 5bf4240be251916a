// SPDX-License-Identifier: GPL-2.0-only
/* cmdline.c - pgoffd's settings from its command line and file, the names
 * in them resolved, and SIGHUP's reload; see broker.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "broker/broker.h"
#include "broker/pg/pg_registry.h"
#include "broker/priv/pg_trust.h"
#include "common/log.h"

void broker_usage(FILE *f)
{
	fprintf(f,
"usage: pgoffd [options]\n"
"Trace where PostgreSQL backends spend their time off the CPU and serve\n"
"it to members of a group over a Unix socket. Runs in the foreground.\n"
"\n");
	config_usage(f);
	fprintf(f,
"  -c, --config PATH    settings file (default " PGOFF_CONFIG_PATH ", if present):\n"
"                       'key = value' lines, keys as the long options above;\n"
"                       the command line wins; SIGHUP reloads it, but these\n"
"                       change only with a restart:");
	for (size_t i = 0, n = 0; config_setting(i); i++)
		if (config_setting(i)->restart)
			fprintf(f, "%s%s", n++ % 5 ? " " : "\n                       ",
				config_setting(i)->name);
	fprintf(f, "\n"
"  -n, --check          check the settings (file, groups, user) and exit\n"
"  -h, --help           this help\n"
"  -V, --version        print the version\n");
}

/* The settings table's long options, then those that are not settings. */
static const struct option *long_opts(void)
{
	static const struct option others[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static struct option opts[64];
	size_t n = 0;

	if (opts[0].name)
		return opts;
	for (const struct config_setting *s; (s = config_setting(n)); n++)
		opts[n] = (struct option){ s->name, s->arg ? required_argument :
							      no_argument,
					   NULL, 0 };
	_Static_assert(sizeof(opts) / sizeof(opts[0]) >
		       sizeof(others) / sizeof(others[0]), "room for others");
	if (n + sizeof(others) / sizeof(others[0]) > sizeof(opts) / sizeof(opts[0]))
		abort();	/* the table outgrew opts */
	memcpy(opts + n, others, sizeof(others));
	return opts;
}

int broker_read_config(int argc, char **argv, struct pgoffd_config *cfg,
		       char *path, size_t path_len, enum run_mode *mode,
		       char *err, size_t errlen)
{
	bool path_given = false;
	int c, idx;

	config_defaults(cfg);
	snprintf(path, path_len, "%s", PGOFF_CONFIG_PATH);
	*mode = RUN_SERVE;
	optind = 0;	/* glibc: start over, also on reload */
	while ((c = getopt_long(argc, argv, "c:nvhV", long_opts(), NULL)) != -1) {
		if (c == 'c') {
			snprintf(path, path_len, "%s", optarg);
			path_given = true;
		} else if (c == 'n') {
			*mode = RUN_CHECK;
		} else if (c == 'h' || c == 'V' || c == '?') {
			*mode = c == 'h' ? RUN_HELP : c == 'V' ? RUN_VERSION :
							       RUN_BAD_OPTION;
			return 0;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	/* the default file may be absent; a file asked for may not */
	if (config_load(cfg, path, !path_given, err, errlen))
		return -EINVAL;
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:nvhV", long_opts(), &idx)) != -1) {
		if (c == 'v') {
			cfg->verbose = true;
		} else if (c == 0 &&
			   config_set(cfg, long_opts()[idx].name,
				      optarg ? optarg : "yes", err, errlen)) {
			return -EINVAL;
		}
	}
	return 0;
}

int broker_resolve(const struct pgoffd_config *cfg, struct server_opts *so,
		   struct tracer_opts *to, struct prober_opts *po, char *err,
		   size_t errlen)
{
	struct group *gr = getgrnam(cfg->group);

	if (!gr) {
		snprintf(err, errlen, "group '%s' does not exist; create it "
			 "with 'groupadd --system %s' or set group", cfg->group,
			 cfg->group);
		return -ENOENT;
	}
	so->socket_path = cfg->socket;
	so->group_name = cfg->group;
	so->group = gr->gr_gid;
	so->has_query_group = cfg->query_group[0] != '\0';
	if (so->has_query_group) {
		gr = getgrnam(cfg->query_group);
		if (!gr) {
			snprintf(err, errlen, "query group '%s' does not exist; "
				 "create it with 'groupadd --system %s'",
				 cfg->query_group, cfg->query_group);
			return -ENOENT;
		}
		so->query_group = gr->gr_gid;
	}
	so->max_clients = cfg->max_clients;
	so->max_clients_per_uid = cfg->max_clients_per_uid;
	so->queue_bytes = cfg->queue_bytes;
	so->stuck_timeout_s = (unsigned int)cfg->stuck_timeout_s;
	so->min_floor_ns = cfg->min_floor_ns;
	so->record_min_ns = cfg->record_min_ns;
	to->ringbuf_bytes = cfg->ringbuf_bytes;
	to->force_raw_tp = cfg->raw_tp;
	to->on_cpu_sample_ns = cfg->on_cpu_sample_ns;
	po->proc_root = "/proc";
	po->max_procs_per_uid = (uint32_t)cfg->max_procs_per_uid;
	po->max_threads_per_uid = (uint32_t)cfg->max_procs_per_uid;
	if (pg_trust_parse_uids(&po->trust, cfg->trust_uids, err, errlen) ||
	    pg_trust_parse_dirs(&po->trust, cfg->trust_data_dirs, err, errlen))
		return -EINVAL;
	return 0;
}

void broker_reload(struct broker *b)
{
	struct pgoffd_config cfg;
	struct server_opts so = { 0 };
	struct tracer_opts to = { 0 };
	struct prober_opts po = { 0 };
	char path[PATH_MAX], err[300], changed[400];
	enum run_mode mode;

	/* the mode is the one pgoffd started with: serve or check */
	if (broker_read_config(b->argc, b->argv, &cfg, path, sizeof(path), &mode, err,
			sizeof(err)) ||
	    broker_resolve(&cfg, &so, &to, &po, err, sizeof(err))) {
		log_warnx("SIGHUP: configuration not reloaded: %s", err);
		return;
	}
	config_keep_restart_only(&cfg, &b->cfg, changed, sizeof(changed));
	if (changed[0])
		log_warnx("SIGHUP: %s %s only with a restart; kept as %s",
			  changed, strchr(changed, ',') ? "change" : "changes",
			  strchr(changed, ',') ? "they were" : "it was");
	b->cfg = cfg;
	/* names into b->cfg */
	broker_resolve(&b->cfg, &so, &to, &po, err, sizeof(err));
	log_init("pgoffd", cfg.verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	if (b->rec) {
		struct recorder_opts ro = broker_recorder_opts(&cfg);

		recorder_set_opts(b->rec, &ro);
		so.store = recorder_store(b->rec);
	}
	server_reconfigure(b->server, &so);
	pg_registry_set_limit(b->registry, (uint32_t)cfg.max_clusters_per_uid);
	tracer_set_usdt_rate(b->tracer, cfg.usdt_max_rate, cfg.usdt_quiet_ns);
	log_info("SIGHUP: configuration reloaded from %s: group %s, query "
		 "group %s, min-floor %llu ns, %llu clients (%llu per user)",
		 path, cfg.group, cfg.query_group[0] ? cfg.query_group : "-",
		 (unsigned long long)cfg.min_floor_ns,
		 (unsigned long long)cfg.max_clients,
		 (unsigned long long)cfg.max_clients_per_uid);
}

struct recorder_opts broker_recorder_opts(const struct pgoffd_config *cfg)
{
	return (struct recorder_opts){ cfg->record_min_ns, cfg->record_max,
				       cfg->record_max_age_ns,
				       cfg->record_queries,
				       cfg->record_user_stacks,
				       cfg->record_keep_free };
}
