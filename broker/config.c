// SPDX-License-Identifier: GPL-2.0-only
/* config.c - settings from defaults, file and command line; see config.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/config.h"
#include "broker/pg_trust.h"
#include "protocol/protocol.h"
#include "protocol/since.h"
#include "protocol/units.h"

static int set_str(char *dst, size_t len, const char *v);

void config_defaults(struct pgoffd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket, sizeof(c->socket), "/run/pgoff/pgoffd.sock");
	snprintf(c->group, sizeof(c->group), "pgoff");
	snprintf(c->user, sizeof(c->user), "pgoffd");
	c->min_floor_ns = 100000;
	c->ringbuf_bytes = 4 << 20;
	c->max_clients = 64;
	c->max_clients_per_uid = 32;
	c->queue_bytes = 1 << 20;
	c->stuck_timeout_s = 30;
	c->max_clusters_per_uid = 8;
	c->max_procs_per_uid = 4096;
	c->record = true;
	c->usdt = true;
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/pgoff");
	c->record_min_ns = 10000000;
	/* as journald's SystemMaxUse and SystemKeepFree: the record never
	 * takes more than a tenth of a small disk, nor fills a full one */
	c->record_max = (struct fs_share){ 1ULL << 30, 10 };
	c->record_keep_free = (struct fs_share){ 4ULL << 30, 15 };
	c->record_max_age_ns = 7ULL * 86400 * 1000000000ULL;
}

/* Bytes with an optional binary suffix: 1048576, 512K, 64M, 1G. */
static int set_size(uint64_t *dst, const char *v, uint64_t min, uint64_t max)
{
	char num[32];
	size_t len = strlen(v);
	unsigned int shift = 0;
	uint64_t n;

	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, len + 1);
	switch (num[len - 1]) {
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	}
	if (shift)
		num[len - 1] = '\0';
	if (pgoff_parse_u64(num, 0, max >> shift, &n) || (n << shift) < min)
		return -EINVAL;
	*dst = n << shift;
	return 0;
}

/* A size (set_size, up to 1T) or a percentage of the file system's size
 * from min_pct to max_pct: "64M", "10%". */
static int set_share(struct fs_share *dst, const char *v, uint64_t min_bytes,
		     uint64_t min_pct, uint64_t max_pct)
{
	size_t len = strlen(v);
	char num[8];
	uint64_t n;

	if (len && v[len - 1] == '%') {
		if (len >= sizeof(num) + 1)
			return -EINVAL;
		memcpy(num, v, len - 1);
		num[len - 1] = '\0';
		if (pgoff_parse_u64(num, min_pct, max_pct, &n))
			return -EINVAL;
		*dst = (struct fs_share){ UINT64_MAX, (uint32_t)n };
		return 0;
	}
	if (set_size(&n, v, min_bytes, 1ULL << 40))
		return -EINVAL;
	*dst = (struct fs_share){ n, 100 };
	return 0;
}

static int set_record_queries(enum record_queries *dst, const char *v)
{
	static const char *const names[] = {
		[RECORD_QUERIES_OFF] = "off",
		[RECORD_QUERIES_REDACTED] = "redacted",
		[RECORD_QUERIES_FULL] = "full",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i]) == 0) {
			*dst = (enum record_queries)i;
			return 0;
		}
	return -EINVAL;
}

/* An absolute path, no "..": safe_dir walks it component by component. */
static int set_dir(char *dst, size_t len, const char *v)
{
	if (v[0] != '/' || strstr(v, "/..") || set_str(dst, len, v))
		return -EINVAL;
	return 0;
}

/* A list checked as pg_trust reads it, kept as text. */
static int set_trust(char *dst, size_t len, const char *v, bool dirs,
		     char *err, size_t errlen)
{
	struct pg_trust t;

	if (strlen(v) >= len) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	if (dirs ? pg_trust_parse_dirs(&t, v, err, errlen) :
		   pg_trust_parse_uids(&t, v, err, errlen))
		return -EINVAL;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int set_str(char *dst, size_t len, const char *v)
{
	if (!*v || strlen(v) >= len)
		return -EINVAL;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int set_flag(bool *dst, const char *v)
{
	if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0)
		*dst = true;
	else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0)
		*dst = false;
	else
		return -EINVAL;
	return 0;
}

static int set_pow2(uint64_t *dst, const char *v)
{
	uint64_t n;

	if (pgoff_parse_u64(v, 4096, 1U << 30, &n) || (n & (n - 1)))
		return -EINVAL;
	*dst = n;
	return 0;
}

