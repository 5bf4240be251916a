/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * agg_record.h - the kernel's aggregation as the flight recorder keeps it:
 * each second, what every process's rows gained (the delta of their
 * count, time and histogram), in a compact binary record with the
 * process's labels, so that top over the past needs no live process.
 * Pure: no I/O.
 */
#ifndef PGOFF_AGG_RECORD_H
#define PGOFF_AGG_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include "broker/kernel/aggregate.h"

/* 2: rows carry their statement (query id, status); 3: processes their
 * cluster's identity (id, owner, container). 1 and 2 are still read:
 * their rows have no identity, as a cluster pgoffd does not know. */
#define AGGREC_VERSION	3

/* A growing array of rows. */
struct agg_vec {
	struct agg_row *v;
	size_t n, cap;
};

int agg_vec_push(struct agg_vec *a, const struct agg_row *row);
void agg_vec_free(struct agg_vec *a);

/* Rows by pid in identity order (pid, query id, PostgreSQL wait, kernel
 * wait). */
void aggrec_sort(struct agg_row *rows, size_t n);

/*
 * What cur (sorted) gained over prev (sorted), appended to out: rows with
 * nothing new are left out; a row whose count went down (its pid was
 * reused) counts whole; time that went down alone (an interval still
 * going on ended under another key) counts nothing, as in live top.
 * Returns 0 or -ENOMEM.
 */
int aggrec_delta(const struct agg_row *prev, size_t np,
		 const struct agg_row *cur, size_t nc, struct agg_vec *out);

/*
 * rows (n of them, any order; sorted by aggrec_sort, each process is
 * written once) and the interval they cover into a record
 * (malloc'ed *buf, *len bytes). Returns 0 or -ENOMEM.
 */
int aggrec_encode(const struct agg_row *rows, size_t n, uint64_t interval_ns,
		  unsigned char **buf, size_t *len);

/*
 * A record's rows appended to out, its interval in *interval_ns. Returns
 * 0, -EINVAL for a record that is not one (nothing appended), -ENOMEM.
 */
int aggrec_decode(const void *buf, size_t len, uint64_t *interval_ns,
		  struct agg_vec *out);

#endif
