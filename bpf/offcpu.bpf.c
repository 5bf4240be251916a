// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu.bpf.c - off-CPU intervals of PostgreSQL processes.
 *
 * switch-out of a traced thread: remember when, whether it was still
 *   runnable (preempted), and PostgreSQL's wait_event_info (current is
 *   the backend, so its memory is readable here);
 * waking: remember who woke it and when (runs in the waker's context);
 * switch-in: the interval is complete. Only if it passes the filter that
 *   pgoffd pushed down is the (expensive) stack walked and a record sent.
 *
 * Each hook exists twice: tp_btf (typed, cheapest, and the only one that
 * may pass `next` to bpf_get_task_stack) and a raw_tp twin for kernels
 * without tp_btf; pgoffd picks one set at load time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "offcpu.h"

char LICENSE[] SEC("license") = "GPL";

#include "task.bpf.h"
#include "state.bpf.h"
#include "aggregate.bpf.h"
#include "targets.bpf.h"
#include "postgres.bpf.h"
#include "ustack.bpf.h"
#include "episode.bpf.h"

/*
 * A thread's entry in `threads`, made within its user's quota if it has
 * none. kpid: its kernel pid (the `thread_slots` slot).
 */
static __always_inline struct thread *thread_get(const struct pgoff_target *t,
						 __u32 pid, __u32 kpid)
{
	struct thread *th = bpf_map_lookup_elem(&threads, &pid);
	__u32 slot = t->quota;
	struct pgoff_quota *q;
	__u32 *n;

	if (th)
		return th;
	q = bpf_map_lookup_elem(&quotas, &slot);
	n = thread_slot(kpid);
	if (!n || !q || !quota_take(&q->threads, q->max_threads))
		return NULL;
	/* counted first: a wakeup that sees the entry sees it too */
	__sync_fetch_and_add(n, 1);
	if (bpf_map_update_elem(&threads, &pid, &thread_zero, BPF_NOEXIST) ||
	    !(th = bpf_map_lookup_elem(&threads, &pid))) {
		__sync_fetch_and_add(n, -1);
		quota_give(slot, true);
		count(PGOFF_CNT_START_FULL);
		return NULL;
	}
	th->quota = slot;
	th->slot = kpid & (THREAD_SLOTS - 1);
	return th;
}

/*
 * The time of this switch, read once and only for a traced task: the
 * clock read costs about as much as everything else a switch of an
 * untraced task does (tests/bench/results-floor.md), and nearly every
 * switch is of untraced tasks. 0: not read yet.
 */
static __always_inline __u64 switch_time(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

/* The pushed-down filter, once the interval's length is known. */
static __always_inline bool wanted(const struct pgoff_start *s, __u32 tgid, __u64 now)
{
	bool preempted = s->flags & PGOFF_F_PREEMPTED;

	if (now - s->start_ns < min_duration_ns)
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&watch_pids, &tgid))
		return false;
	if ((cpu_filter == PGOFF_CPU_ONLY && !preempted) ||
	    (cpu_filter == PGOFF_CPU_NONE && preempted))
		return false;
	if (filter_pg_classes && (!(s->flags & PGOFF_F_PG_WAIT) ||
				  !pg_class_wanted(s->pg_wait_event_info)))
		return false;
	if (!want_pg_intervals && in_pg_wait(s->flags, s->pg_wait_event_info))
		return false;
	return true;
}

static __always_inline void fill(struct pgoff_record *r, const struct pgoff_start *s,
				 struct task_struct *next, __u32 pid,
				 __u32 tgid, __u64 now, bool with_stack)
{
	r->kind = PGOFF_REC_INTERVAL;
	r->start_ns = s->start_ns;
	r->wake_ns = s->wake_ns;
	r->end_ns = now;
	r->pid = pid;
	r->tgid = tgid;
	r->waker_pid = s->waker_pid;
	r->waker_tgid = s->waker_tgid;
	r->pg_wait_event_info = s->pg_wait_event_info;
	r->waker_pg_wait_event_info = s->waker_pg_wait_event_info;
	r->flags = s->flags;
	r->cluster = s->cluster;
	r->query_len = 0;
	r->query_id = s->query_id;
	r->pg_state = s->pg_state;
	r->state = s->state;
	r->syscall = s->syscall;
	__builtin_memcpy(r->waker_comm, s->waker_comm, sizeof(r->waker_comm));
	BPF_CORE_READ_STR_INTO(&r->comm, next, comm);
	if (with_stack) {
		long n = bpf_get_task_stack(next, r->stack, sizeof(r->stack), 0);

		r->stack_bytes = n;
		if (n < 0)
			count(PGOFF_CNT_STACK_FAIL);
	} else {
		r->stack_bytes = PGOFF_STACK_NOT_WALKED;
	}
}

