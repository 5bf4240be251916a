// SPDX-License-Identifier: GPL-2.0-only
/*
 * pgoffd - the pgoff broker.
 *
 * setup: arguments -> prober -> kernel symbols -> load and attach BPF ->
 * find PostgreSQL -> record -> socket -> drop root. run: one thread, one
 * epoll loop whose data is each fd's handler (loop.h): the socket and
 * clients (server.c), the prober's answers, a 1 s timer (discovery, loss
 * counters, stuck clients) and a signalfd (SIGHUP: reload; SIGTERM and
 * SIGINT: stop); between rounds, the ring buffer. teardown: tell clients,
 * detach, exit. What clients are answered is replies.c's; settings and
 * SIGHUP are cmdline.c's (broker.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "broker/broker.h"
#include "broker/config.h"
#include "broker/kernel/event.h"
#include "broker/kernel/holdback.h"
#include "broker/kernel/ksyms.h"
#include "broker/loop.h"
#include "broker/pg/pg_registry.h"
#include "broker/kernel/query_texts.h"
#include "broker/priv/privdrop.h"
#include "broker/priv/prober.h"
#include "broker/priv/symfiles.h"
#include "broker/priv/usdt.h"
#include "broker/record/recorder.h"
#include "broker/kernel/ring_pace.h"
#include "broker/sd_notify.h"
#include "broker/serve/server.h"
#include "broker/kernel/stats.h"
#include "broker/kernel/tracer.h"
#include "common/clock.h"
#include "broker/pg/usyms.h"
#include "common/log.h"
#include "common/units.h"

/* Records handled per loop round: clients and signals are served between. */
#define RING_BUDGET 512

/* Records of a process whose title is not known yet wait for it this
 * long at most (see holdback.h); this many at most. */
#define HOLDBACK_MS 50
#define HOLDBACK_RECORDS 1024

/* At start, clusters found within this are traced before serving. */
#define SETUP_PROBE_MS 3000

static void filter_hook(void *ctx)
{
	struct broker *b = ctx;
	struct kernel_filter k, u;
	bool any, any_u, live_query;
	enum record_queries rq = b->rec ? recorder_queries(b->rec) :
					  RECORD_QUERIES_OFF;
	int err;

	b->events.want_query = false;
	b->events.want_redacted = false;
	b->events.want_ustack = false;
	any = server_filter_union(b->server, &k);
	ring_pace_reset(&b->ring, any);
	live_query = k.want_query;
	if (b->rec) {	/* the recorder is a subscriber that never leaves */
		recorder_widen(b->rec, &k);
		any = true;
	}
	if (!any) {
		tracer_mute(b->tracer);
		log_debug("no subscriber: kernel sends nothing");
		return;
	}
	/* the SQL as it is for subscribers who see it and record-queries
	 * full; redacted (only) for record-queries redacted */
	b->events.want_query = live_query || rq == RECORD_QUERIES_FULL;
	b->events.want_redacted = rq == RECORD_QUERIES_REDACTED;
	any_u = server_ustack_union(b->server, &u);
	if (b->rec && recorder_widen_ustack(b->rec, &u))
		any_u = true;
	b->events.want_ustack = any_u;
	err = tracer_set_filter(b->tracer, &k, any_u ? &u : NULL);
	if (err)
		log_warnx("cannot update the kernel filter: %s", strerror(-err));
	else
		log_debug("kernel filter: min %llu ns, %zu pids, cpu %u, "
			  "pg classes %s, queries %s, user stacks %s",
			  (unsigned long long)k.min_duration_ns, k.npids, k.cpu,
			  k.pg_class_filter ? "some" : "all",
			  k.want_query ? "on" : "off", any_u ? "on" : "off");
}

/* A record becomes an event for the subscribers it matches. */
static void publish(void *ctx, const void *data, size_t size)
{
	struct broker *b = ctx;
	struct event_lines lines;
	struct event_meta meta;
	int err = event_encode(&b->events, data, size, &lines, &meta);

	if (err) {
		log_warnx("kernel record of %zu bytes not sent: %s", size,
			  strerror(-err));
		return;
	}
	/* added to the store first: a replay that reaches the store's end
	 * reads it (store_next writes what was added) */
	if (b->rec) {
		recorder_seq_used(b->rec, b->events.seq);
		meta.stored = recorder_record(b->rec, &lines, &meta,
					      b->events.seq);
	}
	server_publish(b->server, &lines, &meta);
}