int config_set(struct pgoffd_config *c, const char *key, const char *v,
	       char *err, size_t errlen)
{
	int ret;

	if (strcmp(key, "socket") == 0)
		ret = set_str(c->socket, sizeof(c->socket), v);
	else if (strcmp(key, "group") == 0)
		ret = set_str(c->group, sizeof(c->group), v);
	else if (strcmp(key, "query-group") == 0)
		ret = set_str(c->query_group, sizeof(c->query_group), v);
	else if (strcmp(key, "user") == 0)
		ret = set_str(c->user, sizeof(c->user), v);
	else if (strcmp(key, "min-floor") == 0)
		ret = pgoff_parse_duration(v, &c->min_floor_ns);
	else if (strcmp(key, "ringbuf-size") == 0)
		ret = set_pow2(&c->ringbuf_bytes, v);
	else if (strcmp(key, "max-clients") == 0)
		ret = pgoff_parse_u64(v, 1, 4096, &c->max_clients);
	else if (strcmp(key, "max-clients-per-user") == 0)
		ret = pgoff_parse_u64(v, 1, 4096, &c->max_clients_per_uid);
	else if (strcmp(key, "queue-bytes") == 0)
		ret = pgoff_parse_u64(v, PGOFF_MAX_LINE * 2, 1U << 30,
				      &c->queue_bytes);
	else if (strcmp(key, "stuck-timeout") == 0)
		ret = pgoff_parse_u64(v, 1, 86400, &c->stuck_timeout_s);
	else if (strcmp(key, "max-clusters-per-user") == 0)
		ret = pgoff_parse_u64(v, 1, 1024, &c->max_clusters_per_uid);
	else if (strcmp(key, "max-processes-per-user") == 0)
		ret = pgoff_parse_u64(v, 16, PGOFF_MAX_TARGETS,
				      &c->max_procs_per_uid);
	else if (strcmp(key, "trust-uids") == 0 ||
		 strcmp(key, "trust-data-dirs") == 0) {
		bool dirs = key[6] == 'd';
		char why[160];

		if (set_trust(dirs ? c->trust_data_dirs : c->trust_uids,
			      dirs ? sizeof(c->trust_data_dirs) :
				     sizeof(c->trust_uids),
			      v, dirs, why, sizeof(why))) {
			snprintf(err, errlen, "invalid value '%s' for %s: %s",
				 v, key, why);
			return -EINVAL;
		}
		ret = 0;
	} else if (strcmp(key, "record") == 0)
		ret = set_flag(&c->record, v);
	else if (strcmp(key, "state-directory") == 0)
		ret = set_dir(c->state_dir, sizeof(c->state_dir), v);
	else if (strcmp(key, "record-min") == 0)
		ret = pgoff_parse_duration(v, &c->record_min_ns);
	else if (strcmp(key, "record-max-size") == 0)
		ret = set_share(&c->record_max, v, 1ULL << 20, 1, 100);
	else if (strcmp(key, "record-keep-free") == 0)
		ret = set_share(&c->record_keep_free, v, 0, 0, 90);
	else if (strcmp(key, "record-max-age") == 0)
		ret = pgoff_parse_ago(v, &c->record_max_age_ns) ||
		      !c->record_max_age_ns ? -EINVAL : 0;
	else if (strcmp(key, "record-user-stacks") == 0)
		ret = set_flag(&c->record_user_stacks, v);
	else if (strcmp(key, "record-queries") == 0)
		ret = set_record_queries(&c->record_queries, v);
	else if (strcmp(key, "raw-tp") == 0)
		ret = set_flag(&c->raw_tp, v);
	else if (strcmp(key, "usdt") == 0)
		ret = set_flag(&c->usdt, v);
	else if (strcmp(key, "verbose") == 0)
		ret = set_flag(&c->verbose, v);
	else {
		snprintf(err, errlen, "unknown setting '%s'", key);
		return -EINVAL;
	}
	if (ret) {
		snprintf(err, errlen, "invalid value '%s' for %s", v, key);
		return -EINVAL;
	}
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

int config_load(struct pgoffd_config *c, const char *path, bool missing_ok,
		char *err, size_t errlen)
{
	char line[512], msg[200];
	FILE *f = fopen(path, "re");
	int lineno = 0, ret = 0;

	if (!f) {
		if (errno == ENOENT && missing_ok)
			return 0;
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;

		lineno++;
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq || strlen(line) == sizeof(line) - 1) {
			snprintf(err, errlen, "%s:%d: expected 'key = value'",
				 path, lineno);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		if (config_set(c, trim(s), trim(eq + 1), msg, sizeof(msg))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
			ret = -EINVAL;
			break;
		}
	}
	fclose(f);
	return ret;
}
