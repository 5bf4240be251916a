/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * aggregate.bpf.h - what an interval was (task state, system call) and the in-kernel
 * aggregation it is added to.
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_AGGREGATE_BPF_H
#define PGOFF_AGGREGATE_BPF_H

#include "state.bpf.h"

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
 * Whether current_syscall can tell a system call: it reads the saved user
 * registers through bpf_task_pt_regs (5.15 on), on x86 and arm64.
 */
static __always_inline bool syscalls_told(void)
{
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	return bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs);
#else
	return false;
#endif
}

/*
 * The system call current is blocked in, from its saved user registers.
 * On x86 orig_ax holds the number, but an exception (a page fault) puts
 * its error code there; the entry code sets ax to -ENOSYS only for a
 * system call, and the result replaces it only on return. cur: current
 * as a typed pointer (sched_switch's prev), or NULL to ask for it (one
 * more helper call).
 */
static __always_inline __s16 current_syscall(struct task_struct *cur)
{
	struct pt_regs *regs;

	if (!syscalls_told())
		return PGOFF_AGG_NO_SYSCALL;
	if (!cur)
		cur = bpf_get_current_task_btf();
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
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

/*
 * One more row keyed by a query id, within agg_query_rows_max (pgoffd
 * gives it back when it deletes the row).
 */
static __always_inline bool query_row_take(void)
{
	if (__sync_fetch_and_add(&agg_query_rows, 1) < agg_query_rows_max)
		return true;
	__sync_fetch_and_add(&agg_query_rows, -1);
	return false;
}

/* The row of k, made if there is none; NULL (counted) if the map is full. */
static __always_inline struct pgoff_agg *agg_row(struct pgoff_agg_key *k)
{
	struct pgoff_agg *a = bpf_map_lookup_elem(&aggregate, k);
	bool taken = false;
	long err;

	if (a)
		return a;
	if (k->query_id) {
		taken = query_row_take();
		if (!taken) {	/* past the cap: the row without the id */
			k->query_id = 0;
			k->flags |= PGOFF_AGG_F_QUERY_FOLDED;
			count(PGOFF_CNT_AGG_QUERY_FOLDED);
			a = bpf_map_lookup_elem(&aggregate, k);
			if (a)
				return a;
		}
	}
	err = bpf_map_update_elem(&aggregate, k, &agg_zero, BPF_NOEXIST);
	if (err) {
		if (taken)	/* not made by us: made by a racing thread, or none */
			__sync_fetch_and_add(&agg_query_rows, -1);
		a = bpf_map_lookup_elem(&aggregate, k);
		/* full (or no memory for it), or else (-EBUSY) its bucket's
		 * lock slot held by the program the tick interrupted on this
		 * CPU, on kernels that lock it with interrupts on */
		if (!a)
			count(err == -7 /* E2BIG */ || err == -12 /* ENOMEM */ ?
			      PGOFF_CNT_AGG_FULL : PGOFF_CNT_AGG_BUSY);
		return a;
	}
	return bpf_map_lookup_elem(&aggregate, k);
}

/* The row of what s says, for process tgid; NULL (counted) if none. */
static __always_inline struct pgoff_agg *agg_row_of(const struct pgoff_start *s,
						    __u32 tgid)
{
	struct pgoff_agg_key k = {
		.tgid = tgid,
		.pg_wait_event_info = s->pg_wait_event_info,
		.cluster = s->cluster,
		.syscall = s->syscall,
		.state = s->state,
		.query_id = s->query_id,
	};

	if (s->flags & PGOFF_F_PG_WAIT)
		k.flags |= PGOFF_AGG_F_PG_WAIT;
	if (s->flags & PGOFF_F_IN_STATEMENT)
		k.flags |= PGOFF_AGG_F_IN_STATEMENT;
	if (s->flags & PGOFF_F_PG_STATUS)
		k.flags |= PGOFF_AGG_F_PG_STATUS |
			   (s->pg_state & PGOFF_AGG_PG_STATE_MASK) <<
			   PGOFF_AGG_PG_STATE_SHIFT;
	return agg_row(&k);
}

/* Add a finished interval to its row; threads of one process may race. */
static __always_inline void aggregate_interval(const struct pgoff_start *s,
					       __u32 tgid, __u64 dur)
{
	struct pgoff_agg *a = agg_row_of(s, tgid);
	__u32 b;

	if (!a)
		return;
	b = agg_bucket(dur);
	__sync_fetch_and_add(&a->count, 1);
	__sync_fetch_and_add(&a->total_ns, dur);
	if (b < PGOFF_AGG_BUCKETS)
		__sync_fetch_and_add(&a->hist[b], 1);
}

#endif
