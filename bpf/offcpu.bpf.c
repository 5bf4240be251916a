// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu.bpf.c - off-CPU intervals of PostgreSQL processes.
 *
 * switch-out of a traced thread: remember when, whether it was still
 *   runnable (preempted), and PostgreSQL's wait_event_info (current is
 *   the backend, so its memory is readable here);
 * waking: remember who woke it and when (runs in the waker's context);
 * switch-in: the interval is complete. Only if it passes the filter that
 *   pgoffd pushed down is the (expensive) stack walked and a record sent.
 *
 * Each hook exists twice: tp_btf (typed, cheapest, and the only one that
 * may pass `next` to bpf_get_task_stack) and a raw_tp twin for kernels
 * without tp_btf; pgoffd picks one set at load time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "offcpu.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0
#define PF_EXITING 0x00000004	/* task_struct::flags: in do_exit() */

/*
 * A task field: a plain load where the verifier knows the pointer's BTF
 * type (tp_btf: btf is a constant true once inlined, and the compiler
 * drops the other branch), a probe read where it does not (raw_tp).
 */
#define TASK_FIELD(btf, t, f) ((btf) ? (t)->f : BPF_CORE_READ(t, f))

/*
 * pgoffd's pid namespace, set before load: 0 for the initial one, where
 * every pid is the kernel's own number and the branches below drop out at
 * load; else the inode of its namespace, and every pid in a key or a
 * record is the number pgoffd sees in its own /proc: a task's number in
 * that namespace, 0 for a task outside it (never traced; a waker from
 * outside shows as pid 0, as the idle task does on the host).
 */
const volatile __u32 pidns_ino;

/*
 * p's number in pgoffd's namespace, 0 if p has none: pgoffd's namespace is
 * p's own, or up to PIDNS_DEPTH - 1 levels above it (nested containers).
 */
#define PIDNS_DEPTH 4
static __always_inline __u32 pid_nr_in_ns(struct pid *p)
{
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid up;

	for (int i = 0; i < PIDNS_DEPTH; i++) {
		if ((unsigned int)i > level ||
		    bpf_core_read(&up, sizeof(up), &p->numbers[level - i]))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == pidns_ino)
			return (__u32)up.nr;
	}
	return 0;
}

static __always_inline __u32 task_pid(struct task_struct *t, bool btf)
{
	if (!pidns_ino)
		return TASK_FIELD(btf, t, pid);
	return pid_nr_in_ns(BPF_CORE_READ(t, thread_pid));
}

static __always_inline __u32 task_tgid(struct task_struct *t, bool btf)
{
	if (!pidns_ino)
		return TASK_FIELD(btf, t, tgid);
	return pid_nr_in_ns(BPF_CORE_READ(t, group_leader, thread_pid));
}

/* current's tgid << 32 | pid, as bpf_get_current_pid_tgid() */
static __always_inline __u64 current_pid_tgid(void)
{
	struct task_struct *t;

	if (!pidns_ino)
		return bpf_get_current_pid_tgid();
	t = (struct task_struct *)bpf_get_current_task();
	return (__u64)task_tgid(t, false) << 32 | task_pid(t, false);
}

/* Written by pgoffd through the mmap'ed .data/.bss maps: the filter pushdown. */
volatile __u64 min_duration_ns = ~0ULL;	/* ~0: no subscriber, send nothing */
volatile __u32 filter_pids;		/* 1: only tgids in watch_pids */
volatile __u32 cpu_filter;		/* PGOFF_CPU_* */
volatile __u32 filter_pg_classes;	/* 1: only PG wait classes in pg_classes */
volatile __u64 pg_classes[PGOFF_PG_CLASS_WORDS];	/* see PGOFF_PG_CLASS */
volatile __u32 want_query;		/* 1: a subscriber may see SQL */
volatile __u32 want_episodes;		/* 1: merge PostgreSQL waits into episodes */
volatile __u32 episode_gen = 1;		/* an episode is open if its gen is this */
volatile __u32 want_pg_intervals = 1;	/* 0: intervals inside a PG wait only feed episodes */
/* The union of the filters of subscribers that want user stacks, as far
 * as it is known at switch-out (no duration yet): the walk is paid only
 * for intervals one of them may want. */
volatile __u32 want_ustack;		/* 1: someone wants user stacks */
volatile __u32 ustack_filter_pids;	/* 1: only tgids with PGOFF_WATCH_USTACK */
volatile __u32 ustack_cpu_filter;	/* PGOFF_CPU_* */
volatile __u32 ustack_filter_pg_classes;
volatile __u64 ustack_pg_classes[4];

/* The PostgreSQL wait a thread is in, as far as the kernel saw it. */
struct episode {
	__u32 gen;			/* open if episode_gen: pgoffd bumps
					 * it to close them all at once */
	__u32 pad;
	__u64 start_ns;
	__u64 end_ns;			/* last switch-in */
	__u64 blocked_ns;
	__u64 runq_ns;
	__u64 oncpu_ns;
	__u64 gap_blocked_ns;		/* off the CPU outside the wait since */
	__u64 gap_runq_ns;		/* end_ns: settled if the wait resumes */
	__u32 pg_wait_event_info;
	__u32 intervals;
	__u32 flags;
	__u32 cluster;
	__u32 tgid;
	__u32 waker_pid;
	__u32 waker_tgid;
	__u32 waker_pg_wait_event_info;
	__u32 pair;			/* PAIR_*: the probe pair it belongs to */
	__u32 bounds;			/* PGOFF_EP_* */
	char waker_comm[PGOFF_COMM_LEN];
};

/*
 * PostgreSQL's own wait boundaries, from its USDT probes: a thread's
 * heavyweight-lock or LWLock wait between START and DONE. An LWLock
 * wait can happen inside a lock wait (the deadlock check takes the lock
 * manager's LWLocks), never the reverse.
 */
#define PAIR_LOCK	1
#define PAIR_LWLOCK	2
struct pg_pair {
	__u64 start_ns;			/* START probe; 0: no wait open */
};

/* The SQL a thread was running when it last went off the CPU. */
struct query {
	__u32 len;			/* bytes, NUL excluded */
	__u32 pad;
	char text[PGOFF_QUERY_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGOFF_MAX_TARGETS);
	__type(key, __u32);			/* tgid */
	__type(value, struct pgoff_target);
} targets SEC(".maps");

/*
 * See pgoff_target_slot: every switch-out asks whether prev is traced,
 * and nearly every prev is not (other programs, the idle task). An array
 * slot is read inline, where a hash lookup that finds nothing costs more
 * than the rest of the program's work for such a task. The prober counts
 * the targets it adds through a shared mapping.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PGOFF_TARGET_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} target_slots SEC(".maps");
_Static_assert(!(PGOFF_TARGET_SLOTS & (PGOFF_TARGET_SLOTS - 1)),
	       "a target's slot is found by a mask");

static __always_inline __u64 *target_slot(__u32 tgid)
{
	__u32 slot = pgoff_target_slot(tgid);

	return bpf_map_lookup_elem(&target_slots, &slot);
}

/* Whether tgid may have an entry in `targets`. */
static __always_inline bool maybe_target(__u32 tgid)
{
	__u64 *n = target_slot(tgid);

	return n && *n;
}

