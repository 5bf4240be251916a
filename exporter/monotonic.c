// SPDX-License-Identifier: GPL-2.0-only
/* monotonic.c - series held at their highest values; see monotonic.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/monotonic.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* A series: every label of a row (pgoffd's rows by labels, by pid with
 * --metrics.per-pid, or by statement), its cluster's identity included. */
static int cmp_labels(const void *a, const void *b)
{
	const struct sv_row *x = a, *y = b;
	int c;

	if ((c = cmp_u64(x->pid, y->pid)) ||
	    (c = cmp_u64(x->idle, y->idle)) ||
	    (c = cmp_u64(x->query_id, y->query_id)) ||
	    (c = cmp_u64(x->query_folded, y->query_folded)) ||
	    (c = cmp_u64((uint64_t)x->ident.owner, (uint64_t)y->ident.owner)))
		return c;
	if ((c = strcmp(x->data_dir, y->data_dir)) ||
	    (c = strcmp(x->ident.cluster_id, y->ident.cluster_id)) ||
	    (c = strcmp(x->ident.container, y->ident.container)) ||
	    (c = strcmp(x->ident.pod_uid, y->ident.pod_uid)) ||
	    (c = strcmp(x->ident.runtime, y->ident.runtime)) ||
	    (c = strcmp(x->database, y->database)) ||
	    (c = strcmp(x->backend_type, y->backend_type)) ||
	    (c = strcmp(x->wait_event_type, y->wait_event_type)) ||
	    (c = strcmp(x->wait_event, y->wait_event)))
		return c;
	return strcmp(x->wait, y->wait);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Sorted rows with equal labels into one; returns the new count. */
static size_t merge_equal(struct sv_row *r, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && cmp_labels(&r[out - 1], &r[i]) == 0) {
			struct sv_row *d = &r[out - 1];

			d->count = sat_add(d->count, r[i].count);
			d->time_ns = sat_add(d->time_ns, r[i].time_ns);
			for (size_t b = 0; b < SV_BUCKETS; b++)
				d->hist[b] = sat_add(d->hist[b], r[i].hist[b]);
			continue;
		}
		if (out != i)
			r[out] = r[i];
		out++;
	}
	return out;
}

static void raise_to(uint64_t *v, uint64_t high, uint64_t *decreases)
{
	if (*v < high) {
		*v = high;
		(*decreases)++;
	}
}

int mono_apply(struct mono_state *m, struct sv_snapshot *s)
{
	struct sv_row *next;
	uint64_t decreases = 0;
	size_t i = 0, j = 0, k = 0;

	if (s->n)
		qsort(s->rows, s->n, sizeof(*s->rows), cmp_labels);
	s->n = merge_equal(s->rows, s->n);
	next = calloc(s->n + (s->truncated ? m->n : 0) + 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	while (i < s->n || j < m->n) {
		int c = i == s->n ? 1 : j == m->n ? -1 :
			cmp_labels(&s->rows[i], &m->rows[j]);

		if (c > 0) {	/* remembered, absent from this reply */
			if (s->truncated)
				next[k++] = m->rows[j];
			j++;
			continue;
		}
		if (c == 0) {
			struct sv_row *r = &s->rows[i];
			const struct sv_row *h = &m->rows[j];

			raise_to(&r->count, h->count, &decreases);
			raise_to(&r->time_ns, h->time_ns, &decreases);
			for (size_t b = 0; b < SV_BUCKETS; b++)
				raise_to(&r->hist[b], h->hist[b], &decreases);
			j++;
		}
		next[k++] = s->rows[i++];
	}
	free(m->rows);
	m->rows = next;
	m->n = k;
	m->decreases += decreases;
	return 0;
}

void mono_reset(struct mono_state *m)
{
	free(m->rows);
	m->rows = NULL;
	m->n = 0;
}
