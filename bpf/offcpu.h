/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * offcpu.h - the one record layout shared by bpf/offcpu.bpf.c and pgoffd.
 * Fixed-size plain data only: no pointers, no kernel types.
 */
#ifndef PGOFF_OFFCPU_H
#define PGOFF_OFFCPU_H

#define PGOFF_COMM_LEN		16
#define PGOFF_STACK_DEPTH	32	/* frames walked; scheduler frames are dropped later */
/* stack_bytes when the stack was not walked: -EOPNOTSUPP, the raw_tp
 * fallback cannot walk the task switched in (BPF has no errno.h) */
#define PGOFF_STACK_NOT_WALKED	(-95)
#define PGOFF_USTACK_DEPTH	32	/* user-space frames walked, leaf first */
#define PGOFF_USTACK_HINTS	4	/* candidates for the frame a leaf hides */
#define PGOFF_MAX_TARGETS	16384	/* traced PostgreSQL processes */
#define PGOFF_TARGET_SLOTS	16384	/* counters of `targets` entries by
					   tgid (a power of 2), see below */
#define PGOFF_MAX_THREADS	16384	/* PostgreSQL threads, from first switch-out to exit */
#define PGOFF_MAX_WATCH_PIDS	1024	/* pids in the union of all subscriptions */
#define PGOFF_QUERY_MAX		1024	/* bytes of SQL kept, NUL included; as
					   PostgreSQL's track_activity_query_size */
#define PGOFF_STATUS_MAX	512	/* bytes of a backend's PgBackendStatus
					   read, from its start (pgoff_target) */
#define PGOFF_QUERY_TEXTS	1024	/* statements' texts kept by query id
					   while someone asks (LRU) */

/* A statement's text, kept by its query id (the `query_texts` map). */
struct pgoff_query_text_key {
	__u64 query_id;
	__u32 cluster;
	__u32 pad;
};
#define PGOFF_MAX_AGG		65536	/* (process, wait) rows aggregated in the kernel */
#define PGOFF_AGG_BUCKETS	32	/* log2 histogram buckets, see struct pgoff_agg */
/* An episode survives time off the CPU outside its wait this long after
 * its last interval: ample for a preemption or a page fault between two
 * sleeps of one lock wait, short enough not to delay the report much. */
#define PGOFF_EPISODE_GAP_NS	(100ull * 1000 * 1000)

/*
 * The --pg-wait pushdown: a bitmap of PostgreSQL wait classes, the class
 * being wait_event_info's top byte; bit c is word c / 64, bit c % 64.
 */
#define PGOFF_PG_CLASS_WORDS	4	/* 256 classes */
#define PGOFF_PG_CLASS(info)	((__u32)(info) >> 24)
#define PGOFF_PG_CLASS_WORD(c)	(((c) >> 6) & 3)
#define PGOFF_PG_CLASS_BIT(c)	(1ULL << ((c) & 63))

/* cpu_filter values: whether preempted intervals (wait "cpu") are wanted. */
#define PGOFF_CPU_ANY		0
#define PGOFF_CPU_ONLY		1	/* only preempted intervals */
#define PGOFF_CPU_NONE		2	/* no preempted intervals */

/* watch_pids values: bits, one per pushed-down pid set. */
#define PGOFF_WATCH_ANY		(1u << 0)	/* some subscriber watches it */
#define PGOFF_WATCH_USTACK	(1u << 1)	/* one that wants user stacks does */

