/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ksyms.c - kernel symbolizer over a /proc/kallsyms snapshot.
 *
 * Layout: one array of fixed-size entries sorted by address, and one
 * string arena holding every name and module name. Entries refer to the
 * arena by offset while loading (the arena moves when it grows) and the
 * offsets stay valid afterwards, so nothing is allocated per symbol.
 */
#include "broker/kernel/ksyms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_MODULE UINT32_MAX

struct ksym {
	uint64_t addr;
	uint32_t name;		/* arena offset */
	uint32_t module;	/* arena offset, or NO_MODULE */
	uint32_t seq;		/* input order: qsort is not stable */
	uint8_t global;		/* T/W rather than t/w */
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *arena;
};

struct loader {
	struct ksym *syms;
	size_t nr, cap;
	char *arena;
	size_t used, size;
	uint32_t last_module;	/* module lines come in runs: store each once */
	size_t parsed;		/* well-formed lines of any type */
	size_t nonzero;		/* ... of which had a non-zero address */
};

static int arena_add(struct loader *ld, const char *s, size_t n, uint32_t *off)
{
	size_t need = ld->used + n + 1;

	/* Offsets are 32-bit; NO_MODULE is reserved. */
	if (need < ld->used || need >= UINT32_MAX)
		return -ENOMEM;
	if (need > ld->size) {
		size_t size = ld->size ? ld->size : 64 * 1024;
		char *p;

		while (size < need)
			size *= 2;
		p = realloc(ld->arena, size);
		if (!p)
			return -ENOMEM;
		ld->arena = p;
		ld->size = size;
	}
	memcpy(ld->arena + ld->used, s, n);
	ld->arena[ld->used + n] = '\0';
	*off = (uint32_t)ld->used;
	ld->used = need;
	return 0;
}