/* The user stack after a record (and its query): a size the verifier
 * knows in each branch. */
struct pgoff_record_u {
	struct pgoff_record rec;
	struct pgoff_ustack u;
};
struct pgoff_record_query_u {
	struct pgoff_record_query rq;
	struct pgoff_ustack u;
};

/* A record with the query text; false if the text is not there. */
static __always_inline bool send_with_query(const struct pgoff_start *s,
					    struct thread *th,
					    struct task_struct *next,
					    __u32 pid, __u32 tgid, __u64 now,
					    bool with_stack)
{
	struct query *q = bpf_map_lookup_elem(&queries, &pid);
	struct pgoff_record_query_u *rqu = NULL;
	struct pgoff_record_query *rq;
	__u32 len;

	if (!q)
		return false;
	if (s->flags & PGOFF_F_USTACK) {
		rqu = bpf_ringbuf_reserve(&events, sizeof(*rqu), 0);
		rq = (struct pgoff_record_query *)rqu;
	} else {
		rq = bpf_ringbuf_reserve(&events, sizeof(*rq), 0);
	}
	if (!rq) {
		count(PGOFF_CNT_RINGBUF_FULL);
		return true;
	}
	fill(&rq->rec, s, next, pid, tgid, now, with_stack);
	if (rqu)
		bpf_probe_read_kernel(&rqu->u, sizeof(rqu->u), &th->u);
	len = q->len;
	if (len > PGOFF_QUERY_MAX - 1)
		len = PGOFF_QUERY_MAX - 1;
	bpf_probe_read_kernel(rq->query, len, q->text);
	rq->query[len & (PGOFF_QUERY_MAX - 1)] = '\0';
	rq->rec.query_len = len;
	bpf_ringbuf_submit(rq, BPF_RB_NO_WAKEUP);
	count(PGOFF_CNT_EVENTS);
	return true;
}

/* The text kept for an interval that is over goes, unless kept for its
 * statement (keep_query). */
static __always_inline void query_drop(struct thread *th, __u32 flags,
				       __u32 pid)
{
	if ((flags & PGOFF_F_QUERY) && !th->query_kept)
		bpf_map_delete_elem(&queries, &pid);
}

/*
 * An interval of a traced thread (s: its start, th's or a copy) is over
 * at now: aggregated, added to its episode, sent if wanted. The caller
 * marks it closed. task: the thread; its kernel stack is walked only
 * where with_stack (at switch-in, before it runs: its saved stack is
 * still the one it blocked on; only with tp_btf, the one hook whose
 * next the verifier lets bpf_get_task_stack take).
 */
static __always_inline void interval_end(struct thread *th,
					 const struct pgoff_start *s,
					 struct task_struct *task, __u32 pid,
					 __u32 tgid, __u64 now, bool with_stack)
{
	struct pgoff_record_u *ru = NULL;
	struct pgoff_record *r;
	bool query_lost = false;

	aggregate_interval(s, tgid, now - s->start_ns);
	if (want_episodes) {
		bool in_lock = th->lock_pair.start_ns, in_lw = th->lw_pair.start_ns;

		if (in_lw)
			pair_switch_in(tgid, s, &th->lw, PAIR_LWLOCK,
				       PG_CLASS_LWLOCK, now);
		if (in_lock)	/* an LWLock wait inside is part of it */
			pair_switch_in(tgid, s, &th->e, PAIR_LOCK,
				       PG_CLASS_LOCK, now);
		if (!in_lock && !in_lw)
			episode_switch_in(tgid, s, &th->e, now);
	}
	if (!wanted(s, tgid, now))
		goto done;
	if (s->flags & PGOFF_F_QUERY) {
		if (send_with_query(s, th, task, pid, tgid, now, with_stack))
			goto done;
		query_lost = true;
		count(PGOFF_CNT_QUERY_FAIL);
	}
	if (s->flags & PGOFF_F_USTACK) {
		ru = bpf_ringbuf_reserve(&events, sizeof(*ru), 0);
		r = (struct pgoff_record *)ru;
	} else {
		r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	}
	if (!r) {
		count(PGOFF_CNT_RINGBUF_FULL);
		goto done;
	}
	fill(r, s, task, pid, tgid, now, with_stack);
	if (query_lost)
		r->flags = (r->flags & ~PGOFF_F_QUERY) | PGOFF_F_QUERY_LOST;
	if (ru)
		bpf_probe_read_kernel(&ru->u, sizeof(ru->u), &th->u);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	count(PGOFF_CNT_EVENTS);
done:
	query_drop(th, s->flags, pid);
}