/* The process an interval or episode record is about, and its
 * cluster; 0 for other records. */
static uint32_t record_tgid(const void *data, size_t size, uint32_t *cluster)
{
	const struct pgoff_record *r = data;
	const struct pgoff_episode *e = data;

	if (size >= sizeof(*r) && r->kind == PGOFF_REC_INTERVAL) {
		*cluster = r->cluster;
		return r->tgid;
	}
	if (size >= sizeof(*e) && e->kind == PGOFF_REC_EPISODE) {
		*cluster = e->cluster;
		return e->tgid;
	}
	return 0;
}

/* A traced process whose title PostgreSQL has not set yet. */
static bool awaits_title(struct broker *b, uint32_t tgid, uint32_t cluster)
{
	const struct pg_proc *p = pg_registry_learn(b->registry, tgid, cluster);

	return p && !p->titled;
}

static void on_record(void *ctx, void *data, size_t size)
{
	struct broker *b = ctx;
	const struct pgoff_title *title = data;
	uint32_t tgid, cluster = 0;

	if (size >= sizeof(*title) && title->kind == PGOFF_REC_TITLE) {
		char text[PGOFF_TITLE_MAX];

		pg_registry_learn(b->registry, title->tgid, title->cluster);
		memcpy(text, title->title, sizeof(text));
		text[sizeof(text) - 1] = '\0';
		pg_registry_title(b->registry, title->tgid, title->cluster, text);
		holdback_release(b->held, title->tgid, publish, b);
		return;
	}
	tgid = record_tgid(data, size, &cluster);
	if (tgid && (holdback_has(b->held, tgid) || awaits_title(b, tgid, cluster)) &&
	    holdback_put(b->held, tgid, data, size, monotonic_ms()) == 0)
		return;
	publish(b, data, size);
}

/*
 * The prober takes one question at a time; the registry says which:
 * first a process that may be a new cluster, then a cluster whose
 * run-time names are due.
 */
static bool ask_probe(struct broker *b, int64_t now)
{
	uint32_t pid;

	if (prober_busy(b->prober) ||
	    !pg_registry_next_probe(b->registry, now, &pid))
		return false;
	if (prober_ask(b->prober, pid, (uint32_t)b->cfg.max_clusters_per_uid))
		log_warn("cannot ask the prober about process %u", pid);
	return true;
}

void broker_probe_next(struct broker *b)
{
	int64_t now = monotonic_ms();
	uint32_t pid, cluster;

	if (prober_busy(b->prober) || ask_probe(b, now))
		return;
	if (pg_registry_next_names(b->registry, now, &cluster, &pid) &&
	    prober_ask_names(b->prober, cluster, pid))
		log_warn("cannot ask the prober for cluster %u's names", cluster);
}

/*
 * The files of a cluster's mappings that the prober's worker opened: to
 * the symbolizer, which reads only those (a path the owner chose may
 * lead into a mount whose reads never return). Those it refused (on a
 * FUSE or network file system, replaced, or not answered in time) are
 * counted and said.
 */