/* What the prober knows about a traced PostgreSQL process (key: tgid). */
struct pgoff_target {
	__u64 wait_event_ptr;	/* address of `my_wait_event_info` (a uint32 *), 0 = unknown */
	__u64 query_ptr;	/* address of `debug_query_string` (a char **), 0 = unknown */
	__u32 cluster;		/* the cluster's id; copied to forked children */
	__u32 uid;		/* the cluster's owner: its memory is read only
				   while the task's four uids are still this */
	__u16 quota;		/* its user's slot in the `quotas` array */
	__u16 flags;		/* PGOFF_T_* */
	__u32 pad;
	__u64 text_lo, text_hi;	/* the postgres binary's code, mapped; 0: unknown
				   (user stacks: the kernel's walk only) */
	/*
	 * The backend's own status entry: address of `MyBEEntry` (a
	 * PgBackendStatus *), 0 = unknown (before 14, or no layout for
	 * the major). status_len bytes are read from the entry's start,
	 * which holds st_changecount (offset 0) and st_procpid (4); the
	 * offsets of st_state (an int) and st_query_id (8 bytes, 0: none)
	 * lie within them. Bit s of status_active: st_state s is a
	 * statement running; of status_ignored: the entry says nothing
	 * (track_activities off).
	 */
	__u64 status_ptr;
	__u16 status_len, st_state_off, st_query_id_off;
	__u8 status_active, status_ignored;
};

/*
 * Whether a tgid may be in `targets`: the `target_slots` array counts
 * the entries whose tgid falls in each slot. Whoever adds a target
 * (the prober, the fork handler) counts it before the entry is made;
 * whoever deletes one gives it back after, so a 0 means no entry. An
 * element of a mmap'ed array is 8 bytes apart from the next.
 */
static inline __u32 pgoff_target_slot(__u32 tgid)
{
	return tgid & (PGOFF_TARGET_SLOTS - 1);
}

/* Target flags. */
#define PGOFF_T_TITLE_PENDING	(1u << 0)	/* forked: its title is read at a
						 * switch-out until it is a
						 * PostgreSQL title (a record),
						 * read whole */
#define PGOFF_T_TITLE_GUESSED	(1u << 1)	/* a title read at a moment it
						 * may have been torn was sent */

/*
 * What one user's PostgreSQL may take of the kernel's tables, index of
 * the `quotas` array (the prober gives each user with a cluster a slot):
 * no account fills the tables for the others. Counted with atomics by
 * the BPF programs (fork, exit, a thread's first switch-out) and by the
 * prober (the processes it adds), through a shared mapping.
 */
#define PGOFF_MAX_QUOTAS	256
struct pgoff_quota {
	__s32 procs;		/* traced processes of this user now */
	__s32 threads;		/* their threads in the `threads` table */
	__u32 max_procs;
	__u32 max_threads;
};

/* Per-CPU loss and activity counters, index of the `counters` array map. */
enum pgoff_counter {
	PGOFF_CNT_SWITCHES = 0,	/* switch-outs of traced threads */
	PGOFF_CNT_EVENTS,	/* records submitted to the ring buffer */
	PGOFF_CNT_RINGBUF_FULL,	/* record lost: ring buffer full */
	PGOFF_CNT_START_FULL,	/* interval lost: start map full */
	PGOFF_CNT_STACK_FAIL,	/* record sent without its stack */
	PGOFF_CNT_PG_READ_FAIL,	/* wait_event_info could not be read */
	PGOFF_CNT_QUERY_FAIL,	/* record sent without the query it had */
	PGOFF_CNT_EPISODES,	/* episode records submitted */
	PGOFF_CNT_AGG_FULL,	/* interval not aggregated: aggregation map full */
	PGOFF_CNT_QUOTA_FULL,	/* a process or thread not traced: its user's quota is full */
	PGOFF_CNT_TARGET_FULL,	/* a forked process not traced: the targets map is full */
	PGOFF_CNT_NOT_OWNER,	/* PostgreSQL memory not read: the task's uids changed */
	PGOFF_CNT_USTACK_FAIL,	/* user stack wanted, not walked (or not kept) */
	PGOFF_CNT_USDT_LOCK_START,	/* USDT hits in traced processes, by */
	PGOFF_CNT_USDT_LOCK_DONE,	/* cookie (PGOFF_USDT_*): this order */
	PGOFF_CNT_USDT_LWLOCK_START,
	PGOFF_CNT_USDT_LWLOCK_DONE,
	PGOFF_CNT_AGG_QUERY_FOLDED,	/* a row keyed by query id not made: past
					 * agg_query_rows_max, folded into its
					 * row without one (PGOFF_AGG_F_QUERY_FOLDED) */
	PGOFF_CNT_USDT_LWLOCK_PAUSED,	/* LWLock STARTs not read: their
					 * cluster was over usdt-max-rate */
	PGOFF_CNT_SWITCH_IN_UNSEEN,	/* an interval whose switch-in no
					 * sched_switch reported, ended when the
					 * scheduler's stamp says, or at its
					 * wakeup (PGOFF_F_END_AT_WAKE) */
	PGOFF_CNT_SWITCH_IN_LOST,	/* the same, with neither: its end
					 * unknown, lost */
	PGOFF_CNT_ON_CPU_SAMPLES,	/* on-CPU samples of a traced backend
					 * inside a PostgreSQL wait, added to
					 * its row (PGOFF_AGG_ON_CPU) */
	PGOFF_CNT_AGG_BUSY,		/* not aggregated: its new row's bucket
					 * was held by the program an
					 * interrupt (the tick) came into */
	PGOFF_CNT__COUNT
};

