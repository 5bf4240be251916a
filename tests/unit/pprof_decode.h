/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pprof_decode.h - a strict reader of the profile.proto messages
 * client/pprof.c writes, for its unit test and its fuzz target: every
 * byte accounted for, every index in range. (go tool pprof reads them
 * too: tests/unit/test_pprof_go.sh.) Test code only: static, and
 * aborts nothing: pd_decode returns NULL with why in err.
 */
#ifndef PGOFF_TESTS_PPROF_DECODE_H
#define PGOFF_TESTS_PPROF_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PD_MAX 64

struct pd_label {
	uint64_t key, str;
	int64_t num;
	bool has_num;
};

struct pd_sample {
	uint64_t loc[PD_MAX];
	size_t nloc;
	int64_t value[4];
	size_t nvalue;
	struct pd_label label[PD_MAX];
	size_t nlabel;
};

struct pd_profile {
	char **strs;
	size_t nstrs;
	struct pd_sample *samples;
	size_t nsamples;
	uint64_t (*locs)[2];		/* id, function id */
	size_t nlocs;
	uint64_t (*fns)[3];		/* id, name, system name */
	size_t nfns;
	uint64_t sample_type[4][2];
	size_t nsample_types;
	uint64_t period_type[2];
	int64_t period, time_nanos, duration_nanos, default_sample_type;
	uint64_t comments[PD_MAX];
	size_t ncomments;
};

struct pd_buf {
	const unsigned char *p, *end;
};

static bool pd_varint(struct pd_buf *b, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (b->p >= b->end)
			return false;
		*v |= (uint64_t)(*b->p & 0x7f) << shift;
		if (!(*b->p++ & 0x80))
			return true;
	}
	return false;
}

/* The next field: its number and wire type; for wire type 2 its bytes
 * in *sub, for 0 its value in *v. Only these two types are written. */
static bool pd_field(struct pd_buf *b, unsigned *field, struct pd_buf *sub,
		     uint64_t *v)
{
	uint64_t key, len;

	if (!pd_varint(b, &key) || key >> 3 == 0 || key >> 3 > 1000)
		return false;
	*field = (unsigned)(key >> 3);
	switch (key & 7) {
	case 0:
		sub->p = sub->end = NULL;
		return pd_varint(b, v);
	case 2:
		if (!pd_varint(b, &len) || len > (uint64_t)(b->end - b->p))
			return false;
		sub->p = b->p;
		sub->end = b->p + len;
		b->p += len;
		*v = UINT64_MAX;	/* marks a length-delimited field */
		return true;
	default:
		return false;
	}
}

/* A repeated varint field, packed or not, appended to out[*n]. */
static bool pd_repeated(struct pd_buf *sub, uint64_t v, uint64_t *out,
			size_t *n, size_t max)
{
	if (v != UINT64_MAX) {
		if (*n >= max)
			return false;
		out[(*n)++] = v;
		return true;
	}
	while (sub->p < sub->end) {
		if (*n >= max || !pd_varint(sub, &out[*n]))
			return false;
		(*n)++;
	}
	return true;
}

static void pd_free(struct pd_profile *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->nstrs; i++)
		free(pf->strs[i]);
	free(pf->strs);
	free(pf->samples);
	free(pf->locs);
	free(pf->fns);
	free(pf);
}

static bool pd_value_type(struct pd_buf b, uint64_t out[2])
{
	unsigned f;
	struct pd_buf sub;
	uint64_t v;

	out[0] = out[1] = 0;
	while (b.p < b.end) {
		if (!pd_field(&b, &f, &sub, &v) || v == UINT64_MAX || (f != 1 && f != 2))
			return false;
		out[f - 1] = v;
	}
	return true;
}

