// SPDX-License-Identifier: GPL-2.0-only
/* histogram.c - log2 buckets as Prometheus "le" buckets; see histogram.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "exporter/histogram.h"

void exh_seconds(uint64_t ns, char *buf, size_t len)
{
	char frac[16];
	int n;

	snprintf(frac, sizeof(frac), "%09" PRIu64, ns % 1000000000);
	for (n = 9; n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, len, "%" PRIu64 "%s%s", ns / 1000000000, n ? "." : "",
		 frac);
}

int exh_le(size_t b, uint64_t unit_ns, char *buf, size_t len)
{
	int w;

	if (b >= EXH_BUCKETS || !unit_ns)
		return -EINVAL;
	if (b == EXH_BUCKETS - 1) {
		w = snprintf(buf, len, "+Inf");
		return w < 0 || (size_t)w >= len ? -ERANGE : 0;
	}
	/* unit * 2^b must fit: the bound is that minus one nanosecond */
	if (b >= 64 || unit_ns > (UINT64_MAX >> b))
		return -ERANGE;
	if (len < 32)
		return -ERANGE;
	exh_seconds((unit_ns << b) - 1, buf, len);
	return 0;
}

void exh_cumulate(const uint64_t hist[EXH_BUCKETS], uint64_t cum[EXH_BUCKETS])
{
	uint64_t sum = 0;

	for (size_t b = 0; b < EXH_BUCKETS; b++) {
		sum = sum + hist[b] < sum ? UINT64_MAX : sum + hist[b];
		cum[b] = sum;
	}
}
