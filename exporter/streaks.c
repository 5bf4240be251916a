// SPDX-License-Identifier: GPL-2.0-only
/* streaks.c - one backend's time in one wait, across scrapes; see streaks.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/exposition.h"
#include "exporter/histogram.h"
#include "exporter/streaks.h"

/* The same backend (its pid in its cluster) in the same wait. */
static bool same_wait(const struct streak *k, const struct streak *r)
{
	return k->pid == r->pid && strcmp(k->data_dir, r->data_dir) == 0 &&
	       sv_same_ident(&k->ident, &r->ident) &&
	       strcmp(k->wait_event_type, r->wait_event_type) == 0 &&
	       strcmp(k->wait_event, r->wait_event) == 0;
}

static void streak_of(const struct sv_row *r, struct streak *k)
{
	memset(k, 0, sizeof(*k));
	k->pid = r->pid;
	memcpy(k->data_dir, r->data_dir, sizeof(k->data_dir));
	k->ident = r->ident;
	memcpy(k->wait_event_type, r->wait_event_type,
	       sizeof(k->wait_event_type));
	memcpy(k->wait_event, r->wait_event, sizeof(k->wait_event));
}

int streaks_update(struct streaks *s, const struct sv_snapshot *prev,
		   const struct sv_snapshot *cur)
{
	struct sv_snapshot d;
	struct streak *sum, *next;
	uint64_t window;
	size_t n = 0, k = 0;

	if (cur->now_ns <= prev->now_ns)
		return 0;
	window = cur->now_ns - prev->now_ns;
	if (sv_delta(prev, cur, &d)) {
		streaks_reset(s);
		return -ENOMEM;
	}
	/* time per process and wait event, kernel wait types summed: since_ns
	 * holds the time here */
	sum = calloc(d.n + 1, sizeof(*sum));
	next = calloc(d.n + 1, sizeof(*next));
	if (!sum || !next) {
		free(sum);
		free(next);
		sv_free(&d);
		streaks_reset(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d.n; i++) {
		const struct sv_row *r = &d.rows[i];
		struct streak one;
		size_t j;

		if (!r->wait_event_type[0] || !r->pid)
			continue;	/* outside any PostgreSQL wait */
		streak_of(r, &one);
		for (j = 0; j < n; j++)
			if (same_wait(&sum[j], &one))
				break;
		if (j == n)
			sum[n++] = one;
		sum[j].since_ns += r->time_ns;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t since = prev->now_ns;

		if (sum[i].since_ns < window - window / 100)
			continue;
		for (size_t j = 0; j < s->n; j++)
			if (same_wait(&s->v[j], &sum[i]))
				since = s->v[j].since_ns;
		next[k] = sum[i];
		next[k++].since_ns = since;
	}
	free(sum);
	sv_free(&d);
	free(s->v);
	s->v = next;
	s->n = k;
	s->now_ns = cur->now_ns;
	return 0;
}

void streaks_reset(struct streaks *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* A streak with its cluster's labels, as the gauge shows it. */
struct shown {
	const struct streak *s;
	char cluster[SV_CLUSTER_LABELS];
};

static int cmp_shown(const void *a, const void *b)
{
	const struct shown *x = a, *y = b;
	int c = strcmp(x->cluster, y->cluster);

	if (!c)
		c = strcmp(x->s->wait_event_type, y->s->wait_event_type);
	return c ? c : strcmp(x->s->wait_event, y->s->wait_event);
}

int streaks_render(FILE *out, const struct streaks *s)
{
	struct shown *v = calloc(s->n + 1, sizeof(*v));
	struct sv_row r;
	char secs[32];

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t len = 0;

		memset(&r, 0, sizeof(r));
		memcpy(r.data_dir, s->v[i].data_dir, sizeof(r.data_dir));
		r.ident = s->v[i].ident;
		v[i].s = &s->v[i];
		if (!sv_cluster_labels(v[i].cluster, sizeof(v[i].cluster), &len, &r))
			v[i].cluster[0] = '\0';	/* sv_row's sizes fit */
	}
	qsort(v, s->n, sizeof(*v), cmp_shown);
	fputs("# HELP pgoff_wait_longest_seconds How long the backend longest in "
	      "this PostgreSQL wait event in this cluster has been in it without "
	      "a break, to the time between scrapes (absent: no backend stayed "
	      "in it from one scrape to the next).\n"
	      "# TYPE pgoff_wait_longest_seconds gauge\n", out);
	for (size_t i = 0; i < s->n; i++) {
		uint64_t longest = 0;
		size_t j = i;

		for (; j < s->n && cmp_shown(&v[i], &v[j]) == 0; j++)
			if (s->now_ns - v[j].s->since_ns > longest)
				longest = s->now_ns - v[j].s->since_ns;
		exh_seconds(longest, secs, sizeof(secs));
		fprintf(out, "pgoff_wait_longest_seconds{%s,wait_event_type=\"",
			v[i].cluster);
		ex_put_value(out, v[i].s->wait_event_type);
		fputs("\",wait_event=\"", out);
		ex_put_value(out, v[i].s->wait_event);
		fprintf(out, "\"} %s\n", secs);
		i = j - 1;
	}
	free(v);
	return 0;
}
