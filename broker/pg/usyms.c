// SPDX-License-Identifier: GPL-2.0-only
/* usyms.c - user stack symbolization and its per-file cache; see usyms.h. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/priv/fs_kind.h"
#include "broker/pg/uelf.h"
#include "broker/pg/usyms.h"
#include "common/clock.h"

struct umod {
	uint64_t dev, ino;		/* the key: fd keeps the file, so the
					 * inode is not reused while cached */
	int fd;				/* the file read, -1: not opened */
	uint64_t size;			/* its size when opened */
	uint32_t uid;			/* whose stack brought it in */
	int status;			/* 0: symbols read; -errno: why not */
	int fp;				/* uelf_frame_pointers */
	size_t bytes;			/* symbols and names kept */
	uint64_t used;			/* usyms.clock at its last use */
	uint64_t stack;			/* usyms.stacks at its last use: not
					 * dropped while that stack is named */
	struct uelf elf;
	struct umod *next;
};

/* A file the prober's worker opened for a cluster's mapping, not read yet
 * (or read, cached and evicted since): the only files symbols are read
 * from. */
struct ufile {
	uint64_t dev, ino;
	int fd;				/* -1: a free slot */
	uint32_t uid;			/* whose cluster maps it */
	uint64_t seen;			/* usyms.clock when offered */
};

/* What one owner's stacks may still read: bytes, as of at_ms. */
struct load_budget {
	uint32_t uid;
	bool used;
	int64_t bytes;			/* below 0: a load overdrew it */
	int64_t at_ms;
};

struct usyms {
	struct umod *mods;
	size_t nmods, bytes;
	uint64_t clock;			/* lookups so far: the LRU order */
	uint64_t stacks;		/* stacks named so far */
	uint64_t evicted, refused, deferred, loads;
	uint64_t unopened;		/* frames of files not offered */
	uint64_t files_dropped;		/* offered files closed for room */
	struct ufile files[USYMS_MAX_FILES];
	struct load_budget budget[USYMS_BUDGET_UIDS];
	int64_t (*now_ms)(void);
	char debug_root[64];		/* "/usr/lib/debug" */
};

void usyms_set_clock(struct usyms *u, int64_t (*now_ms)(void))
{
	u->now_ms = now_ms;
}

int usyms_new(struct usyms **out, const char *debug_root)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	snprintf(u->debug_root, sizeof(u->debug_root), "%s",
		 debug_root ? debug_root : "/usr/lib/debug");
	u->now_ms = monotonic_ms;
	for (size_t i = 0; i < USYMS_MAX_FILES; i++)
		u->files[i].fd = -1;
	*out = u;
	return 0;
}

void usyms_stats(const struct usyms *u, struct usyms_stats *out)
{
	out->modules = u->nmods;
	out->bytes = u->bytes;
	out->evicted = u->evicted;
	out->refused = u->refused;
	out->deferred = u->deferred;
	out->loads = u->loads;
	out->unopened = u->unopened;
	out->files_dropped = u->files_dropped;
	out->files = 0;
	for (size_t i = 0; i < USYMS_MAX_FILES; i++)
		out->files += u->files[i].fd >= 0;
}

void usyms_free(struct usyms *u)
{
	if (!u)
		return;
	while (u->mods) {
		struct umod *m = u->mods;

		u->mods = m->next;
		if (m->fd >= 0)
			close(m->fd);
		uelf_free(&m->elf);
		free(m);
	}
	for (size_t i = 0; i < USYMS_MAX_FILES; i++)
		if (u->files[i].fd >= 0)
			close(u->files[i].fd);
	free(u);
}

/*
 * A debug file under debug_root (root's tree; the mapping's directory
 * names a place in it, never "..", which d_path never shows), only if it
 * is a regular file on a local file system.
 */
