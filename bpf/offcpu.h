/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * offcpu.h - the one record layout shared by bpf/offcpu.bpf.c and pgoffd.
 * Fixed-size plain data only: no pointers, no kernel types.
 */
#ifndef PGOFF_OFFCPU_H
#define PGOFF_OFFCPU_H

#define PGOFF_COMM_LEN		16
#define PGOFF_STACK_DEPTH	32	/* frames walked; scheduler frames are dropped later */
#define PGOFF_MAX_TARGETS	16384	/* traced PostgreSQL processes */
#define PGOFF_MAX_STARTS	16384	/* PostgreSQL threads off the CPU at one time */
#define PGOFF_MAX_WATCH_PIDS	1024	/* pids in the union of all subscriptions */

/* What pgoffd knows about a traced PostgreSQL process (key: tgid). */
struct pgoff_target {
	__u64 wait_event_ptr;	/* address of `my_wait_event_info` (a uint32 *), 0 = unknown */
	__u32 cluster;		/* broker's cluster id; copied to forked children */
	__u32 pad;
};

/* Per-CPU loss and activity counters, index of the `counters` array map. */
enum pgoff_counter {
	PGOFF_CNT_SWITCHES = 0,	/* switch-ins of traced threads */
	PGOFF_CNT_EVENTS,	/* records submitted to the ring buffer */
	PGOFF_CNT_RINGBUF_FULL,	/* record lost: ring buffer full */
	PGOFF_CNT_START_FULL,	/* interval lost: start map full */
	PGOFF_CNT_STACK_FAIL,	/* record sent without its stack */
	PGOFF_CNT_PG_READ_FAIL,	/* wait_event_info could not be read */
	PGOFF_CNT__COUNT
};

/* Record flags. */
#define PGOFF_F_PREEMPTED	(1u << 0)	/* switched out while runnable */
#define PGOFF_F_WOKEN		(1u << 1)	/* a wakeup was seen: waker fields valid */
#define PGOFF_F_PG_WAIT		(1u << 2)	/* pg_wait_event_info was read */
#define PGOFF_F_PG_NO_SYMBOL	(1u << 3)	/* process has no known my_wait_event_info */
#define PGOFF_F_WAKER_TRACED	(1u << 4)	/* the waker is a traced PostgreSQL process */

/* One off-CPU interval of a traced thread, sent through the ring buffer. */
struct pgoff_record {
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
	__s32 stack_bytes;	/* bytes of stack[] filled, or -errno */
	char comm[PGOFF_COMM_LEN];
	char waker_comm[PGOFF_COMM_LEN];
	__u64 stack[PGOFF_STACK_DEPTH];
};

#endif
