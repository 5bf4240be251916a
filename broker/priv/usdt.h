/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * usdt.h - PostgreSQL's wait probes (lock__wait__*, lwlock__wait__*):
 * one uprobe_multi link per postgres binary (kernel 6.6+) for the BPF
 * program pg_usdt. pgoffd links the binaries found at start, as root;
 * then the program's fd goes to the prober alone, whose workers link the
 * binary of a postmaster found later (an upgrade's new file, a new
 * major, a container's own postgres) after the same checks. Status says
 * which binaries are probed, and why the others are not.
 */
#ifndef PGOFF_USDT_H
#define PGOFF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define USDT_MAX_BINARIES 32
#define USDT_PATH_LEN 256
#define USDT_WHY_LEN 128

/* What became of one binary, as the prober tells pgoffd. */
struct usdt_result {
	uint64_t dev, ino;
	uint32_t probed;		/* 1: linked (the prober holds the link) */
	uint32_t sites;
	int32_t err;			/* not probed: -errno (-ESRCH: the
					 * process went first, try again) */
	uint32_t pad;
	char path[USDT_PATH_LEN];
	char why[USDT_WHY_LEN];		/* not probed: why */
};

struct usdt;

int usdt_new(struct usdt **out);
void usdt_free(struct usdt *u);		/* NULL-safe; detaches */

/*
 * Probe the binary at path (a file, or /proc/PID/exe: the postmaster's
 * own, even if replaced since), shown as shown. Only a regular file
 * owned by root that only root may write, at most once per file. What
 * happened is kept for status (and logged); returns 0 if probed.
 */
int usdt_attach(struct usdt *u, int prog_fd, const char *path,
		const char *shown);
/* The same for every /usr/lib/postgresql/MAJOR/bin/postgres. */
void usdt_attach_installed(struct usdt *u, int prog_fd);

/*
 * Link prog_fd to the wait probes of the file at path, if it is still
 * the file (dev, ino), the same file at the same path in pgoffd's mount
 * namespace (for a /proc/PID/exe: the path it links to), a regular file
 * owned by root that only root may write, with usable probe notes. The file opened and checked is the one
 * linked (/proc/self/fd/N), not the path looked up again. Returns the
 * link's fd with *sites set, or -errno with err said: -ESRCH when the
 * process whose exe path names went away first (nothing is known of the
 * file then).
 */
int usdt_link(int prog_fd, const char *path, uint64_t dev, uint64_t ino,
	      unsigned int *sites, char *err, size_t errlen);

/* A binary linked or refused elsewhere (the prober), for status. */
void usdt_note(struct usdt *u, const struct usdt_result *r);
/* Whether the file (dev, ino) was seen (probed or refused). */
bool usdt_known(const struct usdt *u, uint64_t dev, uint64_t ino);
size_t usdt_count(const struct usdt *u);
void usdt_binary(const struct usdt *u, size_t i, uint64_t *dev,
		 uint64_t *ino);

/*
 * The binaries the prober refused since start, remembered so that each
 * is tried once. Anyone can make new ones (a mount of their own), so one
 * cluster owner keeps at most USDT_REFUSALS_PER_UID (their oldest goes
 * first) and cannot push out others'; a full table forgets the oldest of
 * whoever has the most. One forgotten is tried again when its postmaster
 * is seen again.
 */
#define USDT_REFUSALS		256
#define USDT_REFUSALS_PER_UID	8

struct usdt_refusal {
	uint64_t dev, ino;
	uint32_t uid;			/* the owner of the cluster running it */
};

struct usdt_refusals {
	struct usdt_refusal r[USDT_REFUSALS];	/* the oldest first */
	size_t n;
};

void usdt_refusals_add(struct usdt_refusals *t, uint32_t uid, uint64_t dev,
		       uint64_t ino);
bool usdt_refusals_known(const struct usdt_refusals *t, uint64_t dev,
			 uint64_t ino);

/* [{"path":…,"probed":true,"sites":8}, {"path":…,"probed":false,"why":…}] */
json_object *usdt_status(const struct usdt *u);
/* Binaries not listed: past USDT_MAX_BINARIES with every listed one
 * probed (skipped), and refusals replaced by newer ones (forgotten). */
unsigned int usdt_skipped(const struct usdt *u);
unsigned int usdt_forgotten(const struct usdt *u);

#endif
