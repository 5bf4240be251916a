// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracer.c - open, configure, load and attach bpf/offcpu.bpf.c.
 *
 * Order (libbpf-tools style): open -> choose tp_btf or raw_tp programs
 * and size the ring buffer -> load -> attach. Nothing is pinned: when
 * pgoffd exits, even by SIGKILL, the kernel drops programs and maps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "broker/kernel/cpu_tick.h"
#include "broker/kernel/tracer.h"
#include "common/log.h"
#include "offcpu.skel.h"

struct tracer {
	struct offcpu_bpf *skel;
	struct ring_buffer *rb;
	tracer_record_fn fn;
	void *fn_ctx;
	int budget;			/* records left in this consume call */
	bool raw_tp;
	uint64_t min_duration_ns;
	struct cpu_tick tick;		/* on_cpu_tick's links, if sampling */
};

/* libbpf's chatter is for debugging only. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	if (level == LIBBPF_DEBUG && log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	if (level != LIBBPF_WARN && log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	log_vmsg(LOG_LEVEL_DEBUG, fmt, ap);
	return 0;
}

/* BPF_TRACE_UPROBE_MULTI (Linux 6.6), not in Debian 12's headers */
#define TRACE_UPROBE_MULTI ((enum bpf_attach_type)48)

/* tp_btf needs the tracepoint's BTF type in vmlinux (5.5+). */
static bool have_tp_btf(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool ok;

	if (!vmlinux)
		return false;
	ok = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch",
				    BTF_KIND_TYPEDEF) > 0;
	btf__free(vmlinux);
	return ok;
}

static void choose_programs(struct offcpu_bpf *s, bool raw)
{
	struct bpf_program *btf_progs[] = {
		s->progs.sched_switch_btf, s->progs.sched_waking_btf,
		s->progs.sched_fork_btf, s->progs.sched_exit_btf,
		s->progs.sched_exec_btf,
	};
	struct bpf_program *raw_progs[] = {
		s->progs.sched_switch_raw, s->progs.sched_waking_raw,
		s->progs.sched_fork_raw, s->progs.sched_exit_raw,
		s->progs.sched_exec_raw,
	};

	for (size_t i = 0; i < sizeof(btf_progs) / sizeof(btf_progs[0]); i++) {
		bpf_program__set_autoload(btf_progs[i], !raw);
		bpf_program__set_autoload(raw_progs[i], raw);
	}
}

/* A negative return stops libbpf after this record (it is consumed). */
#define BUDGET_SPENT (-EAGAIN)

static int on_sample(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	t->fn(t->fn_ctx, data, size);
	return --t->budget > 0 ? 0 : BUDGET_SPENT;
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * Before 6.1 a map that is not preallocated allocates with kmalloc, which
 * must not happen in sched_switch (the run queue lock is held). There the
 * maps that grow on demand are preallocated instead, and smaller. (A
 * perf_event program, on_cpu_tick, may use no other hash map before 6.1
 * either: the verifier asks the same.)
 */
static void preallocate_maps(struct offcpu_bpf *skel)
{
	struct bpf_map *grow[] = { skel->maps.aggregate, skel->maps.queries };

	for (size_t i = 0; i < sizeof(grow) / sizeof(grow[0]); i++) {
		bpf_map__set_map_flags(grow[i], bpf_map__map_flags(grow[i]) &
					      ~(__u32)BPF_F_NO_PREALLOC);
		bpf_map__set_max_entries(grow[i], 4096);
	}
	log_info("kernel before 6.1: aggregation and query maps preallocated "
		 "with 4096 entries each");
}

/* the initial pid namespace's inode (the kernel's PROC_PID_INIT_INO) */
#define INITIAL_PIDNS_INO 0xEFFFFFFCU

/*
 * pgoffd's own pid namespace, for the BPF programs to report pids as
 * pgoffd (its clients, and the prober that fills the targets table) see
 * them. In a container's namespace the kernel's own numbers would match
 * nothing.
 */
static int set_pid_namespace(struct offcpu_bpf *skel)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st)) {
		log_warn("cannot stat /proc/self/ns/pid");
		return -errno;
	}
	if (st.st_ino == INITIAL_PIDNS_INO)
		return 0;
	skel->rodata->pidns_ino = (__u32)st.st_ino;
	log_info("in a pid namespace (inode %llu): processes are seen by their "
		 "pids there, processes outside it are not traced",
		 (unsigned long long)st.st_ino);
	return 0;
}

/*
 * Open the object, choose its programs and size its maps, and load it;
 * with the on-CPU sampler's program (tick) or without. *loading: the
 * failure, if any, was the load's (the verifier's, the kernel's).
 */
