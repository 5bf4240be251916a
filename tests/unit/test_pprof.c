// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof profiles: what pprof_add merges, the limits, hostile names, and
 * a property test: random samples, encoded, read back by a strict
 * decoder (pprof_decode.h), give the same stacks, labels and totals.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "client/event_frames.h"
#include "client/pprof.h"
#include "common/utf8.h"
#include "tests/unit/check.h"
#include "tests/unit/pprof_decode.h"

#define ADD(p, ns, labels, nl, ...)                                         \
	pprof_add((p), (const char *const[]){ __VA_ARGS__ },               \
		  sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *), \
		  (labels), (nl), (ns))

static struct pd_profile *decode(const struct pprof *p, const struct pprof_meta *m)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	char err[200];
	struct pd_profile *pf;

	if (pprof_encode(p, m, &buf, &len))
		return NULL;
	pf = pd_decode(buf, len, err, sizeof(err));
	if (!pf)
		fprintf(stderr, "decode: %s\n", err);
	free(buf);
	return pf;
}

static const char *label_str(const struct pd_profile *pf, const struct pd_sample *s,
			     const char *key)
{
	for (size_t k = 0; k < s->nlabel; k++)
		if (strcmp(pf->strs[s->label[k].key], key) == 0)
			return s->label[k].str ? pf->strs[s->label[k].str] : NULL;
	return NULL;
}

static void test_types_and_meta(void)
{
	struct pprof *p = pprof_new();
	const char *comments[] = { "one", "two" };
	struct pprof_meta m = { .time_nanos = 1796352600000000000,
				.duration_nanos = 15000000000,
				.comments = comments, .ncomments = 2 };
	struct pd_profile *pf;

	CHECK(p);
	CHECK(ADD(p, 5, NULL, 0, "a") == 0);
	pf = decode(p, &m);
	pprof_free(p);
	CHECK(pf);
	CHECK(pf->nsample_types == 2);
	CHECK_STR(pf->strs[pf->sample_type[0][0]], "off_cpu");
	CHECK_STR(pf->strs[pf->sample_type[0][1]], "nanoseconds");
	CHECK_STR(pf->strs[pf->sample_type[1][0]], "count");
	CHECK_STR(pf->strs[pf->sample_type[1][1]], "count");
	CHECK_STR(pf->strs[pf->period_type[0]], "off_cpu");
	CHECK_STR(pf->strs[pf->period_type[1]], "nanoseconds");
	CHECK(pf->period == 1);
	CHECK_STR(pf->strs[pf->default_sample_type], "off_cpu");
	CHECK(pf->time_nanos == 1796352600000000000);
	CHECK(pf->duration_nanos == 15000000000);
	CHECK(pf->ncomments == 2);
	CHECK_STR(pf->strs[pf->comments[1]], "two");
	pd_free(pf);
}

static void test_empty(void)
{
	struct pprof *p = pprof_new();
	struct pd_profile *pf;

	CHECK(p);
	pf = decode(p, NULL);
	pprof_free(p);
	CHECK(pf);
	CHECK(pf->nsamples == 0 && pf->nlocs == 0 && pf->nfns == 0);
	CHECK(pf->nsample_types == 2);
	pd_free(pf);
}

static void test_merge_and_order(void)
{
	struct pprof *p = pprof_new();
	struct pprof_label a[] = { { "wait", "lock", 0 }, { "pid", NULL, 42 } };
	struct pprof_label a2[] = { { "pid", NULL, 42 }, { "wait", "lock", 0 } };
	struct pprof_label b[] = { { "wait", "lock", 0 }, { "pid", NULL, 43 } };
	struct pd_profile *pf;
	const struct pd_sample *s;

	CHECK(p);
	CHECK(ADD(p, 1000, a, 2, "Lock:transactionid", "wait: lock", "do_syscall_64",
		  "do_epoll_wait") == 0);
	/* the same labels in another order: the same sample */
	CHECK(ADD(p, 2000, a2, 2, "Lock:transactionid", "wait: lock", "do_syscall_64",
		  "do_epoll_wait") == 0);
	CHECK(ADD(p, 4000, b, 2, "Lock:transactionid", "wait: lock", "do_syscall_64",
		  "do_epoll_wait") == 0);
	CHECK(ADD(p, 8000, a, 2, "Lock:transactionid", "wait: lock", "do_epoll_wait") == 0);
	CHECK(pprof_samples(p) == 3);
	CHECK(pprof_total_ns(p) == 15000 && pprof_total_count(p) == 4);
	pf = decode(p, NULL);
	pprof_free(p);
	CHECK(pf);
	CHECK(pf->nsamples == 3);
	/* one location and function per distinct frame */
	CHECK(pf->nlocs == 4 && pf->nfns == 4);
	s = &pf->samples[0];
	CHECK(s->value[0] == 3000 && s->value[1] == 2);
	CHECK(s->nloc == 4);
	CHECK_STR(pd_frame(pf, s, 0), "do_epoll_wait");	/* leaf first */
	CHECK_STR(pd_frame(pf, s, 3), "Lock:transactionid");
	CHECK_STR(label_str(pf, s, "wait"), "lock");
	for (size_t k = 0; k < s->nlabel; k++)
		if (strcmp(pf->strs[s->label[k].key], "pid") == 0)
			CHECK(s->label[k].num == 42 && s->label[k].has_num);
	CHECK(pf->samples[1].value[0] == 4000 && pf->samples[2].value[1] == 1);
	pd_free(pf);
}