static int open_debug(const char *path, struct uelf_src *src)
{
	struct stat st;
	int fd;

	if (path[0] != '/' || strstr(path, "/../") || strstr(path, "/./"))
		return -ENOENT;
	/* O_NONBLOCK: a FIFO put at the path never blocks the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !fs_kind_local(fd)) {
		close(fd);
		return -EPERM;
	}
	src->fd = fd;
	src->buf = NULL;
	src->size = (uint64_t)st.st_size;
	return 0;
}

static struct ufile *file_of(struct usyms *u, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < USYMS_MAX_FILES; i++)
		if (u->files[i].fd >= 0 && u->files[i].dev == dev &&
		    u->files[i].ino == ino)
			return &u->files[i];
	return NULL;
}

/* The slot to put a file of uid in: a free one; uid's oldest when over
 * its share; anyone's oldest when all are taken. NULL: none. */
static struct ufile *file_slot(struct usyms *u, uint32_t uid)
{
	struct ufile *free_slot = NULL, *mine = NULL, *any = NULL;
	size_t n = 0;

	for (size_t i = 0; i < USYMS_MAX_FILES; i++) {
		struct ufile *f = &u->files[i];

		if (f->fd < 0) {
			free_slot = free_slot ? free_slot : f;
			continue;
		}
		if (f->uid == uid) {
			n++;
			if (!mine || f->seen < mine->seen)
				mine = f;
		}
		if (!any || f->seen < any->seen)
			any = f;
	}
	if (n >= USYMS_MAX_FILES / USYMS_USER_SHARE)
		return mine;
	return free_slot ? free_slot : any;
}

/* Keep fd as the file (dev, ino) of uid's mapping, or close it. */
static void keep_file(struct usyms *u, uint32_t uid, uint64_t dev,
		      uint64_t ino, int fd)
{
	struct ufile *f = file_of(u, dev, ino);

	if (f) {			/* known: this one is not needed */
		f->seen = ++u->clock;
		close(fd);
		return;
	}
	f = file_slot(u, uid);
	if (!f) {
		close(fd);
		u->files_dropped++;
		return;
	}
	if (f->fd >= 0) {
		close(f->fd);
		u->files_dropped++;
	}
	*f = (struct ufile){ dev, ino, fd, uid, ++u->clock };
}

void usyms_offer(struct usyms *u, uint32_t uid, uint64_t dev, uint64_t ino,
		 int fd)
{
	struct stat st;

	if (fd < 0)
		return;
	for (struct umod *m = u->mods; m; m = m->next) {
		if (m->dev == dev && m->ino == ino && m->fd >= 0) {
			close(fd);	/* cached, its file open */
			return;
		}
	}
	/* the worker checked it; a wrong one would only name frames wrong */
	if (fstat(fd, &st) || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino) {
		close(fd);
		return;
	}
	keep_file(u, uid, dev, ino, fd);
}

/* A separate debug file's .symtab: by build-id, else by debug link. */
static void add_debug_file(struct usyms *u, const char *path, struct uelf *e)
{
	char dbg[512], dir[PG_PROBE_MAP_PATH];
	struct uelf_src src;
	const char *slash;
	int n = 0;

	if (e->build_id_len >= 2) {
		n = snprintf(dbg, sizeof(dbg), "%s/.build-id/%02x/", u->debug_root,
			     e->build_id[0]);
		for (size_t i = 1; i < e->build_id_len && n > 0 &&
		     (size_t)n < sizeof(dbg) - 8; i++)
			n += snprintf(dbg + n, sizeof(dbg) - (size_t)n, "%02x",
				      e->build_id[i]);
		snprintf(dbg + n, sizeof(dbg) - (size_t)n, ".debug");
		if (open_debug(dbg, &src) == 0) {
			uelf_add_symtab(&src, e);
			close(src.fd);
			if (e->has_symtab)
				return;
		}
	}
	slash = strrchr(path, '/');
	if (!e->debuglink[0] || !slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	snprintf(dbg, sizeof(dbg), "%s%s/%s", u->debug_root, dir, e->debuglink);
	if (open_debug(dbg, &src) == 0) {
		uelf_add_symtab(&src, e);
		close(src.fd);
	}
}

/* What the files uid brought in hold: how many, how many bytes. */
static size_t user_share(const struct usyms *u, uint32_t uid, size_t *bytes)
{
	size_t n = 0;

	*bytes = 0;
	for (const struct umod *m = u->mods; m; m = m->next) {
		if (m->uid == uid) {
			n++;
			*bytes += m->bytes;
		}
	}
	return n;
}

/* Drop the least recently used file: uid's own, or anyone's (ALL_USERS);
 * never one the stack being named uses. false: there is none. */
#define ALL_USERS UINT64_MAX
static bool evict(struct usyms *u, uint64_t uid)
{
	struct umod **pp, **lru = NULL, *m;

	for (pp = &u->mods; *pp; pp = &(*pp)->next)
		if ((uid == ALL_USERS || (*pp)->uid == uid) &&
		    (*pp)->stack != u->stacks &&
		    (!lru || (*pp)->used < (*lru)->used))
			lru = pp;
	if (!lru)
		return false;
	m = *lru;
	*lru = m->next;
	u->nmods--;
	u->bytes -= m->bytes;
	u->evicted++;
	if (m->fd >= 0)		/* its file may be read again later */
		keep_file(u, m->uid, m->dev, m->ino, m->fd);
	uelf_free(&m->elf);
	free(m);
	return true;
}

/* A file's symbols, read now from the file offered for it, which the
 * module takes; mod->status says whether. */
static void load(struct usyms *u, const struct pg_map *m, struct umod *mod,
		 struct ufile *f)
{
	struct uelf_src src = { .fd = f->fd };
	struct stat st;

	f->fd = -1;
	if (fstat(src.fd, &st)) {
		mod->status = -errno;
		close(src.fd);
		return;
	}
	src.size = (uint64_t)st.st_size;
	mod->status = uelf_load(&src, &mod->elf);
	if (!mod->status) {
		if (!mod->elf.has_symtab)
			add_debug_file(u, m->path, &mod->elf);
		mod->fp = uelf_frame_pointers(&src, &mod->elf);
	}
	/*
	 * Kept open while cached: a deleted file's inode cannot be reused
	 * for another file, whose frames would get these names, and the
	 * bytes around a return address are read from it without opening
	 * the path again.
	 */
	mod->fd = src.fd;
	mod->size = src.size;
	mod->bytes = mod->elf.nsyms * sizeof(*mod->elf.syms) +
		     mod->elf.strs_len;
	if (!mod->status && mod->bytes > USYMS_MAX_BYTES / USYMS_USER_SHARE) {
		uelf_free(&mod->elf);
		mod->bytes = 0;
		mod->status = -EFBIG;
	}
}

/* A budget's bytes at now: refilled at USYMS_LOAD_RATE, up to the burst. */
static int64_t budget_at(const struct load_budget *b, int64_t now)
{
	/* enough to refill any debt (at most one load over the burst) */
	const int64_t full_ms = USYMS_LOAD_BURST * 2 / USYMS_LOAD_RATE * 1000;
	int64_t dt = now > b->at_ms ? now - b->at_ms : 0, bytes;

	if (!b->used)
		return USYMS_LOAD_BURST;
	if (dt > full_ms)	/* and no overflow */
		dt = full_ms;
	bytes = b->bytes + dt * USYMS_LOAD_RATE / 1000;
	return bytes < USYMS_LOAD_BURST ? bytes : USYMS_LOAD_BURST;
}

/*
 * uid's budget, refilled to now. A new owner takes a slot not used, or
 * the fullest one: a full budget is as good as none.
 */
static struct load_budget *budget_of(struct usyms *u, uint32_t uid)
{
	int64_t now = u->now_ms();
	struct load_budget *b = NULL;

	for (size_t i = 0; i < USYMS_BUDGET_UIDS; i++) {
		struct load_budget *s = &u->budget[i];

		if (s->used && s->uid == uid) {
			b = s;
			break;
		}
		if (!b || budget_at(s, now) > budget_at(b, now))
			b = s;
	}
	if (!b->used || b->uid != uid) {
		b->used = true;
		b->uid = uid;
		b->bytes = USYMS_LOAD_BURST;
	} else {
		b->bytes = budget_at(b, now);
	}
	b->at_ms = now;
	return b;
}

/*
 * The cached symbols of a mapping's file, read on first use, for uid's
 * stack, or NULL (not read now: no budget, no room, no memory). A failed
 * load is kept too (no bytes): it is not tried again until evicted.
 * Room is made by dropping least recently used files, never one the
 * stack being named uses: with those, a stack over the caps would read
 * its files again frame after frame.
 */
static struct umod *module(struct usyms *u, const struct pg_map *m,
			   uint32_t uid)
{
	const size_t share = USYMS_MAX_MODULES / USYMS_USER_SHARE;
	const size_t share_bytes = USYMS_MAX_BYTES / USYMS_USER_SHARE;
	struct load_budget *budget;
	struct ufile *f;
	struct umod *mod;
	size_t mine_bytes;

	for (mod = u->mods; mod; mod = mod->next) {
		if (mod->dev == m->dev && mod->ino == m->ino) {
			mod->used = ++u->clock;
			mod->stack = u->stacks;
			return mod;
		}
	}
	/* never by path here: a path may lead into a FUSE or NFS mount
	 * whose open or read never returns (see usyms_offer) */
	f = file_of(u, m->dev, m->ino);
	if (!f) {
		u->unopened++;
		return NULL;
	}
	budget = budget_of(u, uid);
	if (budget->bytes <= 0) {
		u->deferred++;
		return NULL;
	}
	/* a slot: the user's own first when over their share, then anyone's */
	while (user_share(u, uid, &mine_bytes) >= share && evict(u, uid))
		;
	while (u->nmods >= USYMS_MAX_MODULES && evict(u, ALL_USERS))
		;
	if (user_share(u, uid, &mine_bytes) >= share ||
	    u->nmods >= USYMS_MAX_MODULES) {
		u->refused++;	/* every slot holds a file of this stack */
		return NULL;
	}
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	mod->dev = m->dev;
	mod->ino = m->ino;
	mod->fd = -1;
	mod->uid = uid;
	mod->fp = -1;
	mod->used = ++u->clock;
	mod->stack = u->stacks;
	f = file_of(u, m->dev, m->ino);	/* evictions may have moved it */
	if (!f) {
		free(mod);
		u->unopened++;
		return NULL;
	}
	load(u, m, mod, f);
	u->loads++;
	budget->bytes -= (int64_t)mod->elf.bytes_read;
	/* room for its symbols, the same way */
	while (mine_bytes + mod->bytes > share_bytes && evict(u, uid))
		user_share(u, uid, &mine_bytes);
	while (u->bytes + mod->bytes > USYMS_MAX_BYTES && evict(u, ALL_USERS))
		;
	user_share(u, uid, &mine_bytes);
	if (!mod->status && (mine_bytes + mod->bytes > share_bytes ||
			     u->bytes + mod->bytes > USYMS_MAX_BYTES)) {
		uelf_free(&mod->elf);	/* the rest is this stack's */
		mod->bytes = 0;
		mod->status = -ENOSPC;
	}
	if (mod->status == -EFBIG || mod->status == -ENOSPC)
		u->refused++;
	mod->next = u->mods;
	u->mods = mod;
	u->nmods++;
	u->bytes += mod->bytes;
	return mod;
}

static const struct pg_map *find_map(const struct pg_cluster_info *c,
				     uint64_t addr)
{
	for (uint32_t i = 0; i < c->nmaps && i < PG_PROBE_MAX_MAPS; i++)
		if (addr >= c->maps[i].start && addr < c->maps[i].end)
			return &c->maps[i];
	return NULL;
}

/* "function", or "module+0xoffset" (link-time address, else file offset). */
static void name_frame(struct usyms *u, uint32_t uid, const struct pg_map *m,
		       uint64_t addr, bool ret, char *out, size_t len)
{
	uint64_t off = addr - m->start + m->offset, vaddr = off, in;
	uint64_t at;
	const char *base = strrchr(m->path, '/');
	struct umod *mod = module(u, m, uid);
	const char *sym;

	if (mod && !mod->status) {
		uelf_offset_to_vaddr(&mod->elf, off, &vaddr);
		/* a return address may be the next function's first byte:
		 * the call is the byte before it */
		at = ret && vaddr ? vaddr - 1 : vaddr;
		sym = uelf_lookup(&mod->elf, at, &in);
		if (sym && *sym) {
			snprintf(out, len, "%s", sym);
			return;
		}
	}
	snprintf(out, len, "%s+0x%llx", base ? base + 1 : "[unknown]",
		 (unsigned long long)vaddr);
}

/*
 * Whether addr returns from a call into a library: the instruction
 * before it calls the PLT (call rel32 into .plt; call *GOT(%rip) as
 * -fno-plt builds make) on x86-64, or is a bl or blr on arm64 (the
 * link register: no stale candidates). Stale return addresses of calls
 * within postgres are left out. Read from the file.
 */
static bool after_library_call(struct usyms *u, uint32_t uid,
			       const struct pg_map *m, uint64_t addr)
{
	struct umod *mod = module(u, m, uid);
	uint64_t off = addr - m->start + m->offset, vaddr;
	struct uelf_src src;
	uint8_t b[6];
	uint32_t insn;
	int32_t rel;
	bool ok = false;

	if (!mod || mod->status || mod->fd < 0 || off < 6 ||
	    !uelf_offset_to_vaddr(&mod->elf, off, &vaddr))
		return false;
	src.fd = mod->fd;
	src.buf = NULL;
	src.size = mod->size;
	if (mod->elf.machine == EM_X86_64 && !uelf_read(&src, off - 6, b, 6)) {
		memcpy(&rel, b + 2, sizeof(rel));
		ok = (b[1] == 0xe8 &&
		      uelf_in_plt(&mod->elf, vaddr + (uint64_t)(int64_t)rel)) ||
		     (b[0] == 0xff && b[1] == 0x15);
	} else if (mod->elf.machine == EM_AARCH64 &&
		   !uelf_read(&src, off - 4, &insn, 4)) {
		ok = (insn >> 26) == 0x25 || (insn & 0xfffffc1f) == 0xd63f0000;
	}
	return ok;
}

/*
 * A leaf in a library without frame pointers (a libc wrapper, stdio):
 * the postgres function that called into it, which the frame-pointer
 * walk skips; 1 if found (named into name), else 0.
 */
static size_t hidden_caller(struct usyms *u, const struct pg_cluster_info *c,
			    const struct pgoff_ustack *us, size_t n,
			    char *name)
{
	for (size_t k = 0; k < PGOFF_USTACK_HINTS; k++) {
		uint64_t h = us->ret_hints[k];
		const struct pg_map *hm;

		if (!h)
			break;
		if (n >= 2 && h == us->ips[1])
			return 0;	/* the walk has it */
		hm = find_map(c, h);
		if (hm && after_library_call(u, c->uid, hm, h)) {
			name_frame(u, c->uid, hm, h, true, name, USYMS_NAME_MAX);
			return 1;
		}
	}
	return 0;
}

size_t usyms_stack(struct usyms *u, const struct pg_cluster_info *c,
		   const struct pgoff_ustack *us,
		   char names[][USYMS_NAME_MAX], size_t max,
		   const char **error, char *err, size_t errlen)
{
	size_t n = us->bytes > 0 ? (size_t)us->bytes / 8 : 0, out = 0;
	const struct pg_map *exe = NULL, *m;

	*error = NULL;
	u->stacks++;		/* the files this one uses are kept */
	if (us->bytes < 0) {
		*error = "the user stack could not be walked (counted in "
			 "user_stack_failed)";
		return 0;
	}
	if (n > PGOFF_USTACK_DEPTH)
		n = PGOFF_USTACK_DEPTH;
	if (!c || !c->nmaps) {
		*error = "the cluster's memory map is unknown";
		return 0;
	}
	for (uint32_t i = 0; i < c->nmaps && i < PG_PROBE_MAX_MAPS; i++)
		if (c->maps[i].dev == c->exe_dev && c->maps[i].ino == c->exe_ino)
			exe = &c->maps[i];
	if (exe) {
		struct umod *mod = module(u, exe, c->uid);

		if (mod && !mod->status && mod->fp == 0) {
			snprintf(err, errlen, "this postgres binary (%s) "
				 "keeps no frame pointers: its user stacks "
				 "cannot be walked", c->version[0] ?
				 c->version : "unknown version");
			*error = err;
			return 0;
		}
	}
	for (size_t i = 0; i < n && out < max; i++) {
		m = find_map(c, us->ips[i]);
		if (!m) {
			/* a walk through code without frame pointers reads
			 * other data as frames: stop at the first that is
			 * no code */
			snprintf(err, errlen, "the frame-pointer walk left "
				 "the mapped code after %zu frames (a library "
				 "without frame pointers, or code loaded after "
				 "the postmaster started)", out);
			*error = err;
			return out;
		}
		name_frame(u, c->uid, m, us->ips[i], i > 0, names[out++],
			   USYMS_NAME_MAX);
		if (i == 0 && out < max &&
		    (!exe || m->dev != exe->dev || m->ino != exe->ino))
			out += hidden_caller(u, c, us, n, names[out]);
	}
	if (n == PGOFF_USTACK_DEPTH)
		*error = "truncated: more frames than pgoffd walks";
	return out;
}
