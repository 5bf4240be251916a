// SPDX-License-Identifier: GPL-2.0-only
/* basic_auth.c - basic auth against bcrypt hashes; see basic_auth.h. */
#include <crypt.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/basic_auth.h"

#define BCRYPT_LEN 60	/* "$2y$10$" + 22 salt + 31 digest characters */

static bool bcrypt_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '/';
}

bool bcrypt_hash_valid(const char *h)
{
	int cost;

	if (strlen(h) != BCRYPT_LEN || h[0] != '$' || h[1] != '2' ||
	    (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
	    h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (size_t i = 7; i < BCRYPT_LEN; i++)
		if (!bcrypt_char(h[i]))
			return false;
	return true;
}

/* Equal strings of equal length, in time that depends on len only. */
static bool equal_ct(const char *a, const char *b, size_t len)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < len; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

/* Whether two names are equal, looking at every byte of the longer. */
static bool name_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
	unsigned char diff = la != lb;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
	return diff == 0;
}

int basic_auth_check(const struct web_config *c, const char *user,
		     const char *password)
{
	struct crypt_data *data;
	const char *hash = NULL, *out;
	bool known = false;
	int ret;

	if (!c->nusers)
		return -EACCES;
	for (size_t i = 0; i < c->nusers; i++) {	/* every name compared */
		bool eq = user && name_equal(c->users[i].name, user);

		if (eq && !known)
			hash = c->users[i].hash;
		known |= eq;
	}
	/* an unknown user: the same bcrypt work against a real hash */
	if (!hash)
		hash = c->users[0].hash;
	data = calloc(1, sizeof(*data));	/* 32 KiB: not on the stack */
	if (!data)
		return -ENOMEM;
	out = crypt_rn(password ? password : "", hash, data, sizeof(*data));
	if (!out || out[0] == '*')
		ret = -EIO;
	else
		ret = strlen(out) == BCRYPT_LEN &&
		      equal_ct(out, hash, BCRYPT_LEN) && known && password ?
		      0 : -EACCES;
	explicit_bzero(data, sizeof(*data));
	free(data);
	return ret;
}