static void offer_files(struct broker *b, struct prober_answer *a)
{
	const struct pg_cluster_info *c = &a->info;
	const char *why = NULL, *path = "";

	for (uint32_t i = 0; i < c->nmaps && i < PG_PROBE_MAX_MAPS; i++) {
		int32_t fd = a->map_fd[i];

		if (fd >= 0) {
			usyms_offer(b->events.usyms, c->uid, c->maps[i].dev,
				    c->maps[i].ino, fd);
			a->map_fd[i] = -EBADF;
		} else if (!why && (fd == -ETIMEDOUT || symfiles_refused(fd))) {
			why = fd == -ETIMEDOUT ? "no answer in time (a FUSE or "
			      "network mount that blocks?)" : fd == -EREMOTE ?
			      "on a FUSE, network or overlay file system" :
			      fd == -ESTALE ? "replaced at its path" :
			      "not a regular file";
			path = c->maps[i].path;
		}
	}
	prober_close_files(a);
	if (!a->files_refused)
		return;
	b->symbol_files_refused += a->files_refused;
	if (log_limit_allow(&b->symbol_log, c->uid, monotonic_ms() / 1000))
		log_warnx("cluster of uid %u (postmaster %u): %u mapped files "
			  "are not read for user stacks' symbols (counted in "
			  "user_symbol_files_refused), e.g. %s: %s", c->uid,
			  c->postmaster_pid, a->files_refused, path,
			  why ? why : "?");
}

/* An answer: a new cluster is learnt with its processes at once. */
static void probed(struct broker *b, struct prober_answer *a)
{
	const struct pg_cluster *c = pg_registry_probed(b->registry, &a->info,
							a->pids, a->npids,
							monotonic_ms());
	char why[64];

	offer_files(b, a);
	if (a->binary_new)
		usdt_note(b->usdt, &a->usdt);
	if (!c)
		return;
	if (event_names_missing(c, why, sizeof(why)))
		log_warnx("cluster %u (PostgreSQL %s): %s: its wait events "
			  "are shown as raw ids", c->id,
			  c->info.version[0] ? c->info.version : "?", why);
	if (pg_registry_scan(b->registry, monotonic_ms()))
		log_warn("scanning /proc for PostgreSQL");
}

/* The prober answered (or is gone). */
static void on_prober(void *ctx, uint32_t events)
{
	static struct prober_answer a;
	static struct prober_names na;
	struct broker *b = ctx;
	bool names = prober_asked(b->prober) == PROBER_NAMES;
	int err = names ? prober_names_answer(b->prober, &na) :
			  prober_answer(b->prober, &a);

	(void)events;
	if (err == -EAGAIN)
		return;
	if (err)
		log_fatal(0, "the prober is gone: new clusters cannot be "
			  "found; exiting so that the service restarts");
	if (names)
		pg_registry_names_answer(b->registry, na.cluster, na.pid,
					 &na.names);
	else
		probed(b, &a);
	broker_probe_next(b);
}

/* Setup, as root: the clusters running now, before serving. */
static void probe_at_start(struct broker *b)
{
	int64_t until = monotonic_ms() + SETUP_PROBE_MS;
	static struct prober_answer a;

	for (;;) {
		int64_t left = until - monotonic_ms();

		ask_probe(b, monotonic_ms());	/* names once serving */
		if (!prober_busy(b->prober) || left <= 0)
			break;
		if (prober_wait(b->prober, (int)left, &a) == 0)
			probed(b, &a);
	}
	if (prober_busy(b->prober))
		log_info("still asking about some processes named postgres; "
			 "serving meanwhile");
}

/*
 * PostgreSQL's wait probes, as root, in the binaries of the postmasters
 * found and of the majors installed; then the program's fd goes to the
 * prober, which links the binaries of postmasters found later, and
 * pgoffd closes its own (see broker/priv/prober.h).
 */
static void attach_usdt(struct broker *b)
{
	int fd = tracer_usdt_prog_fd(b->tracer), err;
	const struct pg_proc *p;
	size_t n;

	if (usdt_new(&b->usdt))
		log_fatal(ENOMEM, "out of memory");
	if (!b->cfg.usdt) {
		log_info("usdt = no: PostgreSQL's wait probes are not attached; "
			 "lock and LWLock episodes are inferred");
		goto done;
	}
	p = pg_registry_procs(b->registry, &n);
	for (size_t i = 0; i < n; i++) {
		const struct pg_cluster *c = pg_registry_cluster(b->registry,
								 p[i].cluster);
		char exe[64], shown[256];
		ssize_t len;

		if (!c || c->info.postmaster_pid != p[i].pid)
			continue;
		/* its own file, even if an upgrade replaced the path since */
		snprintf(exe, sizeof(exe), "/proc/%u/exe", p[i].pid);
		len = readlink(exe, shown, sizeof(shown) - 1);
		if (len <= 0)
			snprintf(shown, sizeof(shown), "%s", exe);
		else
			shown[len] = '\0';
		usdt_attach(b->usdt, fd, exe, shown);
	}
	usdt_attach_installed(b->usdt, fd);
	if (fd >= 0) {
		err = prober_give_usdt(b->prober, fd, b->usdt);
		if (err)
			log_fatal(-err, "cannot hand the uprobe program to the "
				  "prober");
	}
done:
	err = tracer_forget_usdt(b->tracer);
	if (err)
		log_fatal(-err, "cannot close the uprobe program");
}

