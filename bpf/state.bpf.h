/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * state.bpf.h - the state the programs share with pgoffd: the filter pushdown
 * globals, the per-thread entry and its episodes, the maps, and the
 * loss counters.
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_STATE_BPF_H
#define PGOFF_STATE_BPF_H

#include "task.bpf.h"

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
/*
 * Rows of `aggregate` keyed by a query id, made by the programs and given
 * back by pgoffd when it deletes them (atomics on both sides): past the
 * most, an interval's time goes to its row without the query id, marked
 * PGOFF_AGG_F_QUERY_FOLDED, so that statements cannot fill the map the
 * rows of waits need.
 */
volatile __u64 agg_query_rows;
const volatile __u64 agg_query_rows_max = PGOFF_MAX_AGG / 2;
/* 1: a member of the query group looks at statements (top --by query):
 * keep the text of each statement seen, by its query id */
volatile __u32 want_query_texts;
volatile __u64 usdt_max_rate;		/* 0: LWLock probes never paused */
volatile __u64 usdt_quiet_ns;		/* paused that long after the last
					 * second over usdt_max_rate */

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
	__u64 kernel_blocked_ns;	/* its longest blocked interval's: */
	__u64 query_id;			/* its statement's (first interval) */
	__u32 changecount;		/* st_changecount at its intervals: a
					 * statement ended if it moved */
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
	__u8 pg_state;			/* st_state at its first interval */
	__u8 status_read;		/* query_id, pg_state, changecount: read */
	__u8 kernel_state;		/* ...its state (enum pgoff_agg_state) */
	__u8 pad2;
	__s16 kernel_syscall;		/* ...and system call */
	__u8 pad3[2];
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
	__u64 status_entry;		/* its PgBackendStatus (MyBEEntry), read
					 * once it is set; 0: not yet */
	__u32 status_pid;		/* the st_procpid that makes it its own:
					 * its pid in its own namespace */
	__u32 pcount_out;		/* sched_info.pcount at its switch-out:
					 * the scheduler's switch-ins to it */
	__u64 wait_event_at;		/* my_wait_event_info's value, kept while
					 * the status entry is its own; 0: none */
	__u32 query_cc;			/* st_changecount its text in `queries`
					 * was read at, if query_kept */
	__u32 query_kept;		/* 1: that text stays across switches */
	__u16 quota;			/* its user's slot in `quotas` */
	__u16 slot;			/* its count in `thread_slots` */
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
 * The SQL of threads off the CPU: written at switch-out, deleted at
 * switch-in, or kept while its statement runs (struct thread's
 * query_kept); only the thread itself ever touches its key. Not
 * preallocated: entries exist only while someone may see SQL.
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

/* Where a backend's status entry is read to (too big for the stack). */
struct status_buf {
	__u8 b[PGOFF_STATUS_MAX];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct status_buf);
} status_scratch SEC(".maps");

/*
 * The text of statements by query id, while want_query_texts: the first
 * text seen of each, for pgoffd to show (normalized) beside its query
 * id. Least recently used ones go first.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PGOFF_QUERY_TEXTS);
	__type(key, struct pgoff_query_text_key);
	__type(value, struct query);
} query_texts SEC(".maps");

/* Where the text is read to (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct query);
} query_scratch SEC(".maps");

/* Each cluster's LWLock probe rate (usdt-max-rate, see offcpu.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PGOFF_USDT_RATES);
	__type(key, __u32);
	__type(value, struct pgoff_usdt_rate);
} usdt_rates SEC(".maps");

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

#endif