static int load(struct tracer *t, const struct tracer_opts *opts, bool tick,
		bool *loading)
{
	int err;

	t->skel = offcpu_bpf__open();
	if (!t->skel) {
		err = -errno;
		log_warnx("cannot open the BPF object");
		return err;
	}
	choose_programs(t->skel, t->raw_tp);
	/* PostgreSQL's wait probes: linked per binary by broker/priv/usdt.c
	 * (uprobe_multi, which libbpf 1.1 has no name for) */
	bpf_program__set_expected_attach_type(t->skel->progs.pg_usdt,
					      TRACE_UPROBE_MULTI);
	bpf_program__set_autoattach(t->skel->progs.pg_usdt, false);
	/* before 6.6 there is no uprobe_multi link to use it with */
	if (!kernel_at_least(6, 6))
		bpf_program__set_autoload(t->skel->progs.pg_usdt, false);
	if (!tick)
		bpf_program__set_autoload(t->skel->progs.on_cpu_tick, false);
	err = set_pid_namespace(t->skel);
	if (err)
		return err;
	if (!kernel_at_least(6, 1))
		preallocate_maps(t->skel);
	err = bpf_map__set_max_entries(t->skel->maps.events,
				       (__u32)opts->ringbuf_bytes);
	if (err) {
		log_warnx("ring buffer size %zu rejected", opts->ringbuf_bytes);
		return err;
	}
	err = offcpu_bpf__load(t->skel);
	*loading = err != 0;
	if (err)
		log_warnx("loading the BPF programs%s failed (run with -v to "
			  "see the verifier's log)",
			  tick ? " with the on-CPU sampler's" : "");
	return err;
}

int tracer_open(struct tracer **out, const struct tracer_opts *opts,
		tracer_record_fn fn, void *ctx)
{
	bool tick = opts->on_cpu_sample_ns != 0, loading = false;
	struct tracer *t;
	int err;

	libbpf_set_print(libbpf_log);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->min_duration_ns = UINT64_MAX;
	t->raw_tp = opts->force_raw_tp || !have_tp_btf();

	err = load(t, opts, tick, &loading);
	if (err && tick && loading) {	/* not worth the rest: without it */
		offcpu_bpf__destroy(t->skel);
		t->skel = NULL;
		tick = false;
		log_warnx("trying again without the on-CPU sampler: if that "
			  "loads, a wait's time on a CPU is not counted (status: "
			  "on_cpu_sample_cpus 0)");
		err = load(t, opts, tick, &loading);
	}
	if (err)
		goto cleanup;
	err = offcpu_bpf__attach(t->skel);
	if (err) {
		log_warnx("attaching to the scheduler tracepoints failed");
		goto cleanup;
	}
	if (tick) {
		err = cpu_tick_attach(&t->tick, t->skel->progs.on_cpu_tick,
				      opts->on_cpu_sample_ns);
		/* the waits' off-CPU time does not need it: say so, go on */
		if (err)
			log_warnx("the on-CPU sampler is off: a CPU clock perf "
				  "event could not be opened or given its program "
				  "(%s); a wait's time on a CPU is not counted "
				  "(status: on_cpu_sample_cpus 0)", strerror(-err));
	}
	t->fn = fn;
	t->fn_ctx = ctx;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_sample,
				 t, NULL);
	if (!t->rb) {
		err = -errno;
		log_warnx("cannot map the ring buffer");
		goto cleanup;
	}
	*out = t;
	return 0;
cleanup:
	tracer_close(t);
	return err < 0 ? err : -EINVAL;
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	cpu_tick_detach(&t->tick);
	offcpu_bpf__destroy(t->skel);
	free(t);
}

const char *tracer_hook(const struct tracer *t)
{
	return t->raw_tp ? "raw_tp" : "tp_btf";
}

unsigned int tracer_attached_programs(const struct tracer *t)
{
	const struct bpf_object_skeleton *s = t->skel->skeleton;
	unsigned int n = 0;

	/* the twin of the hook not chosen is not loaded and has no link */
	for (int i = 0; i < s->prog_cnt; i++)
		if (*s->progs[i].link)
			n++;
	return n + (t->tick.n > 0);	/* one program, a link a CPU */
}

int tracer_on_cpu_cpus(const struct tracer *t)
{
	return t->tick.n;
}

int tracer_consume(struct tracer *t, int budget, bool *more)
{
	int n;

	t->budget = budget;
	n = ring_buffer__consume(t->rb);
	*more = n == BUDGET_SPENT;
	return n == BUDGET_SPENT ? budget : n;
}

int tracer_targets_fd(const struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.targets);
}

int tracer_quotas_fd(const struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.quotas);
}

int tracer_target_slots_fd(const struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.target_slots);
}

