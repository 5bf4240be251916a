// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_uelf.c - libFuzzer target for the ELF symbol reader that user
 * stacks use on files a traced process has mapped: any bytes, as a file.
 * What it accepts must hold together: symbols sorted, names inside the
 * string pool, every lookup answering from a symbol that contains the
 * address; what it refuses, it refuses with one of its documented codes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "broker/pg/uelf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uelf_src src = { .fd = -1, .buf = data, .size = size };
	struct uelf e;
	int r = uelf_load(&src, &e);

	if (r) {
		if (r != -ENOEXEC && r != -EFBIG && r != -EINVAL && r != -ENOMEM)
			abort();
		return 0;
	}
	for (size_t i = 0; i < e.nsyms; i++) {
		uint64_t off = 0;
		const char *name;

		if (e.syms[i].name >= e.strs_len ||
		    (i && e.syms[i - 1].addr > e.syms[i].addr))
			abort();
		name = uelf_lookup(&e, e.syms[i].addr, &off);
		if (!name || off != 0 || name < e.strs || name >= e.strs + e.strs_len)
			abort();
	}
	uelf_frame_pointers(&src, &e);
	uelf_add_symtab(&src, &e);
	uelf_free(&e);
	return 0;
}
