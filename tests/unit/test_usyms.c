// SPDX-License-Identifier: GPL-2.0-only
/*
 * User stacks in names: the ELF reader against the real PostgreSQL 15
 * binary (its symbols checked against binutils' nm, an independent
 * reader), hostile files, a stack recorded by pgoffd from a row-lock
 * wait, symbolized again here, and the module cache against one user
 * who maps huge or many files. The files are opened as the prober's
 * worker opens them (symfiles_open) and handed over (usyms_offer).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/priv/symfiles.h"
#include "broker/pg/uelf.h"
#include "broker/pg/usyms.h"
#include "tests/unit/check.h"

#define PG15 "/usr/lib/postgresql/15/bin/postgres"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static int open_src(const char *path, struct uelf_src *src)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		return -1;
	src->fd = fd;
	src->buf = NULL;
	src->size = (uint64_t)st.st_size;
	return 0;
}

/* A function's address as nm sees it, 0 if not found. */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[512], line[512];
	unsigned long long a = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		char sym[400], type;
		unsigned long long v;

		if (sscanf(line, "%llx %c %399s", &v, &type, sym) != 3 ||
		    (type != 'T' && type != 't' && type != 'W' && type != 'i'))
			continue;
		sym[strcspn(sym, "@")] = '\0';	/* epoll_wait@@GLIBC_2.3.2 */
		if (strcmp(sym, name) == 0)
			a = v;
	}
	pclose(p);
	return a;
}

/* c's files, opened as the prober's worker does, handed to u. */
static void offer_maps(struct usyms *u, const struct pg_cluster_info *c)
{
	int32_t idx[PG_PROBE_MAX_MAPS];
	int fds[PG_PROBE_MAX_MAPS];
	size_t n = symfiles_open(c, idx, fds);

	for (size_t k = 0; k < n; k++)
		for (uint32_t i = 0; i < c->nmaps; i++)
			if (idx[i] == (int32_t)k) {
				usyms_offer(u, c->uid, c->maps[i].dev,
					    c->maps[i].ino, fds[k]);
				break;
			}
}

static void test_real_binary(void)
{
	static const char *const names[] = {
		"XLogFlush", "ProcSleep", "LockAcquireExtended",
		"pg_read_binary_file", "WaitLatch", "PostgresMain",
	};
	struct uelf_src src;
	struct uelf e;
	uint64_t off;

	CHECK(open_src(PG15, &src) == 0);
	CHECK(uelf_load(&src, &e) == 0);
	CHECK(e.nsyms > 5000);		/* .dynsym: nearly every function */
	CHECK(!e.has_symtab);		/* Debian strips .symtab */
	CHECK(e.build_id_len == 20);
	CHECK(e.debuglink[0] != '\0');
	CHECK(e.nsegs >= 1 && e.nplt >= 1);
	/* Debian's PostgreSQL keeps frame pointers */
	CHECK(uelf_frame_pointers(&src, &e) == 1);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t a = nm_addr(PG15, names[i]);

		CHECK(a != 0);
		CHECK_STR(uelf_lookup(&e, a + 4, &off), names[i]);
		CHECK(off == 4);
	}
	uelf_free(&e);
	close(src.fd);
}

/* libc keeps no frame pointers: the walk must not trust it. */
static void test_libc(void)
{
	struct uelf_src src;
	struct uelf e;
	uint64_t off, a = nm_addr(LIBC, "epoll_wait");

	CHECK(open_src(LIBC, &src) == 0);
	CHECK(uelf_load(&src, &e) == 0);
	CHECK(a != 0);
	CHECK_STR(uelf_lookup(&e, a + 0x13, &off), "epoll_wait");
	CHECK(uelf_frame_pointers(&src, &e) == 0);
	uelf_free(&e);
	close(src.fd);
}

