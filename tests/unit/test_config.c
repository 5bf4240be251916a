// SPDX-License-Identifier: GPL-2.0-only
/* pgoffd's settings: the file and the command line check values alike. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/config.h"
#include "tests/unit/check.h"

static const char *write_file(const char *text)
{
	static char path[] = "/tmp/pgoff-test-config.XXXXXX";
	int fd;

	strcpy(path + strlen(path) - 6, "XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	return path;
}

static void test_file(void)
{
	struct pgoffd_config c;
	char err[256];
	const char *p = write_file("# pgoffd\n\n  group = dba \n"
				   "query-group=dba_sql\nmin-floor = 1ms\r\n"
				   "ringbuf-size = 65536\nraw-tp = yes\n"
				   "trust-uids = root, 110\n"
				   "trust-data-dirs = /srv/pg/a\n"
				   "max-clusters-per-user = 2\n");

	config_defaults(&c);
	CHECK(config_load(&c, p, false, err, sizeof(err)) == 0);
	unlink(p);
	CHECK_STR(c.group, "dba");
	CHECK_STR(c.query_group, "dba_sql");
	CHECK(c.min_floor_ns == 1000000);
	CHECK(c.ringbuf_bytes == 65536);
	CHECK(c.raw_tp);
	CHECK_STR(c.socket, "/run/pgoff/pgoffd.sock");	/* default kept */
	CHECK(c.max_clients == 64);
	CHECK_STR(c.trust_uids, "root, 110");
	CHECK_STR(c.trust_data_dirs, "/srv/pg/a");
	CHECK(c.max_clusters_per_uid == 2);
	CHECK(c.max_procs_per_uid == 4096);	/* default kept */
}