static __always_inline void on_switch_in(struct task_struct *next, __u64 *clock,
					 bool btf)
{
	__u32 pid, tgid;
	struct pgoff_start *s;
	struct thread *th;

	if (!maybe_thread(TASK_FIELD(btf, next, pid)))
		return;
	pid = task_pid(next, btf);
	th = bpf_map_lookup_elem(&threads, &pid);
	if (!th)
		return;		/* not traced */
	s = &th->s;
	if (!s->start_ns) {	/* its switch-out was not seen */
		s->wake_flags = 0;	/* nor a wakeup's, then */
		return;
	}
	s->flags |= s->wake_flags;
	s->wake_flags = 0;
	tgid = task_tgid(next, btf);
	if (s->tgid != tgid) {	/* a pid reused: not the thread it was */
		thread_forget(pid, th);
		return;
	}
	interval_end(th, s, next, pid, tgid, switch_time(clock), btf);
	s->start_ns = 0;	/* on the CPU; the entry stays until exit */
}

/* The scheduler's count of switches to t (0 without CONFIG_SCHED_INFO). */
static __always_inline __u32 task_pcount(struct task_struct *t, bool btf)
{
	if (!bpf_core_field_exists(t->sched_info.pcount))
		return 0;
	return TASK_FIELD(btf, t, sched_info.pcount);
}

/*
 * When th's task, on this CPU now, came back onto it unseen, on our
 * clock; 0 if the scheduler cannot tell. It stamped the switch-in
 * (sched_info.last_arrival: CONFIG_SCHED_INFO, which /proc/PID/schedstat
 * needs) with its run queue's clock, and counted it (pcount): a count
 * that has not moved since the switch-out leaves the stamp an older
 * one's (it stamps only a switch-in it saw the task queued for). A
 * switch-out has just updated that clock (unless the update was skipped
 * for one just before; a uprobe sees it as of the last one, at most a
 * tick old): the difference is the time since on this CPU (a task
 * migrates only off a CPU), give or take a tick.
 */
static __always_inline __u64 unseen_switch_in(const struct thread *th,
					      struct task_struct *task,
					      __u64 start, __u64 now)
{
	struct rq *rq;
	__u64 arrival, clock, ran;

	if (!bpf_core_field_exists(task->sched_info.last_arrival) ||
	    !bpf_core_field_exists(struct sched_entity, cfs_rq) ||
	    !bpf_core_field_exists(struct cfs_rq, rq) ||
	    task_pcount(task, false) == th->pcount_out)
		return 0;
	rq = BPF_CORE_READ(task, se.cfs_rq, rq);	/* any class's: set_task_rq */
	clock = BPF_CORE_READ(rq, clock);
	arrival = BPF_CORE_READ(task, sched_info.last_arrival);
	if (!arrival || clock < arrival)
		return 0;
	ran = clock - arrival;
	return ran < now - start ? now - ran : 0;
}

/*
 * A thread on a CPU with its last interval still open: no sched_switch
 * reported its switch back (on some VMs the scheduler emits none when
 * it leaves a host agent's threads; test_runq). Closed now (at its next
 * switch-out or wait probe), ending when the scheduler says it came
 * back; failing that, a woken interval ends at its wakeup, its run-queue
 * part unknown, and one with neither is lost. Counted either way.
 *
 * Worked out from a copy, then claimed (a compare-and-swap of its
 * start), then closed: a wait probe may be preempted here, and the
 * switch-out that preempts it must find nothing to close twice and no
 * start to clobber; the probe's claim then fails. A woken interval's
 * WOKEN kept on_waking from rewriting the fields copied; it is cleared
 * before the claim, so that a wakeup racing the switch-out under way is
 * the next interval's. A probe preempted after its claim may still mix
 * the two intervals' episode, query text or user stack: a rare, narrow
 * window (a preemptible kernel, a switch-in unseen twice running).
 */