/* Files that lie: every one refused with its code, nothing read outside. */
static void test_hostile(void)
{
	static uint8_t buf[4096];
	struct uelf_src src = { .fd = -1, .buf = buf, .size = sizeof(buf) };
	struct uelf_src real;
	struct uelf e;
	uint64_t shoff;

	CHECK(uelf_load(&src, &e) == -ENOEXEC);		/* zeros */
	src.size = 10;
	memcpy(buf, "\177ELF", 4);
	CHECK(uelf_load(&src, &e) == -ENOEXEC);		/* shorter than a header */
	/* the real header, over a file cut after it: tables outside it */
	CHECK(open_src(PG15, &real) == 0);
	CHECK(uelf_read(&real, 0, buf, sizeof(buf)) == 0);
	src.size = sizeof(buf);
	CHECK(uelf_load(&src, &e) == -EINVAL);
	/* section headers said to start near the end of the offset space */
	shoff = UINT64_MAX - 8;
	memcpy(buf + 0x28, &shoff, sizeof(shoff));	/* e_shoff */
	CHECK(uelf_load(&src, &e) == -EINVAL);
	/* a file over the cap */
	src.size = UELF_MAX_FILE + 1;
	CHECK(uelf_load(&src, &e) == -EFBIG);
	CHECK(uelf_read(&real, real.size - 4, buf, 8) == -EINVAL);
	close(real.fd);
}

/*
 * A stack pgoffd recorded (row-lock wait, PostgreSQL 15.18-0+deb12u1,
 * libc 2.36-9+deb12u14): addresses as offsets into the mappings, the
 * BPF program's hints with them. The binaries are the installed ones:
 * if the package changed, the offsets no longer name these functions.
 */
static void test_recorded_stack(void)
{
	static const uint64_t exe_ips[] = {
		0x381488, 0x39c334, 0x39095d, 0x391769, 0x38f950, 0xcaef2,
		0xd1d8e, 0x259877, 0x259ee6, 0x25b4e5, 0x22ea5a, 0x3a8299,
		0x3a8ea9, 0x3a9356, 0x3a559d, 0x3a62d9, 0x322cbc, 0x323c65,
		0x85b06,
	};
	static const char *const want[] = {
		"epoll_wait", "WaitEventSetWait", "WaitLatch", "ProcSleep",
		"postgres+0x45d95d", "LockAcquireExtended", "XactLockTableWait",
		"heap_update",
	};
	const uint64_t exe_base = 0x558843d95000, libc_base = 0x7f6246446000;
	static struct pg_cluster_info c;
	char names[USYMS_MAX_FRAMES][USYMS_NAME_MAX], errbuf[200];
	struct pgoff_ustack us = { 0 };
	const char *error;
	struct usyms *u;
	struct stat pg, lc;
	size_t n;

	CHECK(stat(PG15, &pg) == 0 && stat(LIBC, &lc) == 0);
	c.exe_dev = pg.st_dev;
	c.exe_ino = pg.st_ino;
	c.nmaps = 2;
	c.maps[0] = (struct pg_map){ exe_base, exe_base + 0x52a000, 0xcd000,
				     pg.st_dev, pg.st_ino, PG15 };
	c.maps[1] = (struct pg_map){ libc_base, libc_base + 0x156000, 0x26000,
				     lc.st_dev, lc.st_ino, LIBC };
	us.ips[0] = libc_base + 0x108ef3 - 0x26000;
	for (size_t i = 0; i < sizeof(exe_ips) / sizeof(exe_ips[0]); i++)
		us.ips[i + 1] = exe_base + exe_ips[i];
	us.ips[20] = libc_base + 0x124a;
	us.bytes = 21 * 8;
	us.ret_hints[0] = exe_base + 0x38113e;
	CHECK(usyms_new(&u, "/nonexistent") == 0);
	offer_maps(u, &c);
	n = usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error, errbuf,
			sizeof(errbuf));
	if (error)
		fprintf(stderr, "error: %s\n", error);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? " < " : "# ", names[i]);
	fprintf(stderr, "\n");
	CHECK(!error);
	CHECK(n == 22);		/* the 21 walked and the hidden caller */
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_STR(names[i], want[i]);
	CHECK_STR(names[12], "standard_ExecutorRun");
	CHECK_STR(names[15], "PortalRun");
	CHECK_STR(names[17], "PostgresMain");
	CHECK_STR(names[19], "PostmasterMain");
	CHECK_STR(names[20], "main");
	/* a local symbol of libc: not in .dynsym, module+offset */
	CHECK_STR(names[21], "libc.so.6+0x2724a");
	usyms_free(u);

	/* with libc6-dbg: its .symtab, found by build-id */
	CHECK(usyms_new(&u, "/usr/lib/debug") == 0);
	offer_maps(u, &c);
	n = usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error, errbuf,
			sizeof(errbuf));
	CHECK(n == 22);
	CHECK_STR(names[21], "__libc_start_call_main");

	/* a stale return address of a call within postgres is no caller */
	us.ret_hints[0] = exe_base + 0x4cfca7;	/* after call hash_search */
	n = usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error, errbuf,
			sizeof(errbuf));
	CHECK(n == 21);
	CHECK_STR(names[1], "WaitLatch");

	/* a walk into data: it stops there and says so */
	us.ret_hints[0] = 0;
	us.ips[3] = 0x1234;
	n = usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error, errbuf,
			sizeof(errbuf));
	CHECK(n == 3 && error && strstr(error, "left the mapped code"));

	/* the kernel could not walk it */
	us.bytes = -14;
	n = usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error, errbuf,
			sizeof(errbuf));
	CHECK(n == 0 && error && strstr(error, "user_stack_failed"));
	usyms_free(u);
}