/* Kernel-side losses are told to every subscriber as they happen. */
static void report_kernel_losses(struct broker *b)
{
	static const struct {
		enum pgoff_counter counter;
		const char *cause;
	} losses[] = {
		{ PGOFF_CNT_RINGBUF_FULL, PGOFF_DROP_RINGBUF },
		{ PGOFF_CNT_START_FULL, PGOFF_DROP_START_MAP },
	};
	uint64_t cnt[PGOFF_CNT__COUNT];

	if (tracer_counters(b->tracer, cnt))
		return;
	for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++) {
		enum pgoff_counter k = losses[i].counter;

		if (cnt[k] > b->told[k]) {
			log_warnx("kernel lost %llu intervals: %s",
				  (unsigned long long)(cnt[k] - b->told[k]),
				  losses[i].cause);
			server_publish_drop(b->server, losses[i].cause,
					    cnt[k] - b->told[k]);
			b->told[k] = cnt[k];
		}
	}
}

/* Every thread the kernel has seen go off the CPU names its process and
 * cluster: how processes forked since are learnt before an event. */
static int learn_thread(void *ctx, uint32_t pid, const struct pgoff_start *s)
{
	struct broker *b = ctx;

	(void)pid;
	if (s->tgid)
		pg_registry_learn(b->registry, s->tgid, s->cluster);
	/* a wait going on under a name its server may have made since the
	 * last read: read again before the wait ends and is told */
	if (s->start_ns && (s->flags & PGOFF_F_PG_WAIT) && s->pg_wait_event_info)
		pg_registry_name_unknown(b->registry, s->cluster,
					 s->pg_wait_event_info);
	return 0;
}

/* Whether the kernel sends records: only for subscribers' filters. */
static bool ring_in_use(const struct broker *b)
{
	return tracer_min_duration(b->tracer) != UINT64_MAX;
}

/* A cluster's data directory, for the log (usdt_rate_tick). */
static const char *cluster_name(void *ctx, uint32_t id)
{
	const struct broker *b = ctx;
	const struct pg_cluster *c = pg_registry_cluster(b->registry, id);

	return c ? c->info.data_dir : "(gone)";
}

