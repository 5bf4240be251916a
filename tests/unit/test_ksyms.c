/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_ksyms.c - kernel symbolizer: synthetic tables through fmemopen, and
 * one round trip through the running kernel's /proc/kallsyms.
 */
#include "broker/kernel/ksyms.h"
#include "tests/unit/check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* fmemopen wants a mutable buffer of known size; the tables are literals. */
static struct ksyms *load_str(const char *text)
{
	size_t n = strlen(text);
	char *buf = malloc(n + 1);
	struct ksyms *ks;
	FILE *f;
	int err;

	if (!buf)
		return NULL;
	memcpy(buf, text, n + 1);
	/* fmemopen rejects size 0; an empty table is one NUL read as EOF. */
	f = fmemopen(buf, n ? n : 1, "r");
	if (!f) {
		free(buf);
		return NULL;
	}
	errno = 0;
	ks = ksyms_load_file(f);
	err = errno;
	fclose(f);
	free(buf);
	errno = err;
	return ks;
}

static const char basic_table[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t local_helper\n"
	"ffffffff81000200 D some_data\n"
	"ffffffff81000300 T do_work\n"
	"ffffffff81000400 W weak_thing\n"
	"ffffffff81000500 w weak_local\n"
	"ffffffff81000600 r ro_data\n"
	"ffffffffc0001000 t xfs_iget\t[xfs]\n"
	"ffffffffc0001080 T xfs_log_force\t[xfs]\n"
	"ffffffffc0002000 t nf_hook\t[nf_tables]\n";

static void test_basic_lookups(void)
{
	struct ksyms *ks = load_str(basic_table);
	const char *mod = "unset";
	uint64_t off = 99;

	CHECK(ks);
	/* 8 text symbols; D and r are dropped. */
	CHECK(ksyms_count(ks) == 8);

	/* At a symbol's first byte. */
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000000ULL, &off, &mod), "_stext");
	CHECK(off == 0);
	CHECK(mod == NULL);

	/* Inside: the data symbol between them does not end local_helper. */
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000234ULL, &off, &mod),
		  "local_helper");
	CHECK(off == 0x134);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff810002ffULL, &off, NULL),
		  "local_helper");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000300ULL, &off, NULL), "do_work");
	CHECK(off == 0);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000401ULL, NULL, NULL),
		  "weak_thing");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000501ULL, NULL, NULL),
		  "weak_local");

	/* Below the first symbol, and 0. */
	CHECK(!ksyms_lookup(ks, 0xffffffff80ffffffULL, &off, &mod));
	CHECK(!ksyms_lookup(ks, 0, &off, &mod));
	CHECK(!ksyms_lookup(ks, 1, NULL, NULL));

	/* Module symbols carry their module. */
	CHECK_STR(ksyms_lookup(ks, 0xffffffffc0001010ULL, &off, &mod), "xfs_iget");
	CHECK(off == 0x10);
	CHECK_STR(mod, "xfs");
	CHECK_STR(ksyms_lookup(ks, 0xffffffffc0001080ULL, &off, &mod),
		  "xfs_log_force");
	CHECK_STR(mod, "xfs");
	CHECK_STR(ksyms_lookup(ks, 0xffffffffc0002001ULL, &off, &mod), "nf_hook");
	CHECK_STR(mod, "nf_tables");

	/* Above the last symbol: near is inside it, far is nothing. */
	CHECK_STR(ksyms_lookup(ks, 0xffffffffc0002000ULL + KSYMS_MAX_OFFSET,
			       &off, NULL), "nf_hook");
	CHECK(off == KSYMS_MAX_OFFSET);
	CHECK(!ksyms_lookup(ks, 0xffffffffc0002001ULL + KSYMS_MAX_OFFSET,
			    NULL, NULL));
	CHECK(!ksyms_lookup(ks, UINT64_MAX, NULL, NULL));
	/* The gap between the core kernel and modules is not do_work's. */
	CHECK(!ksyms_lookup(ks, 0xffffffffa0000000ULL, NULL, NULL));

	ksyms_free(ks);
}

static void test_unsorted_input(void)
{
	struct ksyms *ks = load_str(
		"ffffffff81000300 T c\n"
		"ffffffff81000100 T a\n"
		"ffffffffc0000000 t m1\t[mod]\n"
		"ffffffff81000200 T b\n"
		"ffffffff81000000 T first\n");
	uint64_t off;

	CHECK(ks);
	CHECK(ksyms_count(ks) == 5);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000000ULL, &off, NULL), "first");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000150ULL, &off, NULL), "a");
	CHECK(off == 0x50);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000250ULL, &off, NULL), "b");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000350ULL, &off, NULL), "c");
	CHECK_STR(ksyms_lookup(ks, 0xffffffffc0000004ULL, &off, NULL), "m1");
	ksyms_free(ks);
}

