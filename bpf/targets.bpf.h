/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * targets.bpf.h - who may be traced: the owner check before reading PostgreSQL's
 * memory, the per-user quotas, and forgetting a thread or process.
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_TARGETS_BPF_H
#define PGOFF_TARGETS_BPF_H

#include "state.bpf.h"

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

#endif