static __always_inline void switch_in_unseen(struct thread *th,
					     struct task_struct *task,
					     __u32 pid, __u32 tgid, __u64 now)
{
	struct pgoff_start *s = &th->s;
	struct pgoff_start c;
	__u64 start = s->start_ns, end;
	__u8 wake = s->wake_flags;
	bool woken = wake & PGOFF_F_WOKEN;

	if (!start || start >= now)
		return;		/* closed meanwhile */
	c = *s;
	end = c.tgid == tgid ? unseen_switch_in(th, task, start, now) : 0;
	if (end && woken && end < c.wake_ns)
		end = c.wake_ns;	/* the two clocks a hair apart */
	if (!end && woken && c.wake_ns > start && c.wake_ns <= now) {
		c.flags |= PGOFF_F_END_AT_WAKE;
		end = c.wake_ns;
	}
	if (woken) {
		s->wake_flags = 0;	/* its wakeup is in the copy */
		barrier();
	}
	if (__sync_val_compare_and_swap(&s->start_ns, start, 0) != start)
		return;
	if (c.tgid != tgid) {	/* a pid reused: not the thread it was */
		query_drop(th, c.flags, pid);
	} else if (!end) {
		count(PGOFF_CNT_SWITCH_IN_LOST);
		query_drop(th, c.flags, pid);
	} else {
		count(PGOFF_CNT_SWITCH_IN_UNSEEN);
		c.flags |= wake | PGOFF_F_SWITCH_IN_UNSEEN;
		interval_end(th, &c, task, pid, tgid, end, false);
	}
}

/*
 * prev is current here: its user memory is the backend's. Every interval
 * is started, also with nobody subscribed: a DBA who starts watching a
 * stuck backend must see the wait that is already going on end.
 */
static __always_inline void on_switch_out(void *ctx, struct task_struct *prev,
					  bool preempt, __u64 *clock, bool btf)
{
	__u64 id = task_pid_tgid(prev, btf);	/* prev is current */
	__u32 tgid = id >> 32, pid = (__u32)id;
	struct pgoff_target *t;
	struct pgoff_start s = {};
	struct thread *th;
	bool own;
	__u64 now;

	if (!maybe_target(tgid))
		return;
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t)
		return;
	/* past sched_process_exit: an entry made now would outlive it */
	if (TASK_FIELD(btf, prev, flags) & PF_EXITING)
		return;
	count(PGOFF_CNT_SWITCHES);
	th = thread_get(t, pid, TASK_FIELD(btf, prev, pid));
	if (!th)
		return;
	now = switch_time(clock);
	if (th->s.start_ns)
		switch_in_unseen(th, prev, pid, tgid, now);
	th->pcount_out = task_pcount(prev, btf);
	s.tgid = tgid;
	s.cluster = t->cluster;
	/* preempted, prev stays runnable whatever its state says: it may
	 * have been on its way to sleep (state set, schedule() not reached) */
	s.state = preempt ? PGOFF_AGG_RUNQ : agg_state(task_state(prev, btf));
	if (s.state == PGOFF_AGG_RUNQ) {
		s.flags |= PGOFF_F_PREEMPTED;
		s.syscall = PGOFF_AGG_NO_SYSCALL;
	} else {
		s.syscall = current_syscall(btf ? prev : NULL);
	}
	if (!owner_runs(prev, t, btf)) {
		s.flags |= PGOFF_F_PG_NOT_OWNER;
		count(PGOFF_CNT_NOT_OWNER);
		goto read_done;
	}
	if (t->flags & PGOFF_T_TITLE_PENDING)
		send_title(prev, t, tgid, title_whole(&s), btf);
	/* the status entry first: whether it is the backend's own says
	 * whether the wait event's pointer may be kept */
	own = t->status_ptr &&
	      read_status(prev, t, &th->status_entry, &th->status_pid, &s,
			  true);
	if (!t->wait_event_ptr)
		s.flags |= PGOFF_F_PG_NO_SYMBOL;
	else if (read_wait_event(t->wait_event_ptr, &th->wait_event_at, own,
				 &s.pg_wait_event_info))
		s.flags |= PGOFF_F_PG_WAIT;
	else
		count(PGOFF_CNT_PG_READ_FAIL);
	if (!want_query || !(s.flags & PGOFF_F_PG_STATUS))
		drop_kept_query(pid, th);
	if (!(s.flags & PGOFF_F_PG_STATUS)) {
		if (t->query_ptr)
			s.flags |= save_query(pid, t->query_ptr);
	} else if ((s.flags & PGOFF_F_IN_STATEMENT) && t->query_ptr) {
		/* the entry said a statement runs: its text, if wanted */
		s.flags |= want_query ? keep_query(pid, th, t->query_ptr,
						   s.changecount) :
					PGOFF_F_QUERY_UNSEEN;
		if (want_query_texts && s.query_id)
			save_query_text(&s, t->query_ptr);
	}
	if (want_ustack && ustack_wanted(&s, tgid))
		s.flags |= save_ustack(ctx, t, &th->u);
