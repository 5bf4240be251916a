/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * uelf.h - function symbols of an ELF file named by a traced process's
 * memory map (the postgres binary, libc, an extension's .so), for user
 * stacks. The file is hostile input: every offset and size is checked
 * against the file and against caps before it is read, with pread only
 * (never mapped); nothing from libelf.
 */
#ifndef PGOFF_UELF_H
#define PGOFF_UELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps on what one file can make pgoffd read and keep. */
#define UELF_MAX_FILE		(1ull << 30)	/* bytes of file */
#define UELF_MAX_SYMS		(1u << 20)	/* function symbols kept */
#define UELF_MAX_TABLE		(64u << 20)	/* bytes of one symbol or string table */
#define UELF_MAX_READ		(64u << 20)	/* bytes of tables read for one file,
						 * its debug file included */
#define UELF_MAX_SECTIONS	4096
#define UELF_MAX_SEGMENTS	16		/* executable PT_LOADs kept */

struct uelf_sym {
	uint64_t addr;			/* st_value: a link-time address */
	uint64_t size;
	uint32_t name;			/* offset into strs */
};

struct uelf_seg {
	uint64_t offset, vaddr, filesz;	/* an executable PT_LOAD */
};

struct uelf {
	struct uelf_sym *syms;		/* sorted by addr */
	size_t nsyms;
	char *strs;			/* the names, NUL-terminated */
	size_t strs_len;
	struct uelf_seg segs[UELF_MAX_SEGMENTS];
	size_t nsegs;
	uint16_t machine;		/* e_machine */
	bool has_symtab;		/* a .symtab was read (not only .dynsym) */
	struct uelf_seg plt[4];		/* .plt, .plt.sec, .plt.got (filesz: size) */
	size_t nplt;
	uint8_t build_id[32];
	size_t build_id_len;
	char debuglink[256];		/* .gnu_debuglink's file name, or "" */
	uint64_t bytes_read;		/* of tables, against UELF_MAX_READ */
};

/*
 * Where to read: a descriptor (pread) or, for tests and the fuzzer, a
 * buffer; size is the file's.
 */
struct uelf_src {
	int fd;				/* -1: buf */
	const uint8_t *buf;
	uint64_t size;
};

/*
 * Read the function symbols (.symtab and .dynsym), the executable
 * segments, the build-id and the debug link. Returns 0, or -errno:
 * -ENOEXEC not a 64-bit little-endian ELF file, -EFBIG over a cap (one
 * of the above, or UELF_MAX_READ for the tables read),
 * -EINVAL an offset or size outside the file, -ENOMEM.
 */
int uelf_load(const struct uelf_src *src, struct uelf *out);
/* Add the .symtab of a separate debug file (same link-time addresses);
 * what it reads counts against e's UELF_MAX_READ. */
int uelf_add_symtab(const struct uelf_src *src, struct uelf *e);
void uelf_free(struct uelf *e);

/* Read len bytes at off, bounds-checked; 0 or -errno. */
int uelf_read(const struct uelf_src *src, uint64_t off, void *dst, size_t len);

/* File offset -> link-time address through the executable segments. */
bool uelf_offset_to_vaddr(const struct uelf *e, uint64_t off, uint64_t *vaddr);
bool uelf_vaddr_to_offset(const struct uelf *e, uint64_t vaddr, uint64_t *off);

/* Whether vaddr is in the PLT: a call there is a call into a library. */
bool uelf_in_plt(const struct uelf *e, uint64_t vaddr);

/* The function containing vaddr, or NULL; *off its offset in it. */
const char *uelf_lookup(const struct uelf *e, uint64_t vaddr, uint64_t *off);

/*
 * Whether the code keeps frame pointers (x86-64: sampled functions open
 * with push %rbp; mov %rsp,%rbp): 1 yes, 0 no, -1 cannot tell (too few
 * functions, another architecture; arm64 keeps them by its ABI).
 */
int uelf_frame_pointers(const struct uelf_src *src, const struct uelf *e);

#endif