/* Once a second; also reads what the last subscriber left in the ring. */
static void on_tick(void *ctx, uint32_t events)
{
	struct broker *b = ctx;
	uint64_t expirations;

	(void)events;
	if (read(b->tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("timerfd");
	tracer_consume(b->tracer, RING_BUDGET, &b->ring_more);	/* records before losses */
	report_kernel_losses(b);
	if (b->rec) {	/* before retiring: an exited process's last second */
		uint64_t now = stats_now_ns();
		struct agg_row *rows;
		size_t n;

		stats_rows(&b->stats, PGOFF_STATS_BY_PID, now, &rows, &n);
		if (rows)
			recorder_aggregate(b->rec, rows, n, now);
	}
	stats_retire_exited(&b->stats);	/* while the registry knows them */
	tracer_threads_foreach(b->tracer, learn_thread, b);
	if (b->rec)
		recorder_tick(b->rec);
	if (pg_registry_scan(b->registry, monotonic_ms()))
		log_warn("scanning /proc for PostgreSQL");
	broker_probe_next(b);
	query_texts_tick(&b->texts, monotonic_ms());
	usdt_rate_tick(&b->usdt_rates, tracer_usdt_rates_fd(b->tracer),
		       stats_now_ns(), b->cfg.usdt_max_rate,
		       b->cfg.usdt_quiet_ns, cluster_name, b);
	server_tick(b->server);
}

static void on_signal(void *ctx, uint32_t events);

/* The loop's fds and the broker's own in it: the timer, signals, the
 * prober (the server adds its own). 0 or -errno. */
static int make_fds(struct broker *b)
{
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	sigset_t mask;
	int err;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	sigdelset(&mask, SIGPIPE);
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	b->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (b->epfd < 0 || b->sfd < 0 || b->tfd < 0 ||
	    timerfd_settime(b->tfd, 0, &its, NULL))
		return -errno;
	b->signal_ready = (struct loop_handler){ on_signal, b };
	b->timer_ready = (struct loop_handler){ on_tick, b };
	b->prober_ready = (struct loop_handler){ on_prober, b };
	err = loop_watch(b->epfd, EPOLL_CTL_ADD, b->sfd, EPOLLIN, &b->signal_ready);
	if (!err)
		err = loop_watch(b->epfd, EPOLL_CTL_ADD, b->tfd, EPOLLIN,
				 &b->timer_ready);
	if (!err)
		err = loop_watch(b->epfd, EPOLL_CTL_ADD, prober_fd(b->prober),
				 EPOLLIN, &b->prober_ready);
	return err;
}

/* SIGHUP reloads; SIGTERM and SIGINT end the loop. */
static void on_signal(void *ctx, uint32_t events)
{
	struct broker *b = ctx;
	struct signalfd_siginfo si;

	(void)events;
	if (read(b->sfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		broker_reload(b);
		return;
	}
	log_info("signal %u: exiting", si.ssi_signo);
	sd_notify_state("STOPPING=1");
	b->running = false;
}

/* What setup finds out and hands from one step to the next. */
struct setup {
	struct server_opts so;
	struct tracer_opts to;
	struct prober_opts po;
	uid_t uid;			/* what pgoffd runs as once set up */
	gid_t gid;
};

/* The configuration, checked; pgoffd --check stops here. Exits on error. */
static void configure(struct broker *b, struct setup *s)
{
	char path[PATH_MAX], err_msg[300];
	enum run_mode mode;
	int err = broker_read_config(b->argc, b->argv, &b->cfg, path, sizeof(path),
			      &mode, err_msg, sizeof(err_msg));

	switch (err ? RUN_SERVE : mode) {
	case RUN_HELP:
		broker_usage(stdout);
		exit(0);
	case RUN_VERSION:
		printf("pgoffd %s\n", PGOFF_VERSION);
		exit(0);
	case RUN_BAD_OPTION:
		broker_usage(stderr);
		exit(2);
	case RUN_SERVE:
	case RUN_CHECK:
		break;
	}
	if (err || broker_resolve(&b->cfg, &s->so, &s->to, &s->po, err_msg,
			   sizeof(err_msg))) {
		fprintf(stderr, "pgoffd: %s\n", err_msg);
		exit(2);
	}
	log_init("pgoffd", b->cfg.verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	if (privdrop_lookup(b->cfg.user, &s->uid, &s->gid))
		exit(2);
	if (mode == RUN_CHECK) {
		printf("pgoffd: configuration ok (%s)\n", path);
		exit(0);
	}
	if (geteuid() != 0)
		log_fatal(0, "pgoffd must be started as root (it drops root "
			  "once the BPF programs are attached)");
	s->po.uid = s->uid;
	s->po.gid = s->gid;
}

/*
 * Descriptors up to the hard limit: the on-CPU sampler takes two a CPU
 * (its perf event and link) and each client one, and systemd's soft
 * limit is 1024.
 */
static void raise_fd_limit(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &r))
			log_warnx("cannot raise the descriptor limit to %llu",
				  (unsigned long long)r.rlim_max);
	}
}

/* As root: the prober, the BPF programs, the clusters running now. */
static void attach(struct broker *b, struct setup *s)
{
	int err;

	/* first, while this process has nothing open worth inheriting */
	err = prober_start(&b->prober, &s->po);
	if (err)
		log_fatal(-err, "cannot start the PostgreSQL prober");

	b->ksyms = ksyms_load("/proc/kallsyms");
	if (!b->ksyms)
		log_fatal(errno, "cannot read kernel symbols from /proc/kallsyms "
			  "(pgoffd must start as root)");
	raise_fd_limit();
	err = tracer_open(&b->tracer, &s->to, on_record, b);
	if (err)
		log_fatal(-err, "cannot load the BPF programs (root, a kernel "
			  "with BTF and BPF ring buffers are needed)");
	log_info("BPF programs attached (%s)", tracer_hook(b->tracer));
	if (tracer_on_cpu_cpus(b->tracer))
		log_info("the wait of a running backend sampled every %llu us "
			 "on %d CPUs", (unsigned long long)
			 (b->cfg.on_cpu_sample_ns / 1000),
			 tracer_on_cpu_cpus(b->tracer));
	tracer_set_usdt_rate(b->tracer, b->cfg.usdt_max_rate,
			     b->cfg.usdt_quiet_ns);
	/* the prober alone adds targets: pgoffd keeps a read-only fd */
	err = prober_give_maps(b->prober, tracer_targets_fd(b->tracer),
			       tracer_quotas_fd(b->tracer),
			       tracer_target_slots_fd(b->tracer));
	if (!err)
		err = tracer_forget_targets(b->tracer);
	if (err)
		log_fatal(-err, "cannot hand the table of traced processes to "
			  "the prober");
	err = pg_registry_new(&b->registry, "/proc",
			      (uint32_t)b->cfg.max_clusters_per_uid);
	if (err)
		log_fatal(-err, "out of memory");
	err = pg_registry_scan(b->registry, monotonic_ms());
	if (err)
		log_fatal(-err, "cannot scan /proc");
	probe_at_start(b);
	attach_usdt(b);
}

/* The flight record's directory (made as root) and its store. */
static void open_record(struct broker *b, struct setup *s)
{
	struct recorder_opts ro = broker_recorder_opts(&b->cfg);
	char err_msg[300];
	int dfd = recorder_prepare_dir(b->cfg.state_dir, s->uid, s->gid,
				       err_msg, sizeof(err_msg));
	int err;

	if (dfd < 0)
		log_fatal(0, "state directory: %s (or set record = no)",
			  err_msg);
	err = recorder_open(&b->rec, dfd, &ro);
	if (err == -EBUSY)
		log_fatal(0, "another pgoffd records in %s",
			  b->cfg.state_dir);
	if (err)
		log_fatal(-err, "cannot open the record in %s",
			  b->cfg.state_dir);
	s->so.store = recorder_store(b->rec);
	/* events go on numbering after the stored and reserved ones */
	b->events.seq = recorder_seq_start(b->rec);
	log_info("recording waits and intervals of %llu ns or more in "
		 "%s (events go on from seq %llu)",
		 (unsigned long long)ro.min_ns, b->cfg.state_dir,
		 (unsigned long long)b->events.seq + 1);
}

/* The loop and the socket; then root is dropped and systemd told. */
static void serve(struct broker *b, struct setup *s)
{
	struct server_hooks hooks = { .filter_changed = filter_hook, .ctx = b };
	int err = make_fds(b);

	broker_reply_hooks(&hooks);
	if (err)
		log_fatal(-err, "cannot set up the event loop");
	err = server_open(&b->server, &s->so, &hooks, b->epfd);
	if (err)
		log_fatal(-err, "cannot serve %s", s->so.socket_path);
	filter_hook(b);	/* the recorder's filter, before any client */
	/* nothing below needs root: the BPF fds, the socket and /proc's
	 * world-readable files do; the prober keeps what discovery needs */
	if (privdrop(s->uid, s->gid, NULL, 0))
		log_fatal(0, "refusing to run with privileges it could not drop");
	log_info("serving %s to group %s as uid %u with no capabilities; %zu "
		 "PostgreSQL processes in %zu clusters", s->so.socket_path,
		 s->so.group_name, s->uid, pg_registry_proc_count(b->registry),
		 pg_registry_cluster_count(b->registry));
	/* systemd (Type=notify): started means serving, privileges dropped */
	err = sd_notify_state("READY=1");
	if (err < 0)
		log_warnx("cannot tell systemd that pgoffd is ready "
			  "($NOTIFY_SOCKET): %s", strerror(-err));
}

/* Startup, as root, to serving without privileges. Exits on failure. */
static void setup(struct broker *b, int argc, char **argv)
{
	struct setup s = { 0 };

	b->argc = argc;
	b->argv = argv;
	b->epfd = b->tfd = b->sfd = -1;
	clock_gettime(CLOCK_MONOTONIC, &b->started);
	ring_pace_init(&b->ring);
	if (holdback_new(&b->held, HOLDBACK_RECORDS,
			 sizeof(struct pgoff_record_query) +
			 sizeof(struct pgoff_ustack), HOLDBACK_MS))
		log_fatal(ENOMEM, "out of memory");
	log_init("pgoffd", LOG_LEVEL_INFO);
	configure(b, &s);
	/* before the first probes: their answers hand it files */
	b->symbol_log.about = "mapped files of";
	if (usyms_new(&b->events.usyms, NULL))
		log_fatal(ENOMEM, "out of memory");
	attach(b, &s);
	if (b->cfg.record)
		open_record(b, &s);
	b->events.ksyms = b->ksyms;
	b->events.ksyms_cache = &b->ksyms_cache;
	b->events.registry = b->registry;
	b->stats.tracer = b->tracer;
	b->texts.tracer = b->tracer;
	b->stats.registry = b->registry;
	serve(b, &s);
}

/* Until SIGTERM or SIGINT: fds ready, then the ring, held records, and
 * what the round queued for clients. */
static void run(struct broker *b)
{
	b->running = true;
	while (b->running) {
		struct epoll_event evs[64];
		/* records left over from the last round: do not sleep */
		int timeout = b->ring_more ? 0 : -1, n;
		int64_t held = holdback_wait_ms(b->held, monotonic_ms());

		if (!b->ring_more && ring_in_use(b))
			timeout = (int)ring_pace_wait_ms(&b->ring, monotonic_ms());
		if (held >= 0 && (timeout < 0 || held < timeout))
			timeout = (int)held;
		held = b->rec ? recorder_flush_wait_ms(b->rec, monotonic_ms()) : -1;
		if (held >= 0 && (timeout < 0 || held < timeout))
			timeout = (int)held;
		n = epoll_wait(b->epfd, evs, 64, timeout);
		if (n < 0 && errno != EINTR)
			log_fatal(errno, "epoll_wait");
		for (int i = 0; i < n; i++)
			loop_call(&evs[i]);
		if (b->ring_more || (ring_in_use(b) &&
				     !ring_pace_wait_ms(&b->ring, monotonic_ms()))) {
			int got = tracer_consume(b->tracer, RING_BUDGET,
						 &b->ring_more);

			ring_pace_read(&b->ring, monotonic_ms(), got);
		}
		holdback_expire(b->held, monotonic_ms(), publish, b);
		/* the events of the last RECORDER_BATCH_MS in one record
		 * (server_flush stores them first if any is sent) */
		if (b->rec)
			recorder_flush(b->rec);
		server_flush(b->server);	/* one send per client per round */
		server_reap(b->server);
	}
}

/* What is held goes out, clients are told; then all is detached. */
static void teardown(struct broker *b)
{
	holdback_expire(b->held, INT64_MAX, publish, b);
	server_close(b->server, "shutdown");
	recorder_close(b->rec);
	holdback_free(b->held);
	event_ctx_free(&b->events);
	usyms_free(b->events.usyms);
	stats_free(&b->stats);
	tracer_close(b->tracer);
	pg_registry_free(b->registry);
	prober_stop(b->prober);
	usdt_free(b->usdt);
	ksyms_free(b->ksyms);
	close(b->epfd);
	close(b->tfd);
	close(b->sfd);
	log_info("stopped; all BPF programs detached");
}

int main(int argc, char **argv)
{
	static struct broker b;

	setup(&b, argc, argv);
	run(&b);
	teardown(&b);
	return 0;
}
