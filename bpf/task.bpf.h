/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * task.bpf.h - how a task is named and read: pids as pgoffd sees them (the
 * innermost pid namespace pgoffd shares), and the fields read both
 * typed (tp_btf) and through CO-RE (raw_tp).
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_TASK_BPF_H
#define PGOFF_TASK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "offcpu.h"

#define TASK_RUNNING 0
#define PF_EXITING 0x00000004	/* task_struct::flags: in do_exit() */
#define PF_IO_WORKER 0x00000010	/* an io_uring worker of the process */
#define PF_KTHREAD 0x00200000	/* a kernel thread */

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

/*
 * The same for cur, which is current: from a typed pointer (btf) two
 * plain loads instead of a helper call, which costs more than the loads
 * where calls are dear (retpolines, return thunks; tests/bench/
 * helper-calls.md). Untyped (raw_tp), the helper: one call, where a
 * CO-RE read of each field would be a call each.
 */
static __always_inline __u64 task_pid_tgid(struct task_struct *cur, bool btf)
{
	if (!btf)
		return current_pid_tgid();
	return (__u64)task_tgid(cur, true) << 32 | task_pid(cur, true);
}

#endif
