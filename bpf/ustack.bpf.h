/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ustack.bpf.h - PostgreSQL's call path: the user stack walked at switch-out, with a
 * scan for postgres's innermost frame where libc hid it.
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_USTACK_BPF_H
#define PGOFF_USTACK_BPF_H

#include "postgres.bpf.h"

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

#endif
