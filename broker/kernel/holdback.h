/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * holdback.h - kernel records of a process whose labels are not known
 * yet, held back for a moment.
 *
 * A new backend goes off the CPU before PostgreSQL has set its title
 * (the fork, waiting for the startup packet); the kernel sends its title
 * at the first switch-out after that (PGOFF_REC_TITLE). Records of such
 * a process wait here until its title comes, or at most max_ms, so that
 * a backend that lives for one short transaction is labelled with its
 * database and user like any other. Records of one process keep their
 * order. Bounded: when full, records are let through unlabelled.
 */
#ifndef PGOFF_HOLDBACK_H
#define PGOFF_HOLDBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct holdback;

/* Called for each record let go, in the order they came. */
typedef void (*holdback_fn)(void *ctx, const void *data, size_t size);

/* At most max_records records of at most record_size bytes. */
int holdback_new(struct holdback **out, size_t max_records,
		 size_t record_size, int64_t max_ms);
void holdback_free(struct holdback *h);

/* Whether records of tgid are held (then its next ones must be too). */
bool holdback_has(const struct holdback *h, uint32_t tgid);
/* Hold a record (copied). -ENOSPC when full, -EINVAL when too large. */
int holdback_put(struct holdback *h, uint32_t tgid, const void *data,
		 size_t size, int64_t now_ms);
/* Let go every record of tgid (its title came). */
void holdback_release(struct holdback *h, uint32_t tgid, holdback_fn fn,
		      void *ctx);
/* Let go the records held max_ms or longer. */
void holdback_expire(struct holdback *h, int64_t now_ms, holdback_fn fn,
		     void *ctx);
/* Milliseconds until the oldest record expires; -1 when none is held. */
int64_t holdback_wait_ms(const struct holdback *h, int64_t now_ms);
size_t holdback_count(const struct holdback *h);

#endif