static void test_duplicates(void)
{
	struct ksyms *ks = load_str(
		/* Global wins over local even when later. */
		"ffffffff81000000 t loc_alias\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T _text\n"
		/* Same rank: the first one stays. */
		"ffffffff81000100 t first_local\n"
		"ffffffff81000100 t second_local\n"
		/* A weak global counts as global. */
		"ffffffff81000200 w weak_loc\n"
		"ffffffff81000200 W weak_glob\n"
		"ffffffff81000200 t plain_loc\n"
		/* The same pair in the other order gives the same answer. */
		"ffffffff81000300 T glob_first\n"
		"ffffffff81000300 t loc_second\n");

	CHECK(ks);
	CHECK(ksyms_count(ks) == 4);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000000ULL, NULL, NULL), "_stext");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000100ULL, NULL, NULL),
		  "first_local");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000200ULL, NULL, NULL),
		  "weak_glob");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000300ULL, NULL, NULL),
		  "glob_first");
	ksyms_free(ks);
}

static void test_kptr_restrict(void)
{
	struct ksyms *ks = load_str(
		"0000000000000000 T _stext\n"
		"0000000000000000 t helper\n"
		"0000000000000000 D data\n"
		"0000000000000000 t xfs_iget\t[xfs]\n");

	CHECK(!ks);
	CHECK(errno == EPERM);
}

static void test_empty_and_no_text(void)
{
	struct ksyms *ks = load_str("");

	CHECK(!ks);
	CHECK(errno == EINVAL);

	ks = load_str("ffffffff82000000 D data\nffffffff82000100 B bss\n");
	CHECK(!ks);
	CHECK(errno == EINVAL);

	ks = load_str("garbage\n\n");
	CHECK(!ks);
	CHECK(errno == EINVAL);

	CHECK(!ksyms_load_file(NULL));
	CHECK(errno == EINVAL);
}

static void test_malformed_lines_skipped(void)
{
	struct ksyms *ks = load_str(
		"not a symbol line\n"
		"ffffffff81000000 T good_one\n"
		"ffffffff81000100T squashed\n"
		"ffffffff81000200 T\n"
		"zzzzffff81000300 T bad_hex\n"
		"1ffffffff81000400 T too_many_digits\n"
		"ffffffff81000500 T bad_module\t[unterminated\n"
		"ffffffff81000600 T crlf_line\r\n"
		"ffffffff81000700 T last_no_newline");
	uint64_t off;

	CHECK(ks);
	CHECK(ksyms_count(ks) == 3);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000500ULL, &off, NULL), "good_one");
	CHECK(off == 0x500);
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000600ULL, NULL, NULL),
		  "crlf_line");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000700ULL, NULL, NULL),
		  "last_no_newline");
	ksyms_free(ks);
}

static void test_long_name(void)
{
	char name[301], table[512];
	const char *mod = "unset";
	struct ksyms *ks;
	const char *got;

	memset(name, 'x', 300);
	name[0] = 'L';
	name[299] = 'E';
	name[300] = '\0';
	snprintf(table, sizeof(table),
		 "ffffffff81000000 T before\n"
		 "ffffffff81000100 t %s\t[longmod]\n"
		 "ffffffff81000200 T after\n", name);
	ks = load_str(table);
	CHECK(ks);
	got = ksyms_lookup(ks, 0xffffffff81000180ULL, NULL, &mod);
	CHECK(got && strlen(got) == 300);
	CHECK_STR(got, name);
	CHECK_STR(mod, "longmod");
	CHECK_STR(ksyms_lookup(ks, 0xffffffff81000200ULL, NULL, NULL), "after");
	ksyms_free(ks);
}

static void test_many_symbols(void)
{
	/* Enough to grow the array and the arena several times over. */
	const size_t n = 20000;
	size_t len = 0, i;
	char *buf = malloc(n * 64);
	struct ksyms *ks;
	FILE *f;
	uint64_t off;
	char want[32];

	CHECK(buf);
	/* Descending, so the sort has real work to do. */
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "%016" PRIx64 " t fn_%zu\n",
				       (uint64_t)0xffffffff81000000ULL +
				       (uint64_t)(n - 1 - i) * 0x40,
				       n - 1 - i);
	f = fmemopen(buf, len, "r");
	CHECK(f);
	ks = ksyms_load_file(f);
	fclose(f);
	free(buf);
	CHECK(ks);
	CHECK(ksyms_count(ks) == n);
	for (i = 0; i < n; i += 997) {
		snprintf(want, sizeof(want), "fn_%zu", i);
		CHECK_STR(ksyms_lookup(ks, 0xffffffff81000000ULL + i * 0x40 + 7,
				       &off, NULL), want);
		CHECK(off == 7);
	}
	ksyms_free(ks);
}

/* The cache answers exactly what the search does: for hits, misses (NULL
 * names), slots shared by several addresses, and another table. */
