/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * episode.bpf.h - episodes: intervals under one PostgreSQL wait merged in the kernel,
 * bounded by PostgreSQL's wait probes where the binary has them.
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_EPISODE_BPF_H
#define PGOFF_EPISODE_BPF_H

#include "aggregate.bpf.h"
#include "ustack.bpf.h"

/* Send a finished episode if it passes the pushed-down filter. Runs in
 * the episode's thread (switch-out or exit): comm is current's. */
static __always_inline void episode_send(__u32 pid, const struct episode *e)
{
	struct pgoff_episode *r;

	/* a probed wait that never left the CPU is a wait all the same */
	if ((!e->intervals && !(e->bounds & PGOFF_EP_DONE_PROBE)) ||
	    e->end_ns - e->start_ns < min_duration_ns)
		return;
	if (filter_pids && !bpf_map_lookup_elem(&watch_pids, &e->tgid))
		return;
	if (filter_pg_classes && !pg_class_wanted(e->pg_wait_event_info))
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(PGOFF_CNT_RINGBUF_FULL);
		return;
	}
	r->kind = PGOFF_REC_EPISODE;
	r->pid = pid;
	r->tgid = e->tgid;
	r->cluster = e->cluster;
	r->pg_wait_event_info = e->pg_wait_event_info;
	r->intervals = e->intervals;
	r->flags = (e->flags & ~PGOFF_F_PG_STATUS) |
		   (e->status_read ? PGOFF_F_PG_STATUS : 0);
	r->query_id = e->query_id;
	r->pg_state = e->pg_state;
	r->waker_pid = e->waker_pid;
	r->waker_tgid = e->waker_tgid;
	r->waker_pg_wait_event_info = e->waker_pg_wait_event_info;
	r->start_ns = e->start_ns;
	r->end_ns = e->end_ns;
	r->blocked_ns = e->blocked_ns;
	r->runq_ns = e->runq_ns;
	r->oncpu_ns = e->oncpu_ns;
	r->bounds = e->bounds;
	r->kernel_state = e->kernel_state;
	r->kernel_syscall = e->kernel_syscall;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	__builtin_memcpy(r->waker_comm, e->waker_comm, sizeof(r->waker_comm));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	count(PGOFF_CNT_EPISODES);
}

/* The statement an episode is in, from an interval's (or a probe's)
 * reading of the backend's status entry, if it was read. */
static __always_inline void episode_status(struct episode *e,
					   const struct pgoff_start *s)
{
	if (!(s->flags & PGOFF_F_PG_STATUS))
		return;
	e->status_read = 1;
	e->query_id = s->query_id;
	e->pg_state = s->pg_state;
	e->changecount = s->changecount;
}

/*
 * Whether a statement began or ended since the episode's statement was
 * read: its status entry moved. Then a wait on the same event is another
 * wait, and the time on the CPU between the two is neither's.
 */
static __always_inline bool statement_moved(const struct episode *e,
					    const struct pgoff_start *s)
{
	return e->status_read && (s->flags & PGOFF_F_PG_STATUS) &&
	       s->changecount != e->changecount;
}

/* A new episode, its first interval starting at start. */
static __always_inline void episode_open(struct episode *e,
					 const struct pgoff_start *s,
					 __u32 tgid, __u64 start)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->start_ns = start;
	e->end_ns = start;
	e->pg_wait_event_info = s->pg_wait_event_info;
	e->cluster = s->cluster;
	e->tgid = tgid;
	e->gen = episode_gen;
	e->kernel_state = PGOFF_AGG_RUNQ;
	e->kernel_syscall = PGOFF_AGG_NO_SYSCALL;
	episode_status(e, s);
}

/*
 * Going off the CPU: the same wait goes on, or the open one may be over.
 * Off the CPU outside any PostgreSQL wait (preempted, a page fault, the
 * "still waiting" log line) soon after the wait's last interval, the
 * wait may resume: the episode stays open; a switch-out under another
 * wait event, after a statement began or ended, or later than
 * PGOFF_EPISODE_GAP_NS, ends it.
 */
static __always_inline void episode_switch_out(__u32 pid, __u32 tgid,
					       struct pgoff_start *s,
					       struct episode *e, __u64 now,
					       bool th_in_pair)
{
	bool waiting = in_pg_wait(s->flags, s->pg_wait_event_info);

	if (th_in_pair)
		return;		/* the probes bound it: see pair_switch_out */
	if (e->gen == episode_gen && !statement_moved(e, s)) {
		if (waiting && e->pg_wait_event_info == s->pg_wait_event_info) {
			__u64 gap = e->gap_blocked_ns + e->gap_runq_ns;

			e->oncpu_ns += now - e->end_ns - gap;
			e->blocked_ns += e->gap_blocked_ns;
			e->runq_ns += e->gap_runq_ns;
			e->gap_blocked_ns = 0;
			e->gap_runq_ns = 0;
			return;
		}
		if (!waiting && now - e->end_ns < PGOFF_EPISODE_GAP_NS) {
			s->flags |= PGOFF_F_EPISODE_GAP;
			return;
		}
	}
	if (e->gen == episode_gen) {
		episode_send(pid, e);
		e->gen = 0;
	}
	if (waiting)
		episode_open(e, s, tgid, now);
}

