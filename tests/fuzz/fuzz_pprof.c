// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pprof encoder with any frames, labels and weights: the input is
 * samples separated by a blank line; each line of a sample is a frame,
 * or a label "=key=value" ("=key" alone: a number); the first two bytes
 * of a sample weigh it. Whatever pprof_add accepts, the encoded profile
 * must decode strictly (pprof_decode.h) with every string valid UTF-8
 * without controls and at most PPROF_MAX_NAME bytes, its totals those
 * added, and gunzip to the same bytes.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "client/pprof.h"
#include "common/utf8.h"
#include "tests/unit/pprof_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_sample(struct pprof *p, char *text, uint64_t *ns, uint64_t *count)
{
	const char *frames[PPROF_MAX_DEPTH + 1];
	struct pprof_label labels[PPROF_MAX_LABELS + 1];
	size_t n = 0, nl = 0, len = strlen(text);
	uint64_t w = len >= 2 ? (uint64_t)(unsigned char)text[0] << 8 |
				(unsigned char)text[1] : 1;
	char *line, *save = NULL;

	for (line = strtok_r(len >= 2 ? text + 2 : text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '=' && nl <= PPROF_MAX_LABELS) {
			char *eq = strchr(line + 1, '=');

			if (eq)
				*eq = '\0';
			labels[nl++] = (struct pprof_label){
				line + 1, eq ? eq + 1 : NULL, (int64_t)strlen(line),
			};
		} else if (n <= PPROF_MAX_DEPTH) {
			frames[n++] = line;
		}
	}
	if (pprof_add(p, frames, n, labels, nl, w) == 0) {
		*ns += w;
		(*count)++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof *p = pprof_new();
	char *text = malloc(size + 1), *cur, *end, err[200];
	uint64_t ns = 0, count = 0, dec_ns = 0, dec_count = 0;
	unsigned char *raw = NULL, *gz = NULL, *back = NULL;
	size_t rawlen, gzlen, backlen;
	const char *comments[] = { text };
	struct pprof_meta m = { .time_nanos = 1, .duration_nanos = 2,
				.comments = comments, .ncomments = 1 };
	struct pd_profile *pf;

	if (!p || !text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (cur = text; cur < text + size; cur = end + 2) {
		end = strstr(cur, "\n\n");
		if (!end)
			end = cur + strlen(cur);
		*end = '\0';
		one_sample(p, cur, &ns, &count);
		if (end + 2 > text + size)
			break;
	}
	memcpy(text, data, size);	/* the comment: all of it */
	text[size] = '\0';
	if (pprof_encode(p, &m, &raw, &rawlen) || pprof_encode_gzip(p, &m, &gz, &gzlen))
		abort();
	pf = pd_decode(raw, rawlen, err, sizeof(err));
	if (!pf)
		abort();
	for (size_t i = 0; i < pf->nstrs; i++)
		if (strlen(pf->strs[i]) > PPROF_MAX_NAME ||
		    !pgoff_utf8_printable(pf->strs[i], strlen(pf->strs[i])))
			abort();
	for (size_t i = 0; i < pf->nsamples; i++) {
		for (size_t k = 0; k < pf->samples[i].nloc; k++)
			if (!*pd_frame(pf, &pf->samples[i], k))
				abort();
		dec_ns += (uint64_t)pf->samples[i].value[0];
		dec_count += (uint64_t)pf->samples[i].value[1];
	}
	if (dec_ns != ns || dec_count != count || pprof_total_ns(p) != ns ||
	    pf->nsamples != pprof_samples(p))
		abort();
	if (!pd_gunzip(gz, gzlen, &back, &backlen) || backlen != rawlen ||
	    memcmp(back, raw, rawlen))
		abort();
	pd_free(pf);
	free(raw);
	free(gz);
	free(back);
	free(text);
	pprof_free(p);
	return 0;
}
