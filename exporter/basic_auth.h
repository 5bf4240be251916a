/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * basic_auth.h - HTTP basic auth against bcrypt hashes, with libxcrypt's
 * crypt_rn. The comparison runs in constant time, and an unknown user
 * costs the same bcrypt work as a known one.
 */
#ifndef PGOFF_EXPORTER_BASIC_AUTH_H
#define PGOFF_EXPORTER_BASIC_AUTH_H

#include <pthread.h>
#include <stdbool.h>
#include "exporter/web_config.h"

/* $2a$, $2b$ or $2y$, a cost from 04 to 31, and 53 characters of salt and
 * digest in bcrypt's alphabet. */
bool bcrypt_hash_valid(const char *hash);

/*
 * 0 when user and password match one of c's users; -EACCES when they do
 * not (or user or password is NULL: no credentials were sent); -EIO when
 * crypt_rn fails (logged by the caller: a libxcrypt without bcrypt),
 * -ENOMEM.
 */
int basic_auth_check(const struct web_config *c, const char *user,
		     const char *password);

/*
 * The last password accepted for each user is remembered as a salted
 * SHA-256-crypt hash (1000 rounds, a salt drawn when it is accepted): a
 * scraper that sends the right password again costs well under a
 * millisecond instead of a bcrypt check (about 50 ms at cost 10). No
 * password is kept in clear. Thread-safe: the HTTP server answers each
 * connection in its own thread.
 */
struct basic_auth {
	const struct web_config *c;
	pthread_mutex_t lock;		/* accepted */
	char accepted[WEB_MAX_USERS][128];	/* "" until one is accepted */
};

void basic_auth_init(struct basic_auth *a, const struct web_config *c);
/* 0 when password is the one remembered for user, else -EACCES: no
 * bcrypt work either way. */
int basic_auth_remembered(struct basic_auth *a, const char *user,
			  const char *password);
/* basic_auth_check, remembering a right password. */
int basic_auth_check_remember(struct basic_auth *a, const char *user,
			      const char *password);
void basic_auth_free(struct basic_auth *a);

#endif