read_done:
	pair_switch_out(pid, th, &s);
	if (want_episodes)
		episode_switch_out(pid, tgid, &s, &th->e, now,
				   th->lock_pair.start_ns || th->lw_pair.start_ns);
	/*
	 * Published by start_ns, written last (compiler barriers; x86 keeps
	 * stores in order). The wakeup's fields are not written here: a
	 * wakeup on another CPU during this switch, with prev already off
	 * its runqueue, was recorded by sched_waking before the start was
	 * published, and belongs to this interval (on_waking).
	 */
	th->s.start_ns = 0;
	barrier();
	th->s.tgid = s.tgid;
	th->s.cluster = s.cluster;
	th->s.pg_wait_event_info = s.pg_wait_event_info;
	th->s.flags = s.flags;
	th->s.syscall = s.syscall;
	th->s.state = s.state;
	th->s.query_id = s.query_id;
	th->s.changecount = s.changecount;
	th->s.pg_state = s.pg_state;
	barrier();
	th->s.start_ns = now;
}

struct sched_entity___delayed {	/* 6.12 on: a build host's may lack it */
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));

/*
 * Whether p, on a CPU, is switching out to wait: taken off its runqueue,
 * or left on it by a delayed dequeue (EEVDF, 6.12 on) until picked.
 */
static __always_inline bool blocking(struct task_struct *p, bool btf)
{
	struct sched_entity___delayed *se;

	if (!TASK_FIELD(btf, p, on_rq))
		return true;
	if (!bpf_core_field_exists(struct sched_entity___delayed, sched_delayed))
		return false;
	se = (struct sched_entity___delayed *)&p->se;
	return btf ? se->sched_delayed : BPF_CORE_READ(se, sched_delayed);
}

/*
 * Runs in the waker's context: current is the waker (for a wakeup from
 * an interrupt, the task it interrupted).
 */
static __always_inline void on_waking(struct task_struct *p, bool btf)
{
	__u8 wake = PGOFF_F_WOKEN;
	struct task_struct *cur = NULL;	/* the waker: typed (btf) */
	struct pgoff_start *s;
	__u64 start;
	struct pgoff_target *t;
	struct thread *th;
	__u32 pid;
	__u64 id;

	/* most wakees are not PostgreSQL: one array read, nothing else */
	if (!maybe_thread(TASK_FIELD(btf, p, pid)))
		return;
	pid = task_pid(p, btf);
	th = bpf_map_lookup_elem(&threads, &pid);
	if (!th)
		return;
	s = &th->s;
	/*
	 * No start published: p is on a CPU. Still queued, it has not
	 * blocked, and this wakeup keeps it running (no interval follows).
	 * Off its runqueue (or left on it by a delayed dequeue), it is
	 * inside its switch-out, and this wakeup belongs to the interval
	 * that starts at once: recorded here in fields the switch-out
	 * leaves alone. (Also after a switch-out not traced: the switch-in
	 * clears it.) Wakeups of one task are serialized (its pi_lock).
	 */
	start = s->start_ns;
	if (!start && !blocking(p, btf))
		return;
	barrier();
	/* (flags are the last interval's until the start is published) */
	if ((s->wake_flags & PGOFF_F_WOKEN) ||
	    (start && (s->flags & PGOFF_F_PREEMPTED)))
		return;		/* the first wakeup is the one */
	/*
	 * Stamped here, not taken from the scheduler's run_delay at
	 * switch-in: that starts when the wakee is queued, and a wakeup
	 * sent to an idle CPU is queued only once that CPU takes it (an
	 * IPI; on a VM up to ms while the host is busy), time that would
	 * count as blocked after the waker had acted.
	 */
	s->wake_ns = bpf_ktime_get_ns();
	/*
	 * The typed current, one call, gives the ids, comm and (a traced
	 * waker) its credentials by loads. comm in two loads: the helper's
	 * string copy took about 50 of this program's 250 ns
	 * (results-floor.md). comm's last byte is always NUL; a rename
	 * racing the copy may mix two names, as it may with the helper.
	 */
	if (btf) {
		cur = bpf_get_current_task_btf();
		id = task_pid_tgid(cur, true);
		__builtin_memcpy(s->waker_comm, cur->comm, sizeof(s->waker_comm));
	} else {
		id = current_pid_tgid();
		bpf_get_current_comm(s->waker_comm, sizeof(s->waker_comm));
	}
	s->waker_pid = (__u32)id;
	s->waker_tgid = id >> 32;
	/* only wakeups of waiting targets get here: the lookup is rare */
	if (!maybe_target(s->waker_tgid) ||
	    !(t = bpf_map_lookup_elem(&targets, &s->waker_tgid)))
		goto done;
	wake |= PGOFF_F_WAKER_TRACED;
	if (t->wait_event_ptr &&
	    owner_runs(btf ? cur : (struct task_struct *)bpf_get_current_task(),
		       t, btf) &&
	    read_pg_u32(t->wait_event_ptr, &s->waker_pg_wait_event_info))
		wake |= PGOFF_F_WAKER_PG_WAIT;
done:
	barrier();	/* the fields first: WOKEN says they are valid */
	s->wake_flags = wake;
}

