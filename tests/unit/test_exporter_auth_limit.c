/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_exporter_auth_limit.c - the limit on wrong passwords per client
 * address (exporter/auth_limit.c): a burst, then one a minute; a right
 * password costs its address nothing; addresses apart, an IPv6 /64 as
 * one, IPv4-mapped as IPv4; a full table refuses new addresses.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/auth_limit.h"
#include "tests/unit/check.h"

#define T0 1000000	/* ms: any steady clock */

static struct auth_limit_key v4(const char *text)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct auth_limit_key k;

	inet_pton(AF_INET, text, &in.sin_addr);
	auth_limit_key((struct sockaddr *)&in, &k);
	return k;
}

static struct auth_limit_key v6(const char *text)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct auth_limit_key k;

	inet_pton(AF_INET6, text, &in6.sin6_addr);
	auth_limit_key((struct sockaddr *)&in6, &k);
	return k;
}

static struct auth_limit *fresh(void)
{
	return calloc(1, sizeof(struct auth_limit));
}

/* n wrong passwords from k at now, each allowed before it was checked */
static bool wrong(struct auth_limit *l, struct auth_limit_key k, int n,
		  int64_t now)
{
	for (int i = 0; i < n; i++) {
		if (!auth_limit_allow(l, &k, now, NULL))
			return false;
		auth_limit_fail(l, &k, now);
	}
	return true;
}

/* whether a check from k may run at now */
static bool allowed(struct auth_limit *l, struct auth_limit_key k, int64_t now)
{
	return auth_limit_allow(l, &k, now, NULL);
}

static void test_burst_then_one_a_minute(void)
{
	struct auth_limit *l = fresh();
	struct auth_limit_key k = v4("192.0.2.7");
	unsigned retry = 0;

	CHECK(l);
	CHECK(wrong(l, k, AUTH_LIMIT_BURST, T0));
	CHECK(!auth_limit_allow(l, &k, T0, &retry));
	CHECK(retry == AUTH_LIMIT_EVERY_MS / 1000);
	CHECK(!auth_limit_allow(l, &k, T0 + AUTH_LIMIT_EVERY_MS - 1, &retry));
	CHECK(retry == 1);
	CHECK(l->refused == 2);
	/* one more a minute later, and only one */
	CHECK(wrong(l, k, 1, T0 + AUTH_LIMIT_EVERY_MS));
	CHECK(!allowed(l, k, T0 + AUTH_LIMIT_EVERY_MS));
	/* a refusal costs nothing: three minutes on, three more */
	CHECK(wrong(l, k, 3, T0 + 4 * AUTH_LIMIT_EVERY_MS));
	CHECK(!allowed(l, k, T0 + 4 * AUTH_LIMIT_EVERY_MS));
	/* quiet for the whole burst's time: the whole burst again */
	CHECK(wrong(l, k, AUTH_LIMIT_BURST, T0 + 10 * AUTH_LIMIT_EVERY_MS));
	CHECK(!allowed(l, k, T0 + 10 * AUTH_LIMIT_EVERY_MS));
	CHECK(l->refused == 5);
	free(l);
}

static void test_right_password_costs_nothing(void)
{
	struct auth_limit *l = fresh();
	struct auth_limit_key k = v4("192.0.2.7");

	CHECK(l);
	for (int i = 0; i < 100; i++)	/* allowed, and right: no fail */
		CHECK(allowed(l, k, T0 + i));
	/* the wrong ones between right ones still add up */
	CHECK(wrong(l, k, AUTH_LIMIT_BURST - 1, T0 + 200));
	CHECK(allowed(l, k, T0 + 250));
	CHECK(wrong(l, k, 1, T0 + 300));
	CHECK(!allowed(l, k, T0 + 300));
	CHECK(l->refused == 1);
	free(l);
}

static void test_addresses_apart(void)
{
	struct auth_limit *l = fresh();
	struct sockaddr_in6 mapped = { .sin6_family = AF_INET6 };
	struct auth_limit_key k, want;

	CHECK(l);
	CHECK(wrong(l, v4("127.0.0.1"), AUTH_LIMIT_BURST, T0));
	CHECK(!allowed(l, v4("127.0.0.1"), T0));
	CHECK(allowed(l, v4("127.0.0.2"), T0));
	/* ::ffff:127.0.0.1 (an IPv6 socket's IPv4 client) is 127.0.0.1 */
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
	auth_limit_key((struct sockaddr *)&mapped, &k);
	want = v4("127.0.0.1");
	CHECK(memcmp(&k, &want, sizeof(k)) == 0);
	CHECK(!allowed(l, k, T0));
	/* IPv6: one /64 is one address; the next /64 another */
	CHECK(wrong(l, v6("2001:db8::1"), 3, T0));
	CHECK(wrong(l, v6("2001:db8::ffff:2"), 2, T0));
	CHECK(!allowed(l, v6("2001:db8::3"), T0));
	CHECK(allowed(l, v6("2001:db8:0:1::1"), T0));
	/* ::1 and 127.0.0.1 are not the same */
	CHECK(allowed(l, v6("::1"), T0));
	free(l);
}

static void test_full_table_refuses_new_addresses(void)
{
	struct auth_limit *l = fresh();
	struct auth_limit_key k;
	char text[32];
	unsigned retry = 0;

	CHECK(l);
	for (int i = 0; i < AUTH_LIMIT_ADDRS; i++) {
		snprintf(text, sizeof(text), "10.0.%d.%d", i / 256, i % 256);
		CHECK(wrong(l, v4(text), 1, T0 + i));
	}
	/* every entry is in debt: a new address waits for the oldest */
	k = v4("10.1.0.0");
	CHECK(!auth_limit_allow(l, &k, T0 + 1000, &retry));
	CHECK(retry == (AUTH_LIMIT_EVERY_MS - 1000 + 999) / 1000);
	/* an address already in the table still has its burst */
	CHECK(wrong(l, v4("10.0.0.5"), AUTH_LIMIT_BURST - 1, T0 + 1000));
	/* once the first is paid, its place is free */
	CHECK(wrong(l, v4("10.1.0.0"), 1, T0 + AUTH_LIMIT_EVERY_MS));
	CHECK(!allowed(l, v4("10.1.0.1"), T0 + AUTH_LIMIT_EVERY_MS));
	CHECK(l->refused == 2);
	free(l);
}

static void test_other_families_share_one_key(void)
{
	struct sockaddr un = { .sa_family = AF_UNIX };
	struct auth_limit_key a, b;

	auth_limit_key(&un, &a);
	auth_limit_key(NULL, &b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	b = v4("0.0.0.0");
	CHECK(memcmp(&a, &b, sizeof(a)) != 0);
}

int main(void)
{
	RUN(test_burst_then_one_a_minute);
	RUN(test_right_password_costs_nothing);
	RUN(test_addresses_apart);
	RUN(test_full_table_refuses_new_addresses);
	RUN(test_other_families_share_one_key);
	return CHECK_DONE();
}