static bool pd_sample(struct pd_buf b, struct pd_sample *s)
{
	unsigned f, g;
	struct pd_buf sub, sub2;
	uint64_t v, w, vals[4];
	size_t nvals;

	memset(s, 0, sizeof(*s));
	while (b.p < b.end) {
		if (!pd_field(&b, &f, &sub, &v))
			return false;
		if (f == 1) {
			if (!pd_repeated(&sub, v, s->loc, &s->nloc, PD_MAX))
				return false;
		} else if (f == 2) {
			nvals = s->nvalue;
			for (size_t i = 0; i < nvals; i++)
				vals[i] = (uint64_t)s->value[i];
			if (!pd_repeated(&sub, v, vals, &nvals, 4))
				return false;
			for (size_t i = 0; i < nvals; i++)
				s->value[i] = (int64_t)vals[i];
			s->nvalue = nvals;
		} else if (f == 3 && v == UINT64_MAX && s->nlabel < PD_MAX) {
			struct pd_label *l = &s->label[s->nlabel++];

			while (sub.p < sub.end) {
				if (!pd_field(&sub, &g, &sub2, &w) || w == UINT64_MAX)
					return false;
				if (g == 1)
					l->key = w;
				else if (g == 2)
					l->str = w;
				else if (g == 3) {
					l->num = (int64_t)w;
					l->has_num = true;
				} else {
					return false;
				}
			}
		} else {
			return false;
		}
	}
	return true;
}

/* Two ids of a Location (id, its one line's function) or a Function. */
static bool pd_location(struct pd_buf b, uint64_t out[2])
{
	unsigned f, g;
	struct pd_buf sub, sub2;
	uint64_t v, w;
	int lines = 0;

	out[0] = out[1] = 0;
	while (b.p < b.end) {
		if (!pd_field(&b, &f, &sub, &v))
			return false;
		if (f == 1 && v != UINT64_MAX) {
			out[0] = v;
		} else if (f == 4 && v == UINT64_MAX && !lines++) {
			while (sub.p < sub.end) {
				if (!pd_field(&sub, &g, &sub2, &w) || g != 1 ||
				    w == UINT64_MAX)
					return false;
				out[1] = w;
			}
		} else {
			return false;
		}
	}
	return lines == 1;
}

static bool pd_function(struct pd_buf b, uint64_t out[3])
{
	unsigned f;
	struct pd_buf sub;
	uint64_t v;

	out[0] = out[1] = out[2] = 0;
	while (b.p < b.end) {
		if (!pd_field(&b, &f, &sub, &v) || v == UINT64_MAX || f < 1 || f > 3)
			return false;
		out[f - 1] = v;
	}
	return true;
}

#define PD_FAIL(...)                                                       \
	do {                                                               \
		snprintf(err, errlen, __VA_ARGS__);                        \
		pd_free(pf);                                               \
		return NULL;                                               \
	} while (0)

#define PD_PUSH(arr, n)                                                    \
	(((arr) = realloc((arr), ((n) + 1) * sizeof(*(arr)))) != NULL)

