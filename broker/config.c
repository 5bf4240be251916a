// SPDX-License-Identifier: GPL-2.0-only
/* config.c - settings from defaults, file and command line; see config.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/config.h"
#include "broker/priv/pg_trust.h"
#include "protocol/protocol.h"
#include "common/since.h"
#include "common/units.h"

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
	/* a hit costs its backend about 1.5 us (the trap and pg_usdt,
	 * tests/bench/results-usdt-trap.md): at most 1.5 % of a CPU */
	c->usdt_max_rate = 10000;
	c->usdt_quiet_ns = 60ULL * 1000000000ULL;
	/* pg_wait_sampling's profile period: 100 samples a second a CPU */
	c->on_cpu_sample_ns = 10000000;
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

/* Text without control characters: names and paths end up in the log. */
static int set_str(char *dst, size_t len, const char *v)
{
	if (!*v || strlen(v) >= len)
		return -EINVAL;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
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

/* A duration, within min..max where max is set. */
static int set_duration(uint64_t *dst, const char *v, uint64_t min,
			uint64_t max)
{
	uint64_t ns;

	if (pgoff_parse_duration(v, &ns) || (max && (ns < min || ns > max)))
		return -EINVAL;
	*dst = ns;
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

/* How a setting's value is read, and what it is checked against. */
enum setting_kind {
	KIND_STR,		/* text, not empty */
	KIND_DIR,		/* an absolute path, no ".." */
	KIND_U64,		/* min..max */
	KIND_POW2,		/* a power of two, 4096..1G */
	KIND_DURATION,		/* 100us, 10ms, ... */
	KIND_AGO,		/* 7d, 12h, ...: not 0 */
	KIND_SHARE,		/* bytes (at least min_bytes) or min..max % */
	KIND_FLAG,		/* yes/no */
	KIND_TRUST_UIDS,	/* pg_trust's lists, kept as text */
	KIND_TRUST_DIRS,
	KIND_RECORD_QUERIES,	/* off/redacted/full */
};

struct setting_row {
	struct config_setting pub;
	enum setting_kind kind;
	size_t offset, size;		/* the field in struct pgoffd_config */
	uint64_t min, max, min_bytes;
	bool zero_off;			/* 0 is also taken: off */
};

/* limits, where the kind has them: ROW(..., .min = 1, .max = 4096) */
#define ROW(name_, arg_, restart_, help_, kind_, field, ...)               \
	{ .pub.name = name_, .pub.arg = arg_, .pub.restart = restart_,     \
	  .pub.help = help_, .kind = kind_,              \
	  .offset = offsetof(struct pgoffd_config, field),                \
	  .size = sizeof(((struct pgoffd_config *)0)->field), __VA_ARGS__ }
#define RESTART true
#define RELOAD false

/* Every setting of pgoffd, in --help's order. */
static const struct setting_row settings[] = {
	ROW("socket", "PATH", RESTART,
	    "socket to serve (default /run/pgoff/pgoffd.sock)",
	    KIND_STR, socket),
	ROW("group", "NAME", RELOAD,
	    "group whose members may connect (default pgoff)",
	    KIND_STR, group),
	ROW("query-group", "NAME", RELOAD,
	    "members (and root) also see the SQL text of queries (default: "
	    "nobody but root)",
	    KIND_STR, query_group),
	ROW("user", "NAME", RESTART,
	    "run as this user once set up, with no capabilities (default "
	    "pgoffd; never nobody)",
	    KIND_STR, user),
	ROW("min-floor", "DUR", RELOAD,
	    "lowest threshold any subscription gets (default 100us)",
	    KIND_DURATION, min_floor_ns),
	ROW("ringbuf-size", "BYTES", RESTART,
	    "kernel ring buffer, power of two (default 4194304)",
	    KIND_POW2, ringbuf_bytes),
	ROW("max-clients", "N", RELOAD, "concurrent clients (default 64)",
	    KIND_U64, max_clients, .min = 1, .max = 4096),
	ROW("max-clients-per-user", "N", RELOAD,
	    "concurrent clients of one uid, root aside (default 32)",
	    KIND_U64, max_clients_per_uid, .min = 1, .max = 4096),
	ROW("queue-bytes", "N", RELOAD,
	    "output queue per client (default 1048576)",
	    KIND_U64, queue_bytes, .min = PGOFF_MAX_LINE * 2, .max = 1U << 30),
	ROW("stuck-timeout", "SEC", RELOAD,
	    "cut off a client whose queue stays full, or that replays the "
	    "record and reads nothing (default 30)",
	    KIND_U64, stuck_timeout_s, .min = 1, .max = 86400),
	ROW("trust-uids", "LIST", RESTART,
	    "also trace clusters of these users' own binaries",
	    KIND_TRUST_UIDS, trust_uids),
	ROW("trust-data-dirs", "LIST", RESTART,
	    "also trace clusters in these data directories (default: only "
	    "root-owned binaries that only root may write, a distribution's "
	    "PostgreSQL)",
	    KIND_TRUST_DIRS, trust_data_dirs),
	ROW("max-clusters-per-user", "N", RELOAD,
	    "clusters traced per user (default 8)",
	    KIND_U64, max_clusters_per_uid, .min = 1, .max = 1024),
	ROW("max-processes-per-user", "N", RESTART,
	    "processes (and threads) traced per user (default 4096)",
	    KIND_U64, max_procs_per_uid, .min = 16, .max = PGOFF_MAX_TARGETS),
	ROW("record", "yes|no", RESTART,
	    "keep a flight record of every wait and interval at or above "
	    "--record-min, without subscribers (default yes)",
	    KIND_FLAG, record),
	ROW("state-directory", "PATH", RESTART,
	    "where the record is kept (default /var/lib/pgoff; made 0700 and "
	    "given to --user)",
	    KIND_DIR, state_dir),
	ROW("record-min", "DUR", RELOAD,
	    "shortest wait or interval recorded (default 10ms)",
	    KIND_DURATION, record_min_ns),
	ROW("record-max-size", "SIZE", RELOAD,
	    "the record's size cap: bytes (K/M/G/T suffixes) or a share of its "
	    "file system (10%); default the lower of 1G and 10%",
	    KIND_SHARE, record_max, .min = 1, .max = 100,
	    .min_bytes = 1ULL << 20),
	ROW("record-keep-free", "SIZE", RELOAD,
	    "free space the record leaves on its file system (PostgreSQL's, "
	    "often): its oldest segments go first, then recording stops; bytes "
	    "or a share (15%); default the lower of 4G and 15%",
	    KIND_SHARE, record_keep_free, .min = 0, .max = 90),
	ROW("record-max-age", "AGE", RELOAD,
	    "records older than this go (default 7d; s, m, h, d)",
	    KIND_AGO, record_max_age_ns),
	ROW("record-queries", "off|redacted|full", RELOAD,
	    "the SQL text of recorded events: none (default), literals "
	    "replaced by $n, or as it is; shown on replay only to "
	    "--query-group, as live",
	    KIND_RECORD_QUERIES, record_queries),
	ROW("record-user-stacks", "yes|no", RELOAD,
	    "keep the user stack of recorded intervals: walked at every "
	    "switch-out of a traced process, as its duration is not known yet "
	    "(default no)",
	    KIND_FLAG, record_user_stacks),
	ROW("raw-tp", NULL, RESTART,
	    "use the raw_tp programs even where tp_btf works",
	    KIND_FLAG, raw_tp),
	ROW("usdt", "yes|no", RESTART,
	    "attach PostgreSQL's wait probes: exact lock and LWLock episodes "
	    "(default yes)",
	    KIND_FLAG, usdt),
	ROW("usdt-max-rate", "N", RELOAD,
	    "a cluster's LWLock waits a second past which their probes are "
	    "not read until usdt-quiet passes with no second over it "
	    "(episodes then have inferred bounds); 0: no limit (default 10000)",
	    KIND_U64, usdt_max_rate, .min = 0, .max = UINT32_MAX),
	ROW("usdt-quiet", "DUR", RELOAD,
	    "how long a cluster paused by usdt-max-rate must stay under it "
	    "before its LWLock probes are read again, 1s..1h (default 1m)",
	    KIND_DURATION, usdt_quiet_ns, .min = 1000000000ULL,
	    .max = 3600ULL * 1000000000ULL),
	ROW("on-cpu-sample", "DUR", RESTART,
	    "sample each CPU this often for the wait a running backend is in: "
	    "time on the CPU inside a PostgreSQL wait (an I/O's system call) "
	    "counts in its row, as samplers of wait events count it; 1ms..1s, "
	    "0: off (default 10ms)",
	    KIND_DURATION, on_cpu_sample_ns, .min = 1000000ULL,
	    .max = 1000000000ULL, .zero_off = true),
	ROW("verbose", NULL, RELOAD,
	    "debug logging, with libbpf's and the verifier's output",
	    KIND_FLAG, verbose, .pub.short_name = 'v'),
};

#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

const struct config_setting *config_setting(size_t i)
{
	return i < N_SETTINGS ? &settings[i].pub : NULL;
}

static const struct setting_row *find(const char *name)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (strcmp(settings[i].pub.name, name) == 0)
			return &settings[i];
	return NULL;
}

/* One row's value into its field; 0 or -EINVAL (err: for trust lists). */
static int set_row(const struct setting_row *r, struct pgoffd_config *c,
		   const char *v, char *err, size_t errlen)
{
	void *field = (char *)c + r->offset;
	uint64_t *u = field, zero;

	switch (r->kind) {
	case KIND_STR:
		return set_str(field, r->size, v);
	case KIND_DIR:
		return set_dir(field, r->size, v);
	case KIND_U64:
		return pgoff_parse_u64(v, r->min, r->max, u) ? -EINVAL : 0;
	case KIND_POW2:
		return set_pow2(u, v);
	case KIND_DURATION:
		/* 0 written as 0 (0, 0s, 0ms): not a short one rounded down */
		if (r->zero_off && !strpbrk(v, "123456789") &&
		    !pgoff_parse_duration(v, &zero) && !zero) {
			*u = 0;		/* off */
			return 0;
		}
		return set_duration(u, v, r->min, r->max);
	case KIND_AGO:
		return pgoff_parse_ago(v, u) || !*u ? -EINVAL : 0;
	case KIND_SHARE:
		return set_share(field, v, r->min_bytes, r->min, r->max);
	case KIND_FLAG:
		return set_flag(field, v);
	case KIND_TRUST_UIDS:
	case KIND_TRUST_DIRS:
		return set_trust(field, r->size, v, r->kind == KIND_TRUST_DIRS,
				 err, errlen);
	case KIND_RECORD_QUERIES:
		return set_record_queries(field, v);
	}
	return -EINVAL;
}

int config_set(struct pgoffd_config *c, const char *key, const char *v,
	       char *err, size_t errlen)
{
	const struct setting_row *r = find(key);
	char why[160] = "";

	if (!r) {
		snprintf(err, errlen, "unknown setting '%s'", key);
		return -EINVAL;
	}
	if (set_row(r, c, v, why, sizeof(why))) {
		snprintf(err, errlen, "invalid value '%s' for %s%s%s", v, key,
			 why[0] ? ": " : "", why);
		return -EINVAL;
	}
	return 0;
}

/* "  --name ARG" and the help text, wrapped at 78 columns, continued at 23. */
static void usage_row(FILE *f, const struct config_setting *s)
{
	const int col = 23, width = 78;
	const char *w = s->help;
	bool line_start = true;
	int at = fprintf(f, "  %s%s--%s%s%s", s->short_name ? "-" : "",
			 s->short_name ? (char[]){ s->short_name, ',', ' ', 0 } : "",
			 s->name, s->arg ? " " : "", s->arg ? s->arg : "");

	at += fprintf(f, "%*s", at + 2 > col ? 2 : col - at, "");
	while (*w) {
		int len = (int)strcspn(w, " ");

		if (!line_start && at + 1 + len > width)
			at = fprintf(f, "\n%*s", col, "") - 1;
		else if (!line_start)
			at += fprintf(f, " ");
		at += fprintf(f, "%.*s", len, w);
		line_start = false;
		w += len;
		w += strspn(w, " ");
	}
	fputc('\n', f);
}

void config_usage(FILE *f)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		usage_row(f, &settings[i].pub);
}

/* Text compares up to its end: what follows may be an older value's. */
static bool same_value(const struct setting_row *r, const char *a,
		       const char *b)
{
	switch (r->kind) {
	case KIND_STR:
	case KIND_DIR:
	case KIND_TRUST_UIDS:
	case KIND_TRUST_DIRS:
		return strncmp(a, b, r->size) == 0;
	default:
		return memcmp(a, b, r->size) == 0;
	}
}

void config_keep_restart_only(struct pgoffd_config *next,
			      const struct pgoffd_config *running,
			      char *names, size_t len)
{
	size_t at = 0;

	names[0] = '\0';
	for (size_t i = 0; i < N_SETTINGS; i++) {
		const struct setting_row *r = &settings[i];
		char *dst = (char *)next + r->offset;
		const char *src = (const char *)running + r->offset;

		if (!r->pub.restart || same_value(r, dst, src))
			continue;
		memcpy(dst, src, r->size);
		if (at < len)
			at += (size_t)snprintf(names + at, len - at, "%s%s",
					       at ? ", " : "", r->pub.name);
	}
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
