/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * usdt_rate.h - usdt-max-rate as pgoffd shows it: the BPF program pauses
 * a cluster's LWLock wait probes until usdt-quiet (a minute) passes with
 * no second over the rate (struct pgoff_usdt_rate, bpf/offcpu.h); here each second the
 * clusters that paused or came back are logged, and ps and status say
 * which are paused.
 */
#ifndef PGOFF_USDT_RATE_H
#define PGOFF_USDT_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "bpf/offcpu.h"

/* What pgoffd last saw of each cluster, to log changes once. */
struct usdt_rate_seen {
	uint32_t cluster;
	bool paused;
	uint64_t pauses;
};

struct usdt_rate_watch {
	struct usdt_rate_seen seen[PGOFF_USDT_RATES];
	size_t n;
};

/* A cluster's rate from the map (fd), now (CLOCK_MONOTONIC ns): false
 * when it has none (no LWLock wait since pgoffd started, or forgotten). */
bool usdt_rate_get(int fd, uint32_t cluster, struct pgoff_usdt_rate *r);
/* (with usdt-max-rate 0 the program reads every START, whatever the
 * entry says) */
static inline bool usdt_rate_paused(const struct pgoff_usdt_rate *r,
				    uint64_t now, uint64_t max_rate)
{
	return max_rate && r->paused_until_ns > now;
}

/* Once a second: log each cluster that paused or came back since (name
 * names it for the log: its data directory). */
typedef const char *(*usdt_rate_name_fn)(void *ctx, uint32_t cluster);
void usdt_rate_tick(struct usdt_rate_watch *w, int fd, uint64_t now,
		    uint64_t max_rate, uint64_t quiet_ns,
		    usdt_rate_name_fn name, void *ctx);
/* How many clusters are paused now. */
size_t usdt_rate_paused_count(int fd, uint64_t now, uint64_t max_rate);
/* ps: the cluster's "usdt_lwlock" object, or NULL when it has none. */
json_object *usdt_rate_json(int fd, uint32_t cluster, uint64_t now,
			    uint64_t max_rate);

#endif
