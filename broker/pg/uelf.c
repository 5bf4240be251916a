// SPDX-License-Identifier: GPL-2.0-only
/* uelf.c - bounded ELF symbol reader for user stacks; see uelf.h. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "broker/pg/uelf.h"

int uelf_read(const struct uelf_src *src, uint64_t off, void *dst, size_t len)
{
	size_t got = 0;

	if (off > src->size || len > src->size - off)
		return -EINVAL;
	if (src->fd < 0) {
		memcpy(dst, src->buf + off, len);
		return 0;
	}
	while (got < len) {
		ssize_t n = pread(src->fd, (char *)dst + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EINVAL;	/* truncated since */
		got += (size_t)n;
	}
	return 0;
}

/* len more bytes read for e, if its cap allows: pgoffd's loop waits
 * for them. */
static int charge(struct uelf *e, uint64_t len)
{
	if (len > UELF_MAX_READ - e->bytes_read)
		return -EFBIG;
	e->bytes_read += len;
	return 0;
}

/* A table of a section, read whole: size capped, inside the file. */
static int read_table(const struct uelf_src *src, const Elf64_Shdr *sh,
		      struct uelf *e, void **out)
{
	void *p;
	int err;

	*out = NULL;
	if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0)
		return -ENOENT;
	if (sh->sh_size > UELF_MAX_TABLE || charge(e, sh->sh_size))
		return -EFBIG;
	p = malloc(sh->sh_size);
	if (!p)
		return -ENOMEM;
	err = uelf_read(src, sh->sh_offset, p, sh->sh_size);
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

struct shdrs {
	Elf64_Shdr *v;
	size_t n;
};

static int read_ehdr(const struct uelf_src *src, Elf64_Ehdr *eh)
{
	if (src->size > UELF_MAX_FILE)
		return -EFBIG;
	if (uelf_read(src, 0, eh, sizeof(*eh)) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	return 0;
}

static int read_shdrs(const struct uelf_src *src, const Elf64_Ehdr *eh,
		      struct uelf *e, struct shdrs *sh)
{
	sh->v = NULL;
	sh->n = eh->e_shnum;
	if (!sh->n)
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return -EINVAL;
	if (sh->n > UELF_MAX_SECTIONS || charge(e, sh->n * sizeof(Elf64_Shdr)))
		return -EFBIG;
	sh->v = calloc(sh->n, sizeof(Elf64_Shdr));
	if (!sh->v)
		return -ENOMEM;
	return uelf_read(src, eh->e_shoff, sh->v, sh->n * sizeof(Elf64_Shdr));
}

/* Append a string table to the pool; its base offset in *base. */
static int pool_add(struct uelf *e, const char *tab, size_t len, size_t *base)
{
	char *p;

	if (len > UELF_MAX_TABLE || e->strs_len > UELF_MAX_TABLE * 2)
		return -EFBIG;
	p = realloc(e->strs, e->strs_len + len + 1);
	if (!p)
		return -ENOMEM;
	e->strs = p;
	memcpy(p + e->strs_len, tab, len);
	p[e->strs_len + len] = '\0';	/* a name running off the end stops */
	*base = e->strs_len;
	e->strs_len += len + 1;
	return 0;
}

/* The defined functions of a symbol table (SHT_SYMTAB or SHT_DYNSYM). */
static int add_symbols(const struct uelf_src *src, const struct shdrs *sh,
		       size_t idx, struct uelf *e)
{
	const Elf64_Shdr *s = &sh->v[idx];
	Elf64_Sym *syms = NULL;
	char *strtab = NULL;
	size_t n, base, kept = 0;
	struct uelf_sym *grown;
	int err;

	if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= sh->n ||
	    sh->v[s->sh_link].sh_type != SHT_STRTAB)
		return -EINVAL;
	if ((err = read_table(src, s, e, (void **)&syms)) ||
	    (err = read_table(src, &sh->v[s->sh_link], e, (void **)&strtab)))
		goto out;
	err = pool_add(e, strtab, sh->v[s->sh_link].sh_size, &base);
	if (err)
		goto out;
	n = s->sh_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < n; i++) {
		unsigned int type = ELF64_ST_TYPE(syms[i].st_info);

		if ((type == STT_FUNC || type == STT_GNU_IFUNC) &&
		    syms[i].st_shndx != SHN_UNDEF && syms[i].st_value &&
		    syms[i].st_name < sh->v[s->sh_link].sh_size)
			kept++;
	}
	if (e->nsyms + kept > UELF_MAX_SYMS) {
		err = -EFBIG;
		goto out;
	}
	grown = realloc(e->syms, (e->nsyms + kept + 1) * sizeof(*grown));
	if (!grown) {
		err = -ENOMEM;
		goto out;
	}
	e->syms = grown;
	for (size_t i = 0; i < n; i++) {
		unsigned int type = ELF64_ST_TYPE(syms[i].st_info);

		if ((type == STT_FUNC || type == STT_GNU_IFUNC) &&
		    syms[i].st_shndx != SHN_UNDEF && syms[i].st_value &&
		    syms[i].st_name < sh->v[s->sh_link].sh_size) {
			struct uelf_sym *u = &e->syms[e->nsyms++];

			u->addr = syms[i].st_value;
			u->size = syms[i].st_size;
			u->name = (uint32_t)(base + syms[i].st_name);
		}
	}
