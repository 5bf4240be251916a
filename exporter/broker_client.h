/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * broker_client.h - the exporter's connection to pgoffd: one connection,
 * kept between scrapes and made again when pgoffd went away; each scrape
 * asks afresh (status, ps for the clusters, stats by labels, stats by
 * pid: no cache here; pgoffd itself reuses one reading of the kernel
 * maps for 100 ms, and its ps reply for a second).
 */
#ifndef PGOFF_EXPORTER_BROKER_CLIENT_H
#define PGOFF_EXPORTER_BROKER_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "client/conn.h"
#include "client/stats_view.h"
#include "exporter/exposition.h"
#include "exporter/monotonic.h"
#include "exporter/streaks.h"

struct broker_client {
	const char *socket;
	struct conn conn;
	bool connected;
	bool said_absent;		/* "not running" logged once per outage */
	uint64_t connects, errors;
	struct mono_state mono;		/* the counters by labels, held */
	size_t top_queries;		/* > 0: stats by query too (opt-in) */
	struct mono_state mono_q;	/* those counters, held */
	/* the last scrape's answers, borrowed by the ex_scrape it filled */
	json_object *status, *ps;
	struct sv_snapshot labels, pids, pids_prev, queries;
	bool have_pids, have_prev;
	struct streaks streaks;		/* one backend in one wait */
};

void broker_client_init(struct broker_client *b, const char *socket);
/*
 * Ask pgoffd for one scrape and fill s's broker fields (up, status,
 * labels, pids, pids_prev, fetch_seconds and the counters). A broken
 * connection is made again once, so a restarted pgoffd answers the first
 * scrape after it is back. What s borrows stays valid until the next
 * call.
 */
void broker_client_scrape(struct broker_client *b, struct ex_scrape *s);
void broker_client_close(struct broker_client *b);

#endif
