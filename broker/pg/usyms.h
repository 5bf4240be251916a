/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * usyms.h - user stacks of PostgreSQL processes in names: each frame is
 * found in the postmaster's executable mappings (the prober read them),
 * its file's function symbols (.dynsym, .symtab, or a separate debug
 * file's) are read once and cached per file (device, inode), the file
 * kept open while cached so that its inode is not given to another.
 * A frame with no symbol shows as module+0xoffset.
 *
 * The files are chosen by the clusters' owners. pgoffd's loop never
 * opens them by path (a path may lead into a FUSE or NFS mount whose
 * open never returns): the prober's worker opens them, within its
 * deadline, and hands the descriptors over (usyms_offer), only for
 * regular files on local file systems (fs_kind.h), whose reads wait for
 * a disk at most. A frame of a file not handed over is module+0xoffset,
 * counted as unopened. They are read in pgoffd's loop: one load reads at most UELF_MAX_READ bytes, the cache keeps at
 * most USYMS_MAX_MODULES files and USYMS_MAX_BYTES of symbols, least
 * recently used first out, and the files one cluster owner's stacks
 * brought in at most 1/USYMS_USER_SHARE of both: a user who maps many
 * or huge files evicts their own, not others'.
 *
 * Naming one stack never drops a file that stack already used, so each
 * of its files is read at most once for it (one with no room left
 * beside the others is refused: cached without its symbols). What is
 * read is charged to the owner's load budget: USYMS_LOAD_BURST bytes of
 * tables, refilled at USYMS_LOAD_RATE a second; a load begins while some
 * is left. Once it is spent, frames of files not cached are
 * module+0xoffset (counted as deferred) and the files are read for a
 * later stack. So stacks that alternate among huge files stall pgoffd's
 * loop for a bounded share of its time, whoever sends them.
 */
#ifndef PGOFF_USYMS_H
#define PGOFF_USYMS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/offcpu.h"
#include "broker/priv/pg_probe.h"

#define USYMS_NAME_MAX		128	/* bytes of one frame's name */
#define USYMS_MAX_FRAMES	(PGOFF_USTACK_DEPTH + 1)	/* with the hint */
#define USYMS_MAX_MODULES	128	/* files cached */
#define USYMS_MAX_BYTES		(256u << 20)	/* symbols and names kept */
#define USYMS_USER_SHARE	4	/* one user: 1/4 of the files and bytes */
#define USYMS_LOAD_BURST	(64ll << 20)	/* bytes of tables one owner's
						 * stacks may read at once */
#define USYMS_LOAD_RATE		(8ll << 20)	/* and a second after that */
#define USYMS_BUDGET_UIDS	256	/* owners whose budgets are kept */
#define USYMS_MAX_FILES		256	/* files handed over, not read yet;
					 * one user: 1/USYMS_USER_SHARE */

struct usyms;

int usyms_new(struct usyms **out, const char *debug_root);
void usyms_free(struct usyms *u);

/* The cache, for status. */
struct usyms_stats {
	size_t modules;			/* files cached (failed loads too) */
	size_t bytes;			/* symbols and names kept */
	uint64_t evicted;		/* files dropped to make room */
	uint64_t refused;		/* files over a cap, or with no room
					 * beside their stack's: unnamed */
	uint64_t deferred;		/* frames unnamed: the owner's load
					 * budget was spent */
	uint64_t loads;			/* files read (or tried) */
	uint64_t unopened;		/* frames unnamed: no descriptor of
					 * their file was handed over */
	size_t files;			/* descriptors held, not read yet */
	uint64_t files_dropped;		/* descriptors closed for room */
};

void usyms_stats(const struct usyms *u, struct usyms_stats *out);

/* The clock the load budgets refill by, in milliseconds (default:
 * monotonic_ms); tests hold it still. */
void usyms_set_clock(struct usyms *u, int64_t (*now_ms)(void));

/*
 * fd: the file (dev, ino) of a mapping of uid's cluster, opened by the
 * prober's worker (prober.h). Taken: kept until read, or closed (a file
 * known already, or no room: the oldest of uid's, past their share, or
 * of anyone's make room). fd -1: nothing.
 */
void usyms_offer(struct usyms *u, uint32_t uid, uint64_t dev, uint64_t ino,
		 int fd);

/*
 * The frames of us, leaf first, into names; returns how many. c's owner
 * (c->uid) is charged for the files it brings into the cache. *error is
 * NULL, or why the stack is missing or ends early (a static string, or
 * one in err).
 */
size_t usyms_stack(struct usyms *u, const struct pg_cluster_info *c,
		   const struct pgoff_ustack *us,
		   char names[][USYMS_NAME_MAX], size_t max,
		   const char **error, char *err, size_t errlen);

#endif
