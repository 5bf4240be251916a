/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * floor.h - for make bench only: what floor.bpf.c and floor_load.c share.
 * Plain data (__u32, __u64: the includer brings them).
 */
#ifndef PGOFF_BENCH_FLOOR_H
#define PGOFF_BENCH_FLOOR_H

/* Which reads of the backend's memory a switch-out makes (floor_reads). */
#define FLOOR_READS_ALL		0	/* wait event pointer and value, query pointer */
#define FLOOR_READS_WAIT	1	/* the wait event only */
#define FLOOR_READS_NONE	2	/* none: the lookups and the clock */

/* A backend's task-local storage; the loader fills the two addresses. */
struct floor_backend {
	__u64 wait_event_var;		/* run-time address of my_wait_event_info */
	__u64 query_var;		/* run-time address of debug_query_string */
	__u64 off_ns;			/* switched out at, 0: on a CPU */
	__u64 wake_ns;			/* woken at */
	__u32 wait_event_info;		/* read at switch-out */
	__u32 in_statement;		/* debug_query_string was set */
};

/* Per CPU: the last interval attributed, and the counts floor_load checks. */
struct floor_result {
	__u64 off_ns;			/* the interval's length */
	__u32 wait_event_info;
	__u32 in_statement;
	__u64 switch_outs;		/* of marked backends */
	__u64 intervals;		/* attributed at switch-in */
	__u64 read_failures;		/* a read of the backend's memory failed */
	__u64 marks_failed;		/* a fork whose child got no storage */
};

#endif
