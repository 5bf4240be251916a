// SPDX-License-Identifier: GPL-2.0-only
/* pg_elf.c - symbols, segments and version of a postgres binary. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/pg/pg_elf.h"

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
	find_dynsym(elf, "MyBEEntry", &info->status_sym);
	find_dynsym(elf, "NamedLWLockTrancheArray", &info->tranches_sym);
	find_dynsym(elf, "NamedLWLockTrancheRequests", &info->ntranches_sym);
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

#define NT_STAPSDT 3

static int usdt_kind(const char *name)
{
	static const char *const names[PGOFF_USDT__KINDS] = {
		[PGOFF_USDT_LOCK_START] = "lock__wait__start",
		[PGOFF_USDT_LOCK_DONE] = "lock__wait__done",
		[PGOFF_USDT_LWLOCK_START] = "lwlock__wait__start",
		[PGOFF_USDT_LWLOCK_DONE] = "lwlock__wait__done",
	};

	for (int k = 0; k < PGOFF_USDT__KINDS; k++)
		if (strcmp(name, names[k]) == 0)
			return k;
	return -1;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));	/* unaligned, host order (an ELF of
					   another order has no usable sites) */
	return v;
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A NUL-terminated string inside [p, end), or NULL. */
static const char *note_str(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *s = *p, *nul = memchr(s, '\0', (size_t)(end - s));

	if (!nul)
		return NULL;
	*p = nul + 1;
	return (const char *)s;
}

int pg_elf_parse_stapsdt(const void *buf, size_t len, struct pg_usdt_note *out,
			 size_t max, unsigned int *total)
{
	const unsigned char *p = buf, *end = p + len;
	size_t n = 0;

	*total = 0;
	while ((size_t)(end - p) >= 12) {
		uint32_t namesz = get_u32(p), descsz = get_u32(p + 4);
		uint32_t type = get_u32(p + 8);
		size_t name_room = ((size_t)namesz + 3) & ~(size_t)3;
		size_t desc_room = ((size_t)descsz + 3) & ~(size_t)3;
		const unsigned char *name = p + 12, *desc, *q, *dend;
		const char *provider, *probe;
		int kind;

		if (name_room > (size_t)(end - name))
			return -EINVAL;
		desc = name + name_room;
		if (descsz > (size_t)(end - desc))
			return -EINVAL;
		dend = desc + descsz;
		/* the last note's padding may be cut off */
		p = desc_room <= (size_t)(end - desc) ? desc + desc_room : end;
		if (type != NT_STAPSDT || namesz != 8 ||
		    memcmp(name, "stapsdt", 8) != 0)
			continue;
		(*total)++;
		if (descsz < 3 * 8)
			return -EINVAL;
		q = desc + 3 * 8;
		provider = note_str(&q, dend);
		probe = provider ? note_str(&q, dend) : NULL;
		if (!probe)
			return -EINVAL;
		if (strcmp(provider, "postgresql") != 0 ||
		    (kind = usdt_kind(probe)) < 0)
			continue;
		if (n == max)
			return -E2BIG;
		out[n].pc = get_u64(desc);
		out[n].base = get_u64(desc + 8);
		out[n].sem = get_u64(desc + 16);
		out[n].kind = (uint32_t)kind;
		n++;
	}
	return (int)n;
}

/* The file offset of vaddr in a PT_LOAD segment (executable if exec). */
static int vaddr_offset(Elf *elf, uint64_t vaddr, bool exec, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    (exec && !(ph.p_flags & PF_X)))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -EINVAL;
}

/* The section called name, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, sh))
			continue;
		s = elf_strptr(elf, shstrndx, sh->sh_name);
		if (s && strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

/* A uprobe replaces the instruction at the site: it must be the nop the
 * compiler put there for the probe, never the middle of another one. */
static bool is_probe_nop(int fd, uint64_t off)
{
#if defined(__x86_64__)
	unsigned char b;

	return pread(fd, &b, 1, (off_t)off) == 1 && b == 0x90;
#elif defined(__aarch64__)
	uint32_t insn;

	return pread(fd, &insn, 4, (off_t)off) == 4 && insn == 0xd503201f;
#else
	(void)fd;
	(void)off;
	return false;
#endif
}

static int usdt_sites(Elf *elf, int fd, struct pg_usdt *u)
{
	struct pg_usdt_note notes[PG_USDT_MAX_SITES];
	GElf_Shdr sh, base_sh;
	Elf_Scn *scn;
	Elf_Data *data;
	uint64_t base = 0;
	int n;

	scn = find_section(elf, ".note.stapsdt", &sh);
	if (!scn || sh.sh_type != SHT_NOTE)
		return 0;
	if (sh.sh_size > PG_USDT_MAX_NOTES)
		return -E2BIG;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -EINVAL;
	n = pg_elf_parse_stapsdt(data->d_buf, data->d_size, notes,
				 PG_USDT_MAX_SITES, &u->notes);
	if (n < 0)
		return n;
	/* a prelinked binary moved; .stapsdt.base says by how much */
	if (find_section(elf, ".stapsdt.base", &base_sh))
		base = base_sh.sh_addr;
	for (int i = 0; i < n; i++) {
		struct pg_usdt_site *s = &u->site[i];
		uint64_t pc = notes[i].pc, sem = notes[i].sem;

		if (base && notes[i].base) {
			pc += base - notes[i].base;
			if (sem)
				sem += base - notes[i].base;
		}
		s->kind = notes[i].kind;
		if (vaddr_offset(elf, pc, true, &s->offset) ||
		    !is_probe_nop(fd, s->offset))
			return -EINVAL;
		s->ref_ctr_offset = 0;
		if (sem && vaddr_offset(elf, sem, false, &s->ref_ctr_offset))
			return -EINVAL;
	}
	u->n = (size_t)n;
	return 0;
}

int pg_elf_read_usdt_fd(int fd, struct pg_usdt *u)
{
	Elf *elf;
	int err;

	memset(u, 0, sizeof(*u));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ, NULL);	/* pread, never mapped */
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	/* 64-bit notes only: PostgreSQL's probes on the hosts pgoff runs on */
	err = gelf_getclass(elf) == ELFCLASS64 ? usdt_sites(elf, fd, u) : 0;
	if (err)
		memset(u, 0, sizeof(*u));
	elf_end(elf);
	return err;
}
