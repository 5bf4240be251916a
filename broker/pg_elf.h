/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_elf.h - what pgoffd reads from a postgres executable with libelf:
 * exported symbols (PostgreSQL 14+ exports my_wait_event_info and
 * debug_query_string in .dynsym), the first loadable segment, and the server version string.
 */
#ifndef PGOFF_PG_ELF_H
#define PGOFF_PG_ELF_H

#include <stddef.h>
#include <stdint.h>

struct pg_elf_info {
	uint64_t wait_event_sym;	/* st_value of my_wait_event_info, 0 = absent */
	uint64_t query_sym;		/* st_value of debug_query_string, 0 = absent */
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

#endif