/* Per user: see struct pgoff_quota. The prober maps it to count the
 * processes it adds with the same atomics. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PGOFF_MAX_QUOTAS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct pgoff_quota);
} quotas SEC(".maps");

/*
 * A traced thread, from its first switch-out to its exit: its interval
 * (start_ns 0: on the CPU) and its open episode. Written in place: a hash
 * update and delete each switch, and a second map for episodes, cost
 * more than the rest of the bookkeeping. pgoffd reads the starts (first:
 * struct pgoff_start is what the thread walk sees).
 */
struct thread {
	/* what every switch of the thread reads or writes, together */
	struct pgoff_start s;
	struct pg_pair lock_pair, lw_pair;
	__u16 quota;			/* its user's slot in `quotas` */
	__u16 slot;			/* its count in `thread_slots` */
	__u16 pad[2];
	/* while subscribers want episodes */
	struct episode e;		/* inferred, or a lock wait (PAIR_LOCK) */
	/* rarely: LWLock waits, and user stacks */
	struct episode lw;		/* an LWLock wait (PAIR_LWLOCK) */
	struct pgoff_ustack u;		/* its user stack (PGOFF_F_USTACK): walked
					 * straight into the entry, no map update */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGOFF_MAX_THREADS);
	__type(key, __u32);			/* pid (thread id) */
	__type(value, struct thread);
} threads SEC(".maps");

static const struct thread thread_zero;

/*
 * How many entries of `threads` each slot (kernel pid modulo
 * THREAD_SLOTS) has. sched_waking and switch-in run for every task on the
 * machine, nearly all of them not PostgreSQL: an array slot is read
 * inline, one cache line, where a hash lookup that finds nothing costs
 * more than the rest of the program. Kept exact (taken before an entry
 * is made, given back when it is deleted), so a 0 means no entry; a
 * collision costs only the lookup. The kernel pid: no namespace walk.
 */
#define THREAD_SLOTS PGOFF_MAX_THREADS
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, THREAD_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} thread_slots SEC(".maps");
_Static_assert(THREAD_SLOTS <= 65536 && !(THREAD_SLOTS & (THREAD_SLOTS - 1)),
	       "struct thread keeps a slot in 16 bits, found by a mask");

static __always_inline __u32 *thread_slot(__u32 kpid)
{
	__u32 slot = kpid & (THREAD_SLOTS - 1);

	return bpf_map_lookup_elem(&thread_slots, &slot);
}

/* Whether the task of kernel pid kpid may have an entry in `threads`. */
static __always_inline bool maybe_thread(__u32 kpid)
{
	__u32 *n = thread_slot(kpid);

	return n && *n;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGOFF_MAX_WATCH_PIDS);
	__type(key, __u32);			/* tgid */
	__type(value, __u8);
} watch_pids SEC(".maps");

/*
 * The SQL of threads off the CPU: written at switch-out,
 * deleted at switch-in; only the thread itself ever touches its key.
 * Not preallocated: entries exist only while someone may see SQL.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGOFF_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);			/* pid (thread id) */
	__type(value, struct query);
} queries SEC(".maps");


/* A new row of the aggregation (in .rodata: not 272 bytes of stack). */
static const struct pgoff_agg agg_zero;

/* Off-CPU time by process and wait, see struct pgoff_agg_key. pgoffd
 * deletes the rows of processes that are gone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGOFF_MAX_AGG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pgoff_agg_key);
	__type(value, struct pgoff_agg);
} aggregate SEC(".maps");

/* The top of a user stack, searched for postgres's frames (x86-64). */
#define USTACK_SCAN_WORDS	128		/* 1 KiB */
#define USTACK_MAX_FRAME	(1u << 20)	/* one frame's most, for the walk */
struct ustack_scan {
	__u64 w[USTACK_SCAN_WORDS];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_scan);
} ustack_scan SEC(".maps");

/* Where the text is read to (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct query);
} query_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PGOFF_CNT__COUNT);

	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * Records are submitted with BPF_RB_NO_WAKEUP: pgoffd reads the ring on
 * its own clock while it has subscribers. A wakeup is an irq_work, a
 * self-IPI, paid inside this program: about 5 us per record on a VM,
 * half of what a subscriber added to sched_switch.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);		/* pgoffd resizes before load */
} events SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1;
}

/* task_struct::state was renamed __state in 5.14 (commit 2f064a59a11f). */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t, bool btf)
{
	if (bpf_core_field_exists(t->__state))
		return TASK_FIELD(btf, t, __state);
	return BPF_CORE_READ((struct task_struct___pre_5_14 *)t, state);
}

static __always_inline __u8 agg_state(long state)
{
	if (state == TASK_RUNNING)
		return PGOFF_AGG_RUNQ;
	if (state & 1)		/* TASK_INTERRUPTIBLE */
		return PGOFF_AGG_SLEEP;
	if (state & 2)		/* TASK_UNINTERRUPTIBLE, also killable */
		return PGOFF_AGG_DISK;
	/* TASK_WAKING: a wakeup raced the switch (the tracepoint's own
	 * prev_state argument exists from 5.18 only); it was going to sleep */
	if (state & 0x200)
		return PGOFF_AGG_SLEEP;
	return PGOFF_AGG_OTHER;
}

/*
 * The system call current is blocked in, from its saved user registers.
 * On x86 orig_ax holds the number, but an exception (a page fault) puts
 * its error code there; the entry code sets ax to -ENOSYS only for a
 * system call, and the result replaces it only on return.
 */
static __always_inline __s16 current_syscall(void)
{
	struct task_struct *task;
	struct pt_regs *regs;

	/* bpf_task_pt_regs is 5.15's: older kernels tell no system call */
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return PGOFF_AGG_NO_SYSCALL;
	task = bpf_get_current_task_btf();
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return PGOFF_AGG_NO_SYSCALL;
#if defined(__TARGET_ARCH_x86)
	if ((long)regs->ax == -38 /* -ENOSYS */ && regs->orig_ax < 0x7fff)
		return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	if (regs->syscallno >= 0 && regs->syscallno < 0x7fff)
		return regs->syscallno;
#endif
	return PGOFF_AGG_NO_SYSCALL;
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	return r | (__u32)(v >> 1);
}

/* See struct pgoff_agg for the buckets. */
static __always_inline __u32 agg_bucket(__u64 ns)
{
	__u64 us = ns >> PGOFF_AGG_UNIT_SHIFT;
	__u32 b;

	if (!us)
		return 0;
	b = log2_u64(us) + 1;
	return b < PGOFF_AGG_BUCKETS ? b : PGOFF_AGG_BUCKETS - 1;
}