/*
 * A forked PostgreSQL process is traced from its first switch, within
 * its user's quota. Its title is read once PostgreSQL has set it.
 */
static __always_inline void on_fork(struct task_struct *parent,
				    struct task_struct *child)
{
	__u32 ptgid = task_tgid(parent, false);
	__u32 ctgid = task_tgid(child, false);
	struct pgoff_target *t, c;
	struct pgoff_quota *q;
	__u64 *n;
	__u32 slot;

	if (ptgid == ctgid)
		return;		/* a new thread, same process */
	t = bpf_map_lookup_elem(&targets, &ptgid);
	if (!t)
		return;
	c = *t;
	slot = c.quota;
	q = bpf_map_lookup_elem(&quotas, &slot);
	n = target_slot(ctgid);
	if (!n || !q || !quota_take(&q->procs, q->max_procs))
		return;
	c.flags = (c.flags & ~PGOFF_T_TITLE_GUESSED) | PGOFF_T_TITLE_PENDING;
	/* counted first: a switch-out that sees the entry sees it too */
	__sync_fetch_and_add(n, 1);
	if (bpf_map_update_elem(&targets, &ctgid, &c, BPF_NOEXIST)) {
		__sync_fetch_and_add(n, -1);
		quota_give(slot, false);
		count(PGOFF_CNT_TARGET_FULL);
	}
}

/* A thread is no longer traced: its open episode is over. */
static __always_inline void thread_end(__u32 pid)
{
	struct thread *th = bpf_map_lookup_elem(&threads, &pid);

	if (th) {
		if (th->s.start_ns)	/* back on a CPU unseen, then exits */
			count(PGOFF_CNT_SWITCH_IN_LOST);
		if (want_episodes && th->e.pair)
			pair_close(pid, &th->e, PAIR_LOCK, 0);
		else if (want_episodes && th->e.gen == episode_gen)
			episode_send(pid, &th->e);
		if (want_episodes)
			pair_close(pid, &th->lw, PAIR_LWLOCK, 0);
		thread_forget(pid, th);
	}
	bpf_map_delete_elem(&queries, &pid);
}

static __always_inline void on_exit(void)
{
	__u64 id = current_pid_tgid();
	__u32 pid = (__u32)id, tgid = id >> 32;

	thread_end(pid);
	/* a reused pid must never inherit a PostgreSQL identity */
	if (pid == tgid)
		target_forget(tgid);
}

/* After exec the process is no longer the postgres it was forked from. */
static __always_inline void on_exec(void)
{
	__u64 id = current_pid_tgid();
	__u32 tgid = id >> 32, pid = (__u32)id;

	target_forget(tgid);
	thread_end(pid);
}

/*
 * A wait begins (lock__wait__start, lwlock__wait__start): the one before
 * it is over, however little the thread left the CPU between them.
 */