static char tmp[40];

/*
 * An ELF file of nfuncs functions f0, f1, … (16 bytes each from file
 * offset 0x1000) whose symbol and string tables are said to be
 * symtab_size and strtab_size bytes; the rest of them is a hole.
 */
static int write_elf(const char *path, size_t nfuncs, uint64_t symtab_size,
		     uint64_t strtab_size)
{
	static const char shstr[] = "\0.symtab\0.strtab\0.shstrtab";
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[4] = { { 0 } };
	uint64_t symoff = 4096, stroff = symoff + symtab_size;
	uint64_t shstroff = stroff + strtab_size, strpos = 1;
	Elf64_Sym *syms = calloc(nfuncs + 1, sizeof(*syms));
	char *names = malloc(nfuncs * 24 + 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && syms && names;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_shoff = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 4;
	eh.e_shstrndx = 3;
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_SYMTAB,
		.sh_offset = symoff, .sh_size = symtab_size, .sh_link = 2,
		.sh_entsize = sizeof(Elf64_Sym) };
	sh[2] = (Elf64_Shdr){ .sh_name = 9, .sh_type = SHT_STRTAB,
		.sh_offset = stroff, .sh_size = strtab_size };
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_STRTAB,
		.sh_offset = shstroff, .sh_size = sizeof(shstr) };
	ok = ok && pwrite(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	     pwrite(fd, sh, sizeof(sh), sizeof(eh)) == sizeof(sh) &&
	     pwrite(fd, shstr, sizeof(shstr), (off_t)shstroff) == sizeof(shstr);
	for (size_t i = 0; ok && i < nfuncs; i++) {
		syms[i + 1] = (Elf64_Sym){ .st_name = (uint32_t)strpos,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = 1, .st_value = 0x1000 + 16 * i, .st_size = 16 };
		strpos += (uint64_t)sprintf(names + strpos, "f%zu", i) + 1;
	}
	names[0] = '\0';
	/* one write a table: the stack tests write millions of symbols */
	ok = ok && pwrite(fd, syms + 1, nfuncs * sizeof(*syms),
			  (off_t)(symoff + sizeof(*syms))) ==
		   (ssize_t)(nfuncs * sizeof(*syms)) &&
	     pwrite(fd, names, strpos, (off_t)stroff) == (ssize_t)strpos;
	if (fd >= 0 && close(fd))
		ok = false;
	free(syms);
	free(names);
	return ok ? 0 : -1;
}