/* Add a finished interval to its row; threads of one process may race. */
static __always_inline void aggregate_interval(const struct pgoff_start *s,
					       __u32 tgid, __u64 dur)
{
	struct pgoff_agg_key k = {
		.tgid = tgid,
		.pg_wait_event_info = s->pg_wait_event_info,
		.cluster = s->cluster,
		.syscall = s->syscall,
		.state = s->state,
	};
	struct pgoff_agg *a;
	__u32 b;

	if (s->flags & PGOFF_F_PG_WAIT)
		k.flags |= PGOFF_AGG_F_PG_WAIT;
	if (s->flags & PGOFF_F_IN_STATEMENT)
		k.flags |= PGOFF_AGG_F_IN_STATEMENT;
	a = bpf_map_lookup_elem(&aggregate, &k);
	if (!a) {
		if (bpf_map_update_elem(&aggregate, &k, &agg_zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&aggregate, &k)) {
			count(PGOFF_CNT_AGG_FULL);
			return;
		}
		a = bpf_map_lookup_elem(&aggregate, &k);
		if (!a)
			return;
	}
	b = agg_bucket(dur);
	__sync_fetch_and_add(&a->count, 1);
	__sync_fetch_and_add(&a->total_ns, dur);
	if (b < PGOFF_AGG_BUCKETS)
		__sync_fetch_and_add(&a->hist[b], 1);
}

/*
 * Whether task (current) still runs as its cluster's owner: all four
 * uids. PostgreSQL never changes them; a process that did (a setuid
 * helper it forked without exec, an extension) is not read, so no one
 * can point these reads into memory of another user.
 */
static __always_inline bool owner_runs(struct task_struct *task,
				       const struct pgoff_target *t, bool btf)
{
	const struct cred *c = TASK_FIELD(btf, task, cred);

	if (btf)
		return c->uid.val == t->uid && c->euid.val == t->uid &&
		       c->suid.val == t->uid && c->fsuid.val == t->uid;
	return BPF_CORE_READ(c, uid.val) == t->uid &&
	       BPF_CORE_READ(c, euid.val) == t->uid &&
	       BPF_CORE_READ(c, suid.val) == t->uid &&
	       BPF_CORE_READ(c, fsuid.val) == t->uid;
}

/* One more of what a user's quota counts (procs or threads); false,
 * counted, if the quota is full. */
static __always_inline bool quota_take(__s32 *used, __u32 max)
{
	if (__sync_fetch_and_add(used, 1) < (__s32)max)
		return true;
	__sync_fetch_and_add(used, -1);
	count(PGOFF_CNT_QUOTA_FULL);
	return false;
}

static __always_inline void quota_give(__u32 slot, bool thread)
{
	struct pgoff_quota *q = bpf_map_lookup_elem(&quotas, &slot);

	if (!q)
		return;
	if (thread)
		__sync_fetch_and_add(&q->threads, -1);
	else
		__sync_fetch_and_add(&q->procs, -1);
}

/* A traced thread's entry goes (exit, exec, pid reuse): its quota too,
 * once, by whoever deleted it. */
static __always_inline void thread_forget(__u32 pid, const struct thread *th)
{
	__u32 slot = th->quota, kslot = th->slot;
	__u32 *n;

	if (bpf_map_delete_elem(&threads, &pid) == 0) {
		quota_give(slot, true);
		n = bpf_map_lookup_elem(&thread_slots, &kslot);
		if (n)
			__sync_fetch_and_add(n, -1);
	}
}

/* A process is no longer traced (exit, exec). */
static __always_inline void target_forget(__u32 tgid)
{
	struct pgoff_target *t = bpf_map_lookup_elem(&targets, &tgid);
	__u32 slot;

	if (!t)
		return;
	slot = t->quota;
	if (bpf_map_delete_elem(&targets, &tgid) == 0) {
		__u64 *n = target_slot(tgid);

		if (n)
			__sync_fetch_and_add(n, -1);
		quota_give(slot, false);
	}
}

/* "postgres: " starts every title PostgreSQL sets (ps_status.c). */
static __always_inline bool is_pg_title(const char *s)
{
	return s[0] == 'p' && s[1] == 'o' && s[2] == 's' && s[3] == 't' &&
	       s[4] == 'g' && s[5] == 'r' && s[6] == 'e' && s[7] == 's' &&
	       s[8] == ':' && s[9] == ' ';
}

/*
 * A forked process's title, once PostgreSQL has set it (over argv, at
 * mm->arg_start): sent once, then the target stops asking. Before that
 * the child still shows its postmaster's command line.
 */
static __always_inline void send_title(struct task_struct *task,
				       struct pgoff_target *t, __u32 tgid,
				       bool btf)
{
	struct pgoff_title *r;
	unsigned long arg;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(PGOFF_CNT_RINGBUF_FULL);
		return;
	}
	arg = btf ? task->mm->arg_start : BPF_CORE_READ(task, mm, arg_start);
	if (bpf_probe_read_user_str(r->title, sizeof(r->title),
				    (void *)arg) <= 10 ||
	    !is_pg_title(r->title)) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return;
	}
	r->kind = PGOFF_REC_TITLE;
	r->tgid = tgid;
	r->cluster = t->cluster;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	t->flags &= ~PGOFF_T_TITLE_PENDING;
}

/* Read a uint32 through a pointer variable of the current process. */
static __always_inline bool read_pg_u32(__u64 var_addr, __u32 *out)
{
	__u64 ptr = 0;

	return bpf_probe_read_user(&ptr, sizeof(ptr), (void *)var_addr) == 0 &&
	       ptr && bpf_probe_read_user(out, sizeof(*out), (void *)ptr) == 0;
}

static __always_inline bool pg_class_wanted(__u32 info)
{
	__u32 class = PGOFF_PG_CLASS(info);

	return (pg_classes[PGOFF_PG_CLASS_WORD(class)] & PGOFF_PG_CLASS_BIT(class)) != 0;
}

/*
 * The running statement: debug_query_string, NULL between statements (so
 * an idle wait costs one 8-byte read). Its text is copied only while
 * someone may see SQL. Returns flags: PGOFF_F_IN_STATEMENT with one of
 * PGOFF_F_QUERY, _QUERY_LOST, _QUERY_UNSEEN; 0 outside a statement.
 */
