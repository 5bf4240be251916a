// SPDX-License-Identifier: GPL-2.0-only
/*
 * pg_title.c - parse PostgreSQL process titles (init_ps_display() in
 * src/backend/utils/misc/ps_status.c and its callers, PostgreSQL 13-19).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "broker/pg/pg_title.h"

#define TITLE_PREFIX "postgres: "

/*
 * Titles of processes that are not client backends start with the
 * backend type description or a background worker's bgw_name; this maps
 * that start to pg_stat_activity.backend_type, per major version.
 *
 * Where they come from (paths in PostgreSQL's tree; lines in the sources
 * pg_wait_names_source() names for that major: Debian's 13.16, 15.18 and
 * 18.6 source packages, the git commits of 14, 16, 17 and 19, and for 19
 * also the headers of Debian's postgresql-server-dev-19 19~rc1-1):
 *  - init_ps_display(NULL) puts GetBackendTypeDesc(MyBackendType) in the
 *    title (utils/misc/ps_status.c:293 in 13, :294 in 19), and that is
 *    also the backend_type: the switch of GetBackendTypeDesc() in
 *    utils/init/miscinit.c (13:201, 14:232, 15:250, 16:264, 17:264,
 *    18:263), include/postmaster/proctypelist.h in 19 (rc1:34-51);
 *  - a background worker's title is its bgw_name (postmaster/bgworker.c,
 *    init_ps_display(worker->bgw_name)), its backend_type its bgw_type
 *    (utils/adt/pgstatfuncs.c, GetBackgroundWorkerTypeByPid): set in
 *    access/transam/parallel.c (13:560-562, 14/15:587-589,
 *    16/17:598-600, 18:602-604, 19:605-607),
 *    replication/logical/launcher.c (13:417-422 and 776-778, 14:401-406
 *    and 715-717, 15:401-406 and 719-721, 16:480-492 and 928-930,
 *    17:482-504 and 951-953, 18:479-501 and 948-950, 19:513-543 and
 *    1030-1032) and
 *    commands/repack.c (19:3642-3645).
 * 19beta2 also had the data checksums launcher and worker
 * (postmaster/datachecksum_state.c, B_DATACHECKSUMSWORKER_*); 19rc1 has
 * neither (not in its proctypelist.h nor its postgres binary).
 * Longer prefixes first where one is the start of another.
 */
static const struct title_type {
	const char *prefix;
	const char *backend_type;
	int first_major, last_major;
} known[] = {
	/* GetBackendTypeDesc() */
	{ "archiver", "archiver", 13, 19 },
	{ "autovacuum launcher", "autovacuum launcher", 13, 19 },
	{ "autovacuum worker", "autovacuum worker", 13, 19 },
	{ "background writer", "background writer", 13, 19 },
	{ "checkpointer", "checkpointer", 13, 19 },
	{ "startup", "startup", 13, 19 },
	{ "walreceiver", "walreceiver", 13, 19 },
	{ "walwriter", "walwriter", 13, 19 },
	{ "logger", "logger", 13, 18 },
	{ "syslogger", "syslogger", 19, 19 },	/* B_LOGGER renamed */
	{ "stats collector", "stats collector", 13, 14 },
	{ "walsummarizer", "walsummarizer", 17, 19 },
	{ "slotsync worker", "slotsync worker", 17, 19 },
	{ "io worker", "io worker", 18, 19 },	/* "io worker 0" */
	/* bgw_name -> bgw_type */
	{ "parallel worker", "parallel worker", 13, 19 },
	{ "logical replication launcher", "logical replication launcher", 13, 19 },
	/* apply and tablesync workers in 13-15, tablesync in 16 */
	{ "logical replication worker", "logical replication worker", 13, 16 },
	{ "logical replication apply worker", "logical replication worker",
	  16, 16 },
	{ "logical replication apply worker",
	  "logical replication apply worker", 17, 19 },
	{ "logical replication parallel apply worker",
	  "logical replication parallel worker", 16, 19 },
	{ "logical replication tablesync worker",
	  "logical replication tablesync worker", 17, 19 },
	{ "logical replication sequencesync worker",
	  "logical replication sequencesync worker", 19, 19 },
	{ "REPACK decoding worker", "REPACK decoding worker", 19, 19 },
};

