// SPDX-License-Identifier: GPL-2.0-only
/* uid_rows.c - a bounded table of users' rows; see uid_rows.h. */
#include "broker/uid_rows.h"

size_t uid_rows_count(const struct uid_rows *t, const void *rows, size_t n,
		      uint32_t uid)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += t->uid_of(rows, i) == uid;
	return k;
}

/* The oldest row of the user who holds the most (the first found of
 * them, rows being oldest first). */
static size_t oldest_of_most(const struct uid_rows *t, const void *rows,
			     size_t n)
{
	size_t victim = 0, most = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = uid_rows_count(t, rows, n, t->uid_of(rows, i));

		if (k > most) {
			most = k;
			victim = i;
		}
	}
	return victim;
}

size_t uid_rows_place(const struct uid_rows *t, const void *rows, size_t n,
		      uint32_t uid)
{
	if (uid_rows_count(t, rows, n, uid) >= t->per_uid) {
		if (t->full == UID_ROWS_KEEP)
			return UID_ROWS_NONE;
		for (size_t i = 0; i < n; i++)	/* uid's own oldest */
			if (t->uid_of(rows, i) == uid)
				return i;
		return UID_ROWS_NONE;		/* per_uid 0 */
	}
	if (n < t->max)
		return n;
	return t->full == UID_ROWS_KEEP || !n ? UID_ROWS_NONE :
	       oldest_of_most(t, rows, n);
}