static __always_inline __u32 save_query(__u32 pid, __u64 var_addr)
{
	__u32 zero = 0;
	__u64 str = 0;
	struct query *q;
	long n;

	if (bpf_probe_read_user(&str, sizeof(str), (void *)var_addr) || !str)
		return 0;
	if (!want_query)
		return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY_UNSEEN;
	q = bpf_map_lookup_elem(&query_scratch, &zero);
	if (!q)
		goto lost;
	n = bpf_probe_read_user_str(q->text, sizeof(q->text), (void *)str);
	if (n <= 0)
		goto lost;
	q->len = n - 1;
	if (bpf_map_update_elem(&queries, &pid, q, BPF_ANY))
		goto lost;
	return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY;
lost:
	count(PGOFF_CNT_QUERY_FAIL);
	return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY_LOST;
}

static __always_inline bool in_pg_wait(__u32 flags, __u32 info)
{
	return (flags & PGOFF_F_PG_WAIT) && info;
}

/* Whether a subscriber that wants user stacks may want this interval. */
static __always_inline bool ustack_wanted(const struct pgoff_start *s,
					  __u32 tgid)
{
	bool preempted = s->flags & PGOFF_F_PREEMPTED;
	__u32 class = s->pg_wait_event_info >> 24;
	__u8 *w;

	if (ustack_filter_pids) {
		w = bpf_map_lookup_elem(&watch_pids, &tgid);
		if (!w || !(*w & PGOFF_WATCH_USTACK))
			return false;
	}
	if ((ustack_cpu_filter == PGOFF_CPU_ONLY && !preempted) ||
	    (ustack_cpu_filter == PGOFF_CPU_NONE && preempted))
		return false;
	if (ustack_filter_pg_classes &&
	    (!(s->flags & PGOFF_F_PG_WAIT) ||
	     !((ustack_pg_classes[(class >> 6) & 3] >> (class & 63)) & 1)))
		return false;
	return true;
}

static __always_inline bool in_text(const struct pgoff_target *t, __u64 a)
{
	return a >= t->text_lo && a < t->text_hi;
}

#if defined(__TARGET_ARCH_x86)
/*
 * The kernel's walk follows %rbp from the system call; Debian's libc
 * keeps no frame pointers and may use %rbp for data, so a wait inside
 * libc (select, fread, sem_wait) ends the walk in garbage. postgres
 * keeps them: find its innermost frame record in the top of the stack
 * (a saved %rbp pointing further up, then a return address into
 * postgres) and walk from there. The postgres return addresses below
 * it may be the caller of the library code (ret_hints).
 *
 * The scan's state, for bpf_loop (one callback verified, not each word).
 */
struct scan_ctx {
	__u64 sp, text_lo, text_hi;
	__u64 hints[PGOFF_USTACK_HINTS];
	__u32 nhints;
	int rec;
};

static long scan_word(__u64 i, void *data)
{
	struct scan_ctx *c = data;
	struct ustack_scan *sc;
	__u32 zero = 0;
	__u64 w, next, slot, at;

	sc = bpf_map_lookup_elem(&ustack_scan, &zero);
	if (!sc || i >= USTACK_SCAN_WORDS - 1)
		return 1;
	w = sc->w[i & (USTACK_SCAN_WORDS - 1)];
	next = sc->w[(i + 1) & (USTACK_SCAN_WORDS - 1)];
	slot = c->sp + 8 * i;
	if (w >= c->text_lo && w < c->text_hi) {
		if (c->nhints < PGOFF_USTACK_HINTS)
			c->hints[c->nhints++ & (PGOFF_USTACK_HINTS - 1)] = w;
		return 0;
	}
	if (w <= slot || w - slot >= USTACK_MAX_FRAME || (w & 7) ||
	    next < c->text_lo || next >= c->text_hi)
		return 0;
	/* a stale pointer next to a stale return address is no record:
	 * where the one it points to is in sight, it must be one too */
	at = (w - c->sp) / 8;
	if (at < USTACK_SCAN_WORDS - 1) {
		__u64 w2 = sc->w[at & (USTACK_SCAN_WORDS - 1)];
		__u64 r2 = sc->w[(at + 1) & (USTACK_SCAN_WORDS - 1)];

		if (w2 <= w || r2 < c->text_lo || r2 >= c->text_hi)
			return 0;
	}
	c->rec = i;
	return 1;
}

static __always_inline void walk_from_postgres(const struct pgoff_target *t,
					       struct pgoff_ustack *u,
					       __u64 sp, bool kernel_ok)
{
	struct scan_ctx c = { .sp = sp, .text_lo = t->text_lo,
			      .text_hi = t->text_hi, .rec = -1 };
	struct ustack_scan *sc;
	__u32 zero = 0, k = 1;
	__u64 fp = 0;
	int rec;

	/* bpf_loop is 5.17's: before it, the kernel's walk alone */
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop))
		return;
	sc = bpf_map_lookup_elem(&ustack_scan, &zero);
	if (!sc || bpf_probe_read_user(sc->w, sizeof(sc->w), (void *)sp))
		return;
	bpf_loop(USTACK_SCAN_WORDS - 1, scan_word, &c, 0);
	rec = c.rec;
	__builtin_memcpy(u->ret_hints, c.hints, sizeof(u->ret_hints));
	/* the kernel's walk went through the same record: it is right */
	if (rec < 0 || (kernel_ok &&
			u->ips[1] == sc->w[(rec + 1) & (USTACK_SCAN_WORDS - 1)]))
		return;
	u->ips[1] = sc->w[(rec + 1) & (USTACK_SCAN_WORDS - 1)];
	fp = sc->w[rec & (USTACK_SCAN_WORDS - 1)];
	for (int d = 0; d < PGOFF_USTACK_DEPTH - 2; d++) {
		__u64 r[2];

		if (bpf_probe_read_user(r, sizeof(r), (void *)fp) || !r[1])
			break;
		u->ips[++k & (PGOFF_USTACK_DEPTH - 1)] = r[1];
		if (r[0] <= fp || r[0] - fp >= USTACK_MAX_FRAME)
			break;
		fp = r[0];
	}
	u->bytes = (k + 1) * 8;
}
#endif

/*
 * Walk current's user stack (frame pointers, by the kernel's perf
 * unwinder) into u, from postgres's own frames where library code broke
 * the walk, with the caller the walk skips (see struct pgoff_ustack).
 * Returns PGOFF_F_USTACK.
 */
static __always_inline __u32 save_ustack(void *ctx,
					 const struct pgoff_target *t,
					 struct pgoff_ustack *u)
{
	struct pt_regs *regs;
	long n;

	n = bpf_get_stack(ctx, u->ips, sizeof(u->ips), BPF_F_USER_STACK);
	u->bytes = n;
	__builtin_memset(u->ret_hints, 0, sizeof(u->ret_hints));
	if (n < 0) {
		count(PGOFF_CNT_USTACK_FAIL);
		return PGOFF_F_USTACK;
	}
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return PGOFF_F_USTACK;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return PGOFF_F_USTACK;
#if defined(__TARGET_ARCH_x86)
	/* a leaf in postgres itself (preempted, a fault): the walk is right */
	if (t->text_hi && n >= 8 && !in_text(t, u->ips[0]))
		walk_from_postgres(t, u, regs->sp, n >= 16);
#elif defined(__TARGET_ARCH_arm64)
	u->ret_hints[0] = regs->regs[30];
#endif
	return PGOFF_F_USTACK;
}