#define OLDEST_MAJOR 13
#define NEWEST_MAJOR 19

static void copy_token(char *dst, size_t len, const char *src, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Next space-delimited token of *p: start and length; advances *p. */
static size_t next_token(const char **p, const char **start)
{
	const char *s = *p;
	size_t n;

	while (*s == ' ')
		s++;
	*start = s;
	n = strcspn(s, " ");
	*p = s + n;
	return n;
}

static int starts_word(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 && (s[n] == '\0' || s[n] == ' ');
}

/* "[local]", "10.0.0.1(5432)", "host.example(5432)", "::1(40000)" */
static int looks_like_host(const char *s, size_t n)
{
	return (n >= 7 && strncmp(s, "[local]", 7) == 0) ||
	       (n > 0 && s[n - 1] == ')' && memchr(s, '(', n));
}

/*
 * The row for the start of a title in that major; for an unknown major,
 * the row of the newest version that has such a start.
 */
static const struct title_type *known_type(const char *p, int pg_major)
{
	const struct title_type *best = NULL;
	int known_major = pg_major >= OLDEST_MAJOR && pg_major <= NEWEST_MAJOR;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const struct title_type *k = &known[i];

		if (!starts_word(p, k->prefix))
			continue;
		if (known_major) {
			if (pg_major >= k->first_major &&
			    pg_major <= k->last_major)
				return k;
		} else if (!best || k->last_major > best->last_major) {
			best = k;
		}
	}
	return best;
}

int pg_title_parse(const char *title, int pg_major, struct pg_title *out)
{
	const struct title_type *k;
	const char *p, *tok, *user, *db, *host;
	size_t n, ulen, dlen, hlen;

	memset(out, 0, sizeof(*out));
	if (!title || !*title)
		return -EINVAL;
	if (strncmp(title, TITLE_PREFIX, strlen(TITLE_PREFIX)) != 0) {
		/* the postmaster never sets a title: this is its argv */
		snprintf(out->backend_type, sizeof(out->backend_type),
			 "postmaster");
		return 0;
	}
	p = title + strlen(TITLE_PREFIX);
	/* "postgres: 15/main: …": a first token ending in ':' names the cluster */
	{
		const char *save = p;

		n = next_token(&p, &tok);
		if (n > 1 && tok[n - 1] == ':')
			copy_token(out->cluster_name, sizeof(out->cluster_name),
				   tok, n - 1);
		else
			p = save;
		while (*p == ' ')
			p++;
	}
	k = known_type(p, pg_major);
	if (k) {
		snprintf(out->backend_type, sizeof(out->backend_type), "%s",
			 k->backend_type);
		return 0;
	}
	/* "walsender user [database] host activity" */
	if (starts_word(p, "walsender")) {
		snprintf(out->backend_type, sizeof(out->backend_type),
			 "walsender");
		p += strlen("walsender");
		ulen = next_token(&p, &user);
		copy_token(out->user, sizeof(out->user), user, ulen);
		return 0;
	}
	/* "user database host activity": a client backend */
	ulen = next_token(&p, &user);
	dlen = next_token(&p, &db);
	hlen = next_token(&p, &host);
	if (ulen && dlen && looks_like_host(host, hlen)) {
		snprintf(out->backend_type, sizeof(out->backend_type),
			 "client backend");
		copy_token(out->user, sizeof(out->user), user, ulen);
		copy_token(out->database, sizeof(out->database), db, dlen);
		return 0;
	}
	/* anything else is a background worker showing its own name */
	snprintf(out->backend_type, sizeof(out->backend_type),
		 "background worker");
	return 0;
}
