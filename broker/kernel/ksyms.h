/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ksyms.h - kernel address to symbol name, from /proc/kallsyms.
 *
 * The table is loaded once and then only read, so lookups from several
 * threads are safe without locking.
 */
#ifndef PGOFF_BROKER_KSYMS_H
#define PGOFF_BROKER_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ksyms;	/* opaque */

/*
 * Load symbols from a file in /proc/kallsyms format
 * ("ffffffff81000000 T _stext", optional "\t[module]" suffix). Keeps text
 * symbols (t/T/w/W, core kernel and modules). Returns NULL and sets errno on
 * failure: ENOENT (or whatever fopen says), ENOMEM, EPERM when every address
 * is 0 (kptr_restrict hides them), EINVAL for a table without text symbols.
 */
struct ksyms *ksyms_load(const char *path);

/* Same, from an open stream; the stream is read to EOF and not closed. */
struct ksyms *ksyms_load_file(FILE *f);

/* NULL-safe. */
void ksyms_free(struct ksyms *ks);

/*
 * The symbol containing addr: the one with the greatest address <= addr.
 * NULL when addr is 0, below the first symbol, or more than
 * KSYMS_MAX_OFFSET past the symbol found (no kernel function is that big,
 * so such an address is not in any known text). *offset (may be NULL) gets
 * addr - symbol start; *module (may be NULL) gets the module name, or NULL
 * for the core kernel. The strings live as long as ks.
 */
const char *ksyms_lookup(const struct ksyms *ks, uint64_t addr,
			 uint64_t *offset, const char **module);

/*
 * The last lookups, direct-mapped by address, for one thread (the table
 * stays shared and read-only). Kernel stacks repeat the same few hundred
 * return addresses, and a binary search of a whole kallsyms misses the
 * CPU's caches at most of its ~18 steps: pgoffd spent 3.5 % of its time
 * there while storing every event.
 */
#define KSYMS_CACHE_SLOTS 1024		/* a power of two */
struct ksyms_cache {
	const struct ksyms *ks;		/* the table the slots came from */
	uint64_t addr[KSYMS_CACHE_SLOTS];	/* 0: empty */
	const char *name[KSYMS_CACHE_SLOTS];
};

/* ksyms_lookup(ks, addr, NULL, NULL), remembered in c (which starts
 * zeroed, and forgets what it had for another table). */
const char *ksyms_lookup_cached(const struct ksyms *ks, struct ksyms_cache *c,
				uint64_t addr);

/* Number of distinct symbol addresses kept; 0 for NULL. */
size_t ksyms_count(const struct ksyms *ks);

#define KSYMS_MAX_OFFSET (1024 * 1024)

#endif
