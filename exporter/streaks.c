// SPDX-License-Identifier: GPL-2.0-only
/* streaks.c - one backend's time in one wait, across scrapes; see streaks.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "exporter/exposition.h"
#include "exporter/histogram.h"
#include "exporter/streaks.h"

static bool same_wait(const struct streak *k, uint32_t pid, const char *wet,
		      const char *we)
{
	return k->pid == pid && strcmp(k->wait_event_type, wet) == 0 &&
	       strcmp(k->wait_event, we) == 0;
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
		size_t j;

		if (!r->wait_event_type[0] || !r->pid)
			continue;	/* outside any PostgreSQL wait */
		for (j = 0; j < n; j++)
			if (same_wait(&sum[j], r->pid, r->wait_event_type,
				      r->wait_event))
				break;
		if (j == n) {
			sum[n].pid = r->pid;
			memcpy(sum[n].wait_event_type, r->wait_event_type,
			       sizeof(sum[n].wait_event_type));
			memcpy(sum[n].wait_event, r->wait_event,
			       sizeof(sum[n].wait_event));
			n++;
		}
		sum[j].since_ns += r->time_ns;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t since = prev->now_ns;

		if (sum[i].since_ns < window - window / 100)
			continue;
		for (size_t j = 0; j < s->n; j++)
			if (same_wait(&s->v[j], sum[i].pid, sum[i].wait_event_type,
				      sum[i].wait_event))
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

static int cmp_wait(const void *a, const void *b)
{
	const struct streak *x = a, *y = b;
	int c = strcmp(x->wait_event_type, y->wait_event_type);

	return c ? c : strcmp(x->wait_event, y->wait_event);
}

int streaks_render(FILE *out, const struct streaks *s)
{
	struct streak *v = calloc(s->n + 1, sizeof(*v));
	char secs[32];

	if (!v)
		return -ENOMEM;
	if (s->n)
		memcpy(v, s->v, s->n * sizeof(*v));
	qsort(v, s->n, sizeof(*v), cmp_wait);
	fputs("# HELP pgoff_wait_longest_seconds How long the backend longest in "
	      "this PostgreSQL wait event has been in it without a break, to the "
	      "time between scrapes (absent: no backend stayed in it from one "
	      "scrape to the next).\n"
	      "# TYPE pgoff_wait_longest_seconds gauge\n", out);
	for (size_t i = 0; i < s->n; i++) {
		uint64_t longest = 0;
		size_t j = i;

		for (; j < s->n && cmp_wait(&v[i], &v[j]) == 0; j++)
			if (s->now_ns - v[j].since_ns > longest)
				longest = s->now_ns - v[j].since_ns;
		exh_seconds(longest, secs, sizeof(secs));
		fputs("pgoff_wait_longest_seconds{wait_event_type=\"", out);
		ex_put_value(out, v[i].wait_event_type);
		fputs("\",wait_event=\"", out);
		ex_put_value(out, v[i].wait_event);
		fprintf(out, "\"} %s\n", secs);
		i = j - 1;
	}
	free(v);
	return 0;
}
