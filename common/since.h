/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * since.h - a point in the past as a DBA types it: a duration back from
 * now ("10m", "2h", "7d", "90s") or an RFC 3339 timestamp
 * ("2026-12-04T02:55:00Z", "2026-12-04T03:55:00.5+01:00"). Pure: the
 * caller gives "now", so tests need no clock.
 */
#ifndef PGOFF_PROTOCOL_SINCE_H
#define PGOFF_PROTOCOL_SINCE_H

#include <stdint.h>

/* Longest look back: a year, well past any retention. */
#define PGOFF_SINCE_MAX_NS (366ULL * 86400ULL * 1000000000ULL)

/*
 * A duration: a whole number and one unit of s, m, h, d ("0" alone too).
 * Returns 0 and sets *ns; -EINVAL for bad syntax; -ERANGE beyond
 * PGOFF_SINCE_MAX_NS. *ns is left alone on error.
 */
int pgoff_parse_ago(const char *s, uint64_t *ns);

/*
 * RFC 3339 date-time (T or t or a space between date and time; Z, z or
 * ±HH:MM; up to 9 fraction digits) to ns since the epoch. Returns 0, or
 * -EINVAL (syntax, a field out of its range, a day the month lacks),
 * -ERANGE before 1970. *ns is left alone on error.
 */
int pgoff_parse_rfc3339(const char *s, int64_t *ns);

/*
 * A time of day as a DBA types it at 03:05 about 02:50: "HH:MM" or
 * "HH:MM:SS" (hour in one or two digits), 24-hour clock, into seconds
 * since midnight. Which day, and in which time zone, is the caller's
 * (pgoffctl: the local one). Returns 0, or -EINVAL; *secs is left alone
 * on error.
 */
int pgoff_parse_clock(const char *s, int *secs);

/* A duration or an RFC 3339 time, the duration counted back from now_ns
 * (wall clock). */
int pgoff_parse_since(const char *s, int64_t now_ns, int64_t *wall_ns);

#endif
