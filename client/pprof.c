// SPDX-License-Identifier: GPL-2.0-only
/* pprof.c - off-CPU profiles as gzipped profile.proto; see pprof.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "client/pprof.h"
#include "common/utf8.h"

/*
 * Strings are interned: index 0 is "" (profile.proto wants it there),
 * then the sample and period types, then names and values as they come.
 * A function and its one location share an id: the index of the name's
 * string in fn_id (0: not a frame yet). A sample is found by its
 * location ids and labels in an open-addressing table of sample indexes
 * plus one (0 marks an empty slot).
 */
struct str {
	char *s;
	uint32_t hash;
};

struct label {
	uint32_t key, str;	/* str 0: numeric */
	int64_t num;
};

struct sample {
	uint32_t loc, nloc;	/* locs[loc..loc + nloc), leaf first */
	uint32_t lab, nlab;	/* labs[lab..lab + nlab) */
	uint32_t hash;
	int64_t ns, count;
};

struct pprof {
	struct str *strs;
	size_t nstrs, cap_strs;
	uint32_t *str_slots;		/* string index + 1 */
	size_t nstr_slots;		/* a power of two, at least twice nstrs */
	uint32_t *fn_id;		/* by string index: its function id, or 0 */
	uint32_t nfns;
	struct sample *samples;
	size_t nsamples, cap_samples;
	uint32_t *sample_slots;
	size_t nsample_slots;
	uint32_t *locs;			/* function ids */
	size_t nlocs, cap_locs;
	struct label *labs;
	size_t nlabs, cap_labs;
	uint64_t total_ns, total_count;
};

/* The fixed strings, at these indexes. */
enum { S_EMPTY, S_OFF_CPU, S_NANOSECONDS, S_COUNT, S_FIXED };
static const char *const fixed[S_FIXED] = { "", "off_cpu", "nanoseconds", "count" };

static uint32_t fnv1a(const void *data, size_t len, uint32_t h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

#define FNV_START 2166136261u

static int64_t sat_add(int64_t a, uint64_t b)
{
	return b > (uint64_t)(INT64_MAX - a) ? INT64_MAX : a + (int64_t)b;
}

/* Room for want elements of size sz in *arr of *cap; doubling. */
static int grow(void *arr, size_t *cap, size_t want, size_t sz)
{
	size_t cap2 = *cap ? *cap : 16;
	void *p;

	if (want <= *cap)
		return 0;
	while (cap2 < want)
		cap2 *= 2;
	p = reallocarray(*(void **)arr, cap2, sz);
	if (!p)
		return -ENOMEM;
	*(void **)arr = p;
	*cap = cap2;
	return 0;
}

/*
 * in as kept: valid UTF-8 with every control character and bad byte '?',
 * at most PPROF_MAX_NAME bytes, cut on a character and ending ".." when
 * longer. out holds PPROF_MAX_NAME + 1. Reads at most about that much
 * of in, however long it is.
 */
static size_t clean(const char *in, char *out)
{
	bool cut;
	size_t n = pgoff_utf8_cell(in, out, PPROF_MAX_NAME + 1, &cut);

	if (!cut)
		return n;
	n = pgoff_utf8_cell(in, out, PPROF_MAX_NAME - 1, NULL);
	memcpy(out + n, "..", 3);
	return n + 2;
}

static uint32_t str_find(const struct pprof *p, const char *s, size_t len,
			 uint32_t h)
{
	size_t mask = p->nstr_slots - 1;

	for (size_t i = h & mask; p->str_slots[i]; i = (i + 1) & mask) {
		const struct str *e = &p->strs[p->str_slots[i] - 1];

		if (e->hash == h && strlen(e->s) == len && memcmp(e->s, s, len) == 0)
			return p->str_slots[i];
	}
	return 0;
}

static void slot_put(uint32_t *slots, size_t nslots, uint32_t h, uint32_t v)
{
	size_t mask = nslots - 1, i = h & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = v;
}

/* The index of s (cleaned already) in the table, added if new; *idx.
 * -E2BIG past PPROF_MAX_STRINGS, -ENOMEM. */
static int intern_clean(struct pprof *p, const char *s, size_t len,
			uint32_t *idx)
{
	uint32_t h = fnv1a(s, len, FNV_START), found = str_find(p, s, len, h);
	char *copy;

	if (found) {
		*idx = found - 1;
		return 0;
	}
	if (p->nstrs >= PPROF_MAX_STRINGS + S_FIXED)
		return -E2BIG;
	if (grow(&p->strs, &p->cap_strs, p->nstrs + 1, sizeof(*p->strs)))
		return -ENOMEM;
	if ((p->nstrs + 1) * 2 > p->nstr_slots) {
		size_t n = p->nstr_slots * 2;
		uint32_t *slots = calloc(n, sizeof(*slots)), *fn;

		if (!slots)
			return -ENOMEM;
		fn = reallocarray(p->fn_id, n / 2, sizeof(*fn));
		if (!fn) {
			free(slots);
			return -ENOMEM;
		}
		memset(fn + p->nstr_slots / 2, 0,
		       (n / 2 - p->nstr_slots / 2) * sizeof(*fn));
		p->fn_id = fn;
		for (size_t i = 0; i < p->nstrs; i++)
			slot_put(slots, n, p->strs[i].hash, (uint32_t)i + 1);
		free(p->str_slots);
		p->str_slots = slots;
		p->nstr_slots = n;
	}
	copy = strndup(s, len);
	if (!copy)
		return -ENOMEM;
	p->strs[p->nstrs].s = copy;
	p->strs[p->nstrs].hash = h;
	slot_put(p->str_slots, p->nstr_slots, h, (uint32_t)p->nstrs + 1);
	*idx = (uint32_t)p->nstrs++;
	return 0;
}

static int intern(struct pprof *p, const char *s, uint32_t *idx)
{
	char buf[PPROF_MAX_NAME + 1];
	size_t len = clean(s, buf);

	return intern_clean(p, buf, len, idx);
}

struct pprof *pprof_new(void)
{
	struct pprof *p = calloc(1, sizeof(*p));
	uint32_t idx;

	if (!p)
		return NULL;
	p->nstr_slots = 64;
	p->str_slots = calloc(p->nstr_slots, sizeof(*p->str_slots));
	p->fn_id = calloc(p->nstr_slots / 2, sizeof(*p->fn_id));
	p->nsample_slots = 64;
	p->sample_slots = calloc(p->nsample_slots, sizeof(*p->sample_slots));
	if (!p->str_slots || !p->fn_id || !p->sample_slots)
		goto fail;
	for (int i = 0; i < S_FIXED; i++)
		if (intern_clean(p, fixed[i], strlen(fixed[i]), &idx) || idx != (uint32_t)i)
			goto fail;
	return p;
fail:
	pprof_free(p);
	return NULL;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i].s);
	free(p->strs);
	free(p->str_slots);
	free(p->fn_id);
	free(p->samples);
	free(p->sample_slots);
	free(p->locs);
	free(p->labs);
	free(p);
}