/* The message of len bytes at data, with every index checked. */
static struct pd_profile *pd_decode(const unsigned char *data, size_t len,
				    char *err, size_t errlen)
{
	struct pd_profile *pf = calloc(1, sizeof(*pf));
	struct pd_buf b = { data, data + len }, sub;
	unsigned f;
	uint64_t v;

	if (!pf)
		PD_FAIL("out of memory");
	while (b.p < b.end) {
		if (!pd_field(&b, &f, &sub, &v))
			PD_FAIL("bad field at byte %zu", (size_t)(b.p - data));
		switch (f) {
		case 1:
			if (v != UINT64_MAX || pf->nsample_types >= 4 ||
			    !pd_value_type(sub, pf->sample_type[pf->nsample_types++]))
				PD_FAIL("bad sample_type");
			break;
		case 2:
			if (v != UINT64_MAX || !PD_PUSH(pf->samples, pf->nsamples) ||
			    !pd_sample(sub, &pf->samples[pf->nsamples++]))
				PD_FAIL("bad sample %zu", pf->nsamples);
			break;
		case 4:
			if (v != UINT64_MAX || !PD_PUSH(pf->locs, pf->nlocs) ||
			    !pd_location(sub, pf->locs[pf->nlocs++]))
				PD_FAIL("bad location %zu", pf->nlocs);
			break;
		case 5:
			if (v != UINT64_MAX || !PD_PUSH(pf->fns, pf->nfns) ||
			    !pd_function(sub, pf->fns[pf->nfns++]))
				PD_FAIL("bad function %zu", pf->nfns);
			break;
		case 6:
			if (v != UINT64_MAX || !PD_PUSH(pf->strs, pf->nstrs) ||
			    !(pf->strs[pf->nstrs++] = strndup((const char *)sub.p,
							     (size_t)(sub.end - sub.p))))
				PD_FAIL("bad string %zu", pf->nstrs);
			if (memchr(sub.p, 0, (size_t)(sub.end - sub.p)))
				PD_FAIL("string %zu has a NUL", pf->nstrs - 1);
			break;
		case 9: pf->time_nanos = (int64_t)v; break;
		case 10: pf->duration_nanos = (int64_t)v; break;
		case 11:
			if (v != UINT64_MAX || !pd_value_type(sub, pf->period_type))
				PD_FAIL("bad period_type");
			break;
		case 12: pf->period = (int64_t)v; break;
		case 13:
			if (!pd_repeated(&sub, v, pf->comments, &pf->ncomments, PD_MAX))
				PD_FAIL("bad comment");
			break;
		case 14: pf->default_sample_type = (int64_t)v; break;
		default:
			PD_FAIL("unexpected field %u", f);
		}
	}
	/* every index in range; ids unique and referenced ones present */
	if (!pf->nstrs || pf->strs[0][0])
		PD_FAIL("string_table[0] is not \"\"");
	for (size_t i = 0; i < pf->nsample_types; i++)
		if (pf->sample_type[i][0] >= pf->nstrs || pf->sample_type[i][1] >= pf->nstrs)
			PD_FAIL("sample_type %zu out of the table", i);
	if (pf->period_type[0] >= pf->nstrs || pf->period_type[1] >= pf->nstrs ||
	    (uint64_t)pf->default_sample_type >= pf->nstrs)
		PD_FAIL("period_type or default_sample_type out of the table");
	for (size_t i = 0; i < pf->ncomments; i++)
		if (pf->comments[i] >= pf->nstrs)
			PD_FAIL("comment %zu out of the table", i);
	for (size_t i = 0; i < pf->nfns; i++) {
		if (pf->fns[i][0] != i + 1 || !pf->fns[i][1] || pf->fns[i][1] >= pf->nstrs ||
		    pf->fns[i][2] >= pf->nstrs)
			PD_FAIL("function %zu: id %llu, name %llu", i,
				(unsigned long long)pf->fns[i][0],
				(unsigned long long)pf->fns[i][1]);
	}
	for (size_t i = 0; i < pf->nlocs; i++)
		if (pf->locs[i][0] != i + 1 || !pf->locs[i][1] || pf->locs[i][1] > pf->nfns)
			PD_FAIL("location %zu: id or function out of range", i);
	for (size_t i = 0; i < pf->nsamples; i++) {
		const struct pd_sample *s = &pf->samples[i];

		if (s->nvalue != pf->nsample_types || !s->nloc)
			PD_FAIL("sample %zu: %zu values, %zu locations", i,
				s->nvalue, s->nloc);
		for (size_t k = 0; k < s->nloc; k++)
			if (!s->loc[k] || s->loc[k] > pf->nlocs)
				PD_FAIL("sample %zu: location %llu", i,
					(unsigned long long)s->loc[k]);
		for (size_t k = 0; k < s->nlabel; k++)
			if (!s->label[k].key || s->label[k].key >= pf->nstrs ||
			    s->label[k].str >= pf->nstrs ||
			    (!s->label[k].str) != s->label[k].has_num)
				PD_FAIL("sample %zu: label %zu", i, k);
	}
	return pf;
}

/* The name of frame k of sample s (leaf first). */
static const char *pd_frame(const struct pd_profile *pf, const struct pd_sample *s,
			    size_t k)
{
	uint64_t fn = pf->locs[s->loc[k] - 1][1];

	return pf->strs[pf->fns[fn - 1][1]];
}

/* gunzip of len bytes at gz into *out (malloc'd); false if not one whole
 * gzip member. */
static bool pd_gunzip(const unsigned char *gz, size_t len, unsigned char **out,
		      size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = 1 << 16;
	unsigned char *buf = malloc(cap);
	int r = Z_OK;

	if (!buf || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(buf);
		return false;
	}
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)len;
	while (r == Z_OK) {
		if (z.total_out == cap) {
			unsigned char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		z.next_out = buf + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		r = inflate(&z, Z_NO_FLUSH);
	}
	*outlen = z.total_out;
	inflateEnd(&z);
	if (r != Z_STREAM_END || z.avail_in) {
		free(buf);
		return false;
	}
	*out = buf;
	return true;
}

#endif
