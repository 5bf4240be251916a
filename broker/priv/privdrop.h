/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * privdrop.h - give up root for good: only the listed capabilities stay
 * (bounding, permitted and effective sets), uid and gid become user's,
 * no supplementary groups, no_new_privs. Verified afterwards: getting
 * root back must fail, /proc/self/status must show exactly that set.
 */
#ifndef PGOFF_PRIVDROP_H
#define PGOFF_PRIVDROP_H

#include <sys/capability.h>
#include <sys/types.h>

/* Resolve user: it must exist, and be neither root nor nobody (whose
 * uid other processes share). Returns 0 or -errno (logged). */
int privdrop_lookup(const char *user, uid_t *uid, gid_t *gid);
/* Drop to uid/gid keeping keep[0..nkeep). Returns 0 or -errno (logged). */
int privdrop(uid_t uid, gid_t gid, const cap_value_t *keep, int nkeep);

#endif