/* Send a finished episode if it passes the pushed-down filter. Runs in
 * the episode's thread (switch-out or exit): comm is current's. */
static __always_inline void episode_send(__u32 pid, const struct episode *e)
{
	struct pgoff_episode *r;

	/* a probed wait that never left the CPU is a wait all the same */
	if ((!e->intervals && !(e->bounds & PGOFF_EP_DONE_PROBE)) ||
	    e->end_ns - e->start_ns < min_duration_ns)
		return;
	if (filter_pids && !bpf_map_lookup_elem(&watch_pids, &e->tgid))
		return;
	if (filter_pg_classes && !pg_class_wanted(e->pg_wait_event_info))
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(PGOFF_CNT_RINGBUF_FULL);
		return;
	}
	r->kind = PGOFF_REC_EPISODE;
	r->pid = pid;
	r->tgid = e->tgid;
	r->cluster = e->cluster;
	r->pg_wait_event_info = e->pg_wait_event_info;
	r->intervals = e->intervals;
	r->flags = e->flags;
	r->waker_pid = e->waker_pid;
	r->waker_tgid = e->waker_tgid;
	r->waker_pg_wait_event_info = e->waker_pg_wait_event_info;
	r->start_ns = e->start_ns;
	r->end_ns = e->end_ns;
	r->blocked_ns = e->blocked_ns;
	r->runq_ns = e->runq_ns;
	r->oncpu_ns = e->oncpu_ns;
	r->bounds = e->bounds;
	r->pad = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	__builtin_memcpy(r->waker_comm, e->waker_comm, sizeof(r->waker_comm));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	count(PGOFF_CNT_EPISODES);
}

/* A new episode, its first interval starting at start. */
static __always_inline void episode_open(struct episode *e,
					 const struct pgoff_start *s,
					 __u32 tgid, __u64 start)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->start_ns = start;
	e->end_ns = start;
	e->pg_wait_event_info = s->pg_wait_event_info;
	e->cluster = s->cluster;
	e->tgid = tgid;
	e->gen = episode_gen;
}

/*
 * Going off the CPU: the same wait goes on, or the open one may be over.
 * Off the CPU outside any PostgreSQL wait (preempted, a page fault, the
 * "still waiting" log line) soon after the wait's last interval, the
 * wait may resume: the episode stays open; a switch-out under another
 * wait event, or later than PGOFF_EPISODE_GAP_NS, ends it.
 */
static __always_inline void episode_switch_out(__u32 pid, __u32 tgid,
					       struct pgoff_start *s,
					       struct episode *e, __u64 now,
					       bool th_in_pair)
{
	bool waiting = in_pg_wait(s->flags, s->pg_wait_event_info);

	if (th_in_pair)
		return;		/* the probes bound it: see pair_switch_out */
	if (e->gen == episode_gen) {
		if (waiting && e->pg_wait_event_info == s->pg_wait_event_info) {
			__u64 gap = e->gap_blocked_ns + e->gap_runq_ns;

			e->oncpu_ns += now - e->end_ns - gap;
			e->blocked_ns += e->gap_blocked_ns;
			e->runq_ns += e->gap_runq_ns;
			e->gap_blocked_ns = 0;
			e->gap_runq_ns = 0;
			return;
		}
		if (!waiting && now - e->end_ns < PGOFF_EPISODE_GAP_NS) {
			s->flags |= PGOFF_F_EPISODE_GAP;
			return;
		}
		episode_send(pid, e);
		e->gen = 0;
	}
	if (waiting)
		episode_open(e, s, tgid, now);
}

/* The flags that describe an interval's waker. */
#define WAKER_FLAGS (PGOFF_F_WOKEN | PGOFF_F_WAKER_TRACED | PGOFF_F_WAKER_PG_WAIT)

/* An interval (s, ending now) joins its episode. */
static __always_inline void episode_add(struct episode *e,
					const struct pgoff_start *s, __u64 now)
{
	__u64 dur = now - s->start_ns, blocked = pgoff_blocked_ns(s->flags, s->start_ns, s->wake_ns, now);

	e->intervals++;
	e->end_ns = now;
	e->blocked_ns += blocked;
	e->runq_ns += dur - blocked;
	/* the waker is who woke it last: a preemption right after the
	 * wakeup, still under the wait event, woke nobody */
	if (!(s->flags & PGOFF_F_WOKEN)) {
		e->flags = (s->flags & ~WAKER_FLAGS) | (e->flags & WAKER_FLAGS);
		return;
	}
	e->flags = s->flags;
	e->waker_pid = s->waker_pid;
	e->waker_tgid = s->waker_tgid;
	e->waker_pg_wait_event_info = s->waker_pg_wait_event_info;
	__builtin_memcpy(e->waker_comm, s->waker_comm, sizeof(e->waker_comm));
}

/*
 * Back on the CPU: add the interval to its episode. An episode already
 * under way when episodes were switched on starts here, at this
 * interval's switch-out (earlier intervals of it were not seen). An
 * interval outside any PostgreSQL wait while an episode is open is
 * kept aside, in case the wait resumes.
 */
static __always_inline void episode_switch_in(__u32 tgid,
					      const struct pgoff_start *s,
					      struct episode *e, __u64 now)
{
	__u64 dur = now - s->start_ns, blocked = pgoff_blocked_ns(s->flags, s->start_ns, s->wake_ns, now);

	if (!in_pg_wait(s->flags, s->pg_wait_event_info)) {
		if (!(s->flags & PGOFF_F_EPISODE_GAP))
			return;
		if (e->gen == episode_gen && s->start_ns >= e->end_ns) {
			e->gap_blocked_ns += blocked;
			e->gap_runq_ns += dur - blocked;
		}
		return;
	}
	if (e->gen != episode_gen || e->pair ||
	    e->pg_wait_event_info != s->pg_wait_event_info)
		episode_open(e, s, tgid, s->start_ns);
	episode_add(e, s, now);
}

/*
 * Back on the CPU inside a probed wait: every interval between START and
 * DONE is the wait's, whatever the wait event said (the deadlock check's
 * LWLocks, the "still waiting" log line). A wait already under way when
 * episodes were switched on starts here, its start inferred.
 */
static __always_inline void pair_switch_in(__u32 tgid, const struct pgoff_start *s,
					   struct episode *e, __u32 pair,
					   __u32 class, __u64 now)
{
	if (e->gen != episode_gen || e->pair != pair) {
		episode_open(e, s, tgid, s->start_ns);
		e->pair = pair;
		e->pg_wait_event_info = 0;
	}
	/* the lock's own event (a lock START comes before it is set) */
	if (!e->pg_wait_event_info &&
	    in_pg_wait(s->flags, s->pg_wait_event_info) &&
	    s->pg_wait_event_info >> 24 == class)
		e->pg_wait_event_info = s->pg_wait_event_info;
	episode_add(e, s, now);
}

