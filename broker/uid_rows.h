/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * uid_rows.h - a bounded table of rows that local users' processes make
 * pgoffd keep (postmasters it refused, binaries whose probes it refused):
 * no user holds more than per_uid rows, nor pushes out another user's.
 * The rows are the caller's array, oldest first; this says where a new
 * row of a user goes. Two policies when there is no room: keep the rows
 * there are (the new one is only counted, so that a user with more
 * processes cannot churn the table and the log), or forget the oldest of
 * the user who holds the most (the user's own oldest when they hold
 * their share).
 */
#ifndef PGOFF_UID_ROWS_H
#define PGOFF_UID_ROWS_H

#include <stddef.h>
#include <stdint.h>

enum uid_rows_full {
	UID_ROWS_KEEP,		/* no room: the new row is not kept */
	UID_ROWS_FORGET,	/* no room: an old row is forgotten for it */
};

/* The uid of rows[i] (the caller's array). */
typedef uint32_t (*uid_rows_uid_fn)(const void *rows, size_t i);

struct uid_rows {
	size_t max, per_uid;
	enum uid_rows_full full;
	uid_rows_uid_fn uid_of;
};

/* uid_rows_place's answer: the new row is not kept (UID_ROWS_KEEP). */
#define UID_ROWS_NONE	SIZE_MAX

/* How many of the n rows are uid's. */
size_t uid_rows_count(const struct uid_rows *t, const void *rows, size_t n,
		      uint32_t uid);
/*
 * Where a new row of uid goes among the n rows: n when there is room (it
 * is added at the end); the index of the row to forget first (then it is
 * added at the end); or UID_ROWS_NONE when it is not kept.
 */
size_t uid_rows_place(const struct uid_rows *t, const void *rows, size_t n,
		      uint32_t uid);

#endif
