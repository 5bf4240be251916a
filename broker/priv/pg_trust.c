// SPDX-License-Identifier: GPL-2.0-only
/* pg_trust.c - which clusters are traced; see pg_trust.h. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/priv/pg_trust.h"

/* Next comma-separated item of *list, blanks trimmed; 0 at the end. */
static size_t next_item(const char **list, char *out, size_t len)
{
	const char *s = *list, *end;
	size_t n;

	while (*s == ' ' || *s == '\t' || *s == ',')
		s++;
	end = s + strcspn(s, ",");
	*list = end;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = (size_t)(end - s);
	if (n >= len)
		n = len;	/* too long: the caller sees n == len */
	else
		memcpy(out, s, n), out[n] = '\0';
	return n;
}

int pg_trust_parse_uids(struct pg_trust *t, const char *list, char *err,
			size_t errlen)
{
	char item[64];
	size_t n;

	t->nuids = 0;
	while ((n = next_item(&list, item, sizeof(item)))) {
		struct passwd *pw;
		char *end;
		unsigned long v;

		if (n == sizeof(item) || t->nuids == PG_TRUST_MAX) {
			snprintf(err, errlen, n == sizeof(item) ?
				 "a user name in trust-uids is too long" :
				 "trust-uids holds at most %d users",
				 PG_TRUST_MAX);
			return -EINVAL;
		}
		v = strtoul(item, &end, 10);
		if (item[0] >= '0' && item[0] <= '9' && !*end && v < UINT32_MAX) {
			t->uids[t->nuids++] = (uint32_t)v;
			continue;
		}
		pw = getpwnam(item);
		if (!pw) {
			snprintf(err, errlen, "trust-uids: no user '%s'", item);
			return -EINVAL;
		}
		t->uids[t->nuids++] = pw->pw_uid;
	}
	return 0;
}

int pg_trust_parse_dirs(struct pg_trust *t, const char *list, char *err,
			size_t errlen)
{
	char item[sizeof(t->dirs[0])];
	size_t n;

	t->ndirs = 0;
	while ((n = next_item(&list, item, sizeof(item)))) {
		if (n == sizeof(item) || t->ndirs == PG_TRUST_MAX) {
			snprintf(err, errlen, n == sizeof(item) ?
				 "a path in trust-data-dirs is too long" :
				 "trust-data-dirs holds at most %d directories",
				 PG_TRUST_MAX);
			return -EINVAL;
		}
		if (item[0] != '/') {
			snprintf(err, errlen, "trust-data-dirs: '%s' is not an "
				 "absolute path", item);
			return -EINVAL;
		}
		memcpy(t->dirs[t->ndirs++], item, n + 1);
	}
	return 0;
}

bool pg_trust_has_uid(const struct pg_trust *t, uint32_t uid)
{
	for (size_t i = 0; t && i < t->nuids; i++)
		if (t->uids[i] == uid)
			return true;
	return false;
}

const char *pg_trust_refusal(const struct pg_trust *t, const struct stat *exe,
			     uint32_t uid, bool dir_trusted, char *buf,
			     size_t len)
{
	if (S_ISREG(exe->st_mode) && exe->st_uid == 0 &&
	    !(exe->st_mode & (S_IWGRP | S_IWOTH)))
		return NULL;
	if (pg_trust_has_uid(t, uid) || dir_trusted)
		return NULL;
	snprintf(buf, len, "its executable (owner uid %u, mode %04o) is "
		 "not a root-owned file that only root may write, and "
		 "neither trust-uids nor trust-data-dirs name it",
		 (unsigned int)exe->st_uid,
		 (unsigned int)(exe->st_mode & 07777));
	return buf;
}