/* PostgreSQL's wait event classes (PG_WAIT_LWLOCK, PG_WAIT_LOCK >> 24). */
#define PG_CLASS_LWLOCK	0x01
#define PG_CLASS_LOCK	0x03

/*
 * A probed wait is over, at its DONE (done_ns) or without one (0: it
 * ended at its last switch-in). Its on-CPU time is what its intervals
 * leave of it.
 */
static __always_inline void pair_close(__u32 pid, struct episode *e,
				       __u32 pair, __u64 done_ns)
{
	__u64 off, dur;

	if (e->gen != episode_gen || e->pair != pair)
		return;
	if (done_ns) {
		e->end_ns = done_ns;
		e->bounds |= PGOFF_EP_DONE_PROBE;
	}
	off = e->blocked_ns + e->runq_ns;
	dur = e->end_ns - e->start_ns;
	e->oncpu_ns = dur > off ? dur - off : 0;
	episode_send(pid, e);
	e->gen = 0;
}

/*
 * Off the CPU under a wait of another class inside a lock wait: the wait
 * ended in an ERROR (lock_timeout, a cancel, a deadlock before 18) and
 * its DONE never comes; the backend went on (to ClientRead).
 */
static __always_inline void pair_switch_out(__u32 pid, struct thread *th,
					    const struct pgoff_start *s)
{
	__u32 class = s->pg_wait_event_info >> 24;

	if (!th->lock_pair.start_ns ||
	    !in_pg_wait(s->flags, s->pg_wait_event_info) ||
	    class == PG_CLASS_LOCK || class == PG_CLASS_LWLOCK)
		return;
	th->lock_pair.start_ns = 0;
	pair_close(pid, &th->e, PAIR_LOCK, 0);
}

/*
 * A thread's entry in `threads`, made within its user's quota if it has
 * none. kpid: its kernel pid (the `thread_slots` slot).
 */
static __always_inline struct thread *thread_get(const struct pgoff_target *t,
						 __u32 pid, __u32 kpid)
{
	struct thread *th = bpf_map_lookup_elem(&threads, &pid);
	__u32 slot = t->quota;
	struct pgoff_quota *q;
	__u32 *n;

	if (th)
		return th;
	q = bpf_map_lookup_elem(&quotas, &slot);
	n = thread_slot(kpid);
	if (!n || !q || !quota_take(&q->threads, q->max_threads))
		return NULL;
	/* counted first: a wakeup that sees the entry sees it too */
	__sync_fetch_and_add(n, 1);
	if (bpf_map_update_elem(&threads, &pid, &thread_zero, BPF_NOEXIST) ||
	    !(th = bpf_map_lookup_elem(&threads, &pid))) {
		__sync_fetch_and_add(n, -1);
		quota_give(slot, true);
		count(PGOFF_CNT_START_FULL);
		return NULL;
	}
	th->quota = slot;
	th->slot = kpid & (THREAD_SLOTS - 1);
	return th;
}

/*
 * prev is current here: its user memory is the backend's. Every interval
 * is started, also with nobody subscribed: a DBA who starts watching a
 * stuck backend must see the wait that is already going on end.
 */
static __always_inline void on_switch_out(void *ctx, struct task_struct *prev,
					  __u64 now, bool btf)
{
	__u64 id = current_pid_tgid();	/* prev is current */
	__u32 tgid = id >> 32, pid = (__u32)id;
	struct pgoff_target *t;
	struct pgoff_start s = {};
	struct thread *th;

	if (!maybe_target(tgid))
		return;
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t)
		return;
	/* past sched_process_exit: an entry made now would outlive it */
	if (TASK_FIELD(btf, prev, flags) & PF_EXITING)
		return;
	count(PGOFF_CNT_SWITCHES);
	th = thread_get(t, pid, TASK_FIELD(btf, prev, pid));
	if (!th)
		return;
	s.tgid = tgid;
	s.cluster = t->cluster;
	s.state = agg_state(task_state(prev, btf));
	if (s.state == PGOFF_AGG_RUNQ) {
		s.flags |= PGOFF_F_PREEMPTED;
		s.syscall = PGOFF_AGG_NO_SYSCALL;
	} else {
		s.syscall = current_syscall();
	}
	if (!owner_runs(prev, t, btf)) {
		s.flags |= PGOFF_F_PG_NOT_OWNER;
		count(PGOFF_CNT_NOT_OWNER);
		goto read_done;
	}
	if (t->flags & PGOFF_T_TITLE_PENDING)
		send_title(prev, t, tgid, btf);
	if (!t->wait_event_ptr)
		s.flags |= PGOFF_F_PG_NO_SYMBOL;
	else if (read_pg_u32(t->wait_event_ptr, &s.pg_wait_event_info))
		s.flags |= PGOFF_F_PG_WAIT;
	else
		count(PGOFF_CNT_PG_READ_FAIL);
	if (t->query_ptr)
		s.flags |= save_query(pid, t->query_ptr);
	if (want_ustack && ustack_wanted(&s, tgid))
		s.flags |= save_ustack(ctx, t, &th->u);
read_done:
	pair_switch_out(pid, th, &s);
	if (want_episodes)
		episode_switch_out(pid, tgid, &s, &th->e, now,
				   th->lock_pair.start_ns || th->lw_pair.start_ns);
	/*
	 * Published by start_ns, written last: sched_waking on another CPU
	 * may run during this switch and acts only on a published start
	 * (compiler barriers; x86 keeps stores in order).
	 */
	th->s.start_ns = 0;
	barrier();
	__builtin_memcpy(&th->s, &s, sizeof(s));
	barrier();
	th->s.start_ns = now;
}

/* The pushed-down filter, once the interval's length is known. */
static __always_inline bool wanted(const struct pgoff_start *s, __u32 tgid, __u64 now)
{
	bool preempted = s->flags & PGOFF_F_PREEMPTED;

	if (now - s->start_ns < min_duration_ns)
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&watch_pids, &tgid))
		return false;
	if ((cpu_filter == PGOFF_CPU_ONLY && !preempted) ||
	    (cpu_filter == PGOFF_CPU_NONE && preempted))
		return false;
	if (filter_pg_classes && (!(s->flags & PGOFF_F_PG_WAIT) ||
				  !pg_class_wanted(s->pg_wait_event_info)))
		return false;
	if (!want_pg_intervals && in_pg_wait(s->flags, s->pg_wait_event_info))
		return false;
	return true;
}

