// SPDX-License-Identifier: GPL-2.0-only
/* auth_limit.c - password checks limited per address; see auth_limit.h. */
#include <netinet/in.h>
#include <string.h>
#include "exporter/auth_limit.h"

/* the debt past which an address is refused: BURST wrong ones at once */
#define MAX_DEBT_MS ((int64_t)(AUTH_LIMIT_BURST - 1) * AUTH_LIMIT_EVERY_MS)

void auth_limit_key(const struct sockaddr *sa, struct auth_limit_key *key)
{
	memset(key, 0, sizeof(*key));
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		key->b[0] = 4;
		memcpy(key->b + 1, &in->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			key->b[0] = 4;
			memcpy(key->b + 1, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			key->b[0] = 6;	/* the /64 */
			memcpy(key->b + 1, in6->sin6_addr.s6_addr, 8);
		}
	}
}

/* key's entry while it is in debt; else, if add, a free one for it. */
static struct auth_limit_addr *find(struct auth_limit *l,
				    const struct auth_limit_key *key,
				    int64_t now_ms, bool add)
{
	struct auth_limit_addr *unused = NULL;

	for (size_t i = 0; i < AUTH_LIMIT_ADDRS; i++) {
		struct auth_limit_addr *a = &l->a[i];

		if (a->paid_ms <= now_ms)
			unused = unused ? unused : a;
		else if (memcmp(&a->key, key, sizeof(*key)) == 0)
			return a;
	}
	if (!add || !unused)
		return NULL;
	unused->key = *key;
	unused->paid_ms = now_ms;
	return unused;
}

bool auth_limit_allow(struct auth_limit *l, const struct auth_limit_key *key,
		      int64_t now_ms, unsigned *retry_s)
{
	struct auth_limit_addr *a = find(l, key, now_ms, false);
	int64_t wait_ms;

	if (a && a->paid_ms - now_ms <= MAX_DEBT_MS)
		return true;
	if (a) {
		wait_ms = a->paid_ms - now_ms - MAX_DEBT_MS;
	} else {	/* a new address: if there is room for its debt */
		wait_ms = INT64_MAX;
		for (size_t i = 0; i < AUTH_LIMIT_ADDRS; i++)
			if (l->a[i].paid_ms - now_ms < wait_ms)
				wait_ms = l->a[i].paid_ms - now_ms;
		if (wait_ms <= 0)
			return true;
	}
	l->refused++;
	if (retry_s)
		*retry_s = (unsigned)((wait_ms + 999) / 1000);
	return false;
}

void auth_limit_fail(struct auth_limit *l, const struct auth_limit_key *key,
		     int64_t now_ms)
{
	struct auth_limit_addr *a = find(l, key, now_ms, true);

	if (a)	/* else the table filled since it was allowed: not kept */
		a->paid_ms += AUTH_LIMIT_EVERY_MS;
}