/*
 * PostgreSQL's USDT probes (provider "postgresql") that bound a wait
 * exactly: the uprobe's cookie. START and DONE of one kind alternate;
 * an error inside the wait (lock_timeout, cancel) leaves a START
 * without its DONE.
 */
enum pgoff_usdt_kind {
	PGOFF_USDT_LOCK_START = 0,	/* lock__wait__start */
	PGOFF_USDT_LOCK_DONE,		/* lock__wait__done */
	PGOFF_USDT_LWLOCK_START,	/* lwlock__wait__start */
	PGOFF_USDT_LWLOCK_DONE,		/* lwlock__wait__done */
	PGOFF_USDT__KINDS
};

/*
 * usdt-max-rate: a cluster's LWLock waits (lwlock__wait__start hits) in
 * the current second. A contended LWLock can fire 100k times a second,
 * and each hit costs its backend the uprobe trap and pg_usdt (about
 * 1.5 us here). Past usdt_max_rate in a second, the cluster's LWLock
 * STARTs are not read until usdt-quiet (a minute) after the last second
 * over it: those waits' episodes fall back to inferred bounds. DONE is
 * still read, so a pair opened before stays exact. Lock probes (rare,
 * long) are never paused. Key: the cluster's id.
 */
struct pgoff_usdt_rate {
	__u64 second;		/* CLOCK_MONOTONIC second of hits */
	__u64 hits;		/* LWLock STARTs in it */
	__u64 paused_until_ns;	/* not read before (CLOCK_MONOTONIC) */
	__u64 pauses;		/* times it went over, since pgoffd started */
	__u64 last_over_hits;	/* hits of the last second over the rate */
};
#define PGOFF_USDT_RATES	1024	/* clusters kept, least recent out */

/* What a ring buffer record is: its first field. */
enum pgoff_record_kind {
	PGOFF_REC_INTERVAL = 1,	/* struct pgoff_record (or _query) */
	PGOFF_REC_EPISODE = 2,	/* struct pgoff_episode */
	PGOFF_REC_TITLE = 3,	/* struct pgoff_title */
};

/* Record flags. */
#define PGOFF_F_PREEMPTED	(1u << 0)	/* switched out while runnable */
#define PGOFF_F_WOKEN		(1u << 1)	/* a wakeup was seen: waker fields valid */
#define PGOFF_F_PG_WAIT		(1u << 2)	/* pg_wait_event_info was read */
#define PGOFF_F_PG_NO_SYMBOL	(1u << 3)	/* process has no known my_wait_event_info */
#define PGOFF_F_WAKER_TRACED	(1u << 4)	/* the waker is a traced PostgreSQL process */
#define PGOFF_F_WAKER_PG_WAIT	(1u << 5)	/* waker_pg_wait_event_info was read */
#define PGOFF_F_QUERY		(1u << 6)	/* a struct pgoff_record_query was sent */
#define PGOFF_F_QUERY_LOST	(1u << 7)	/* the backend ran a query; its text was lost */
#define PGOFF_F_QUERY_UNSEEN	(1u << 8)	/* began while no subscriber could see SQL */
#define PGOFF_F_IN_STATEMENT	(1u << 9)	/* debug_query_string was set: mid-statement */
#define PGOFF_F_EPISODE_GAP	(1u << 10)	/* in the kernel: off the CPU outside the
						 * wait of an open episode */