/* The flags that describe an interval's waker. */
#define WAKER_FLAGS (PGOFF_F_WOKEN | PGOFF_F_WAKER_TRACED | PGOFF_F_WAKER_PG_WAIT)

/* An interval (s, ending now) joins its episode. */
static __always_inline void episode_add(struct episode *e,
					const struct pgoff_start *s, __u64 now)
{
	__u64 dur = now - s->start_ns, blocked = pgoff_blocked_ns(s->flags, s->start_ns, s->wake_ns, now);

	if (!e->status_read)	/* a probe's episode, its START unread */
		episode_status(e, s);
	e->intervals++;
	e->end_ns = now;
	e->blocked_ns += blocked;
	e->runq_ns += dur - blocked;
	if (blocked > e->kernel_blocked_ns) {
		e->kernel_blocked_ns = blocked;
		e->kernel_state = s->state;
		e->kernel_syscall = s->syscall;
	}
	/* the waker is who woke it last: a preemption right after the
	 * wakeup, still under the wait event, woke nobody */
	if (!(s->flags & PGOFF_F_WOKEN)) {
		e->flags = (s->flags & ~WAKER_FLAGS) | (e->flags & WAKER_FLAGS);
		return;
	}
	e->flags = s->flags;
	e->waker_pid = s->waker_pid;
	e->waker_tgid = s->waker_tgid;
	e->waker_pg_wait_event_info = s->waker_pg_wait_event_info;
	__builtin_memcpy(e->waker_comm, s->waker_comm, sizeof(e->waker_comm));
}

/*
 * Back on the CPU: add the interval to its episode. An episode already
 * under way when episodes were switched on starts here, at this
 * interval's switch-out (earlier intervals of it were not seen). An
 * interval outside any PostgreSQL wait while an episode is open is
 * kept aside, in case the wait resumes.
 */
static __always_inline void episode_switch_in(__u32 tgid,
					      const struct pgoff_start *s,
					      struct episode *e, __u64 now)
{
	__u64 dur = now - s->start_ns, blocked = pgoff_blocked_ns(s->flags, s->start_ns, s->wake_ns, now);

	if (!in_pg_wait(s->flags, s->pg_wait_event_info)) {
		if (!(s->flags & PGOFF_F_EPISODE_GAP))
			return;
		if (e->gen == episode_gen && s->start_ns >= e->end_ns) {
			e->gap_blocked_ns += blocked;
			e->gap_runq_ns += dur - blocked;
		}
		return;
	}
	if (e->gen != episode_gen || e->pair ||
	    e->pg_wait_event_info != s->pg_wait_event_info)
		episode_open(e, s, tgid, s->start_ns);
	episode_add(e, s, now);
}

/*
 * Back on the CPU inside a probed wait: every interval between START and
 * DONE is the wait's, whatever the wait event said (the deadlock check's
 * LWLocks, the "still waiting" log line). A wait already under way when
 * episodes were switched on starts here, its start inferred.
 */
static __always_inline void pair_switch_in(__u32 tgid, const struct pgoff_start *s,
					   struct episode *e, __u32 pair,
					   __u32 class, __u64 now)
{
	if (e->gen != episode_gen || e->pair != pair) {
		episode_open(e, s, tgid, s->start_ns);
		e->pair = pair;
		e->pg_wait_event_info = 0;
	}
	/* the lock's own event (a lock START comes before it is set) */
	if (!e->pg_wait_event_info &&
	    in_pg_wait(s->flags, s->pg_wait_event_info) &&
	    s->pg_wait_event_info >> 24 == class)
		e->pg_wait_event_info = s->pg_wait_event_info;
	episode_add(e, s, now);
}

/* PostgreSQL's wait event classes (PG_WAIT_LWLOCK, PG_WAIT_LOCK >> 24). */
#define PG_CLASS_LWLOCK	0x01
#define PG_CLASS_LOCK	0x03

/*
 * A probed wait is over, at its DONE (done_ns) or without one (0: it
 * ended at its last switch-in). Its on-CPU time is what its intervals
 * leave of it.
 */
static __always_inline void pair_close(__u32 pid, struct episode *e,
				       __u32 pair, __u64 done_ns)
{
	__u64 off, dur;

	if (e->gen != episode_gen || e->pair != pair)
		return;
	if (done_ns) {
		e->end_ns = done_ns;
		e->bounds |= PGOFF_EP_DONE_PROBE;
	}
	off = e->blocked_ns + e->runq_ns;
	dur = e->end_ns - e->start_ns;
	e->oncpu_ns = dur > off ? dur - off : 0;
	episode_send(pid, e);
	e->gen = 0;
}

/*
 * Off the CPU under a wait of another class inside a lock wait: the wait
 * ended in an ERROR (lock_timeout, a cancel, a deadlock before 18) and
 * its DONE never comes; the backend went on (to ClientRead).
 */
static __always_inline void pair_switch_out(__u32 pid, struct thread *th,
					    const struct pgoff_start *s)
{
	__u32 class = s->pg_wait_event_info >> 24;

	if (!th->lock_pair.start_ns ||
	    !in_pg_wait(s->flags, s->pg_wait_event_info) ||
	    class == PG_CLASS_LOCK || class == PG_CLASS_LWLOCK)
		return;
	th->lock_pair.start_ns = 0;
	pair_close(pid, &th->e, PAIR_LOCK, 0);
}

#endif