static __always_inline void fill(struct pgoff_record *r, const struct pgoff_start *s,
				 struct task_struct *next, __u32 pid,
				 __u32 tgid, __u64 now, bool with_stack)
{
	r->kind = PGOFF_REC_INTERVAL;
	r->start_ns = s->start_ns;
	r->wake_ns = s->wake_ns;
	r->end_ns = now;
	r->pid = pid;
	r->tgid = tgid;
	r->waker_pid = s->waker_pid;
	r->waker_tgid = s->waker_tgid;
	r->pg_wait_event_info = s->pg_wait_event_info;
	r->waker_pg_wait_event_info = s->waker_pg_wait_event_info;
	r->flags = s->flags;
	r->cluster = s->cluster;
	r->query_len = 0;
	__builtin_memcpy(r->waker_comm, s->waker_comm, sizeof(r->waker_comm));
	BPF_CORE_READ_STR_INTO(&r->comm, next, comm);
	if (with_stack) {
		long n = bpf_get_task_stack(next, r->stack, sizeof(r->stack), 0);

		r->stack_bytes = n;
		if (n < 0)
			count(PGOFF_CNT_STACK_FAIL);
	} else {
		r->stack_bytes = PGOFF_STACK_NOT_WALKED;
	}
}

/* The user stack after a record (and its query): a size the verifier
 * knows in each branch. */
struct pgoff_record_u {
	struct pgoff_record rec;
	struct pgoff_ustack u;
};
struct pgoff_record_query_u {
	struct pgoff_record_query rq;
	struct pgoff_ustack u;
};

/* A record with the query text; false if the text is not there. */
static __always_inline bool send_with_query(const struct pgoff_start *s,
					    struct thread *th,
					    struct task_struct *next,
					    __u32 pid, __u32 tgid, __u64 now,
					    bool with_stack)
{
	struct query *q = bpf_map_lookup_elem(&queries, &pid);
	struct pgoff_record_query_u *rqu = NULL;
	struct pgoff_record_query *rq;
	__u32 len;

	if (!q)
		return false;
	if (s->flags & PGOFF_F_USTACK) {
		rqu = bpf_ringbuf_reserve(&events, sizeof(*rqu), 0);
		rq = (struct pgoff_record_query *)rqu;
	} else {
		rq = bpf_ringbuf_reserve(&events, sizeof(*rq), 0);
	}
	if (!rq) {
		count(PGOFF_CNT_RINGBUF_FULL);
		return true;
	}
	fill(&rq->rec, s, next, pid, tgid, now, with_stack);
	if (rqu)
		bpf_probe_read_kernel(&rqu->u, sizeof(rqu->u), &th->u);
	len = q->len;
	if (len > PGOFF_QUERY_MAX - 1)
		len = PGOFF_QUERY_MAX - 1;
	bpf_probe_read_kernel(rq->query, len, q->text);
	rq->query[len & (PGOFF_QUERY_MAX - 1)] = '\0';
	rq->rec.query_len = len;
	bpf_ringbuf_submit(rq, BPF_RB_NO_WAKEUP);
	count(PGOFF_CNT_EVENTS);
	return true;
}

/*
 * next has not run yet, so its saved kernel stack is still the one it
 * blocked on: it is walked here, only for wanted intervals, and only
 * with tp_btf (btf), the one hook whose next the verifier lets
 * bpf_get_task_stack take.
 */
static __always_inline void on_switch_in(struct task_struct *next, __u64 now,
					 bool btf)
{
	struct pgoff_record_u *ru = NULL;
	__u32 pid, tgid;
	struct pgoff_start *s;
	struct pgoff_record *r;
	struct thread *th;

	if (!maybe_thread(TASK_FIELD(btf, next, pid)))
		return;
	pid = task_pid(next, btf);
	th = bpf_map_lookup_elem(&threads, &pid);
	if (!th || !th->s.start_ns)
		return;		/* not traced, or its switch-out was not seen */
	s = &th->s;
	tgid = task_tgid(next, btf);
	if (s->tgid != tgid) {	/* a pid reused: not the thread it was */
		thread_forget(pid, th);
		return;
	}
	aggregate_interval(s, tgid, now - s->start_ns);
	if (want_episodes) {
		bool in_lock = th->lock_pair.start_ns, in_lw = th->lw_pair.start_ns;

		if (in_lw)
			pair_switch_in(tgid, s, &th->lw, PAIR_LWLOCK,
				       PG_CLASS_LWLOCK, now);
		if (in_lock)	/* an LWLock wait inside is part of it */
			pair_switch_in(tgid, s, &th->e, PAIR_LOCK,
				       PG_CLASS_LOCK, now);
		if (!in_lock && !in_lw)
			episode_switch_in(tgid, s, &th->e, now);
	}
	if (!wanted(s, tgid, now))
		goto done;
	if (s->flags & PGOFF_F_QUERY) {
		if (send_with_query(s, th, next, pid, tgid, now, btf))
			goto done;
		s->flags = (s->flags & ~PGOFF_F_QUERY) | PGOFF_F_QUERY_LOST;
		count(PGOFF_CNT_QUERY_FAIL);
	}
	if (s->flags & PGOFF_F_USTACK) {
		ru = bpf_ringbuf_reserve(&events, sizeof(*ru), 0);
		r = (struct pgoff_record *)ru;
	} else {
		r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	}
	if (!r) {
		count(PGOFF_CNT_RINGBUF_FULL);
		goto done;
	}
	fill(r, s, next, pid, tgid, now, btf);
	if (ru)
		bpf_probe_read_kernel(&ru->u, sizeof(ru->u), &th->u);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	count(PGOFF_CNT_EVENTS);
done:
	if (s->flags & PGOFF_F_QUERY)
		bpf_map_delete_elem(&queries, &pid);
	s->start_ns = 0;	/* on the CPU; the entry stays until exit */
}

/*
 * Runs in the waker's context: current is the waker (for a wakeup from
 * an interrupt, the task it interrupted).
 */
static __always_inline void on_waking(struct task_struct *p, bool btf)
{
	struct pgoff_start *s;
	struct pgoff_target *t;
	struct thread *th;
	__u32 pid;
	__u64 id;

	/* most wakees are not PostgreSQL: one array read, nothing else */
	if (!maybe_thread(TASK_FIELD(btf, p, pid)))
		return;
	pid = task_pid(p, btf);
	th = bpf_map_lookup_elem(&threads, &pid);
	if (!th)
		return;
	s = &th->s;
	if (!s->start_ns)	/* on the CPU, or its start not yet published */
		return;
	barrier();
	if (s->wake_ns || (s->flags & PGOFF_F_PREEMPTED))
		return;
	s->wake_ns = bpf_ktime_get_ns();
	s->flags |= PGOFF_F_WOKEN;
	id = current_pid_tgid();
	s->waker_pid = (__u32)id;
	s->waker_tgid = id >> 32;
	bpf_get_current_comm(s->waker_comm, sizeof(s->waker_comm));
	/* only wakeups of waiting targets get here: the lookup is rare */
	if (!maybe_target(s->waker_tgid) ||
	    !(t = bpf_map_lookup_elem(&targets, &s->waker_tgid)))
		return;
	s->flags |= PGOFF_F_WAKER_TRACED;
	if (t->wait_event_ptr &&
	    owner_runs(btf ? bpf_get_current_task_btf() :
			     (struct task_struct *)bpf_get_current_task(),
		       t, btf) &&
	    read_pg_u32(t->wait_event_ptr, &s->waker_pg_wait_event_info))
		s->flags |= PGOFF_F_WAKER_PG_WAIT;
}