uint64_t pprof_total_ns(const struct pprof *p)
{
	return p ? p->total_ns : 0;
}

uint64_t pprof_total_count(const struct pprof *p)
{
	return p ? p->total_count : 0;
}

size_t pprof_samples(const struct pprof *p)
{
	return p ? p->nsamples : 0;
}

/* Sample keys compare the string indexes of frames (not yet functions). */
static uint32_t sample_hash(const uint32_t *frames, size_t n,
			    const struct label *labs, size_t nlabs)
{
	uint32_t h = fnv1a(frames, n * sizeof(*frames), FNV_START);

	return fnv1a(labs, nlabs * sizeof(*labs), h ^ (uint32_t)n);
}

static int cmp_label(const void *a, const void *b)
{
	const struct label *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key ? 1 :
	       x->str < y->str ? -1 : x->str > y->str ? 1 :
	       x->num < y->num ? -1 : x->num > y->num;
}

static int add_sample(struct pprof *p, const uint32_t *frames, size_t n,
		      const struct label *labs, size_t nlabs, uint64_t ns)
{
	uint32_t h = sample_hash(frames, n, labs, nlabs);
	size_t mask = p->nsample_slots - 1;
	struct sample *s;
	bool same;

	/* frames are string indexes; a sample's locs, their function ids */
	for (size_t i = h & mask; p->sample_slots[i]; i = (i + 1) & mask) {
		s = &p->samples[p->sample_slots[i] - 1];
		if (s->hash != h || s->nloc != n || s->nlab != nlabs)
			continue;
		same = !nlabs ||
		       memcmp(&p->labs[s->lab], labs, nlabs * sizeof(*labs)) == 0;
		for (size_t k = 0; same && k < n; k++)
			same = p->fn_id[frames[k]] == p->locs[s->loc + k];
		if (!same)
			continue;
		s->ns = sat_add(s->ns, ns);
		s->count = sat_add(s->count, 1);
		return 0;
	}
	if (p->nsamples >= PPROF_MAX_SAMPLES)
		return -E2BIG;
	if (grow(&p->samples, &p->cap_samples, p->nsamples + 1, sizeof(*p->samples)) ||
	    grow(&p->locs, &p->cap_locs, p->nlocs + n, sizeof(*p->locs)) ||
	    grow(&p->labs, &p->cap_labs, p->nlabs + nlabs, sizeof(*p->labs)))
		return -ENOMEM;
	if ((p->nsamples + 1) * 2 > p->nsample_slots) {
		size_t nslots = p->nsample_slots * 2;
		uint32_t *slots = calloc(nslots, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < p->nsamples; i++)
			slot_put(slots, nslots, p->samples[i].hash, (uint32_t)i + 1);
		free(p->sample_slots);
		p->sample_slots = slots;
		p->nsample_slots = nslots;
	}
	/* every frame a function from now on (ids from 1, in order of use) */
	for (size_t k = 0; k < n; k++) {
		if (!p->fn_id[frames[k]])
			p->fn_id[frames[k]] = ++p->nfns;
		p->locs[p->nlocs + k] = p->fn_id[frames[k]];
	}
	if (nlabs)	/* p->labs may be NULL yet */
		memcpy(&p->labs[p->nlabs], labs, nlabs * sizeof(*labs));
	s = &p->samples[p->nsamples];
	*s = (struct sample){
		.loc = (uint32_t)p->nlocs, .nloc = (uint32_t)n,
		.lab = (uint32_t)p->nlabs, .nlab = (uint32_t)nlabs,
		.hash = h, .ns = sat_add(0, ns), .count = 1,
	};
	p->nlocs += n;
	p->nlabs += nlabs;
	slot_put(p->sample_slots, p->nsample_slots, h, (uint32_t)++p->nsamples);
	return 0;
}

