/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cluster_ident.h - what tells one PostgreSQL cluster from every other on
 * a host, and keeps telling it after a restart of the cluster or of
 * pgoffd: its id, its owner, and the container it runs in.
 *
 * The id is 16 hex digits of a SHA-256 of the cluster's system identifier
 * (the first 8 bytes of global/pg_control, which a physical replica
 * shares with its primary and a copied data directory with its original)
 * and the data directory's device and inode (which no two directories
 * share at once, whatever their paths, and which stay while the directory
 * does). A path two containers share, a replica beside its primary, and a
 * look-alike another user made at the path of a real cluster all get ids
 * of their own; a hash an attacker could aim would not do, so it is a
 * cryptographic one (finding another input with a given 64-bit output
 * takes about 2^64 tries). The owner (the postmaster's uid) is kept
 * beside it, never hashed: it is a label of its own.
 *
 * It changes when what it is made of does: a new data directory (a
 * restore, a copy, pg_upgrade without --link into a new one), a new
 * initdb, a new device number (a file system mounted from another device,
 * LVM or NVMe numbering that moves across a reboot, data kept in a
 * container's overlay layer, which gets a new device at every container
 * start: keep it in a volume), or pg_control unreadable one time and not
 * another (its SELinux boolean turned on).
 */
#ifndef PGOFF_CLUSTER_IDENT_H
#define PGOFF_CLUSTER_IDENT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "broker/pg/container.h"

#define CLUSTER_ID_LEN	16	/* hex digits */

struct cluster_ident {
	char id[CLUSTER_ID_LEN + 1];	/* "" when the cluster is not known */
	uint32_t owner;			/* the postmaster's uid (with an id) */
	struct container container;	/* runtime "" on the host */
};

/*
 * The id of a cluster (into out, NUL-terminated) from its system
 * identifier (has_sysid false: pg_control was not read; sysid is then not
 * used) and its data directory's device and inode.
 */
void cluster_id_make(bool has_sysid, uint64_t sysid, uint64_t dev,
		     uint64_t ino, char out[CLUSTER_ID_LEN + 1]);

/* Order of two identities (id, owner, container): 0 when the same.
 * (Inline: the aggregation's records compare them without the hash.) */
static inline int cluster_ident_cmp(const struct cluster_ident *a,
				    const struct cluster_ident *b)
{
	int d;

	if ((d = strcmp(a->id, b->id)))
		return d;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if ((d = strcmp(a->container.id, b->container.id)) ||
	    (d = strcmp(a->container.pod_uid, b->container.pod_uid)))
		return d;
	return strcmp(a->container.runtime, b->container.runtime);
}

#endif