out:
	free(syms);
	free(strtab);
	return err;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct uelf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a sized symbol before an alias without a size */
	return x->size > y->size ? -1 : x->size < y->size;
}

/* NT_GNU_BUILD_ID from a note section. */
static void read_build_id(const struct uelf_src *src, const Elf64_Shdr *s,
			  struct uelf *e)
{
	uint8_t buf[256];
	size_t pos = 0, len = s->sh_size < sizeof(buf) ? s->sh_size : sizeof(buf);

	if (uelf_read(src, s->sh_offset, buf, len))
		return;
	while (pos + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name, desc;

		memcpy(&nh, buf + pos, sizeof(nh));
		name = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		desc = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (nh.n_namesz > len || nh.n_descsz > len ||
		    pos + sizeof(nh) + name + desc > len)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + pos + sizeof(nh), "GNU", 4) == 0 &&
		    nh.n_descsz <= sizeof(e->build_id)) {
			memcpy(e->build_id, buf + pos + sizeof(nh) + name,
			       nh.n_descsz);
			e->build_id_len = nh.n_descsz;
			return;
		}
		pos += sizeof(nh) + name + desc;
	}
}

/* The section's name is .gnu_debuglink: its file name (NUL-terminated). */
static void read_debuglink(const struct uelf_src *src, const Elf64_Shdr *s,
			   struct uelf *e)
{
	size_t len = s->sh_size < sizeof(e->debuglink) ? s->sh_size :
			sizeof(e->debuglink);

	if (len < 2 || uelf_read(src, s->sh_offset, e->debuglink, len) ||
	    !memchr(e->debuglink, '\0', len) || strchr(e->debuglink, '/'))
		e->debuglink[0] = '\0';
}

static int read_segments(const struct uelf_src *src, const Elf64_Ehdr *eh,
			 struct uelf *e)
{
	if (!eh->e_phnum)
		return 0;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -EINVAL;
	if (eh->e_phnum > 256)
		return -EFBIG;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		if (uelf_read(src, eh->e_phoff + i * sizeof(ph), &ph, sizeof(ph)))
			return -EINVAL;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    e->nsegs == UELF_MAX_SEGMENTS)
			continue;
		e->segs[e->nsegs].offset = ph.p_offset;
		e->segs[e->nsegs].vaddr = ph.p_vaddr;
		e->segs[e->nsegs].filesz = ph.p_filesz;
		e->nsegs++;
	}
	return 0;
}

/* Symbols of the types wanted (SHT_SYMTAB, SHT_DYNSYM or both). */
static int load_symbols(const struct uelf_src *src, struct uelf *e,
			bool symtab_only)
{
	Elf64_Ehdr eh;
	struct shdrs sh = { 0 };
	char *names = NULL;
	size_t names_len = 0;
	bool seen_symtab = false, seen_dynsym = false;
	int err = read_ehdr(src, &eh);

	if (err)
		return err;
	if (!symtab_only) {
		e->machine = eh.e_machine;
		if ((err = read_segments(src, &eh, e)))
			return err;
	}
	if ((err = read_shdrs(src, &eh, e, &sh)))
		goto out;
	if (eh.e_shstrndx < sh.n &&
	    read_table(src, &sh.v[eh.e_shstrndx], e, (void **)&names) == 0)
		names_len = sh.v[eh.e_shstrndx].sh_size;
	for (size_t i = 0; i < sh.n; i++) {
		const Elf64_Shdr *s = &sh.v[i];

		/* one table of each kind: a file with thousands of them
		 * would cost thousands of reads of up to 64 MiB */
		if ((s->sh_type == SHT_SYMTAB && !seen_symtab) ||
		    (s->sh_type == SHT_DYNSYM && !symtab_only && !seen_dynsym)) {
			seen_symtab |= s->sh_type == SHT_SYMTAB;
			seen_dynsym |= s->sh_type == SHT_DYNSYM;
			err = add_symbols(src, &sh, i, e);
			if (err == -ENOENT)	/* an empty table */
				err = 0;
			if (err)
				goto out;
			if (s->sh_type == SHT_SYMTAB)
				e->has_symtab = true;
		} else if (symtab_only) {
			continue;
		} else if (s->sh_type == SHT_NOTE && !e->build_id_len) {
			read_build_id(src, s, e);
		} else if (s->sh_type == SHT_PROGBITS && names &&
			   s->sh_name < names_len &&
			   strncmp(names + s->sh_name, ".gnu_debuglink",
				   names_len - s->sh_name) == 0) {
			read_debuglink(src, s, e);
		} else if (s->sh_type == SHT_PROGBITS && names &&
			   s->sh_name < names_len && e->nplt < 4 &&
			   strncmp(names + s->sh_name, ".plt",
				   names_len - s->sh_name < 4 ?
				   names_len - s->sh_name : 4) == 0 &&
			   (s->sh_flags & SHF_EXECINSTR)) {
			e->plt[e->nplt].vaddr = s->sh_addr;
			e->plt[e->nplt++].filesz = s->sh_size;
		}
	}
out:
	/* also after an error: lookups search what was added */
	if (e->nsyms)
		qsort(e->syms, e->nsyms, sizeof(*e->syms), cmp_sym);
	free(names);
	free(sh.v);
	return err;
}