static void test_cached_lookups(void)
{
	static struct ksyms_cache cache;	/* zeroed, like the broker's */
	struct ksyms *a = load_str("ffffffff81000000 T alpha\n"
				   "ffffffff81000100 T beta\n");
	struct ksyms *b = load_str("ffffffff81000000 T gamma\n");
	uint64_t addr = 0xffffffff81000000ULL, x = 88172645463325252ULL;

	CHECK(a && b);
	CHECK_STR(ksyms_lookup_cached(a, &cache, addr + 8), "alpha");
	CHECK_STR(ksyms_lookup_cached(a, &cache, addr + 0x108), "beta");
	CHECK(ksyms_lookup_cached(a, &cache, 0) == NULL);
	CHECK(ksyms_lookup_cached(a, &cache, addr - 1) == NULL);
	CHECK(ksyms_lookup_cached(a, &cache, addr - 1) == NULL);
	/* the same address in another table is that table's */
	CHECK_STR(ksyms_lookup_cached(b, &cache, addr + 8), "gamma");
	CHECK_STR(ksyms_lookup_cached(a, &cache, addr + 8), "alpha");
	/* 8 times as many addresses as slots, twice: every answer the
	 * search's, whatever the slot held before */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < KSYMS_CACHE_SLOTS * 8; i++) {
			uint64_t at;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			at = addr - 0x100 + x % (KSYMS_MAX_OFFSET + 0x400);
			if (ksyms_lookup_cached(a, &cache, at) !=
			    ksyms_lookup(a, at, NULL, NULL)) {
				fprintf(stderr, "  address %#" PRIx64 ": the cache "
					"and the search differ\n", at);
				CHECK(0);
				break;
			}
		}
	}
	ksyms_free(a);
	ksyms_free(b);
}

static void test_load_path_errors(void)
{
	errno = 0;
	CHECK(!ksyms_load("/nonexistent/pgoff/kallsyms"));
	CHECK(errno == ENOENT);
	CHECK(!ksyms_load(NULL));
	CHECK(errno == EINVAL);
	/* NULL-safe helpers. */
	ksyms_free(NULL);
	CHECK(ksyms_count(NULL) == 0);
	CHECK(!ksyms_lookup(NULL, 0xffffffff81000000ULL, NULL, NULL));
}

/*
 * The running kernel. Not a skip anywhere: a missing file fails, and a
 * file whose addresses are all hidden must be reported as EPERM.
 */
static void test_real_kallsyms(void)
{
	const char *path = "/proc/kallsyms";
	uint64_t addr = 0, a, off = 1;
	int nonzero = 0, aliases = 0;
	char *line = NULL, name[600];
	const char *got, *mod = "unset";
	struct ksyms *ks;
	size_t cap = 0;
	char type;
	FILE *f;

	f = fopen(path, "re");
	CHECK(f);
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%" SCNx64 " %c %599s", &a, &type, name) != 3)
			continue;
		if (a)
			nonzero = 1;
		if (!strcmp(name, "schedule") && !strchr(line, '['))
			addr = a;
	}
	free(line);
	fclose(f);

	if (!nonzero) {
		errno = 0;
		CHECK(!ksyms_load(path));
		CHECK(errno == EPERM);
		return;
	}
	CHECK(addr);

	/* Other text symbols at the same address may legitimately win. */
	f = fopen(path, "re");
	CHECK(f);
	line = NULL;
	cap = 0;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "%" SCNx64 " %c %599s", &a, &type, name) == 3 &&
		    a == addr && strchr("tTwW", type) && strcmp(name, "schedule"))
			aliases++;
	free(line);
	fclose(f);

	ks = ksyms_load(path);
	CHECK(ks);
	CHECK(ksyms_count(ks) > 1000);
	got = ksyms_lookup(ks, addr, &off, &mod);
	CHECK(got);
	CHECK(off == 0);
	CHECK(mod == NULL);
	if (!aliases)
		CHECK_STR(got, "schedule");
	/* An address inside the function resolves to the same symbol. */
	CHECK_STR(ksyms_lookup(ks, addr + 1, &off, NULL), got);
	CHECK(off == 1);
	printf("# schedule at 0x%" PRIx64 " -> %s, %zu symbols\n", addr, got,
	       ksyms_count(ks));
	ksyms_free(ks);
}

int main(void)
{
	RUN(test_basic_lookups);
	RUN(test_unsorted_input);
	RUN(test_duplicates);
	RUN(test_kptr_restrict);
	RUN(test_empty_and_no_text);
	RUN(test_malformed_lines_skipped);
	RUN(test_long_name);
	RUN(test_many_symbols);
	RUN(test_cached_lookups);
	RUN(test_load_path_errors);
	RUN(test_real_kallsyms);
	return CHECK_DONE();
}
