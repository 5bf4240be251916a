/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * units.h - parsing and printing of durations and counts for the CLI and
 * the report tables. Locale-independent: no strtod, no isdigit.
 */
#ifndef PGOFF_PROTOCOL_UNITS_H
#define PGOFF_PROTOCOL_UNITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Longest duration pgoff_parse_duration accepts: one day. */
#define PGOFF_DURATION_MAX_NS (86400ULL * 1000000000ULL)

/*
 * "500us", "5ms", "1.5s", "2m", "100ns", "0". Units: ns, us, ms, s, m
 * (minutes). A bare number is rejected unless its value is 0. Decimal
 * fractions are allowed and rounded half up to whole ns. Returns 0 and sets
 * *ns; -EINVAL for bad syntax (empty, spaces, exponents, unknown unit),
 * -ERANGE for a negative value or one above PGOFF_DURATION_MAX_NS.
 * *ns is left alone on error.
 */
int pgoff_parse_duration(const char *s, uint64_t *ns);

/*
 * Decimal unsigned integer in [min, max]. Returns 0 and sets *out; -EINVAL
 * for empty input, a sign, spaces or junk; -ERANGE outside [min, max] or
 * past UINT64_MAX. *out is left alone on error.
 */
int pgoff_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Short human form for tables: "999ns", "1.00us", "812us", "1.03ms",
 * "1.500s", "2m03s". Below a second three significant digits, seconds with
 * millisecond precision, from a minute on whole seconds; rounding half up
 * moves to the next unit where needed (999999ns is "1.00ms"). Always
 * NUL-terminates buf when len > 0 (truncating); returns buf.
 */
const char *pgoff_format_duration(uint64_t ns, char *buf, size_t len);

/*
 * A query id as PostgreSQL shows it (pg_stat_statements.queryid,
 * pg_stat_activity.query_id): the 64 bits as a signed decimal, "-42".
 * pgoff sends it as a JSON string, which no reader rounds to 53 bits.
 * Parsing takes the same (from INT64_MIN to INT64_MAX); 0 is no query id
 * and is refused (-ERANGE). Returns 0, or -EINVAL for junk.
 */
#define PGOFF_QUERY_ID_BUFSZ 24
const char *pgoff_format_query_id(uint64_t id, char *buf, size_t len);
int pgoff_parse_query_id(const char *s, uint64_t *id);

/*
 * A container id or its prefix, as --container and a subscription's
 * "containers" take it: 12 (as docker ps shows them) to 64 hex digits,
 * any case. pgoff_container_matches: whether id (64 lowercase hex digits,
 * as pgoffd sends it) starts with prefix; an empty id (the host) never
 * matches.
 */
#define PGOFF_CONTAINER_PREFIX_MIN 12
#define PGOFF_CONTAINER_ID_MAX 64
bool pgoff_container_prefix_valid(const char *s);
bool pgoff_container_matches(const char *id, const char *prefix);

/* Enough for any uint64_t: "307445734m34s". */
#define PGOFF_DURATION_BUFSZ 24

#endif