/*
 * Name the frame at file offset 0x1000 + 16 * k of path, for uid; st:
 * the file as mapped (stat now, unless it is gone).
 */
static const char *name_in(struct usyms *u, uint32_t uid, const char *path,
			   struct stat *st_mapped, size_t k,
			   char names[][USYMS_NAME_MAX])
{
	static struct pg_cluster_info c;
	struct pgoff_ustack us = { 0 };
	char errbuf[200];
	const char *error;
	struct stat st;

	if (stat(path, &st) == 0)
		*st_mapped = st;
	st = *st_mapped;
	memset(&c, 0, sizeof(c));
	c.uid = uid;
	c.nmaps = 1;
	c.maps[0] = (struct pg_map){ 0x400000, 0x500000, 0, st.st_dev,
				     st.st_ino, "" };
	snprintf(c.maps[0].path, sizeof(c.maps[0].path), "%s", path);
	us.ips[0] = 0x400000 + 0x1000 + 16 * k;
	us.bytes = 8;
	offer_maps(u, &c);
	if (usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error, errbuf,
			sizeof(errbuf)) != 1)
		return error ? error : "(no frame)";
	return names[0];
}

/* Tables over the read cap of one load: refused, counted, unnamed. */
static void test_huge_symbol_tables(void)
{
	char path[64], names[USYMS_MAX_FRAMES][USYMS_NAME_MAX];
	struct uelf_src src;
	struct usyms_stats st;
	struct stat mapped;
	struct usyms *u;
	struct uelf e;

	snprintf(path, sizeof(path), "%s/huge", tmp);
	/* each table under UELF_MAX_TABLE, both over UELF_MAX_READ */
	CHECK(write_elf(path, 3, 40u << 20, 40u << 20) == 0);
	CHECK(open_src(path, &src) == 0);
	CHECK(uelf_load(&src, &e) == -EFBIG);
	close(src.fd);
	CHECK(usyms_new(&u, "/nonexistent") == 0);
	CHECK_STR(name_in(u, 1000, path, &mapped, 1, names), "huge+0x1010");
	usyms_stats(u, &st);
	if (st.refused != 1 || st.bytes)
		fprintf(stderr, "%llu refused, %zu bytes kept\n",
			(unsigned long long)st.refused, st.bytes);
	CHECK(st.refused == 1 && st.modules == 1 && st.bytes == 0);
	/* the same file is not read again */
	CHECK_STR(name_in(u, 1000, path, &mapped, 2, names), "huge+0x1020");
	usyms_stats(u, &st);
	CHECK(st.refused == 1);
	usyms_free(u);
	unlink(path);
}

/* One user maps many files: they evict their own, not another's. */
static void test_many_binaries(void)
{
	const size_t share = USYMS_MAX_MODULES / USYMS_USER_SHARE;
	char path[64], victim[64], names[USYMS_MAX_FRAMES][USYMS_NAME_MAX];
	struct usyms_stats st;
	struct stat victim_st, mapped;
	struct usyms *u;

	CHECK(usyms_new(&u, "/nonexistent") == 0);
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	CHECK(write_elf(victim, 4, 5 * sizeof(Elf64_Sym), 64) == 0);
	CHECK_STR(name_in(u, 2000, victim, &victim_st, 3, names), "f3");
	for (size_t i = 0; i < 3 * USYMS_MAX_MODULES; i++) {
		snprintf(path, sizeof(path), "%s/many%zu", tmp, i);
		CHECK(write_elf(path, 2, 3 * sizeof(Elf64_Sym), 64) == 0);
		/* kept until the end: a new file could get a freed inode */
		CHECK_STR(name_in(u, 1000, path, &mapped, 1, names), "f1");
	}
	usyms_stats(u, &st);
	if (st.modules != share + 1 ||
	    st.evicted != 3 * USYMS_MAX_MODULES - share)
		fprintf(stderr, "%zu files cached, %llu evicted\n", st.modules,
			(unsigned long long)st.evicted);
	CHECK(st.modules == share + 1);
	CHECK(st.evicted == 3 * USYMS_MAX_MODULES - share);
	CHECK(st.refused == 0);
	/* still cached: named although the file is gone */
	unlink(victim);
	CHECK_STR(name_in(u, 2000, victim, &victim_st, 2, names), "f2");
	usyms_free(u);
}

