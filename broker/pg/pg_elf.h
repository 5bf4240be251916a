/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_elf.h - what pgoffd reads from a postgres executable with libelf:
 * exported symbols (PostgreSQL 14+ exports my_wait_event_info,
 * debug_query_string, MyBEEntry and the named LWLock tranches in
 * .dynsym), the first loadable segment, and the server version string.
 */
#ifndef PGOFF_PG_ELF_H
#define PGOFF_PG_ELF_H

#include <stddef.h>
#include <stdint.h>

struct pg_elf_info {
	uint64_t wait_event_sym;	/* st_value of my_wait_event_info, 0 = absent */
	uint64_t query_sym;		/* st_value of debug_query_string, 0 = absent */
	uint64_t status_sym;		/* st_value of MyBEEntry (14+), 0 = absent */
	/* NamedLWLockTrancheArray and NamedLWLockTrancheRequests: where the
	 * postmaster keeps the named LWLock tranches (pg_shmem_names.h) */
	uint64_t tranches_sym, ntranches_sym;
	uint64_t first_load_vaddr;	/* p_vaddr of the first PT_LOAD, page-aligned */
	int major;			/* 15, or 0 if unknown */
	char version[32];		/* "15.18", or "" */
};

/*
 * Fills info from the executable open at fd, read with pread only (never
 * mapped). Returns 0, or -errno (-ENOEXEC: not ELF).
 */
int pg_elf_read_fd(int fd, struct pg_elf_info *info);
/* The same from a path. */
int pg_elf_read(const char *path, struct pg_elf_info *info);

/*
 * Version from the "(PostgreSQL) 15.18" text every postgres binary carries.
 * Pure: finds it in a buffer. Returns 0 or -ENOENT.
 */
int pg_elf_parse_version(const char *buf, size_t len, int *major,
			 char *version, size_t version_len);

/*
 * PostgreSQL's USDT sites that bound a wait (see enum pgoff_usdt_kind),
 * from .note.stapsdt, ready for a uprobe: file offsets of the probe's
 * nop and of its semaphore (0: none; the lwlock probes run only while it
 * is non-zero, and the kernel counts it up for each attached uprobe).
 * Each probe has 1 (lock) or 3 (lwlock) sites in Debian 13..19 builds.
 */
#define PG_USDT_MAX_SITES	16
#define PG_USDT_MAX_NOTES	(1u << 20)	/* bytes of .note.stapsdt read */
struct pg_usdt_site {
	uint64_t offset;
	uint64_t ref_ctr_offset;
	uint32_t kind;			/* enum pgoff_usdt_kind */
};
struct pg_usdt {
	size_t n;
	struct pg_usdt_site site[PG_USDT_MAX_SITES];
	unsigned int notes;		/* stapsdt notes of any provider */
};

/* One note as written by the compiler: addresses, not yet file offsets. */
struct pg_usdt_note {
	uint64_t pc, base, sem;
	uint32_t kind;
};

/*
 * Pure: the notes of the wanted probes in a .note.stapsdt section's bytes
 * (any byte string: lengths are checked against len). Fills at most max,
 * counts all stapsdt notes in *total. Returns how many were filled, or
 * -E2BIG if a wanted note did not fit, -EINVAL if the section is
 * malformed.
 */
int pg_elf_parse_stapsdt(const void *buf, size_t len, struct pg_usdt_note *out,
			 size_t max, unsigned int *total);

/*
 * The sites of the executable open at fd. A binary without the probes
 * (or built without --enable-dtrace) gives n == 0 and returns 0. Returns
 * -errno on a read error, -ENOEXEC if not ELF, -E2BIG past the limits,
 * -EINVAL if a site is not where a probe can be (no nop there, outside
 * every executable segment).
 */
int pg_elf_read_usdt_fd(int fd, struct pg_usdt *u);

#endif
