/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * broker.h - pgoffd's state, one per process, and the three files that
 * share it: main.c (setup, the loop, the kernel's records), replies.c
 * (what status, ps, stats and history answer) and cmdline.c (settings
 * from the command line and the file, and SIGHUP's reload).
 */
#ifndef PGOFF_BROKER_H
#define PGOFF_BROKER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "broker/config.h"
#include "broker/kernel/event.h"
#include "broker/kernel/ksyms.h"
#include "broker/serve/log_limit.h"
#include "broker/loop.h"
#include "broker/priv/prober.h"
#include "broker/kernel/query_texts.h"
#include "broker/record/recorder.h"
#include "broker/kernel/ring_pace.h"
#include "broker/serve/server.h"
#include "broker/kernel/stats.h"
#include "broker/kernel/tracer.h"
#include "broker/kernel/usdt_rate.h"

struct broker {
	struct tracer *tracer;
	struct pg_registry *registry;
	struct ksyms *ksyms;
	struct ksyms_cache ksyms_cache;	/* the loop's recent lookups */
	struct server *server;
	struct prober *prober;
	struct usdt *usdt;
	struct pgoffd_config cfg;
	struct event_ctx events;
	struct stats stats;
	struct timespec started;		/* CLOCK_MONOTONIC */
	struct ring_pace ring;			/* while someone subscribes */
	struct holdback *held;			/* records awaiting a title */
	struct recorder *rec;			/* NULL: record = no */
	struct query_texts texts;		/* for top --by query */
	uint64_t told[PGOFF_CNT__COUNT];	/* kernel losses already told */
	uint64_t symbol_files_refused;		/* see offer_files */
	struct log_limit symbol_log;		/* its lines, per owner */
	struct usdt_rate_watch usdt_rates;	/* clusters paused, logged */
	int epfd, tfd, sfd;			/* the loop's; a 1 s timer; signals */
	struct loop_handler timer_ready, signal_ready, prober_ready;
	bool running;				/* until SIGTERM or SIGINT */
	bool ring_more;				/* records left in the ring: read at once */
	int argc;				/* the command line, read again */
	char **argv;				/* on SIGHUP */
};


/* main.c: ask the prober about the next process waiting for it. */
void broker_probe_next(struct broker *b);

/* replies.c: the server's hooks for status, ps, stats (live and past)
 * and history; ctx is the broker. */
void broker_reply_hooks(struct server_hooks *h);

/* cmdline.c */
/* What the command line asks pgoffd to do. */
enum run_mode {
	RUN_SERVE,
	RUN_CHECK,		/* --check: the configuration only */
	RUN_HELP,		/* --help: usage to stdout */
	RUN_VERSION,
	RUN_BAD_OPTION,		/* getopt said why; usage to stderr */
};
void broker_usage(FILE *f);
/*
 * Defaults, then the config file, then the command line (which wins).
 * Also used on SIGHUP with the same argv. Returns 0, or -EINVAL with err;
 * with *mode help, version or a bad option, cfg is not read.
 */
int broker_read_config(int argc, char **argv, struct pgoffd_config *cfg,
		       char *path, size_t path_len, enum run_mode *mode,
		       char *err, size_t errlen);
/* Names to ids; what the server, tracer and prober take. err set on
 * failure. */
int broker_resolve(const struct pgoffd_config *cfg, struct server_opts *so,
		   struct tracer_opts *to, struct prober_opts *po, char *err,
		   size_t errlen);
/* The recorder's part of the settings. */
struct recorder_opts broker_recorder_opts(const struct pgoffd_config *cfg);
/* SIGHUP: settings that can change at run time do; the others say so. */
void broker_reload(struct broker *b);

#endif