/* fd's number becomes /dev/null: the object behind it is let go, and
 * libbpf still closes a valid fd at the end. 0 or -errno. */
static int forget_fd(int fd)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC), err = 0;

	if (null < 0)
		return -errno;
	if (dup3(null, fd, O_CLOEXEC) < 0)
		err = -errno;
	close(null);
	return err;
}

int tracer_forget_targets(struct tracer *t)
{
	int err = forget_fd(tracer_targets_fd(t));

	return err ? err : forget_fd(tracer_target_slots_fd(t));
}

int tracer_usdt_prog_fd(const struct tracer *t)
{
	return bpf_program__fd(t->skel->progs.pg_usdt);
}

void tracer_set_usdt_rate(struct tracer *t, uint64_t max_rate,
			  uint64_t quiet_ns)
{
	t->skel->bss->usdt_quiet_ns = quiet_ns;
	t->skel->bss->usdt_max_rate = max_rate;
}

int tracer_usdt_rates_fd(const struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.usdt_rates);
}

int tracer_forget_usdt(struct tracer *t)
{
	int fd = tracer_usdt_prog_fd(t);

	/* not loaded: nothing to forget; else the links keep it loaded */
	return fd < 0 ? 0 : forget_fd(fd);
}

size_t tracer_target_count(const struct tracer *t)
{
	int fd = tracer_quotas_fd(t);
	size_t n = 0;

	/* what the quotas count: this process holds no targets descriptor */
	for (uint32_t i = 0; i < PGOFF_MAX_QUOTAS; i++) {
		struct pgoff_quota q;

		if (bpf_map_lookup_elem(fd, &i, &q) == 0 && q.procs > 0)
			n += (size_t)q.procs;
	}
	return n;
}

static void clear_map(int fd)
{
	uint32_t key;

	/* Deleting the first key each time never skips one. */
	while (bpf_map_get_next_key(fd, NULL, &key) == 0)
		bpf_map_delete_elem(fd, &key);
}

/*
 * Episodes are followed only while someone wants them; those open from
 * before are stale (their waits went on unseen), so every switch closes
 * them all: a new generation (never 0, which a new thread's entry has).
 */
static void set_episodes(struct tracer *t, bool on)
{
	if (t->skel->bss->want_episodes == (uint32_t)on)
		return;
	t->skel->bss->want_episodes = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!++t->skel->data->episode_gen)
		t->skel->data->episode_gen = 1;
	/* no CPU may see episodes on with the old generation */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	t->skel->bss->want_episodes = on;
}

/* The user stack filter: its pids are marked in watch_pids, which
 * tracer_set_filter has just filled. */
static int set_ustack(struct tracer *t, const struct kernel_filter *u)
{
	int fd = bpf_map__fd(t->skel->maps.watch_pids);
	struct offcpu_bpf__bss *bss = t->skel->bss;

	for (size_t i = 0; u && i < u->npids; i++) {
		uint8_t v = 0;

		bpf_map_lookup_elem(fd, &u->pids[i], &v);
		v |= PGOFF_WATCH_USTACK;
		if (bpf_map_update_elem(fd, &u->pids[i], &v, BPF_ANY))
			return -errno;
	}
	if (!u)
		return 0;
	bss->ustack_filter_pids = u->npids > 0;
	for (size_t i = 0; i < 4; i++)
		bss->ustack_pg_classes[i] = u->pg_classes[i];
	bss->ustack_filter_pg_classes = u->pg_class_filter;
	bss->ustack_cpu_filter = u->cpu;
	bss->want_ustack = 1;
	return 0;
}

int tracer_set_filter(struct tracer *t, const struct kernel_filter *k,
		      const struct kernel_filter *u)
{
	int fd = bpf_map__fd(t->skel->maps.watch_pids);
	struct offcpu_bpf__bss *bss = t->skel->bss;
	uint8_t one = PGOFF_WATCH_ANY;
	int err;

	/* Widen first, then narrow: no wanted record is lost on the way;
	 * user stacks off while their pid marks are rewritten. */
	bss->want_ustack = 0;
	bss->filter_pids = 0;
	bss->filter_pg_classes = 0;
	bss->cpu_filter = PGOFF_CPU_ANY;
	bss->want_query = k->want_query;
	t->skel->data->min_duration_ns = k->min_duration_ns;
	t->min_duration_ns = k->min_duration_ns;
	clear_map(fd);
	for (size_t i = 0; i < k->npids; i++)
		if (bpf_map_update_elem(fd, &k->pids[i], &one, BPF_ANY))
			return -errno;
	bss->filter_pids = k->npids > 0;
	for (size_t i = 0; i < PGOFF_PG_CLASS_WORDS; i++)
		bss->pg_classes[i] = k->pg_classes[i];
	bss->filter_pg_classes = k->pg_class_filter;
	bss->cpu_filter = k->cpu;
	t->skel->data->want_pg_intervals = k->want_pg_intervals;
	set_episodes(t, k->want_episodes);
	err = set_ustack(t, u);
	return err;
}

