// SPDX-License-Identifier: GPL-2.0-only
/*
 * pg_title.c - parse PostgreSQL process titles (init_ps_display() in
 * src/backend/utils/misc/ps_status.c and its callers, PostgreSQL 14-17).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "broker/pg_title.h"

#define TITLE_PREFIX "postgres: "

/*
 * Titles of processes that are not client backends start with the
 * backend type description (GetBackendTypeDesc) or the background
 * worker's name; maps that start to pg_stat_activity.backend_type.
 * Longer prefixes first where one is the start of another.
 */
static const struct {
	const char *prefix;
	const char *backend_type;
} known[] = {
	{ "autovacuum launcher", "autovacuum launcher" },
	{ "autovacuum worker", "autovacuum worker" },
	{ "background writer", "background writer" },
	{ "checkpointer", "checkpointer" },
	{ "walwriter", "walwriter" },
	{ "walreceiver", "walreceiver" },
	{ "walsummarizer", "walsummarizer" },
	{ "archiver", "archiver" },
	{ "logger", "logger" },
	{ "stats collector", "stats collector" },
	{ "startup", "startup" },
	{ "slotsync worker", "slotsync worker" },
	{ "logical replication launcher", "logical replication launcher" },
	{ "logical replication parallel apply worker",
	  "logical replication parallel worker" },
	{ "logical replication apply worker", "logical replication worker" },
	{ "logical replication tablesync worker", "logical replication worker" },
	{ "logical replication worker", "logical replication worker" },
	{ "parallel worker", "parallel worker" },
};

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

int pg_title_parse(const char *title, struct pg_title *out)
{
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
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (starts_word(p, known[i].prefix)) {
			snprintf(out->backend_type, sizeof(out->backend_type),
				 "%s", known[i].backend_type);
			return 0;
		}
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
