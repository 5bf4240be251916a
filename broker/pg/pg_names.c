// SPDX-License-Identifier: GPL-2.0-only
/* pg_names.c - a cluster's run-time wait event names; see pg_names.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "broker/pg/pg_names.h"
#include "broker/pg/pg_wait_names.h"
#include "common/utf8.h"

static int by_info(const void *a, const void *b)
{
	uint32_t x = ((const struct pg_run_name *)a)->wait_event_info;
	uint32_t y = ((const struct pg_run_name *)b)->wait_event_info;

	return x < y ? -1 : x > y;
}

/* Text from a cluster (at most size - 1 bytes of in) into out[size],
 * as process titles are shown: no control character, valid UTF-8. */
static void printable(const char *in, size_t size, char *out)
{
	char tmp[sizeof(((struct pg_run_names *)0)->why)];
	size_t len = strnlen(in, size - 1);

	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		tmp[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	tmp[len] = '\0';
	pgoff_utf8_clean(tmp, len, out);
}

int pg_names_take(struct pg_names *n, const struct pg_run_names *a)
{
	uint32_t count = a->status ? 0 : a->n, kept = 0;
	struct pg_run_name *v = NULL;

	if (count > PG_RUN_NAMES_MAX)
		count = PG_RUN_NAMES_MAX;
	if (count && !(v = calloc(count, sizeof(*v))))
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		v[i].wait_event_info = a->names[i].wait_event_info;
		printable(a->names[i].name, sizeof(v[i].name), v[i].name);
	}
	if (count)
		qsort(v, count, sizeof(*v), by_info);
	/* qsort is not stable: of a repeated id, one is kept */
	for (uint32_t i = 0; i < count; i++)
		if (!kept || v[kept - 1].wait_event_info != v[i].wait_event_info)
			v[kept++] = v[i];
	free(n->v);
	n->v = v;
	n->n = kept;
	n->read = true;
	n->truncated = !a->status && a->truncated;
	n->status = a->status;
	if (!a->status)
		n->backoff_ms = 0;
	else if (!n->backoff_ms)
		n->backoff_ms = PG_NAMES_BACKOFF_MS;
	else if (n->backoff_ms < PG_NAMES_BACKOFF_MAX_MS / 2)
		n->backoff_ms *= 2;
	else
		n->backoff_ms = PG_NAMES_BACKOFF_MAX_MS;
	/* the prober's words, printable all the same */
	printable(a->status ? a->why : "", sizeof(n->why), n->why);
	return 0;
}

const char *pg_names_find(const struct pg_names *n, uint32_t info)
{
	size_t lo = 0, hi = n ? n->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->v[mid].wait_event_info == info)
			return n->v[mid].name;
		if (n->v[mid].wait_event_info < info)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void pg_names_free(struct pg_names *n)
{
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

bool pg_names_may_appear(int major, uint32_t info)
{
	uint32_t cls = info >> 24, id = info & 0xFFFFu;

	if (cls == PG_CLASS_EXTENSION || cls == PG_CLASS_INJECTION_POINT)
		return major >= 17 && pg_wait_event_since_minor(major, info) < 0;
	/* 14-18: only tranches requested before start are in shared memory */
	return cls == PG_CLASS_LWLOCK && major >= 19 &&
	       (int)id >= pg_wait_first_user_tranche(major);
}
