/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pprof.h - off-CPU profiles in pprof's format: a profile.proto message
 * (github.com/google/pprof, proto/profile.proto), gzipped, as go tool
 * pprof, Pyroscope and Parca read it.
 *
 * The encoder is pgoff's own: profile.proto needs only varints and
 * length-delimited fields, which take about a hundred lines, and so
 * pgoffctl and pgoff_exporter need no code generator and no protobuf
 * runtime (tests/unit/test_pprof_go.sh reads its output with go tool
 * pprof, the reference decoder).
 *
 * Pure logic: samples in, bytes out. Functions return 0 or -errno. Frame
 * names and label values are hostile bytes: each is made valid UTF-8
 * with no control character (pgoff_utf8_cell: '?' for both) and cut to
 * PPROF_MAX_NAME bytes, ending "..", before it is kept; names that
 * become equal so are one.
 */
#ifndef PGOFF_PPROF_H
#define PGOFF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPROF_MAX_DEPTH		64	/* frames in a sample (FLAME_MAX_DEPTH) */
#define PPROF_MAX_LABELS	16	/* labels on a sample */
#define PPROF_MAX_NAME		1024	/* bytes of a name or value, once cleaned */
#define PPROF_MAX_SAMPLES	100000	/* distinct (stack, labels) */
#define PPROF_MAX_STRINGS	100000	/* distinct names and values */

struct pprof;

/* A sample's label: a string (str not NULL), or a number (str NULL). An
 * empty string value is left out, as pprof drops it. */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
};

/* An empty profile, or NULL on ENOMEM. */
struct pprof *pprof_new(void);
/* NULL-safe. */
void pprof_free(struct pprof *p);

/*
 * One off-CPU interval of ns nanoseconds: frames[0] is the outermost
 * frame (the root, as for flame_add), frames[n - 1] the leaf. Each frame
 * is one location with one function of that name. Samples with the same
 * frames and labels merge: their off_cpu nanoseconds and their counts
 * add up (saturating at INT64_MAX).
 * Returns 0; -EINVAL for n == 0, n > PPROF_MAX_DEPTH, a NULL or empty
 * frame, nlabels > PPROF_MAX_LABELS or a NULL or empty key; -E2BIG past
 * PPROF_MAX_SAMPLES or PPROF_MAX_STRINGS (the caller reports it);
 * -ENOMEM. On error no sample changes.
 */
int pprof_add(struct pprof *p, const char *const *frames, size_t n,
	      const struct pprof_label *labels, size_t nlabels, uint64_t ns);

/* Sums over the samples: off-CPU nanoseconds, intervals. */
uint64_t pprof_total_ns(const struct pprof *p);
uint64_t pprof_total_count(const struct pprof *p);
/* Distinct samples. */
size_t pprof_samples(const struct pprof *p);

struct pprof_meta {
	int64_t time_nanos;		/* the start, ns since the epoch */
	int64_t duration_nanos;		/* how long it covers */
	const char *const *comments;	/* cleaned like names; may be NULL */
	size_t ncomments;		/* at most 16 */
};

/*
 * The profile.proto message into *buf (malloc'd, the caller's to free),
 * *len bytes: sample types off_cpu/nanoseconds (the default) then
 * count/count, period type off_cpu/nanoseconds with period 1, the
 * samples, their locations and functions, time_nanos, duration_nanos and
 * the comments. m may be NULL. Returns 0, -EINVAL, -ENOMEM.
 */
int pprof_encode(const struct pprof *p, const struct pprof_meta *m,
		 unsigned char **buf, size_t *len);
/* The same, gzipped (zlib), as pprof files and endpoints hold it. */
int pprof_encode_gzip(const struct pprof *p, const struct pprof_meta *m,
		      unsigned char **buf, size_t *len);

#endif