/*
 * What the prober's worker refuses to hand over (a FIFO or a /proc file
 * put at a mapping's path, a replaced file, a file system whose reads
 * may wait), and a frame of a file never handed over: unnamed, counted,
 * no open by path in pgoffd's loop.
 */
static void test_files_refused(void)
{
	static struct pg_cluster_info c;
	char fifo[64], file[64], names[USYMS_MAX_FRAMES][USYMS_NAME_MAX];
	struct stat fst, st, proc;
	struct usyms_stats us;
	int32_t idx[PG_PROBE_MAX_MAPS];
	int fds[PG_PROBE_MAX_MAPS];
	struct usyms *u;

	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	snprintf(file, sizeof(file), "%s/file", tmp);
	CHECK(mkfifo(fifo, 0600) == 0 && stat(fifo, &fst) == 0);
	CHECK(write_elf(file, 2, 3 * sizeof(Elf64_Sym), 64) == 0);
	CHECK(stat(file, &st) == 0 && stat("/proc/self/status", &proc) == 0);
	c.nmaps = 5;
	c.maps[0] = (struct pg_map){ 0x1000, 0x2000, 0, fst.st_dev,
				     fst.st_ino, "" };
	c.maps[1] = (struct pg_map){ 0x2000, 0x3000, 0, st.st_dev,
				     st.st_ino + 1, "" };	/* replaced */
	c.maps[2] = (struct pg_map){ 0x3000, 0x4000, 0, proc.st_dev,
				     proc.st_ino, "/proc/self/status" };
	c.maps[3] = (struct pg_map){ 0x4000, 0x5000, 0, st.st_dev,
				     st.st_ino, "" };
	c.maps[4] = c.maps[3];		/* the same file again */
	snprintf(c.maps[0].path, PG_PROBE_MAP_PATH, "%s", fifo);
	snprintf(c.maps[1].path, PG_PROBE_MAP_PATH, "%s", file);
	snprintf(c.maps[3].path, PG_PROBE_MAP_PATH, "%s", file);
	snprintf(c.maps[4].path, PG_PROBE_MAP_PATH, "%s", file);
	CHECK(symfiles_open(&c, idx, fds) == 1);
	if (idx[0] != -EPERM || idx[1] != -ESTALE || idx[2] != -EREMOTE)
		fprintf(stderr, "# idx %d %d %d %d %d\n", idx[0], idx[1],
			idx[2], idx[3], idx[4]);
	CHECK(idx[0] == -EPERM && symfiles_refused(idx[0]));
	CHECK(idx[1] == -ESTALE && symfiles_refused(idx[1]));
	CHECK(idx[2] == -EREMOTE && symfiles_refused(idx[2]));
	CHECK(idx[3] == 0 && idx[4] == 0);
	CHECK(idx[5] == -ENOENT && !symfiles_refused(idx[5]));
	close(fds[0]);

	/* never handed over: not opened by its path, unnamed, counted */
	CHECK(usyms_new(&u, "/nonexistent") == 0);
	memset(&c, 0, sizeof(c));
	c.nmaps = 1;
	c.maps[0] = (struct pg_map){ 0x400000, 0x500000, 0, st.st_dev,
				     st.st_ino, "" };
	snprintf(c.maps[0].path, PG_PROBE_MAP_PATH, "%s", file);
	{
		struct pgoff_ustack ust = { .ips = { 0x401010 }, .bytes = 8 };
		char errbuf[200];
		const char *error;

		CHECK(usyms_stack(u, &c, &ust, names, USYMS_MAX_FRAMES, &error,
				  errbuf, sizeof(errbuf)) == 1);
		CHECK_STR(names[0], "file+0x1010");
		usyms_stats(u, &us);
		CHECK(us.unopened == 1 && us.loads == 0 && us.files == 0);
		/* handed over: named */
		offer_maps(u, &c);
		usyms_stats(u, &us);
		CHECK(us.files == 1);
		CHECK(usyms_stack(u, &c, &ust, names, USYMS_MAX_FRAMES, &error,
				  errbuf, sizeof(errbuf)) == 1);
		CHECK_STR(names[0], "f1");
		usyms_stats(u, &us);
		CHECK(us.loads == 1 && us.files == 0 && us.unopened == 1);
	}
	usyms_free(u);
	unlink(fifo);
	unlink(file);
}

