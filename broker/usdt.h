/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * usdt.h - PostgreSQL's wait probes (lock__wait__*, lwlock__wait__*)
 * attached to the postgres binaries found at start, as root, before
 * privileges are dropped: one uprobe_multi link per binary (kernel 6.6+)
 * for the BPF program pg_usdt. A binary installed later (an upgrade's new
 * file, a new major) is not probed until pgoffd restarts: its waits stay
 * "inferred" episodes, and status says which binaries are probed.
 */
#ifndef PGOFF_USDT_H
#define PGOFF_USDT_H

#include <json-c/json.h>

#define USDT_MAX_BINARIES 32

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

/* [{"path":…,"probed":true,"sites":8}, {"path":…,"probed":false,"why":…}] */
json_object *usdt_status(const struct usdt *u);

#endif
