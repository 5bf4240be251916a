// SPDX-License-Identifier: GPL-2.0-only
/* since.c - durations back from now and RFC 3339 timestamps; see since.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "common/since.h"

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

int pgoff_parse_ago(const char *s, uint64_t *ns)
{
	uint64_t n = 0, unit;
	const char *p = s;

	if (!digit(*p))
		return -EINVAL;
	for (; digit(*p); p++) {
		if (n > PGOFF_SINCE_MAX_NS / 10)
			return -ERANGE;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case '\0':
		if (n)
			return -EINVAL;	/* "5" means nothing: say the unit */
		*ns = 0;
		return 0;
	case 's': unit = 1000000000ULL; break;
	case 'm': unit = 60ULL * 1000000000ULL; break;
	case 'h': unit = 3600ULL * 1000000000ULL; break;
	case 'd': unit = 86400ULL * 1000000000ULL; break;
	default:
		return -EINVAL;
	}
	if (p[1])
		return -EINVAL;
	if (n > PGOFF_SINCE_MAX_NS / unit)
		return -ERANGE;
	*ns = n * unit;
	return 0;
}

/* Exactly width digits into *v. */
static bool field(const char **p, int width, int *v)
{
	*v = 0;
	for (int i = 0; i < width; i++, (*p)++) {
		if (!digit(**p))
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

static bool expect(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian, y >= 1970). */
static int64_t days_since_epoch(int y, int m, int d)
{
	static const int before[12] = { 0, 31, 59, 90, 120, 151, 181, 212,
					 243, 273, 304, 334 };
	int64_t days = 0;

	for (int i = 1970; i < y; i++)
		days += leap(i) ? 366 : 365;
	days += before[m - 1] + (m > 2 && leap(y)) + d - 1;
	return days;
}

int pgoff_parse_rfc3339(const char *s, int64_t *ns)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30,
				       31, 30, 31 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int64_t frac = 0, t;
	const char *p = s;

	if (!field(&p, 4, &y) || !expect(&p, '-') || !field(&p, 2, &mo) ||
	    !expect(&p, '-') || !field(&p, 2, &d))
		return -EINVAL;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -EINVAL;
	p++;
	if (!field(&p, 2, &h) || !expect(&p, ':') || !field(&p, 2, &mi) ||
	    !expect(&p, ':') || !field(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		int n = 0;

		for (p++; digit(*p); p++, n++) {
			if (n == 9)
				return -EINVAL;
			frac = frac * 10 + (*p - '0');
		}
		if (!n)
			return -EINVAL;
		for (; n < 9; n++)
			frac *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		p++;
		if (!field(&p, 2, &oh) || !expect(&p, ':') ||
		    !field(&p, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	/* 60: a leap second, counted as the next second's start */
	if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 60 ||
	    d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return -EINVAL;
	if (y < 1970 || y > 9999)
		return -ERANGE;
	t = days_since_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= sign * (oh * 3600 + om * 60);
	if (t < 0)
		return -ERANGE;
	*ns = t * 1000000000LL + frac;
	return 0;
}

int pgoff_parse_clock(const char *s, int *secs)
{
	const char *p = s;
	int h, m, sec = 0;

	if (digit(p[0]) && p[1] == ':')
		h = *p++ - '0';
	else if (!field(&p, 2, &h))
		return -EINVAL;
	if (!expect(&p, ':') || !field(&p, 2, &m))
		return -EINVAL;
	if (*p == ':' && (p++, !field(&p, 2, &sec)))
		return -EINVAL;
	if (*p || h > 23 || m > 59 || sec > 59)
		return -EINVAL;
	*secs = h * 3600 + m * 60 + sec;
	return 0;
}

int pgoff_parse_since(const char *s, int64_t now_ns, int64_t *wall_ns)
{
	uint64_t ago;
	int err;

	if (strchr(s, '-') && strlen(s) >= 10)
		return pgoff_parse_rfc3339(s, wall_ns);
	err = pgoff_parse_ago(s, &ago);
	if (err)
		return err;
	*wall_ns = now_ns - (int64_t)ago;
	return 0;
}