static void test_empty_label_left_out(void)
{
	struct pprof *p = pprof_new();
	struct pprof_label l[] = { { "database", "", 0 }, { "wait", "io", 0 } };
	struct pd_profile *pf;

	CHECK(p);
	CHECK(ADD(p, 1, l, 2, "x") == 0);
	pf = decode(p, NULL);
	pprof_free(p);
	CHECK(pf);
	CHECK(pf->samples[0].nlabel == 1);
	CHECK(label_str(pf, &pf->samples[0], "database") == NULL);
	pd_free(pf);
}

static void test_invalid(void)
{
	struct pprof *p = pprof_new();
	struct pprof_label nokey[] = { { NULL, "x", 0 } }, empty[] = { { "", "x", 0 } };
	const char *deep[PPROF_MAX_DEPTH + 1];
	struct pprof_label many[PPROF_MAX_LABELS + 1];

	CHECK(p);
	for (size_t i = 0; i <= PPROF_MAX_DEPTH; i++)
		deep[i] = "f";
	for (size_t i = 0; i <= PPROF_MAX_LABELS; i++)
		many[i] = (struct pprof_label){ "k", "v", 0 };
	CHECK(pprof_add(p, deep, 0, NULL, 0, 1) == -EINVAL);
	CHECK(pprof_add(p, deep, PPROF_MAX_DEPTH + 1, NULL, 0, 1) == -EINVAL);
	CHECK(pprof_add(p, deep, PPROF_MAX_DEPTH, NULL, 0, 1) == 0);
	CHECK(ADD(p, 1, NULL, 0, "a", "") == -EINVAL);
	CHECK(ADD(p, 1, NULL, 0, "a", NULL) == -EINVAL);
	CHECK(ADD(p, 1, nokey, 1, "a") == -EINVAL);
	CHECK(ADD(p, 1, empty, 1, "a") == -EINVAL);
	CHECK(pprof_add(p, deep, 1, many, PPROF_MAX_LABELS + 1, 1) == -EINVAL);
	CHECK(pprof_add(p, deep, 1, many, PPROF_MAX_LABELS, 1) == 0);
	CHECK(pprof_samples(p) == 2 && pprof_total_count(p) == 2);
	CHECK(pprof_add(NULL, deep, 1, NULL, 0, 1) == -EINVAL);
	pprof_free(p);
	pprof_free(NULL);
}

/* Control bytes, bad UTF-8 and a megabyte of text: valid UTF-8 with no
 * control character, at most PPROF_MAX_NAME bytes, cut with "..". */
