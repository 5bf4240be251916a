/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * basic_auth.h - HTTP basic auth against bcrypt hashes, with libxcrypt's
 * crypt_rn. The comparison runs in constant time, and an unknown user
 * costs the same bcrypt work as a known one.
 */
#ifndef PGOFF_EXPORTER_BASIC_AUTH_H
#define PGOFF_EXPORTER_BASIC_AUTH_H

#include <stdbool.h>
#include "exporter/web_config.h"

/* $2a$, $2b$ or $2y$, a cost from 04 to 31, and 53 characters of salt and
 * digest in bcrypt's alphabet. */
bool bcrypt_hash_valid(const char *hash);

/*
 * 0 when user and password match one of c's users; -EACCES when they do
 * not (or user or password is NULL: no credentials were sent); -EIO when
 * crypt_rn fails (logged by the caller: a libxcrypt without bcrypt).
 */
int basic_auth_check(const struct web_config *c, const char *user,
		     const char *password);

#endif
