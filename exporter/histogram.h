/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * histogram.h - the kernel's log2 histogram of off-CPU intervals as a
 * Prometheus histogram: cumulative buckets with exact "le" bounds.
 *
 * The kernel puts an interval of ns nanoseconds in bucket 0 when
 * ns / unit == 0, else in bucket b = floor(log2(ns / unit)) + 1 (integer
 * division; unit is the reply's hist_unit_ns, 1024), so bucket b >= 0
 * holds exactly the durations up to unit * 2^b - 1 ns that no lower bucket
 * holds. That largest duration is the bucket's "le": no interval counted
 * at or below le is longer, and none longer is counted there. The last
 * bucket has no upper bound and is "+Inf".
 */
#ifndef PGOFF_EXPORTER_HISTOGRAM_H
#define PGOFF_EXPORTER_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>
#include "client/stats_view.h"

#define EXH_BUCKETS SV_BUCKETS

/*
 * Bucket b's le in seconds, as the label value ("0.000001023", "+Inf"
 * for the last), written into buf. Returns 0, -EINVAL for a bucket out of
 * range or a unit of 0, -ERANGE when the bound does not fit in 64 bits of
 * nanoseconds or buf is too small.
 */
int exh_le(size_t b, uint64_t unit_ns, char *buf, size_t len);

/* Cumulative counts: cum[b] = hist[0] + ... + hist[b] (saturating). */
void exh_cumulate(const uint64_t hist[EXH_BUCKETS], uint64_t cum[EXH_BUCKETS]);

/* Nanoseconds as seconds with no trailing zeros ("2.5", "0.000001023"). */
void exh_seconds(uint64_t ns, char *buf, size_t len);

#endif