static __always_inline void pair_start(struct task_struct *task, __u32 pid,
				       __u32 tgid, struct thread *th,
				       struct pg_pair *p, struct episode *e,
				       __u32 pair, const struct pgoff_target *t,
				       __u64 now)
{
	if (p->start_ns)	/* the last one ended in an ERROR: no DONE */
		pair_close(pid, e, pair, 0);
	if (th->e.gen == episode_gen && !th->e.pair) {
		episode_send(pid, &th->e);
		th->e.gen = 0;
	}
	p->start_ns = now;
	if (!want_episodes)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->start_ns = now;
	e->end_ns = now;
	e->cluster = t->cluster;
	e->tgid = tgid;
	e->gen = episode_gen;
	e->pair = pair;
	e->bounds = PGOFF_EP_START_PROBE;
	if (!owner_runs(task, t, true))
		return;
	/* an LWLock's event is set before its START; a lock's only once it
	 * sleeps (pair_switch_in) */
	if (pair == PAIR_LWLOCK && t->wait_event_ptr)
		read_pg_u32(t->wait_event_ptr, &e->pg_wait_event_info);
	/* the statement it waits in, even if it never leaves the CPU */
	if (t->status_ptr) {
		struct pgoff_start st = {};

		read_status(task, t, &th->status_entry, &th->status_pid, &st,
			    false);
		episode_status(e, &st);
	}
}

static __always_inline void pair_done(__u32 pid, struct pg_pair *p,
				      struct episode *e, __u32 pair, __u64 now)
{
	if (!p->start_ns)	/* its START came before the probe was attached */
		return;
	p->start_ns = 0;
	pair_close(pid, e, pair, now);
}

/*
 * Whether the cluster's LWLock STARTs are paused (usdt-max-rate): its
 * hits counted by the second; a second over the rate pauses them for a
 * quiet usdt_quiet_ns after it. Updates from several CPUs may race:
 * a second's count can be a little off, never the pause.
 */
static __always_inline bool lwlock_paused(__u32 cluster, __u64 now)
{
	struct pgoff_usdt_rate *r = bpf_map_lookup_elem(&usdt_rates, &cluster);
	__u64 sec = now / 1000000000ULL;

	if (!r) {
		struct pgoff_usdt_rate fresh = { .second = sec };

		bpf_map_update_elem(&usdt_rates, &cluster, &fresh, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&usdt_rates, &cluster);
		if (!r)
			return false;
	}
	if (r->second != sec) {
		if (r->hits > usdt_max_rate) {
			if (r->paused_until_ns <= now)
				r->pauses++;
			r->last_over_hits = r->hits;
			r->paused_until_ns = (r->second + 1) * 1000000000ULL +
					     usdt_quiet_ns;
		}
		r->second = sec;
		r->hits = 0;
	}
	__sync_fetch_and_add(&r->hits, 1);
	return r->paused_until_ns > now;
}

/*
 * PostgreSQL's wait probes, one uprobe_multi link per binary (pgoffd,
 * broker/priv/usdt.c); the cookie says which (enum pgoff_usdt_kind). They
 * fire in every process of the binary: only traced ones count.
 */
