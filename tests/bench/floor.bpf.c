// SPDX-License-Identifier: GPL-2.0-only
/*
 * floor.bpf.c - for make bench only: the least a program must do to
 * report PostgreSQL's wait event for each switch, so that pgoff's own
 * figures stand beside it in the same rounds (the physical floor).
 *
 * floor_load marks the cluster's postmaster and processes in task-local
 * storage (the cheapest lookup that also carries the per-process
 * addresses: the `lookups` bench) with where my_wait_event_info and
 * debug_query_string are; a fork inherits the mark (a backend is marked
 * before it first runs, as pgoff's fork handler does), an exec drops it.
 * A switch then does, and nothing else:
 *   prev, a backend: its storage; the clock; the wait event's pointer and
 *     value and the query pointer, the three reads pgoff makes
 *     (bpf/postgres.bpf.h), kept in its storage for the switch-in;
 *   next, a backend: its storage; the clock (one read for both sides);
 *     the interval and its wait event stored in a per-CPU slot, where a
 *     real tool would aggregate or send it.
 * sched_waking: the wakee's storage and, for the first wakeup of a wait,
 * the clock.
 * floor_reads, set by the loader, leaves out the query read or every read,
 * so each part's cost is measured in the same rounds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "floor.h"

#define PF_EXITING 0x00000004	/* task_struct::flags: in do_exit() */

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 floor_reads = FLOOR_READS_ALL;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct floor_backend);
} backends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct floor_result);
} results SEC(".maps");

/* prev is current: its user memory is the backend's. */
static __always_inline void switch_out(struct floor_backend *b,
				       struct floor_result *r, __u64 now)
{
	__u64 ptr = 0, query = 0;
	__u32 info = 0;

	if (floor_reads != FLOOR_READS_NONE &&
	    (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)b->wait_event_var) ||
	     !ptr || bpf_probe_read_user(&info, sizeof(info), (void *)ptr)))
		r->read_failures++;
	if (floor_reads == FLOOR_READS_ALL &&
	    bpf_probe_read_user(&query, sizeof(query), (void *)b->query_var))
		r->read_failures++;
	b->wait_event_info = info;
	b->in_statement = query != 0;
	b->wake_ns = 0;
	b->off_ns = now;
	r->switch_outs++;
}

static __always_inline void switch_in(struct floor_backend *b,
				      struct floor_result *r, __u64 now)
{
	r->off_ns = now - b->off_ns;
	r->wait_event_info = b->wait_event_info;
	r->in_statement = b->in_statement;
	r->intervals++;
	b->off_ns = 0;
}

/* names start with sched_ (bench.sh's filter), at most 15 characters */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_sw_floor, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct floor_backend *p = bpf_task_storage_get(&backends, prev, 0, 0);
	struct floor_backend *n = bpf_task_storage_get(&backends, next, 0, 0);
	struct floor_result *r = NULL;
	__u32 zero = 0;
	__u64 now = 0;	/* read once, by the first side that needs it */

	/* past exit_mm the backend's memory is gone: pgoff stops there too */
	if (p && !(prev->flags & PF_EXITING)) {
		now = bpf_ktime_get_ns();
		r = bpf_map_lookup_elem(&results, &zero);
		if (r)
			switch_out(p, r, now);
	}
	/* off_ns 0: marked while on a CPU, no interval to end */
	if (n && n->off_ns) {
		if (!now)
			now = bpf_ktime_get_ns();
		if (!r)
			r = bpf_map_lookup_elem(&results, &zero);
		if (r)
			switch_in(n, r, now);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_wk_floor, struct task_struct *p)
{
	struct floor_backend *b = bpf_task_storage_get(&backends, p, 0, 0);

	/* a wait ends at its first wakeup; later ones change nothing */
	if (b && b->off_ns && !b->wake_ns)
		b->wake_ns = bpf_ktime_get_ns();
	return 0;
}

/* Not timed by the bench: marking, as pgoff's fork and exec handlers. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_fk_floor, struct task_struct *parent,
	     struct task_struct *child)
{
	struct floor_backend *b = bpf_task_storage_get(&backends, parent, 0, 0);
	struct floor_backend mark = {};
	__u32 zero = 0;
	struct floor_result *r;

	if (!b)
		return 0;
	mark.wait_event_var = b->wait_event_var;
	mark.query_var = b->query_var;
	if (!bpf_task_storage_get(&backends, child, &mark,
				  BPF_LOCAL_STORAGE_GET_F_CREATE)) {
		r = bpf_map_lookup_elem(&results, &zero);
		if (r)
			r->marks_failed++;
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_ex_floor, struct task_struct *p)
{
	bpf_task_storage_delete(&backends, p);
	return 0;
}