/*
 * A forked PostgreSQL process is traced from its first switch, within
 * its user's quota. Its title is read once PostgreSQL has set it.
 */
static __always_inline void on_fork(struct task_struct *parent,
				    struct task_struct *child)
{
	__u32 ptgid = task_tgid(parent, false);
	__u32 ctgid = task_tgid(child, false);
	struct pgoff_target *t, c;
	struct pgoff_quota *q;
	__u64 *n;
	__u32 slot;

	if (ptgid == ctgid)
		return;		/* a new thread, same process */
	t = bpf_map_lookup_elem(&targets, &ptgid);
	if (!t)
		return;
	c = *t;
	slot = c.quota;
	q = bpf_map_lookup_elem(&quotas, &slot);
	n = target_slot(ctgid);
	if (!n || !q || !quota_take(&q->procs, q->max_procs))
		return;
	c.flags |= PGOFF_T_TITLE_PENDING;
	/* counted first: a switch-out that sees the entry sees it too */
	__sync_fetch_and_add(n, 1);
	if (bpf_map_update_elem(&targets, &ctgid, &c, BPF_NOEXIST)) {
		__sync_fetch_and_add(n, -1);
		quota_give(slot, false);
		count(PGOFF_CNT_TARGET_FULL);
	}
}

/* A thread is no longer traced: its open episode is over. */
static __always_inline void thread_end(__u32 pid)
{
	struct thread *th = bpf_map_lookup_elem(&threads, &pid);

	if (th) {
		if (want_episodes && th->e.pair)
			pair_close(pid, &th->e, PAIR_LOCK, 0);
		else if (want_episodes && th->e.gen == episode_gen)
			episode_send(pid, &th->e);
		if (want_episodes)
			pair_close(pid, &th->lw, PAIR_LWLOCK, 0);
		thread_forget(pid, th);
	}
	bpf_map_delete_elem(&queries, &pid);
}

static __always_inline void on_exit(void)
{
	__u64 id = current_pid_tgid();
	__u32 pid = (__u32)id, tgid = id >> 32;

	thread_end(pid);
	/* a reused pid must never inherit a PostgreSQL identity */
	if (pid == tgid)
		target_forget(tgid);
}

/* After exec the process is no longer the postgres it was forked from. */
static __always_inline void on_exec(void)
{
	__u64 id = current_pid_tgid();
	__u32 tgid = id >> 32, pid = (__u32)id;

	target_forget(tgid);
	thread_end(pid);
}

/*
 * A wait begins (lock__wait__start, lwlock__wait__start): the one before
 * it is over, however little the thread left the CPU between them.
 */
static __always_inline void pair_start(__u32 pid, __u32 tgid, struct thread *th,
				       struct pg_pair *p, struct episode *e,
				       __u32 pair, const struct pgoff_target *t,
				       __u64 now)
{
	if (p->start_ns)	/* the last one ended in an ERROR: no DONE */
		pair_close(pid, e, pair, 0);
	if (th->e.gen == episode_gen && !th->e.pair) {
		episode_send(pid, &th->e);
		th->e.gen = 0;
	}
	p->start_ns = now;
	if (!want_episodes)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->start_ns = now;
	e->end_ns = now;
	e->cluster = t->cluster;
	e->tgid = tgid;
	e->gen = episode_gen;
	e->pair = pair;
	e->bounds = PGOFF_EP_START_PROBE;
	/* an LWLock's event is set before its START; a lock's only once it
	 * sleeps (pair_switch_in) */
	if (pair == PAIR_LWLOCK && t->wait_event_ptr &&
	    owner_runs((struct task_struct *)bpf_get_current_task(), t, false))
		read_pg_u32(t->wait_event_ptr, &e->pg_wait_event_info);
}

static __always_inline void pair_done(__u32 pid, struct pg_pair *p,
				      struct episode *e, __u32 pair, __u64 now)
{
	if (!p->start_ns)	/* its START came before the probe was attached */
		return;
	p->start_ns = 0;
	pair_close(pid, e, pair, now);
}

/*
 * PostgreSQL's wait probes, one uprobe_multi link per binary (pgoffd,
 * broker/usdt.c); the cookie says which (enum pgoff_usdt_kind). They
 * fire in every process of the binary: only traced ones count.
 */
SEC("uprobe")
int pg_usdt(struct pt_regs *ctx)
{
	__u64 kind = bpf_get_attach_cookie(ctx), id = current_pid_tgid();
	__u32 tgid = id >> 32, pid = (__u32)id;
	struct pgoff_target *t = bpf_map_lookup_elem(&targets, &tgid);
	__u64 now = bpf_ktime_get_ns();
	struct thread *th;

	if (!t || kind >= PGOFF_USDT__KINDS)
		return 0;
	count(PGOFF_CNT_USDT_LOCK_START + (__u32)kind);
	th = thread_get(t, pid, (__u32)bpf_get_current_pid_tgid());
	if (!th)
		return 0;
	switch (kind) {
	case PGOFF_USDT_LOCK_START:
		pair_start(pid, tgid, th, &th->lock_pair, &th->e, PAIR_LOCK,
			   t, now);
		break;
	case PGOFF_USDT_LOCK_DONE:
		pair_done(pid, &th->lock_pair, &th->e, PAIR_LOCK, now);
		break;
	case PGOFF_USDT_LWLOCK_START:
		pair_start(pid, tgid, th, &th->lw_pair, &th->lw, PAIR_LWLOCK,
			   t, now);
		break;
	default:
		pair_done(pid, &th->lw_pair, &th->lw, PAIR_LWLOCK, now);
		break;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	on_switch_out(ctx, prev, now, true);
	on_switch_in(next, now, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();

	on_switch_out(ctx, prev, now, false);
	on_switch_in(next, now, false);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking_btf, struct task_struct *p)
{
	on_waking(p, true);
	return 0;
}

SEC("raw_tp/sched_waking")
int BPF_PROG(sched_waking_raw, struct task_struct *p)
{
	on_waking(p, false);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_fork_btf, struct task_struct *parent,
	     struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(sched_fork_raw, struct task_struct *parent,
	     struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_exit_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(sched_exit_raw)
{
	on_exit();
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_exec_btf)
{
	on_exec();
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(sched_exec_raw)
{
	on_exec();
	return 0;
}