SEC("uprobe")
int pg_usdt(struct pt_regs *ctx)
{
	/* one call for current: ids and credentials are loads from it */
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = task_pid_tgid(task, true), kind, now;
	__u32 tgid = id >> 32, pid = (__u32)id;
	struct pgoff_target *t;
	struct thread *th;

	/* a process not traced (another cluster's, a binary shared with
	 * one) costs the array slot only, as in the scheduler's hooks */
	if (!maybe_target(tgid) || !(t = bpf_map_lookup_elem(&targets, &tgid)))
		return 0;
	kind = bpf_get_attach_cookie(ctx);
	if (kind >= PGOFF_USDT__KINDS)
		return 0;
	now = bpf_ktime_get_ns();
	/* a paused START costs the rate's lookup and its count alone */
	if (kind == PGOFF_USDT_LWLOCK_START && usdt_max_rate &&
	    lwlock_paused(t->cluster, now)) {
		count(PGOFF_CNT_USDT_LWLOCK_PAUSED);
		return 0;
	}
	count(PGOFF_CNT_USDT_LOCK_START + (__u32)kind);
	th = thread_get(t, pid, task->pid);
	if (!th)
		return 0;
	/* its interval before the wait, if its end went unseen */
	if (th->s.start_ns)
		switch_in_unseen(th, task, pid, tgid, now);
	switch (kind) {
	case PGOFF_USDT_LOCK_START:
		pair_start(task, pid, tgid, th, &th->lock_pair, &th->e,
			   PAIR_LOCK, t, now);
		break;
	case PGOFF_USDT_LOCK_DONE:
		pair_done(pid, &th->lock_pair, &th->e, PAIR_LOCK, now);
		break;
	case PGOFF_USDT_LWLOCK_START:
		pair_start(task, pid, tgid, th, &th->lw_pair, &th->lw,
			   PAIR_LWLOCK, t, now);
		break;
	default:
		pair_done(pid, &th->lw_pair, &th->lw, PAIR_LWLOCK, now);
		break;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 clock = 0;	/* read by the first side that is traced */

	on_switch_out(ctx, prev, preempt, &clock, true);
	on_switch_in(next, &clock, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 clock = 0;	/* read by the first side that is traced */

	on_switch_out(ctx, prev, preempt, &clock, false);
	on_switch_in(next, &clock, false);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking_btf, struct task_struct *p)
{
	on_waking(p, true);
	return 0;
}

SEC("raw_tp/sched_waking")
int BPF_PROG(sched_waking_raw, struct task_struct *p)
{
	on_waking(p, false);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_fork_btf, struct task_struct *parent,
	     struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(sched_fork_raw, struct task_struct *parent,
	     struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_exit_btf)
{
	on_exit();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(sched_exit_raw)
{
	on_exit();
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_exec_btf)
{
	on_exec();
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(sched_exec_raw)
{
	on_exec();
	return 0;
}

/*
 * On each CPU every on-cpu-sample (a CPU clock perf event): the wait a
 * running traced backend is in. PostgreSQL's wait event spans a system
 * call that also runs on the CPU (a WAL fsync's writeback, a read copied
 * from the page cache); samplers of wait events (pg_wait_sampling, ASH)
 * count that time in the wait, and the scheduler's switches cannot see
 * it. A sample of a backend in a wait adds its period to the process's
 * row in state PGOFF_AGG_ON_CPU (made if need be): time only, as a
 * sample is no interval. No thread entry is made: a thread without one
 * (never off the CPU yet) is not sampled. The task is read untyped, so
 * this runs where tp_btf does not; an interrupt, so it reads the status
 * entry field by field onto its stack, not into the per-CPU scratch.
 * Only the backend itself counts, its main thread: another thread of its
 * process (an extension's, an io_uring worker) or a child that shares its
 * memory until exec (vfork, posix_spawn) would count its wait again.
 */
SEC("perf_event")
int on_cpu_tick(struct bpf_perf_event_data *ctx)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u64 id = task_pid_tgid(cur, false);
	__u32 tgid = id >> 32, pid = (__u32)id;
	struct pgoff_start s = {};
	struct pgoff_target *t;
	struct pgoff_agg *a;
	struct thread *th;
	bool own;

	if (!maybe_target(tgid))
		return 0;
	t = bpf_map_lookup_elem(&targets, &tgid);
	th = t ? bpf_map_lookup_elem(&threads, &pid) : NULL;
	if (pid != tgid || !th || !t->wait_event_ptr ||
	    (TASK_FIELD(false, cur, flags) &
	     (PF_EXITING | PF_IO_WORKER | PF_KTHREAD)) ||
	    TASK_FIELD(false, cur, vfork_done) ||
	    !owner_runs(cur, t, false))
		return 0;
	own = t->status_ptr &&
	      read_status(cur, t, &th->status_entry, &th->status_pid, &s,
			  false);
	if (t->status_ptr && !own)
		return 0;
	if (!read_wait_event(t->wait_event_ptr, &th->wait_event_at, own,
			     &s.pg_wait_event_info)) {
		count(PGOFF_CNT_PG_READ_FAIL);	/* a page not there, say */
		return 0;
	}
	if (!s.pg_wait_event_info)
		return 0;
	s.flags |= PGOFF_F_PG_WAIT;
	s.cluster = t->cluster;
	s.state = PGOFF_AGG_ON_CPU;
	s.syscall = PGOFF_AGG_NO_SYSCALL;
	a = agg_row_of(&s, tgid);
	if (!a)
		return 0;
	__sync_fetch_and_add(&a->total_ns, ctx->sample_period);
	count(PGOFF_CNT_ON_CPU_SAMPLES);
	return 0;
}