/*
 * Big files for the stack tests: BIG_FUNCS functions each, about 25 MB
 * of symbols and names kept, so that two fit in one user's share of the
 * cache and three do not; what a load reads is about the same.
 */
#define BIG_FILES 3
#define BIG_FUNCS 800000
static char big[BIG_FILES][64];
static struct stat big_st[BIG_FILES];

/* The clock of the load budgets, held still by the tests. */
static int64_t test_ms;
static int64_t test_clock(void)
{
	return test_ms;
}

/*
 * A cluster of uid mapping the big files (file i at 0x10000000 * (i + 1))
 * and a stack of nframes whose frame k is in file files[k % nfiles]:
 * named into names; returns how many were named.
 */
static size_t big_stack(struct usyms *u, uint32_t uid, const size_t *files,
			size_t nfiles, size_t nframes,
			char names[][USYMS_NAME_MAX])
{
	static struct pg_cluster_info c;
	struct pgoff_ustack us = { 0 };
	char errbuf[200];
	const char *error;

	memset(&c, 0, sizeof(c));
	c.uid = uid;
	for (size_t i = 0; i < BIG_FILES; i++) {
		uint64_t start = 0x10000000ull * (i + 1);

		c.maps[c.nmaps] = (struct pg_map){ start, start + 0x1000000, 0,
			big_st[i].st_dev, big_st[i].st_ino, "" };
		snprintf(c.maps[c.nmaps++].path, PG_PROBE_MAP_PATH, "%.63s",
			 big[i]);
	}
	for (size_t k = 0; k < nframes; k++)
		us.ips[k] = 0x10000000ull * (files[k % nfiles] + 1) + 0x1000 +
			    16 * k;
	us.bytes = (int32_t)(8 * nframes);
	offer_maps(u, &c);
	return usyms_stack(u, &c, &us, names, USYMS_MAX_FRAMES, &error,
			   errbuf, sizeof(errbuf));
}

static void print_stats(const char *when, const struct usyms_stats *st)
{
	fprintf(stderr, "# %s: %llu loads, %zu files (%zu bytes) cached, "
		"%llu evicted, %llu refused, %llu deferred\n", when,
		(unsigned long long)st->loads, st->modules, st->bytes,
		(unsigned long long)st->evicted,
		(unsigned long long)st->refused,
		(unsigned long long)st->deferred);
}

/*
 * A stack whose frames alternate among three files that do not all fit
 * in the owner's share: each file is read once for it, none of them is
 * dropped while it is named (an LRU cache would read one for nearly
 * every frame: 30 loads of 25 MB for this stack, seconds of pgoffd's
 * loop), and the one with no room is refused, its frames unnamed.
 */