static int syms_push(struct loader *ld, const struct ksym *sym)
{
	if (ld->nr == ld->cap) {
		size_t cap = ld->cap ? ld->cap * 2 : 4096;
		struct ksym *p;

		if (cap > SIZE_MAX / sizeof(*p) || ld->nr >= UINT32_MAX)
			return -ENOMEM;
		p = realloc(ld->syms, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ld->syms = p;
		ld->cap = cap;
	}
	ld->syms[ld->nr++] = *sym;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * One line: "<hex addr> <type> <name>[\t[module]]". Malformed lines are
 * skipped rather than fatal: the file is the kernel's, and a format
 * addition we do not know should not cost us every symbol.
 */
static int parse_line(struct loader *ld, char *line, size_t len)
{
	const char *p = line, *end = line + len;
	const char *name, *mod = NULL;
	size_t name_len, mod_len = 0;
	struct ksym sym = { 0 };
	int digits = 0, v, err;
	char type;

	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;

	for (; p < end && (v = hexval(*p)) >= 0; p++) {
		if (++digits > 16)
			return 0;
		sym.addr = sym.addr << 4 | (uint64_t)v;
	}
	if (!digits || p + 3 > end || *p != ' ' || p[2] != ' ')
		return 0;
	type = p[1];
	p += 3;

	name = p;
	while (p < end && !is_blank(*p))
		p++;
	name_len = (size_t)(p - name);
	if (!name_len)
		return 0;
	while (p < end && is_blank(*p))
		p++;
	if (p < end) {
		if (*p != '[' || end[-1] != ']' || end - p < 3)
			return 0;
		mod = p + 1;
		mod_len = (size_t)(end - p - 2);
	}

	ld->parsed++;
	if (sym.addr)
		ld->nonzero++;
	/* Address 0 is what kptr_restrict shows: it locates nothing. */
	if (!sym.addr || !strchr("tTwW", type))
		return 0;

	sym.global = type == 'T' || type == 'W';
	sym.seq = (uint32_t)ld->nr;
	sym.module = NO_MODULE;
	if (mod) {
		if (ld->last_module != NO_MODULE &&
		    strlen(ld->arena + ld->last_module) == mod_len &&
		    !memcmp(ld->arena + ld->last_module, mod, mod_len)) {
			sym.module = ld->last_module;
		} else {
			err = arena_add(ld, mod, mod_len, &sym.module);
			if (err)
				return err;
			ld->last_module = sym.module;
		}
	}
	err = arena_add(ld, name, name_len, &sym.name);
	if (err)
		return err;
	return syms_push(ld, &sym);
}

/* Address, then global before local, then input order: a total order. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Give back the slack of the doubling growth; failure to shrink is harmless. */
static void shrink(struct loader *ld)
{
	struct ksym *syms = realloc(ld->syms, ld->nr * sizeof(*syms));
	char *arena = realloc(ld->arena, ld->used);

	if (syms)
		ld->syms = syms;
	if (arena)
		ld->arena = arena;
}

static void loader_free(struct loader *ld)
{
	free(ld->syms);
	free(ld->arena);
}

struct ksyms *ksyms_load_file(FILE *f)
{
	struct loader ld = { .last_module = NO_MODULE };
	struct ksyms *ks;
	char *line = NULL;
	size_t cap = 0, i, n;
	ssize_t len;
	int err = 0;

	if (!f) {
		errno = EINVAL;
		return NULL;
	}
	/* getline grows its buffer, so long names are never cut. */
	errno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		err = parse_line(&ld, line, (size_t)len);
		if (err)
			break;
		errno = 0;
	}
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	else if (!err && errno == ENOMEM)
		err = -ENOMEM;
	free(line);
	if (!err && ld.parsed && !ld.nonzero)
		err = -EPERM;
	if (!err && !ld.nr)
		err = -EINVAL;
	if (err)
		goto fail;

	qsort(ld.syms, ld.nr, sizeof(*ld.syms), ksym_cmp);
	/* Keep the first entry of each address: the sort put the winner there. */
	for (i = 1, n = 1; i < ld.nr; i++)
		if (ld.syms[i].addr != ld.syms[n - 1].addr)
			ld.syms[n++] = ld.syms[i];
	ld.nr = n;
	shrink(&ld);

	ks = malloc(sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto fail;
	}
	ks->syms = ld.syms;
	ks->nr = ld.nr;
	ks->arena = ld.arena;
	return ks;

fail:
	loader_free(&ld);
	errno = -err;
	return NULL;
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *ks;
	FILE *f;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	f = fopen(path, "re");
	if (!f)
		return NULL;
	ks = ksyms_load_file(f);
	err = errno;
	fclose(f);
	errno = err;
	return ks;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->arena);
	free(ks);
}

const char *ksyms_lookup(const struct ksyms *ks, uint64_t addr,
			 uint64_t *offset, const char **module)
{
	const struct ksym *sym;
	size_t lo = 0, hi;

	if (!ks || !ks->nr || !addr || addr < ks->syms[0].addr)
		return NULL;
	/* Invariant: syms[lo].addr <= addr, and everything from hi on is > addr. */
	hi = ks->nr;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	sym = &ks->syms[lo];
	if (addr - sym->addr > KSYMS_MAX_OFFSET)
		return NULL;
	if (offset)
		*offset = addr - sym->addr;
	if (module)
		*module = sym->module == NO_MODULE ? NULL :
			  ks->arena + sym->module;
	return ks->arena + sym->name;
}

const char *ksyms_lookup_cached(const struct ksyms *ks, struct ksyms_cache *c,
				uint64_t addr)
{
	/* Fibonacci hashing: return addresses differ in their low bits */
	size_t slot = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 54) &
		      (KSYMS_CACHE_SLOTS - 1);

	if (c->ks != ks) {
		memset(c, 0, sizeof(*c));
		c->ks = ks;
	}
	if (!addr)
		return NULL;
	if (c->addr[slot] != addr) {
		c->name[slot] = ksyms_lookup(ks, addr, NULL, NULL);
		c->addr[slot] = addr;
	}
	return c->name[slot];
}

size_t ksyms_count(const struct ksyms *ks)
{
	return ks ? ks->nr : 0;
}
