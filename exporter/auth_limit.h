/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * auth_limit.h - wrong passwords, limited per client address, so that
 * guessing costs the exporter no bcrypt work: an address may send
 * AUTH_LIMIT_BURST wrong passwords at once, then one every
 * AUTH_LIMIT_EVERY_MS; past that its requests are answered 429 without
 * a check. A right password costs its address nothing, and one
 * remembered as accepted (basic_auth.h) is checked before the limit, so
 * a scraper that shares an address with a guesser still gets in.
 *
 * An IPv6 address counts by its /64 (one host's share: a host may hold
 * the whole prefix), an IPv4-mapped one as IPv4. When AUTH_LIMIT_ADDRS
 * addresses are in debt at once, a new address is refused too: the work
 * stays bounded whatever the number of addresses. Pure: the caller gives
 * the time (a steady clock, ms), holds a lock, and checks one password at
 * a time, so that each check sees the outcome of the ones before.
 */
#ifndef PGOFF_EXPORTER_AUTH_LIMIT_H
#define PGOFF_EXPORTER_AUTH_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define AUTH_LIMIT_BURST	5
#define AUTH_LIMIT_EVERY_MS	60000
#define AUTH_LIMIT_ADDRS	256

/* An address as the limit counts it: family, then 4 or 8 bytes. */
struct auth_limit_key {
	unsigned char b[9];
};

struct auth_limit_addr {
	struct auth_limit_key key;
	/* when the address's debt is paid: each wrong password adds
	 * AUTH_LIMIT_EVERY_MS to it; free once it is past */
	int64_t paid_ms;
};

struct auth_limit {
	struct auth_limit_addr a[AUTH_LIMIT_ADDRS];
	uint64_t refused;	/* checks not allowed, since the start */
};

/* sa's key (NULL, or a family other than IP: one key for them all). */
void auth_limit_key(const struct sockaddr *sa, struct auth_limit_key *key);

/*
 * Whether a password check from key may run now. If not, *retry_s (may
 * be NULL) says in how many seconds one may, and refused is counted.
 */
bool auth_limit_allow(struct auth_limit *l, const struct auth_limit_key *key,
		      int64_t now_ms, unsigned *retry_s);
/* A wrong password from key (allowed just before). */
void auth_limit_fail(struct auth_limit *l, const struct auth_limit_key *key,
		     int64_t now_ms);

#endif
