/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * units.c - durations and counts. Digits are parsed by hand so that the
 * locale (decimal comma, isdigit tables) cannot change what a flag means.
 */
#include "common/units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MIN (60ULL * NSEC_PER_SEC)

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const struct {
	const char *name;
	uint64_t mult;
} duration_units[] = {
	{ "ns", 1 },
	{ "us", NSEC_PER_USEC },
	{ "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },
	{ "m", NSEC_PER_MIN },
};

/*
 * round(0.<frac digits> * mult), half up, exactly: multiply the fraction's
 * digits by mult right to left like on paper. What carries out of the
 * leftmost digit is the whole-ns part; the leftmost digit of the low part
 * says whether the rest is at least one half. carry < mult and
 * 9 * mult + carry < 10 * 6e10, so nothing overflows however long the
 * fraction is.
 */
static uint64_t frac_to_ns(const char *frac, size_t n, uint64_t mult)
{
	uint64_t carry = 0, t;
	unsigned int top = 0;

	while (n--) {
		t = (uint64_t)(frac[n] - '0') * mult + carry;
		top = (unsigned int)(t % 10);
		carry = t / 10;
	}
	return carry + (top >= 5);
}

static int parse_duration(const char *s, uint64_t *ns)
{
	const char *frac = NULL, *unit;
	size_t frac_len = 0, i;
	uint64_t whole = 0, mult = 0, total;
	int too_big = 0;

	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		/* Keep scanning past overflow so junk still reads as -EINVAL. */
		if (whole > (UINT64_MAX - 9) / 10)
			too_big = 1;
		else
			whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		frac = ++s;
		while (is_digit(*s))
			s++;
		frac_len = (size_t)(s - frac);
		if (!frac_len)
			return -EINVAL;
	}

	unit = s;
	if (*unit) {
		for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
			if (!strcmp(unit, duration_units[i].name))
				mult = duration_units[i].mult;
		if (!mult)
			return -EINVAL;
	} else {
		/* "0" needs no unit; any other bare number is ambiguous. */
		for (i = 0; i < frac_len; i++)
			if (frac[i] != '0')
				return -EINVAL;
		if (too_big || whole)
			return -EINVAL;
		*ns = 0;
		return 0;
	}

	if (too_big || whole > PGOFF_DURATION_MAX_NS / mult)
		return -ERANGE;
	total = whole * mult;
	if (frac)
		total += frac_to_ns(frac, frac_len, mult);
	if (total > PGOFF_DURATION_MAX_NS)
		return -ERANGE;
	*ns = total;
	return 0;
}

int pgoff_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t v;
	int err;

	if (!s || !ns)
		return -EINVAL;
	if (*s == '-') {
		/* Well-formed but negative is a range error, not a syntax one. */
		err = parse_duration(s + 1, &v);
		return err == -EINVAL ? -EINVAL : -ERANGE;
	}
	return parse_duration(s, ns);
}

int pgoff_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0, d;
	int too_big = 0;

	if (!s || !out || !is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			too_big = 1;
		else
			v = v * 10 + d;
	}
	if (*s)
		return -EINVAL;
	if (too_big || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

const char *pgoff_format_query_id(uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRId64, (int64_t)id);
	return buf;
}

int pgoff_parse_query_id(const char *s, uint64_t *id)
{
	bool neg = s && *s == '-';
	uint64_t v;
	int err = pgoff_parse_u64(s ? s + neg : NULL, 0, neg ?
				  (uint64_t)INT64_MAX + 1 : INT64_MAX, &v);

	if (err)
		return err;
	if (!v)
		return -ERANGE;
	*id = neg ? -v : v;
	return 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

bool pgoff_container_prefix_valid(const char *s)
{
	size_t n = 0;

	for (; s && s[n]; n++)
		if (!is_hex(s[n]) || n == PGOFF_CONTAINER_ID_MAX)
			return false;
	return n >= PGOFF_CONTAINER_PREFIX_MIN;
}

bool pgoff_container_matches(const char *id, const char *prefix)
{
	size_t i = 0;

	if (!id || !id[0] || !pgoff_container_prefix_valid(prefix))
		return false;
	for (; prefix[i]; i++) {
		char c = prefix[i] >= 'A' && prefix[i] <= 'F' ?
			 (char)(prefix[i] - 'A' + 'a') : prefix[i];

		if (id[i] != c)
			return false;
	}
	return true;
}

/* n / d rounded half up, for n small enough that n + d / 2 cannot wrap. */
static uint64_t div_round(uint64_t n, uint64_t d)
{
	return (n + d / 2) / d;
}

/*
 * Three significant digits of ns in the given unit: x.xx, xx.x or xxx.
 * Returns -ERANGE when the value rounds to 1000 units or more, so the
 * caller moves on to the next unit.
 */
static int format_sig3(uint64_t ns, uint64_t unit, const char *suffix,
		       char *buf, size_t len)
{
	uint64_t r;

	r = div_round(ns, unit / 100);
	if (r < 1000) {
		snprintf(buf, len, "%" PRIu64 ".%02" PRIu64 "%s", r / 100,
			 r % 100, suffix);
		return 0;
	}
	r = div_round(ns, unit / 10);
	if (r < 1000) {
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%s", r / 10, r % 10,
			 suffix);
		return 0;
	}
	r = div_round(ns, unit);
	if (r < 1000) {
		snprintf(buf, len, "%" PRIu64 "%s", r, suffix);
		return 0;
	}
	return -ERANGE;
}

const char *pgoff_format_duration(uint64_t ns, char *buf, size_t len)
{
	uint64_t r, secs;

	if (!buf || !len)
		return buf;
	if (ns < NSEC_PER_USEC) {
		snprintf(buf, len, "%" PRIu64 "ns", ns);
		return buf;
	}
	if (ns < NSEC_PER_SEC &&
	    (!format_sig3(ns, NSEC_PER_USEC, "us", buf, len) ||
	     !format_sig3(ns, NSEC_PER_MSEC, "ms", buf, len)))
		return buf;
	if (ns < NSEC_PER_MIN) {
		r = div_round(ns, NSEC_PER_MSEC);
		if (r < 60000) {
			snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 "s",
				 r / 1000, r % 1000);
			return buf;
		}
	}
	/* Whole seconds from here; no rounding addition that could wrap. */
	secs = ns / NSEC_PER_SEC + (ns % NSEC_PER_SEC >= NSEC_PER_SEC / 2);
	snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", secs / 60, secs % 60);
	return buf;
}
