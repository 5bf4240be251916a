// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_agg_record.c - libFuzzer target for what pgoffd reads back from
 * its per-second aggregation records (a damaged state directory, or one
 * another user wrote before it became pgoffd's): any bytes are decoded
 * or refused, never read past; a record that decodes encodes and decodes
 * again to the same rows.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "broker/record/agg_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agg_vec a = { 0 }, b = { 0 };
	unsigned char *buf;
	uint64_t iv, iv2;
	size_t len;
	int r = aggrec_decode(data, size, &iv, &a);

	if (r == -EINVAL && a.n)
		abort();	/* refused, yet rows were left */
	if (r == 0 && aggrec_encode(a.v, a.n, iv, &buf, &len) == 0) {
		if (aggrec_decode(buf, len, &iv2, &b) || iv2 != iv ||
		    b.n != a.n)
			abort();
		for (size_t i = 0; i < a.n; i++)
			if (memcmp(&a.v[i], &b.v[i], sizeof(a.v[i])))
				abort();
		free(buf);
	}
	agg_vec_free(&a);
	agg_vec_free(&b);
	return 0;
}