static void test_hostile_names(void)
{
	struct pprof *p = pprof_new();
	char *huge = malloc(1 << 20);
	struct pprof_label l[] = { { "database", "\x1b[31mred\x1b[0m", 0 },
				   { "cluster", NULL, 0 } };
	struct pd_profile *pf;
	const struct pd_sample *s;
	const char *name;

	CHECK(p && huge);
	memset(huge, 'y', (1 << 20) - 1);
	huge[(1 << 20) - 1] = '\0';
	huge[10] = '\x9b';	/* a C1 control's lone byte */
	l[1].str = huge;
	CHECK(ADD(p, 7, l, 2, "evil\n\x1b[2J\xc2\x9b\x01", huge, "caf\xc3\xa9\xff") == 0);
	pf = decode(p, NULL);
	pprof_free(p);
	free(huge);
	CHECK(pf);
	for (size_t i = 0; i < pf->nstrs; i++) {
		CHECK(strlen(pf->strs[i]) <= PPROF_MAX_NAME);
		CHECK(pgoff_utf8_printable(pf->strs[i], strlen(pf->strs[i])));
	}
	s = &pf->samples[0];
	CHECK_STR(pd_frame(pf, s, 2), "evil??[2J??");
	CHECK_STR(pd_frame(pf, s, 0), "caf\xc3\xa9?");
	name = pd_frame(pf, s, 1);
	CHECK(strlen(name) == PPROF_MAX_NAME);
	CHECK(strncmp(name, "yyyyyyyyyy?yyy", 14) == 0);
	CHECK(strcmp(name + PPROF_MAX_NAME - 3, "y..") == 0);
	CHECK_STR(label_str(pf, s, "database"), "?[31mred?[0m");
	CHECK(strlen(label_str(pf, s, "cluster")) == PPROF_MAX_NAME);
	pd_free(pf);
}

/* Names that differ only in what cleaning replaces are one function. */
static void test_cleaned_names_merge(void)
{
	struct pprof *p = pprof_new();
	struct pd_profile *pf;

	CHECK(p);
	CHECK(ADD(p, 1, NULL, 0, "a\x01") == 0);
	CHECK(ADD(p, 2, NULL, 0, "a\x02") == 0);
	CHECK(pprof_samples(p) == 1);
	pf = decode(p, NULL);
	pprof_free(p);
	CHECK(pf);
	CHECK(pf->nfns == 1 && pf->samples[0].value[0] == 3);
	pd_free(pf);
}

static void test_saturation(void)
{
	struct pprof *p = pprof_new();
	struct pd_profile *pf;

	CHECK(p);
	CHECK(ADD(p, UINT64_MAX, NULL, 0, "a") == 0);
	CHECK(ADD(p, 5, NULL, 0, "a") == 0);
	CHECK(pprof_total_ns(p) == UINT64_MAX);
	pf = decode(p, NULL);
	pprof_free(p);
	CHECK(pf);
	CHECK(pf->samples[0].value[0] == INT64_MAX && pf->samples[0].value[1] == 2);
	pd_free(pf);
}

/* Past PPROF_MAX_SAMPLES: -E2BIG, and nothing changes; the samples
 * there still merge. */
static void test_sample_limit(void)
{
	struct pprof *p = pprof_new();
	struct pprof_label l = { "pid", NULL, 0 };
	const char *f[] = { "a" };

	CHECK(p);
	for (int64_t i = 0; i < PPROF_MAX_SAMPLES; i++) {
		l.num = i;
		CHECK(pprof_add(p, f, 1, &l, 1, 1) == 0);
	}
	l.num = -1;
	CHECK(pprof_add(p, f, 1, &l, 1, 1) == -E2BIG);
	CHECK(pprof_samples(p) == PPROF_MAX_SAMPLES);
	CHECK(pprof_total_count(p) == PPROF_MAX_SAMPLES);
	l.num = 7;
	CHECK(pprof_add(p, f, 1, &l, 1, 1) == 0);
	CHECK(pprof_total_count(p) == PPROF_MAX_SAMPLES + 1);
	pprof_free(p);
}

static void test_string_limit(void)
{
	struct pprof *p = pprof_new();
	char name[32];
	const char *f[] = { name };
	int err = 0;

	CHECK(p);
	for (int i = 0; i < PPROF_MAX_STRINGS && !err; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		err = pprof_add(p, f, 1, NULL, 0, 1);
	}
	CHECK(err == 0);
	snprintf(name, sizeof(name), "one too many");
	CHECK(pprof_add(p, f, 1, NULL, 0, 1) == -E2BIG);
	CHECK(pprof_samples(p) == PPROF_MAX_STRINGS);
	pprof_free(p);
}

static void test_gzip(void)
{
	struct pprof *p = pprof_new();
	unsigned char *raw = NULL, *gz = NULL, *back = NULL;
	size_t rawlen = 0, gzlen = 0, backlen = 0;

	CHECK(p);
	CHECK(ADD(p, 1234, NULL, 0, "Lock:tuple", "wait: lock", "schedule") == 0);
	CHECK(pprof_encode(p, NULL, &raw, &rawlen) == 0);
	CHECK(pprof_encode_gzip(p, NULL, &gz, &gzlen) == 0);
	pprof_free(p);
	CHECK(gzlen > 18 && gz[0] == 0x1f && gz[1] == 0x8b);	/* gzip magic */
	CHECK(pd_gunzip(gz, gzlen, &back, &backlen));
	CHECK(backlen == rawlen && memcmp(back, raw, rawlen) == 0);
	free(raw);
	free(gz);
	free(back);
}

