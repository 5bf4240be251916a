/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * config.h - pgoffd's settings: defaults, the config file
 * (/etc/pgoff/pgoffd.conf, "key = value" lines whose keys are the long
 * option names), then the command line, which wins. One function checks
 * every value, whichever of the two it came from.
 */
#ifndef PGOFF_CONFIG_H
#define PGOFF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PGOFF_CONFIG_PATH "/etc/pgoff/pgoffd.conf"

/* What the flight recorder keeps of an event's SQL text. */
enum record_queries {
	RECORD_QUERIES_OFF,
	RECORD_QUERIES_REDACTED,	/* literals as $n (sql_redact.h) */
	RECORD_QUERIES_FULL,
};

/*
 * A size on the state directory's file system: bytes, a share of the file
 * system's size, or (a default) the lower of both. "64M" is
 * { 64 MiB, 100 }, "10%" is { UINT64_MAX, 10 }.
 */
struct fs_share {
	uint64_t bytes;			/* UINT64_MAX: no byte limit */
	uint32_t percent;		/* of the file system; 100: none */
};

struct pgoffd_config {
	char socket[108];		/* sun_path */
	char group[64];
	char query_group[64];		/* "" = none */
	char user[64];
	uint64_t min_floor_ns;
	uint64_t ringbuf_bytes;
	uint64_t max_clients;
	uint64_t max_clients_per_uid;
	uint64_t queue_bytes;
	uint64_t stuck_timeout_s;
	uint64_t max_clusters_per_uid;
	uint64_t max_procs_per_uid;	/* also their threads */
	char trust_uids[512];		/* "" = none; see broker/priv/pg_trust.h */
	char trust_data_dirs[2048];
	bool record;			/* the flight recorder */
	char state_dir[256];
	uint64_t record_min_ns;
	struct fs_share record_max;	/* record-max-size */
	struct fs_share record_keep_free;	/* record-keep-free */
	uint64_t record_max_age_ns;
	enum record_queries record_queries;
	bool record_user_stacks;	/* walked at every switch-out */
	bool raw_tp;
	bool usdt;			/* PostgreSQL's wait probes */
	uint64_t usdt_max_rate;		/* LWLock hits a second, a cluster */
	uint64_t usdt_quiet_ns;		/* paused after the last second over */
	uint64_t on_cpu_sample_ns;	/* the on-CPU sampler's period; 0: off */
	bool verbose;
};

void config_defaults(struct pgoffd_config *c);
/*
 * One setting by its long option name ("group", "min-floor", …; flags take
 * yes/no). Returns 0, or -EINVAL with a message naming key and value.
 */
int config_set(struct pgoffd_config *c, const char *key, const char *value,
	       char *err, size_t errlen);
/* Every line of a file; a missing file is fine when missing_ok. */
int config_load(struct pgoffd_config *c, const char *path, bool missing_ok,
		char *err, size_t errlen);

/*
 * The settings table (config.c) is where each setting is named, once: the
 * command line's long options, --help, the config file's keys and what
 * SIGHUP can change all come from it.
 */
struct config_setting {
	const char *name;		/* long option and config key */
	char short_name;		/* its one-letter option, or 0 */
	const char *arg;		/* --help's "N", "PATH"; NULL: a flag
					 * given alone on the command line */
	bool restart;			/* SIGHUP keeps the running value */
	const char *help;		/* --help's text, default included */
};
/* Row i of the table, NULL past its end. */
const struct config_setting *config_setting(size_t i);
/* The settings' lines of --help, wrapped to 78 columns. */
void config_usage(FILE *f);
/*
 * SIGHUP: the restart-only settings of next take running's values; names
 * gets those that differed ("socket, usdt"), "" if none did.
 */
void config_keep_restart_only(struct pgoffd_config *next,
			      const struct pgoffd_config *running,
			      char *names, size_t len);

#endif