int pprof_add(struct pprof *p, const char *const *frames, size_t n,
	      const struct pprof_label *labels, size_t nlabels, uint64_t ns)
{
	uint32_t idx[PPROF_MAX_DEPTH];
	struct label labs[PPROF_MAX_LABELS];
	size_t nlabs = 0;
	int err;

	if (!p || !frames || n == 0 || n > PPROF_MAX_DEPTH ||
	    nlabels > PPROF_MAX_LABELS || (nlabels && !labels))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!frames[i] || !frames[i][0])
			return -EINVAL;
	for (size_t i = 0; i < nlabels; i++)
		if (!labels[i].key || !labels[i].key[0])
			return -EINVAL;
	/* leaf first, as profile.proto lists a sample's locations */
	for (size_t i = 0; i < n; i++) {
		err = intern(p, frames[n - 1 - i], &idx[i]);
		if (err)
			return err;
	}
	for (size_t i = 0; i < nlabels; i++) {
		const struct pprof_label *l = &labels[i];
		struct label *o = &labs[nlabs];

		if (l->str && !l->str[0])
			continue;
		memset(o, 0, sizeof(*o));	/* hashed and compared whole */
		err = intern(p, l->key, &o->key);
		if (!err && l->str)
			err = intern(p, l->str, &o->str);
		if (err)
			return err;
		o->num = l->str ? 0 : l->num;
		if (o->key == S_EMPTY || (l->str && o->str == S_EMPTY))
			continue;
		nlabs++;
	}
	/* one order, so that equal label sets merge */
	qsort(labs, nlabs, sizeof(*labs), cmp_label);
	err = add_sample(p, idx, n, labs, nlabs, ns);
	if (err)
		return err;
	p->total_ns = p->total_ns > UINT64_MAX - ns ? UINT64_MAX : p->total_ns + ns;
	p->total_count++;
	return 0;
}

/* ---- the wire format: varints and length-delimited fields ---- */