#define PGOFF_F_PG_NOT_OWNER	(1u << 11)	/* not read: the task no longer runs
						 * as its cluster's owner */
#define PGOFF_F_USTACK		(1u << 12)	/* a struct pgoff_ustack ends the record */
#define PGOFF_F_PG_STATUS	(1u << 13)	/* the backend's own status entry was
						 * read: pg_state, query_id (0: none;
						 * only while a statement runs) and
						 * IN_STATEMENT come from it */
#define PGOFF_F_SWITCH_IN_UNSEEN (1u << 14)	/* its switch back onto a CPU was
						 * not reported: its end is the
						 * scheduler's stamp's, its
						 * kernel stack not walked */
#define PGOFF_F_END_AT_WAKE	(1u << 15)	/* ... and without that, its
						 * wakeup: its run-queue part unknown */

/*
 * How much of an off-CPU interval the thread was blocked; the rest it
 * waited runnable. Preempted: none of it. Woken at wake_ns: until then.
 * No wakeup seen: all of it. One rule for the kernel and for pgoffd.
 */
static inline __u64 pgoff_blocked_ns(__u32 flags, __u64 start_ns,
				     __u64 wake_ns, __u64 end_ns)
{
	if (flags & PGOFF_F_PREEMPTED)
		return 0;
	/* woken during its own switch-out: before the start was stamped */
	if ((flags & PGOFF_F_WOKEN) && wake_ns <= end_ns)
		return wake_ns > start_ns ? wake_ns - start_ns : 0;
	return end_ns - start_ns;
}

/*
 * A traced thread's last switch-out (the start of its entry in the
 * `threads` map, key: thread id; start_ns 0 while it is on a CPU);
 * pgoffd reads it to count waits that are still going on.
 */
struct pgoff_start {
	__u64 start_ns;		/* switch-out, CLOCK_MONOTONIC */
	__u64 wake_ns;
	__u64 query_id;		/* the statement's (PGOFF_F_PG_STATUS); 0: none */
	__u32 tgid;
	__u32 waker_pid;
	__u32 waker_tgid;
	__u32 pg_wait_event_info;
	__u32 flags;		/* PGOFF_F_* */
	__u32 cluster;
	__u32 waker_pg_wait_event_info;
	__u32 changecount;	/* st_changecount at switch-out (PGOFF_F_PG_STATUS) */
	__s16 syscall;		/* PGOFF_AGG_NO_SYSCALL if none */
	__u8 state;		/* enum pgoff_agg_state */
	__u8 wake_flags;	/* PGOFF_F_WOKEN, _WAKER_*: sched_waking's,
				 * apart from flags, which the switch-out
				 * writes; or-ed into them at switch-in */
	__u8 pg_state;		/* st_state, raw (PGOFF_F_PG_STATUS) */
	__u8 pad[3];
	char waker_comm[PGOFF_COMM_LEN];
};

/* One off-CPU interval of a traced thread, sent through the ring buffer. */
struct pgoff_record {
	__u32 kind;		/* PGOFF_REC_INTERVAL */
	__u32 pad;
	__u64 start_ns;		/* switch-out, CLOCK_MONOTONIC */
	__u64 wake_ns;		/* wakeup (0 if none seen) */
	__u64 end_ns;		/* switch-in */
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id, what PostgreSQL calls the pid */
	__u32 waker_pid;
	__u32 waker_tgid;
	__u32 pg_wait_event_info;
	__u32 flags;		/* PGOFF_F_* */
	__u32 cluster;
	__u32 waker_pg_wait_event_info;	/* the waker's own wait event at wake time */
	__u32 query_len;	/* bytes of query text, NUL excluded (PGOFF_F_QUERY) */
	__s32 stack_bytes;	/* bytes of stack[] filled, or -errno:
				   PGOFF_STACK_NOT_WALKED, or the walk's */
	__u64 query_id;		/* as in struct pgoff_start */
	__u8 pg_state;
	__u8 state;		/* as in struct pgoff_start: what tells the */
	__s16 syscall;		/* wait where no stack was walked */
	__u8 pad2[4];
	char comm[PGOFF_COMM_LEN];
	char waker_comm[PGOFF_COMM_LEN];
	__u64 stack[PGOFF_STACK_DEPTH];
};

