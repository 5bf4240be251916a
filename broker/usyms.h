/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * usyms.h - user stacks of PostgreSQL processes in names: each frame is
 * found in the postmaster's executable mappings (the prober read them),
 * its file's function symbols (.dynsym, .symtab, or a separate debug
 * file's) are read once and cached per file (device, inode, build-id).
 * A frame with no symbol shows as module+0xoffset.
 */
#ifndef PGOFF_USYMS_H
#define PGOFF_USYMS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/offcpu.h"
#include "broker/pg_probe.h"

#define USYMS_NAME_MAX		128	/* bytes of one frame's name */
#define USYMS_MAX_FRAMES	(PGOFF_USTACK_DEPTH + 1)	/* with the hint */
#define USYMS_MAX_MODULES	128	/* files cached */
#define USYMS_MAX_TOTAL_SYMS	(4u << 20)	/* symbols over all of them */

struct usyms;

int usyms_new(struct usyms **out, const char *debug_root);
void usyms_free(struct usyms *u);

/*
 * The frames of us, leaf first, into names; returns how many. *error is
 * NULL, or why the stack is missing or ends early (a static string, or
 * one in errbuf).
 */
size_t usyms_stack(struct usyms *u, const struct pg_cluster_info *c,
		   const struct pgoff_ustack *us,
		   char names[][USYMS_NAME_MAX], size_t max,
		   const char **error, char *errbuf, size_t errlen);

#endif
