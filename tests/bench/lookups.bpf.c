// SPDX-License-Identifier: GPL-2.0-only
/*
 * lookups.bpf.c - for make bench only: what finding a task's state costs
 * on sched_switch, by structure, with PostgreSQL's tasks marked and all
 * others not (the mix pgoff sees). Each program looks up prev and next,
 * as a switch does; bpf_stats times each program on its own, all in the
 * same run, so the difference to sched_lk_empty is the lookups' cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_TASKS 16384		/* as PGOFF_MAX_THREADS */

/* a value the size of the hot part of pgoff's per-thread state */
struct task_state {
	__u64 w[8];
};

/* task-local storage: a task that has none costs a NULL pointer */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} by_task SEC(".maps");

/* a preallocated hash keyed by pid, as pgoff's `threads` and `targets` */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, __u32);
	__type(value, struct task_state);
} by_pid SEC(".maps");

/* an array indexed by pid modulo its size, as pgoff's `thread_slots` */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_TASKS);
	__type(key, __u32);
	__type(value, __u32);
} by_slot SEC(".maps");

static const struct task_state zero;

static __always_inline bool is_postgres(const struct task_struct *t)
{
	const char *c = t->comm;

	return c[0] == 'p' && c[1] == 'o' && c[2] == 's' && c[3] == 't' &&
	       c[4] == 'g' && c[5] == 'r' && c[6] == 'e' && c[7] == 's';
}

/* names start with sched_ (bench.sh's filter), at most 15 characters */

/* Marks PostgreSQL's tasks in each structure; not measured. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_lk_mark, bool preempt, struct task_struct *prev)
{
	__u32 pid = prev->pid, slot = pid & (MAX_TASKS - 1), *n;

	if (!is_postgres(prev))
		return 0;
	bpf_task_storage_get(&by_task, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!bpf_map_lookup_elem(&by_pid, &pid))
		bpf_map_update_elem(&by_pid, &pid, &zero, BPF_NOEXIST);
	n = bpf_map_lookup_elem(&by_slot, &slot);
	if (n && !*n)
		*n = 1;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_lk_empty)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_lk_task, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct task_state *a = bpf_task_storage_get(&by_task, prev, 0, 0);
	struct task_state *b = bpf_task_storage_get(&by_task, next, 0, 0);

	return (a ? 1 : 0) + (b ? 2 : 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_lk_hash, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 p = prev->pid, n = next->pid;
	struct task_state *a = bpf_map_lookup_elem(&by_pid, &p);
	struct task_state *b = bpf_map_lookup_elem(&by_pid, &n);

	return (a ? 1 : 0) + (b ? 2 : 0);
}

/* the slot, then the hash where the slot says the pid may be there:
 * pgoff's switch-in and sched_waking today */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_lk_slot, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 p = prev->pid, n = next->pid;
	__u32 ps = p & (MAX_TASKS - 1), ns = n & (MAX_TASKS - 1);
	__u32 *a = bpf_map_lookup_elem(&by_slot, &ps);
	__u32 *b = bpf_map_lookup_elem(&by_slot, &ns);
	int r = 0;

	if (a && *a && bpf_map_lookup_elem(&by_pid, &p))
		r |= 1;
	if (b && *b && bpf_map_lookup_elem(&by_pid, &n))
		r |= 2;
	return r;
}