/*
 * The user-space stack of a thread, walked at switch-out (frame
 * pointers) for a subscriber that asked: appended to a record with
 * PGOFF_F_USTACK, after the query text when there is one.
 */
struct pgoff_ustack {
	__s32 bytes;		/* bytes of ips[] filled, or -errno */
	__u32 pad;
	__u64 ips[PGOFF_USTACK_DEPTH];
	/*
	 * The return address into postgres that a frame-pointer walk
	 * skips when the stack's leaf is library code without frame
	 * pointers (libc) is one of these: the first words below
	 * postgres's innermost frame record that point into its code
	 * (x86-64; stale ones among them), the link register (arm64); 0
	 * if none. pgoffd takes the first that follows a call into the
	 * PLT (a call into a library).
	 */
	__u64 ret_hints[PGOFF_USTACK_HINTS];
};

/*
 * The same with the SQL the backend was running (debug_query_string,
 * read at switch-out), for subscribers allowed to see queries.
 */
struct pgoff_record_query {
	struct pgoff_record rec;
	char query[PGOFF_QUERY_MAX];	/* NUL-terminated, maybe truncated */
};

/*
 * A forked process's title, read from its memory (where PostgreSQL
 * writes it, over argv) at the first switch-out after it was set: a
 * backend that lives for one short transaction is labelled all the same.
 */
#define PGOFF_TITLE_MAX		384	/* "postgres: " + cluster + user + db + host */
struct pgoff_title {
	__u32 kind;		/* PGOFF_REC_TITLE */
	__u32 tgid;
	__u32 cluster;
	__u32 pad;
	char title[PGOFF_TITLE_MAX];	/* NUL-terminated */
};

/*
 * One PostgreSQL wait as a whole: consecutive off-CPU intervals of a
 * thread under the same non-zero wait_event_info (a lock wait is woken by
 * the deadlock check at deadlock_timeout and sleeps again; latch waits
 * wake on signals), within one statement (the backend's status entry
 * unchanged between them, where it is read). Time off the CPU outside any
 * wait between two of its intervals (a preemption, a page fault) counts
 * in blocked/runq. Sent when the thread next goes off the CPU under
 * another wait event, or the same one once a statement ended, or under
 * none later than PGOFF_EPISODE_GAP_NS after the last interval, or exits.
 */
struct pgoff_episode {
	__u32 kind;		/* PGOFF_REC_EPISODE */
	__u32 pid;
	__u32 tgid;
	__u32 cluster;
	__u32 pg_wait_event_info;
	__u32 intervals;	/* off-CPU intervals merged */
	__u32 flags;		/* PGOFF_F_* of the last interval, the */
	__u32 waker_pid;	/* waker's of the last one woken */
	__u32 waker_tgid;
	__u32 waker_pg_wait_event_info;
	__u64 start_ns;		/* first switch-out */
	__u64 end_ns;		/* last switch-in */
	__u64 blocked_ns;	/* sums over the intervals and the time */
	__u64 runq_ns;		/* off the CPU outside the wait between them */
	__u64 oncpu_ns;		/* on a CPU between its intervals */
	__u64 query_id;		/* the statement's (flags & PGOFF_F_PG_STATUS) */
	__u32 bounds;		/* PGOFF_EP_*: where start and end come from */
	__u8 pg_state;		/* its first interval's st_state, raw */
	/* the kernel's view of its longest blocked interval, as the
	 * aggregation keeps it: enum pgoff_agg_state (PGOFF_AGG_RUNQ: none
	 * blocked) and system call (PGOFF_AGG_NO_SYSCALL: none) */
	__u8 kernel_state;
	__s16 kernel_syscall;
	char comm[PGOFF_COMM_LEN];
	char waker_comm[PGOFF_COMM_LEN];
};

