// SPDX-License-Identifier: GPL-2.0-only
/* basic_auth.c - basic auth against bcrypt hashes; see basic_auth.h. */
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
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

/* The user's index (every name compared), or -1. */
static int find_user(const struct web_config *c, const char *user)
{
	int found = -1;

	for (size_t i = 0; i < c->nusers; i++) {
		bool eq = user && name_equal(c->users[i].name, user);

		if (eq && found < 0)
			found = (int)i;
	}
	return found;
}

int basic_auth_check(const struct web_config *c, const char *user,
		     const char *password)
{
	struct crypt_data *data;
	const char *hash = NULL, *out;
	bool known;
	int ret, i;

	if (!c->nusers)
		return -EACCES;
	i = find_user(c, user);
	known = i >= 0;
	if (known)
		hash = c->users[i].hash;
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

void basic_auth_init(struct basic_auth *a, const struct web_config *c)
{
	memset(a->accepted, 0, sizeof(a->accepted));
	a->c = c;
	pthread_mutex_init(&a->lock, NULL);
}

/* password hashed with setting (a "$5$" one) into out; false on failure. */
static bool sha256crypt(const char *password, const char *setting, char *out,
			size_t len)
{
	struct crypt_data *data = calloc(1, sizeof(*data));
	const char *h;
	bool ok = false;

	if (!data)
		return false;
	h = crypt_rn(password, setting, data, sizeof(*data));
	if (h && h[0] == '$' && strlen(h) < len) {
		memcpy(out, h, strlen(h) + 1);
		ok = true;
	}
	explicit_bzero(data, sizeof(*data));
	free(data);
	return ok;
}

int basic_auth_remembered(struct basic_auth *a, const char *user,
			  const char *password)
{
	char kept[sizeof(a->accepted[0])], fresh[sizeof(kept)];
	int i = a->c->nusers ? find_user(a->c, user) : -1;
	bool ok;

	if (i < 0 || !password)
		return -EACCES;
	pthread_mutex_lock(&a->lock);
	memcpy(kept, a->accepted[i], sizeof(kept));
	pthread_mutex_unlock(&a->lock);
	ok = kept[0] && sha256crypt(password, kept, fresh, sizeof(fresh)) &&
	     strlen(fresh) == strlen(kept) && equal_ct(fresh, kept, strlen(kept));
	explicit_bzero(kept, sizeof(kept));
	explicit_bzero(fresh, sizeof(fresh));
	return ok ? 0 : -EACCES;
}

int basic_auth_check_remember(struct basic_auth *a, const char *user,
			      const char *password)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE], hashed[sizeof(a->accepted[0])] = { 0 };
	int i = a->c->nusers ? find_user(a->c, user) : -1;
	int ret;

	ret = basic_auth_check(a->c, user, password);
	if (ret || i < 0)
		return ret;
	if (!crypt_gensalt_rn("$5$", 1000, NULL, 0, salt, sizeof(salt)) ||
	    !sha256crypt(password, salt, hashed, sizeof(hashed)))
		hashed[0] = '\0';	/* not remembered: bcrypt next time */
	pthread_mutex_lock(&a->lock);
	memcpy(a->accepted[i], hashed, sizeof(hashed));
	pthread_mutex_unlock(&a->lock);
	explicit_bzero(hashed, sizeof(hashed));
	return 0;
}

void basic_auth_free(struct basic_auth *a)
{
	explicit_bzero(a->accepted, sizeof(a->accepted));
	pthread_mutex_destroy(&a->lock);
}