static void test_recorder_keys(void)
{
	struct pgoffd_config c;
	char err[256];

	config_defaults(&c);
	CHECK(c.record && c.record_min_ns == 10000000);
	/* the lower of 1G and 10 % of the file system; keep 4G or 15 % free */
	CHECK(c.record_max.bytes == 1ULL << 30 && c.record_max.percent == 10);
	CHECK(c.record_keep_free.bytes == 4ULL << 30 &&
	      c.record_keep_free.percent == 15);
	CHECK(c.record_max_age_ns == 7ULL * 86400 * 1000000000ULL);
	CHECK_STR(c.state_dir, "/var/lib/pgoff");
	CHECK(config_set(&c, "record", "no", err, sizeof(err)) == 0 && !c.record);
	CHECK(c.record_queries == RECORD_QUERIES_OFF && !c.record_user_stacks);
	CHECK(config_set(&c, "record-user-stacks", "yes", err, sizeof(err)) == 0 &&
	      c.record_user_stacks);
	CHECK(config_set(&c, "record-user-stacks", "on", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-queries", "redacted", err, sizeof(err)) == 0 &&
	      c.record_queries == RECORD_QUERIES_REDACTED);
	CHECK(config_set(&c, "record-queries", "full", err, sizeof(err)) == 0 &&
	      c.record_queries == RECORD_QUERIES_FULL);
	CHECK(config_set(&c, "record-queries", "on", err, sizeof(err)) == -EINVAL);
	CHECK(c.record_queries == RECORD_QUERIES_FULL);
	CHECK(config_set(&c, "record-queries", "off", err, sizeof(err)) == 0 &&
	      c.record_queries == RECORD_QUERIES_OFF);
	CHECK(c.usdt);
	CHECK(config_set(&c, "usdt", "no", err, sizeof(err)) == 0 && !c.usdt);
	CHECK(config_set(&c, "usdt", "maybe", err, sizeof(err)) == -EINVAL);
	CHECK(c.usdt_quiet_ns == 60000000000ULL);
	CHECK(config_set(&c, "usdt-quiet", "20s", err, sizeof(err)) == 0 &&
	      c.usdt_quiet_ns == 20000000000ULL);
	CHECK(config_set(&c, "usdt-quiet", "500ms", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "usdt-quiet", "2h", err, sizeof(err)) == -EINVAL);
	CHECK(c.usdt_quiet_ns == 20000000000ULL);
	/* the on-CPU sampler: 1ms..1s, or 0 (any way written) for off */
	CHECK(c.on_cpu_sample_ns == 10000000ULL);
	CHECK(config_set(&c, "on-cpu-sample", "1ms", err, sizeof(err)) == 0 &&
	      c.on_cpu_sample_ns == 1000000ULL);
	CHECK(config_set(&c, "on-cpu-sample", "500us", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "on-cpu-sample", "2s", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "on-cpu-sample", "soon", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "on-cpu-sample", "0.4ns", err, sizeof(err)) == -EINVAL);
	CHECK(c.on_cpu_sample_ns == 1000000ULL);
	CHECK(config_set(&c, "on-cpu-sample", "0s", err, sizeof(err)) == 0 &&
	      c.on_cpu_sample_ns == 0);
	CHECK(config_set(&c, "on-cpu-sample", "1s", err, sizeof(err)) == 0 &&
	      c.on_cpu_sample_ns == 1000000000ULL);
	CHECK(config_set(&c, "on-cpu-sample", "0", err, sizeof(err)) == 0 &&
	      c.on_cpu_sample_ns == 0);
	CHECK(config_set(&c, "record-min", "0", err, sizeof(err)) == 0 &&
	      c.record_min_ns == 0);
	CHECK(config_set(&c, "record-max-size", "64M", err, sizeof(err)) == 0 &&
	      c.record_max.bytes == 64ULL << 20 && c.record_max.percent == 100);
	CHECK(config_set(&c, "record-max-size", "2097152", err, sizeof(err)) == 0 &&
	      c.record_max.bytes == 2097152);
	CHECK(config_set(&c, "record-max-size", "20%", err, sizeof(err)) == 0 &&
	      c.record_max.bytes == UINT64_MAX && c.record_max.percent == 20);
	CHECK(config_set(&c, "record-max-size", "0%", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-size", "101%", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-size", "%", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-size", "5.5%", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-keep-free", "0", err, sizeof(err)) == 0 &&
	      c.record_keep_free.bytes == 0 && c.record_keep_free.percent == 100);
	CHECK(config_set(&c, "record-keep-free", "2G", err, sizeof(err)) == 0 &&
	      c.record_keep_free.bytes == 2ULL << 30);
	CHECK(config_set(&c, "record-keep-free", "25%", err, sizeof(err)) == 0 &&
	      c.record_keep_free.bytes == UINT64_MAX &&
	      c.record_keep_free.percent == 25);
	CHECK(config_set(&c, "record-keep-free", "0%", err, sizeof(err)) == 0 &&
	      c.record_keep_free.percent == 0);
	CHECK(config_set(&c, "record-keep-free", "91%", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-keep-free", "-1", err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "invalid value '-1' for record-keep-free");
	CHECK(config_set(&c, "record-max-age", "2h", err, sizeof(err)) == 0 &&
	      c.record_max_age_ns == 7200ULL * 1000000000ULL);
	CHECK(config_set(&c, "state-directory", "/srv/pgoff", err,
			 sizeof(err)) == 0);
	CHECK_STR(c.state_dir, "/srv/pgoff");
	CHECK(config_set(&c, "record-max-size", "1K", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-size", "2P", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-size", "M", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-age", "0", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "record-max-age", "5ms", err, sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "state-directory", "var/lib", err,
			 sizeof(err)) == -EINVAL);
	CHECK(config_set(&c, "state-directory", "/var/../etc", err,
			 sizeof(err)) == -EINVAL);
	CHECK_STR(err, "invalid value '/var/../etc' for state-directory");
}

static void test_errors_name_the_line(void)
{
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{ "group = a\nbogus = 1\n", ":2: unknown setting 'bogus'" },
		{ "ringbuf-size = 5000\n", "invalid value '5000' for ringbuf-size" },
		{ "min-floor = 5\n", "invalid value '5' for min-floor" },
		{ "raw-tp = maybe\n", "invalid value 'maybe' for raw-tp" },
		{ "max-clients = 0\n", "invalid value '0' for max-clients" },
		{ "group\n", ":1: expected 'key = value'" },
		{ "group = \n", "invalid value '' for group" },
		{ "trust-uids = root, no-such-user-pgoff\n",
		  "for trust-uids: trust-uids: no user 'no-such-user-pgoff'" },
		{ "trust-data-dirs = data\n", "'data' is not an absolute path" },
		{ "max-clusters-per-user = 0\n",
		  "invalid value '0' for max-clusters-per-user" },
		{ "max-processes-per-user = 20000\n",
		  "invalid value '20000' for max-processes-per-user" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pgoffd_config c;
		char err[256] = "";
		const char *p = write_file(bad[i].text);

		config_defaults(&c);
		CHECK(config_load(&c, p, false, err, sizeof(err)) == -EINVAL);
		unlink(p);
		if (!strstr(err, bad[i].needle))
			fprintf(stderr, "case %zu: %s\n", i, err);
		CHECK(strstr(err, bad[i].needle) != NULL);
	}
}

static void test_missing_file(void)
{
	struct pgoffd_config c;
	char err[256];

	config_defaults(&c);
	CHECK(config_load(&c, "/nonexistent/pgoffd.conf", true, err,
			  sizeof(err)) == 0);
	CHECK(config_load(&c, "/nonexistent/pgoffd.conf", false, err,
			  sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "/nonexistent/pgoffd.conf") != NULL);
}

/* Each name once; every row takes a value (a flag yes) and refuses junk. */
static void test_table(void)
{
	struct pgoffd_config c;
	char err[256];
	size_t n = 0;

	for (const struct config_setting *s; (s = config_setting(n)); n++) {
		for (size_t j = 0; j < n; j++)
			CHECK(strcmp(config_setting(j)->name, s->name) != 0);
		CHECK(s->help && s->help[0]);
		config_defaults(&c);
		CHECK(config_set(&c, s->name, "\x01junk", err, sizeof(err)) ==
		      -EINVAL);
		CHECK(strstr(err, s->name) != NULL);
	}
	CHECK(n >= 25);
	CHECK(config_setting(n) == NULL);
}

/* SIGHUP: restart-only settings keep their running values, and are named. */
static void test_restart_only(void)
{
	struct pgoffd_config running, next;
	char err[256], names[200];

	config_defaults(&running);
	config_defaults(&next);
	CHECK(config_set(&next, "socket", "/run/other.sock", err, sizeof(err)) == 0);
	CHECK(config_set(&next, "usdt", "no", err, sizeof(err)) == 0);
	CHECK(config_set(&next, "group", "dba", err, sizeof(err)) == 0);
	CHECK(config_set(&next, "min-floor", "1ms", err, sizeof(err)) == 0);
	config_keep_restart_only(&next, &running, names, sizeof(names));
	CHECK_STR(names, "socket, usdt");
	CHECK_STR(next.socket, "/run/pgoff/pgoffd.sock");
	CHECK(next.usdt);
	CHECK_STR(next.group, "dba");			/* reloadable */
	CHECK(next.min_floor_ns == 1000000);

	/* the same text set twice, longer first, is the same value */
	config_defaults(&next);
	CHECK(config_set(&next, "user", "a-much-longer-user-name", err,
			 sizeof(err)) == 0);
	CHECK(config_set(&next, "user", "pgoffd", err, sizeof(err)) == 0);
	config_keep_restart_only(&next, &running, names, sizeof(names));
	CHECK_STR(names, "");
}

/* --help's lines: every setting, wrapped. */
static void test_usage(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	config_usage(f);
	fclose(f);
	for (size_t i = 0; config_setting(i); i++) {
		char opt[64];

		snprintf(opt, sizeof(opt), "--%s", config_setting(i)->name);
		CHECK(strstr(text, opt) != NULL);
	}
	for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		CHECK(nl - line <= 78);
	CHECK(strstr(text, "  -v, --verbose ") != NULL);
	free(text);
}

int main(void)
{
	RUN(test_file);
	RUN(test_recorder_keys);
	RUN(test_errors_name_the_line);
	RUN(test_missing_file);
	RUN(test_table);
	RUN(test_restart_only);
	RUN(test_usage);
	return CHECK_DONE();
}