int uelf_load(const struct uelf_src *src, struct uelf *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = load_symbols(src, out, false);
	if (err)
		uelf_free(out);
	return err;
}

int uelf_add_symtab(const struct uelf_src *src, struct uelf *e)
{
	return load_symbols(src, e, true);
}

void uelf_free(struct uelf *e)
{
	free(e->syms);
	free(e->strs);
	e->syms = NULL;
	e->strs = NULL;
	e->nsyms = e->strs_len = 0;
}

bool uelf_offset_to_vaddr(const struct uelf *e, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->nsegs; i++)
		if (off >= e->segs[i].offset &&
		    off - e->segs[i].offset < e->segs[i].filesz) {
			*vaddr = off - e->segs[i].offset + e->segs[i].vaddr;
			return true;
		}
	return false;
}

bool uelf_vaddr_to_offset(const struct uelf *e, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < e->nsegs; i++)
		if (vaddr >= e->segs[i].vaddr &&
		    vaddr - e->segs[i].vaddr < e->segs[i].filesz) {
			*off = vaddr - e->segs[i].vaddr + e->segs[i].offset;
			return true;
		}
	return false;
}

bool uelf_in_plt(const struct uelf *e, uint64_t vaddr)
{
	for (size_t i = 0; i < e->nplt; i++)
		if (vaddr >= e->plt[i].vaddr &&
		    vaddr - e->plt[i].vaddr < e->plt[i].filesz)
			return true;
	return false;
}

const char *uelf_lookup(const struct uelf *e, uint64_t vaddr, uint64_t *off)
{
	size_t lo = 0, hi = e->nsyms;
	const struct uelf_sym *s;

	/* the last symbol at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &e->syms[lo - 1];
	/* aliases at one address: the first (sorted) has the size */
	while (lo > 1 && e->syms[lo - 2].addr == s->addr)
		s = &e->syms[--lo - 1];
	if (vaddr - s->addr >= (s->size ? s->size : 1))
		return NULL;
	*off = vaddr - s->addr;
	return e->strs + s->name;
}

int uelf_frame_pointers(const struct uelf_src *src, const struct uelf *e)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t mov_rsp_rbp[3] = { 0x48, 0x89, 0xe5 };
	size_t sampled = 0, kept = 0, step;

	if (e->machine != EM_X86_64 || e->nsyms < 16)
		return -1;
	step = e->nsyms / 64 ? e->nsyms / 64 : 1;
	for (size_t i = 0; i < e->nsyms && sampled < 64; i += step) {
		uint8_t b[24];
		size_t at;
		uint64_t off;

		/* leaves too small to need a frame are no sign either way */
		if (e->syms[i].size < 64 ||
		    !uelf_vaddr_to_offset(e, e->syms[i].addr, &off) ||
		    uelf_read(src, off, b, sizeof(b)))
			continue;
		sampled++;
		/* push %rbp first (after endbr64), mov %rsp,%rbp soon after:
		 * the compiler may schedule an instruction between them */
		at = memcmp(b, endbr64, 4) ? 0 : 4;
		if (b[at] == 0x55 &&
		    memmem(b + at + 1, sizeof(b) - at - 1, mov_rsp_rbp, 3))
			kept++;
	}
	if (sampled < 8)
		return -1;
	return kept * 2 >= sampled;
}