/*
 * Episode bounds. Without any, start and end are the first switch-out
 * and the last switch-in (the wait event seen by the kernel: "inferred").
 * With both probe bits, PostgreSQL's own wait: lock__wait__start ..
 * lock__wait__done (or lwlock), with every off-CPU interval between
 * ("exact"). A pair that ended without its DONE (lock_timeout, cancel)
 * ends at its last switch-in.
 */
#define PGOFF_EP_START_PROBE	(1u << 0)	/* start_ns: the START probe */
#define PGOFF_EP_DONE_PROBE	(1u << 1)	/* end_ns: the DONE probe */

/*
 * Where a thread was when it went off the CPU, as cheap to know as the
 * scheduler tracepoint allows (no stack walk): its task state and the
 * system call it was in. pgoffd turns this into a kernel wait type.
 */
enum pgoff_agg_state {
	PGOFF_AGG_RUNQ = 0,	/* preempted: still runnable */
	PGOFF_AGG_SLEEP,	/* TASK_INTERRUPTIBLE (S) */
	PGOFF_AGG_DISK,		/* TASK_UNINTERRUPTIBLE (D) */
	PGOFF_AGG_OTHER,	/* stopped, traced, idle, … */
	PGOFF_AGG_ON_CPU,	/* not off the CPU: on it inside a PostgreSQL
				 * wait, sampled (on_cpu_tick); its row has
				 * time only, no count nor histogram */
};

#define PGOFF_AGG_NO_SYSCALL	(-1)	/* blocked outside a system call (a fault) */
#define PGOFF_AGG_F_PG_WAIT	(1u << 0)	/* pg_wait_event_info was read */
#define PGOFF_AGG_F_IN_STATEMENT (1u << 1)	/* a statement ran (PGOFF_F_IN_STATEMENT) */
#define PGOFF_AGG_F_PG_STATUS	(1u << 2)	/* the status entry was read: */
#define PGOFF_AGG_PG_STATE_SHIFT 3		/* st_state, bits 3-5 (a raw */
#define PGOFF_AGG_PG_STATE_MASK	7u		/* value of 0..7) */
#define PGOFF_AGG_F_QUERY_FOLDED (1u << 6)	/* a query id was there: past the
						 * cap of rows with one, its time
						 * went to this row (query_id 0) */

/*
 * The in-kernel aggregation, key and value of the `aggregate` map: every
 * off-CPU interval of a traced thread is added at switch-in, whatever the
 * subscriptions, so pgoffctl top and metrics never need every event.
 */
struct pgoff_agg_key {
	__u32 tgid;
	__u32 pg_wait_event_info;	/* 0: none, or not read (see flags) */
	__u32 cluster;
	__s16 syscall;			/* number, or PGOFF_AGG_NO_SYSCALL */
	__u8 state;			/* enum pgoff_agg_state */
	__u8 flags;			/* PGOFF_AGG_F_*, st_state */
	__u64 query_id;			/* the statement's; 0: none */
};

/*
 * hist[0] counts intervals shorter than 1.024 us (1024 ns); hist[b] for
 * b >= 1 those in [2^(b-1), 2^b) * 1024 ns; the last bucket has no upper
 * bound (2^30 * 1.024 us is about 18 minutes). The unit is a shift on the
 * hot path; pgoffd's stats reply says it (hist_unit_ns).
 */
#define PGOFF_AGG_UNIT_SHIFT	10
#define PGOFF_AGG_UNIT_NS	(1u << PGOFF_AGG_UNIT_SHIFT)
struct pgoff_agg {
	__u64 count;
	__u64 total_ns;
	__u64 hist[PGOFF_AGG_BUCKETS];
};

#endif