void tracer_mute(struct tracer *t)
{
	t->skel->data->min_duration_ns = UINT64_MAX;
	t->skel->bss->want_query = 0;
	t->skel->bss->want_ustack = 0;
	set_episodes(t, false);
	t->min_duration_ns = UINT64_MAX;
}

uint64_t tracer_min_duration(const struct tracer *t)
{
	return t->min_duration_ns;
}

int tracer_counters(const struct tracer *t, uint64_t out[PGOFF_CNT__COUNT])
{
	int fd = bpf_map__fd(t->skel->maps.counters);
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t i = 0; i < PGOFF_CNT__COUNT; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

/*
 * Every entry of a hash map once, in batches: the batch cursor is a
 * bucket, so entries the kernel deletes meanwhile (a thread that exits)
 * neither restart the walk nor make it see others twice, as
 * get_next_key of a deleted key would. fn gets each key and value.
 */
typedef int (*entry_fn)(void *ctx, const void *key, const void *val);

static int walk_map(int fd, size_t ksz, size_t vsz, entry_fn fn, void *ctx)
{
	uint32_t chunk = 256, in = 0, out = 0, n;
	bool first = true, done = false;
	char *keys = NULL, *vals = NULL;
	int err = 0;

	while (!done) {
		char *k = realloc(keys, chunk * ksz), *v;

		if (!k)
			return -ENOMEM;
		keys = k;
		v = realloc(vals, chunk * vsz);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		vals = v;
		n = chunk;
		if (bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals,
					 &n, NULL)) {
			if (errno == ENOSPC && n == 0) {	/* a bucket > chunk */
				chunk *= 2;
				continue;
			}
			if (errno != ENOENT) {
				err = -errno;
				break;
			}
			done = true;	/* the last batch, maybe with entries */
		}
		for (uint32_t i = 0; i < n && !err; i++)
			err = fn(ctx, keys + i * ksz, vals + i * vsz);
		if (err)
			break;
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	return err;
}

struct agg_walk {
	tracer_agg_fn fn;
	void *ctx;
};

static int agg_entry(void *ctx, const void *key, const void *val)
{
	struct agg_walk *w = ctx;

	return w->fn(w->ctx, key, val);
}

int tracer_agg_foreach(struct tracer *t, tracer_agg_fn fn, void *ctx)
{
	struct agg_walk w = { fn, ctx };

	return walk_map(bpf_map__fd(t->skel->maps.aggregate),
			sizeof(struct pgoff_agg_key), sizeof(struct pgoff_agg),
			agg_entry, &w);
}

int tracer_set_query_texts(struct tracer *t, bool on)
{
	t->skel->bss->want_query_texts = on;
	return 0;
}

int tracer_query_text(struct tracer *t, uint64_t id, uint32_t cluster,
		      char *buf, size_t size, size_t *len)
{
	struct pgoff_query_text_key k = { .query_id = id, .cluster = cluster };
	struct {
		uint32_t len, pad;
		char text[PGOFF_QUERY_MAX];
	} v;

	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.query_texts), &k, &v))
		return -errno;
	*len = v.len < size - 1 ? v.len : size - 1;
	if (*len > sizeof(v.text) - 1)
		*len = sizeof(v.text) - 1;
	memcpy(buf, v.text, *len);
	buf[*len] = '\0';
	return 0;
}

int tracer_agg_delete(struct tracer *t, const struct pgoff_agg_key *key)
{
	int fd = bpf_map__fd(t->skel->maps.aggregate);

	if (bpf_map_delete_elem(fd, key))
		return -errno;
	/* a row keyed by a query id gives its place back (agg_query_rows) */
	if (key->query_id)
		__atomic_fetch_sub(&t->skel->bss->agg_query_rows, 1,
				   __ATOMIC_SEQ_CST);
	return 0;
}

struct start_walk {
	tracer_thread_fn fn;
	void *ctx;
};

static int start_entry(void *ctx, const void *key, const void *val)
{
	struct start_walk *w = ctx;

	return w->fn(w->ctx, *(const uint32_t *)key, val);
}

int tracer_threads_foreach(struct tracer *t, tracer_thread_fn fn, void *ctx)
{
	struct start_walk w = { fn, ctx };

	/* a thread's entry begins with its start */
	return walk_map(bpf_map__fd(t->skel->maps.threads), sizeof(uint32_t),
			bpf_map__value_size(t->skel->maps.threads), start_entry, &w);
}