struct pb {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void pb_put(struct pb *b, const void *d, size_t n)
{
	if (b->oom || grow(&b->p, &b->cap, b->len + n, 1)) {
		b->oom = true;
		return;
	}
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_put(b, t, n);
}

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void pb_key(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; 0, proto3's default, is left out. int64 values are
 * their two's complement, as protobuf encodes them. */
static void pb_int(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *d, size_t n)
{
	pb_key(b, field, WIRE_LEN);
	pb_varint(b, n);
	pb_put(b, d, n);
}

/* sub, whole, as field of b; sub is emptied for the next one */
static void pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	b->oom |= sub->oom;
	pb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	LOCATION_ID = 1, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
};

#define MAX_COMMENTS 16

static void value_type(struct pb *b, struct pb *sub, unsigned field,
		       uint32_t type, uint32_t unit)
{
	pb_int(sub, VALUE_TYPE_TYPE, type);
	pb_int(sub, VALUE_TYPE_UNIT, unit);
	pb_msg(b, field, sub);
}

static void sample(struct pb *b, struct pb *sub, struct pb *sub2,
		   const struct pprof *p, const struct sample *s)
{
	for (size_t k = 0; k < s->nloc; k++)
		pb_varint(sub2, p->locs[s->loc + k]);
	pb_msg(sub, SAMPLE_LOCATION_ID, sub2);	/* packed */
	pb_varint(sub2, (uint64_t)s->ns);
	pb_varint(sub2, (uint64_t)s->count);
	pb_msg(sub, SAMPLE_VALUE, sub2);
	for (size_t k = 0; k < s->nlab; k++) {
		const struct label *l = &p->labs[s->lab + k];

		pb_int(sub2, LABEL_KEY, l->key);
		if (l->str) {
			pb_int(sub2, LABEL_STR, l->str);
		} else {
			/* a zero value stays: pprof reads key and no str as 0 */
			pb_key(sub2, LABEL_NUM, WIRE_VARINT);
			pb_varint(sub2, (uint64_t)l->num);
		}
		pb_msg(sub, SAMPLE_LABEL, sub2);
	}
	pb_msg(b, PROFILE_SAMPLE, sub);
}

int pprof_encode(const struct pprof *p, const struct pprof_meta *m,
		 unsigned char **buf, size_t *len)
{
	struct pb b = { 0 }, sub = { 0 }, sub2 = { 0 };
	uint32_t *by_fn = NULL;
	size_t ncomments = m && m->comments ? m->ncomments : 0;
	char text[PPROF_MAX_NAME + 1];

	if (!p || !buf || !len || ncomments > MAX_COMMENTS)
		return -EINVAL;
	value_type(&b, &sub, PROFILE_SAMPLE_TYPE, S_OFF_CPU, S_NANOSECONDS);
	value_type(&b, &sub, PROFILE_SAMPLE_TYPE, S_COUNT, S_COUNT);
	for (size_t i = 0; i < p->nsamples; i++)
		sample(&b, &sub, &sub2, p, &p->samples[i]);
	/* functions and locations by id: the string each names */
	by_fn = calloc(p->nfns + 1, sizeof(*by_fn));
	if (!by_fn) {
		b.oom = true;
		goto out;
	}
	for (size_t i = 0; i < p->nstrs; i++)
		if (p->fn_id[i])
			by_fn[p->fn_id[i]] = (uint32_t)i;
	for (uint32_t id = 1; id <= p->nfns; id++) {
		pb_int(&sub, LOCATION_ID, id);
		pb_int(&sub2, LINE_FUNCTION_ID, id);
		pb_msg(&sub, LOCATION_LINE, &sub2);
		pb_msg(&b, PROFILE_LOCATION, &sub);
	}
	for (uint32_t id = 1; id <= p->nfns; id++) {
		pb_int(&sub, FUNCTION_ID, id);
		pb_int(&sub, FUNCTION_NAME, by_fn[id]);
		pb_int(&sub, FUNCTION_SYSTEM_NAME, by_fn[id]);
		pb_msg(&b, PROFILE_FUNCTION, &sub);
	}
	for (size_t i = 0; i < p->nstrs; i++)
		pb_bytes(&b, PROFILE_STRING_TABLE, p->strs[i].s, strlen(p->strs[i].s));
	/* the comments' strings after the table's */
	for (size_t i = 0; i < ncomments; i++) {
		size_t n = clean(m->comments[i] ? m->comments[i] : "", text);

		pb_bytes(&b, PROFILE_STRING_TABLE, text, n);
	}
	if (m) {
		pb_int(&b, PROFILE_TIME_NANOS, (uint64_t)m->time_nanos);
		pb_int(&b, PROFILE_DURATION_NANOS, (uint64_t)m->duration_nanos);
	}
	value_type(&b, &sub, PROFILE_PERIOD_TYPE, S_OFF_CPU, S_NANOSECONDS);
	pb_int(&b, PROFILE_PERIOD, 1);
	for (size_t i = 0; i < ncomments; i++) {
		pb_key(&b, PROFILE_COMMENT, WIRE_VARINT);
		pb_varint(&b, p->nstrs + i);
	}
	pb_int(&b, PROFILE_DEFAULT_SAMPLE_TYPE, S_OFF_CPU);
out:
	free(by_fn);
	free(sub.p);
	free(sub2.p);
	if (b.oom || sub.oom || sub2.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*buf = b.p;
	*len = b.len;
	return 0;
}

int pprof_encode_gzip(const struct pprof *p, const struct pprof_meta *m,
		      unsigned char **buf, size_t *len)
{
	unsigned char *raw, *out;
	size_t rawlen, cap;
	z_stream z = { 0 };
	int err, zr;

	err = pprof_encode(p, m, &raw, &rawlen);
	if (err)
		return err;
	if (rawlen > UINT_MAX / 2) {
		free(raw);
		return -E2BIG;
	}
	/* windowBits 15 + 16: a gzip member, not a zlib stream */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(raw);
		return -ENOMEM;
	}
	cap = deflateBound(&z, (uLong)rawlen);
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		free(raw);
		return -ENOMEM;
	}
	z.next_in = raw;
	z.avail_in = (uInt)rawlen;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	zr = deflate(&z, Z_FINISH);
	*len = cap - z.avail_out;
	deflateEnd(&z);
	free(raw);
	if (zr != Z_STREAM_END) {
		free(out);
		return -ENOMEM;
	}
	*buf = out;
	return 0;
}
