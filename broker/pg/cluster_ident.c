// SPDX-License-Identifier: GPL-2.0-only
/* cluster_ident.c - a cluster's identity; see cluster_ident.h. */
#include <string.h>
#include <nettle/sha2.h>
#include "broker/pg/cluster_ident.h"

static size_t put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 8;
}

void cluster_id_make(bool has_sysid, uint64_t sysid, uint64_t dev,
		     uint64_t ino, char out[CLUSTER_ID_LEN + 1])
{
	/* the input's version: another one makes other ids */
	static const char tag[] = "pgoff cluster id 1";
	static const char digits[] = "0123456789abcdef";
	uint8_t in[sizeof(tag) + 1 + 3 * 8], d[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;
	size_t n = sizeof(tag);	/* its NUL too: where the tag ends */

	memcpy(in, tag, sizeof(tag));
	in[n++] = has_sysid;
	n += put_le64(in + n, has_sysid ? sysid : 0);
	n += put_le64(in + n, dev);
	n += put_le64(in + n, ino);
	sha256_init(&ctx);
	sha256_update(&ctx, n, in);
	sha256_digest(&ctx, sizeof(d), d);
	for (size_t i = 0; i < CLUSTER_ID_LEN / 2; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[CLUSTER_ID_LEN] = '\0';
}