/* The property: for random samples (frames and labels drawn from a set
 * with hostile names, random weights), the decoded profile has every
 * sample once, with its frames leaf first and cleaned, its labels, and
 * the sums added; totals equal what was added. Checked by an O(n^2)
 * reference: the samples' keys as cleaned strings. */
struct ref {
	char key[4096];
	int64_t ns, count;
};

static void clean_ref(const char *in, char *out)
{
	bool cut;

	pgoff_utf8_cell(in, out, PPROF_MAX_NAME + 1, &cut);
	if (cut)
		strcpy(out + pgoff_utf8_cell(in, out, PPROF_MAX_NAME - 1, NULL), "..");
}

static void test_property_random(void)
{
	static const char *const names[] = {
		"Lock:transactionid", "IO:WALSync", "wait: lock", "do_epoll_wait",
		"\x01\x02", "\x03\x04", "\xc3\x28", "\xe2\x82", "caf\xc3\xa9", "a;b c",
		"\x1b[31m", "\xc2\x9b", "x",
	};
	static const char *const keys[] = { "database", "wait", "pid", "cluster" };
	static const char *const vals[] = { "shop", "\x1b", "\x1c", "", "caf\xc3\xa9" };
	const size_t nn = sizeof(names) / sizeof(names[0]);
	enum { ROUNDS = 20, SAMPLES = 300 };
	struct ref *ref = calloc(SAMPLES, sizeof(*ref));

	CHECK(ref);
	for (unsigned seed = 1; seed <= ROUNDS; seed++) {
		struct pprof *p = pprof_new();
		size_t nref = 0;
		uint64_t total = 0;
		struct pd_profile *pf;

		CHECK(p);
		srandom(seed);
		for (int i = 0; i < SAMPLES; i++) {
			const char *frames[8];
			struct pprof_label l[3];
			size_t n = (size_t)(random() % 8) + 1, nl = (size_t)(random() % 4);
			uint64_t ns = (uint64_t)(random() % 100000);
			char key[4096] = "", c[PPROF_MAX_NAME + 1];
			size_t r;

			for (size_t k = 0; k < n; k++)
				frames[k] = names[random() % nn];
			for (size_t k = 0; k < nl; k++) {
				l[k].key = keys[k];	/* distinct keys */
				l[k].str = k == 2 ? NULL : vals[random() % 5];
				l[k].num = random() % 3;
			}
			CHECK(pprof_add(p, frames, n, l, nl, ns) == 0);
			total += ns;
			/* the reference key: cleaned frames leaf first, labels
			 * by key (non-empty ones) */
			for (size_t k = n; k-- > 0;) {
				clean_ref(frames[k], c);
				strcat(key, c);
				strcat(key, "|");
			}
			for (size_t k = 0; k < nl; k++) {
				if (l[k].str && !*l[k].str)
					continue;
				if (l[k].str) {
					clean_ref(l[k].str, c);
					snprintf(key + strlen(key), sizeof(key) - strlen(key), "%s=%s,",
						 keys[k], c);
				} else {
					snprintf(key + strlen(key), sizeof(key) - strlen(key), "%s#%ld,",
						 keys[k], (long)l[k].num);
				}
			}
			for (r = 0; r < nref && strcmp(ref[r].key, key); r++)
				;
			if (r == nref)
				snprintf(ref[nref++].key, sizeof(ref[0].key), "%s", key);
			ref[r].ns += (int64_t)ns;
			ref[r].count++;
		}
		CHECK(pprof_total_ns(p) == total && pprof_total_count(p) == SAMPLES);
		pf = decode(p, NULL);
		pprof_free(p);
		CHECK(pf);
		if (pf->nsamples != nref)
			fprintf(stderr, "seed %u: %zu samples, the reference %zu\n", seed,
				pf->nsamples, nref);
		CHECK(pf->nsamples == nref);
		for (size_t i = 0; i < pf->nsamples; i++) {
			const struct pd_sample *s = &pf->samples[i];
			char key[4096] = "";
			size_t r;

			for (size_t k = 0; k < s->nloc; k++) {
				strcat(key, pd_frame(pf, s, k));
				strcat(key, "|");
			}
			/* labels come sorted by key string index: in the order
			 * of keys[] as first interned... compare as a set */
			for (size_t kk = 0; kk < 4; kk++)
				for (size_t k = 0; k < s->nlabel; k++) {
					const char *kn = pf->strs[s->label[k].key];

					if (strcmp(kn, keys[kk]))
						continue;
					if (s->label[k].str)
						snprintf(key + strlen(key), sizeof(key) - strlen(key),
							 "%s=%s,", kn,
							 pf->strs[s->label[k].str]);
					else
						snprintf(key + strlen(key), sizeof(key) - strlen(key),
							 "%s#%ld,", kn,
							 (long)s->label[k].num);
				}
			for (r = 0; r < nref && strcmp(ref[r].key, key); r++)
				;
			if (r == nref)
				fprintf(stderr, "seed %u: sample %zu (%s) not in the reference\n",
					seed, i, key);
			CHECK(r < nref);
			CHECK(s->value[0] == ref[r].ns && s->value[1] == ref[r].count);
			ref[r].count = -1;	/* each once */
		}
		pd_free(pf);
		memset(ref, 0, SAMPLES * sizeof(*ref));
	}
	free(ref);
}