static void test_stack_over_share(void)
{
	static const size_t abc[] = { 0, 1, 2 };
	char names[USYMS_MAX_FRAMES][USYMS_NAME_MAX], want[32];
	struct usyms_stats st;
	struct usyms *u;
	size_t n;

	CHECK(usyms_new(&u, "/nonexistent") == 0);
	usyms_set_clock(u, test_clock);
	n = big_stack(u, 1000, abc, 3, PGOFF_USTACK_DEPTH, names);
	usyms_stats(u, &st);
	print_stats("one stack over a, b, c", &st);
	CHECK(n == PGOFF_USTACK_DEPTH);
	CHECK(st.loads == 3);
	CHECK(st.evicted == 0 && st.refused == 1 && st.deferred == 0);
	CHECK(st.bytes <= USYMS_MAX_BYTES / USYMS_USER_SHARE);
	for (size_t k = 0; k < n; k++) {
		if (k % 3 < 2)	/* a return address: the call before it */
			snprintf(want, sizeof(want), "f%zu", k ? k - 1 : 0);
		else	/* file c: its file offset */
			snprintf(want, sizeof(want), "big2+0x%zx",
				 0x1000 + 16 * k);
		CHECK_STR(names[k], want);
	}
	/* the same stack again: nothing read */
	n = big_stack(u, 1000, abc, 3, PGOFF_USTACK_DEPTH, names);
	usyms_stats(u, &st);
	print_stats("the same stack again", &st);
	CHECK(n == PGOFF_USTACK_DEPTH && st.loads == 3);
	usyms_free(u);
}

/*
 * Stacks of one file each, a, b, c, then a again: the third load spends
 * the owner's budget (64 MiB at once), so a, dropped for c, is not read
 * again until the budget refills; another owner's budget is their own.
 */
static void test_load_budget(void)
{
	char names[USYMS_MAX_FRAMES][USYMS_NAME_MAX], other[64];
	struct usyms_stats st;
	struct stat other_st;
	struct usyms *u;

	CHECK(usyms_new(&u, "/nonexistent") == 0);
	usyms_set_clock(u, test_clock);
	for (size_t f = 0; f < BIG_FILES; f++) {
		CHECK(big_stack(u, 1000, &f, 1, 1, names) == 1);
		CHECK_STR(names[0], "f0");
	}
	usyms_stats(u, &st);
	print_stats("a, b, c", &st);
	CHECK(st.loads == 3 && st.evicted == 1 && st.deferred == 0);
	CHECK(big_stack(u, 1000, (const size_t[]){ 0 }, 1, 2, names) == 2);
	usyms_stats(u, &st);
	print_stats("a again, budget spent", &st);
	CHECK_STR(names[0], "big0+0x1000");
	CHECK_STR(names[1], "big0+0x1010");
	CHECK(st.loads == 3 && st.deferred == 2);
	/* another owner's file */
	snprintf(other, sizeof(other), "%s/other", tmp);
	CHECK(write_elf(other, 2, 3 * sizeof(Elf64_Sym), 64) == 0);
	CHECK_STR(name_in(u, 2000, other, &other_st, 1, names), "f1");
	usyms_stats(u, &st);
	CHECK(st.loads == 4 && st.deferred == 2);
	/* refilled: read */
	test_ms += USYMS_LOAD_BURST / USYMS_LOAD_RATE * 1000;
	CHECK(big_stack(u, 1000, (const size_t[]){ 0 }, 1, 1, names) == 1);
	usyms_stats(u, &st);
	print_stats("a after the refill", &st);
	CHECK_STR(names[0], "f0");
	CHECK(st.loads == 5 && st.deferred == 2);
	usyms_free(u);
}

int main(void)
{
	char cmd[64];
	int rc;

	snprintf(tmp, sizeof(tmp), "/tmp/pgoff-test-usyms.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_real_binary);
	RUN(test_libc);
	RUN(test_hostile);
	RUN(test_recorded_stack);
	RUN(test_huge_symbol_tables);
	RUN(test_many_binaries);
	RUN(test_files_refused);
	for (size_t i = 0; i < BIG_FILES; i++) {
		snprintf(big[i], sizeof(big[i]), "%s/big%zu", tmp, i);
		if (write_elf(big[i], BIG_FUNCS, (BIG_FUNCS + 1) *
			      sizeof(Elf64_Sym), BIG_FUNCS * 8) ||
		    stat(big[i], &big_st[i])) {
			perror(big[i]);
			return 1;
		}
	}
	RUN(test_stack_over_share);
	RUN(test_load_budget);
	rc = CHECK_DONE();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		rc = 1;
	return rc;
}
