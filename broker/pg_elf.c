// SPDX-License-Identifier: GPL-2.0-only
/* pg_elf.c - symbols, segments and version of a postgres binary. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/pg_elf.h"

#define VERSION_TAG "(PostgreSQL) "

int pg_elf_parse_version(const char *buf, size_t len, int *major,
			 char *version, size_t version_len)
{
	const size_t tag_len = strlen(VERSION_TAG);
	const char *p = buf, *end = buf + len;

	while ((p = memmem(p, (size_t)(end - p), VERSION_TAG, tag_len))) {
		const char *v = p + tag_len, *q = v;
		long m = 0;

		while (q < end && q - v < 6 && *q >= '0' && *q <= '9')
			m = m * 10 + (*q++ - '0');
		if (q > v && m >= 9 && m < 1000) {
			size_t n = 0;

			/* "15.18", "16beta2", "17devel": up to a space/NUL */
			while (v + n < end && n + 1 < version_len &&
			       v[n] > ' ' && v[n] < 127)
				n++;
			memcpy(version, v, n);
			version[n] = '\0';
			*major = (int)m;
			return 0;
		}
		p = v;
	}
	return -ENOENT;
}

static int find_dynsym(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return -EINVAL;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int first_load(Elf *elf, uint64_t *vaddr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*vaddr = ph.p_vaddr & ~(uint64_t)(getpagesize() - 1);
			return 0;
		}
	}
	return -ENOENT;
}

/* The version text, anywhere in the file: read in chunks that overlap by
 * more than one "(PostgreSQL) 15.18 " so that none is cut in two. */
static void find_version(int fd, off_t size, struct pg_elf_info *info)
{
	enum { CHUNK = 1 << 20, OVERLAP = 64 };
	char *buf = malloc(CHUNK);
	off_t off = 0;

	if (!buf)
		return;
	while (off < size) {
		ssize_t n = pread(fd, buf, CHUNK, off);

		if (n <= 0)
			break;
		if (pg_elf_parse_version(buf, (size_t)n, &info->major,
					 info->version,
					 sizeof(info->version)) == 0)
			break;
		if (n <= OVERLAP || off + n >= size)
			break;
		off += n - OVERLAP;
	}
	free(buf);
}

int pg_elf_read_fd(int fd, struct pg_elf_info *info)
{
	struct stat st;
	Elf *elf = NULL;
	int err;

	memset(info, 0, sizeof(*info));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	/* ELF_C_READ: libelf reads what it needs with pread, never maps the
	 * file (a mapping turns a truncation under us into SIGBUS) */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = first_load(elf, &info->first_load_vaddr);
	if (err)
		goto cleanup;
	/* A missing symbol (PostgreSQL < 14, stripped) is not an error. */
	find_dynsym(elf, "my_wait_event_info", &info->wait_event_sym);
	find_dynsym(elf, "debug_query_string", &info->query_sym);
	find_version(fd, st.st_size, info);
	err = 0;
cleanup:
	elf_end(elf);
	return err;
}

int pg_elf_read(const char *path, struct pg_elf_info *info)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0) {
		memset(info, 0, sizeof(*info));
		return -errno;
	}
	err = pg_elf_read_fd(fd, info);
	close(fd);
	return err;
}