static int64_t label_num(const struct pd_profile *pf, const struct pd_sample *s,
			 const char *key)
{
	for (size_t k = 0; k < s->nlabel; k++)
		if (strcmp(pf->strs[s->label[k].key], key) == 0)
			return s->label[k].num;
	return -1;
}

/* An event's cluster as the exporter's series name it: two clusters at
 * one path are two samples, each with its id, owner and container. */
static void test_event_cluster_labels(void)
{
	static const char *const ev[] = {
		"{\"duration_ns\":1000,\"wait\":\"sleep\",\"pid\":7,\"stack\":[\"f\"],"
		"\"pg\":{\"wait_event_type\":\"Timeout\",\"wait_event\":\"PgSleep\","
		"\"cluster\":{\"data_dir\":\"/srv/pgc/data\",\"cluster_id\":\"e3b1159d839fd38c\","
		"\"owner\":101,\"container\":{\"runtime\":\"containerd\",\"id\":\"2f78aec8\","
		"\"pod_uid\":\"0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f\"}}}}",
		"{\"duration_ns\":2000,\"wait\":\"sleep\",\"pid\":7,\"stack\":[\"f\"],"
		"\"pg\":{\"wait_event_type\":\"Timeout\",\"wait_event\":\"PgSleep\","
		"\"cluster\":{\"data_dir\":\"/srv/pgc/data\",\"cluster_id\":\"35153e4b981721c8\","
		"\"owner\":995}}}",
	};
	struct pprof *p = pprof_new();
	struct pd_profile *pf;

	CHECK(p);
	for (size_t i = 0; i < 2; i++) {
		json_object *o = json_tokener_parse(ev[i]);

		CHECK(o && event_pprof_add(p, o, false, false) == 0);
		json_object_put(o);
	}
	CHECK(pprof_samples(p) == 2);
	pf = decode(p, NULL);
	pprof_free(p);
	CHECK(pf && pf->nsamples == 2);
	for (size_t i = 0; pf && i < pf->nsamples; i++) {
		const struct pd_sample *s = &pf->samples[i];
		bool a = s->value[0] == 1000;

		CHECK_STR(label_str(pf, s, "cluster"), "/srv/pgc/data");
		CHECK_STR(label_str(pf, s, "cluster_id"),
			  a ? "e3b1159d839fd38c" : "35153e4b981721c8");
		CHECK(label_num(pf, s, "owner") == (a ? 101 : 995));
		if (a) {
			CHECK_STR(label_str(pf, s, "container"), "2f78aec8");
			CHECK_STR(label_str(pf, s, "pod_uid"),
				  "0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f");
		} else {
			CHECK(label_str(pf, s, "container") == NULL);
		}
	}
	if (pf)
		pd_free(pf);
}

int main(void)
{
	RUN(test_types_and_meta);
	RUN(test_empty);
	RUN(test_merge_and_order);
	RUN(test_empty_label_left_out);
	RUN(test_invalid);
	RUN(test_hostile_names);
	RUN(test_cleaned_names_merge);
	RUN(test_saturation);
	RUN(test_sample_limit);
	RUN(test_string_limit);
	RUN(test_gzip);
	RUN(test_property_random);
	RUN(test_event_cluster_labels);
	return check_failed_tests ? 1 : 0;
}
