/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * postgres.bpf.h - PostgreSQL's own state, read from the traced process's memory: its
 * title, its wait_event_info, its status entry (statement, query id), and
 * the SQL it runs.
 * Part of offcpu.bpf.c (one BPF object), included in order.
 */
#ifndef PGOFF_POSTGRES_BPF_H
#define PGOFF_POSTGRES_BPF_H

#include "targets.bpf.h"
#include "aggregate.bpf.h"

/* "postgres: " starts every title PostgreSQL sets (ps_status.c). */
static __always_inline bool is_pg_title(const char *s)
{
	return s[0] == 'p' && s[1] == 'o' && s[2] == 's' && s[3] == 't' &&
	       s[4] == 'g' && s[5] == 'r' && s[6] == 'e' && s[7] == 's' &&
	       s[8] == ':' && s[9] == ' ';
}

/*
 * Whether a switch-out is a moment the title is whole. PostgreSQL writes
 * it in user space, byte by byte (init_ps_display): preempted or faulting
 * there, the process may show a torn title ("postgres: " and the rest of
 * its old argv). Blocked in a system call, it is not writing it. Where a
 * system call cannot be told (before 5.15), any sleep is trusted.
 */
static __always_inline bool title_whole(const struct pgoff_start *s)
{
	if (s->flags & PGOFF_F_PREEMPTED)
		return false;
	return s->syscall != PGOFF_AGG_NO_SYSCALL || !syscalls_told();
}

/*
 * A forked process's title, once PostgreSQL has set it (over argv, at
 * mm->arg_start). Before that the child still shows its postmaster's
 * command line. Read whole, it is sent and the target stops asking. Read
 * at a moment it may be torn, it is sent once as a first guess, so that a
 * process which lives only a moment is labelled, and the next whole read
 * replaces it.
 */
static __always_inline void send_title(struct task_struct *task,
				       struct pgoff_target *t, __u32 tgid,
				       bool whole, bool btf)
{
	struct pgoff_title *r;
	unsigned long arg;

	if (!whole && (t->flags & PGOFF_T_TITLE_GUESSED))
		return;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(PGOFF_CNT_RINGBUF_FULL);
		return;
	}
	arg = btf ? task->mm->arg_start : BPF_CORE_READ(task, mm, arg_start);
	if (bpf_probe_read_user_str(r->title, sizeof(r->title),
				    (void *)arg) <= 10 ||
	    !is_pg_title(r->title)) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return;
	}
	r->kind = PGOFF_REC_TITLE;
	r->tgid = tgid;
	r->cluster = t->cluster;
	r->pad = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	if (whole)
		t->flags &= ~PGOFF_T_TITLE_PENDING;
	else
		t->flags |= PGOFF_T_TITLE_GUESSED;
}

/* Read a uint32 through a pointer variable of the current process. */
static __always_inline bool read_pg_u32(__u64 var_addr, __u32 *out)
{
	__u64 ptr = 0;

	return bpf_probe_read_user(&ptr, sizeof(ptr), (void *)var_addr) == 0 &&
	       ptr && bpf_probe_read_user(out, sizeof(*out), (void *)ptr) == 0;
}

static __always_inline bool pg_class_wanted(__u32 info)
{
	__u32 class = PGOFF_PG_CLASS(info);

	return (pg_classes[PGOFF_PG_CLASS_WORD(class)] & PGOFF_PG_CLASS_BIT(class)) != 0;
}

/*
 * The running statement: debug_query_string, NULL between statements (so
 * an idle wait costs one 8-byte read); read only where the status entry
 * cannot say whether a statement runs, or for its text. The text is
 * copied only while someone may see SQL. Returns flags: PGOFF_F_IN_STATEMENT with one of
 * PGOFF_F_QUERY, _QUERY_LOST, _QUERY_UNSEEN; 0 outside a statement.
 */
static __always_inline __u32 save_query(__u32 pid, __u64 var_addr)
{
	__u32 zero = 0;
	__u64 str = 0;
	struct query *q;
	long n;

	if (bpf_probe_read_user(&str, sizeof(str), (void *)var_addr) || !str)
		return 0;
	if (!want_query)
		return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY_UNSEEN;
	q = bpf_map_lookup_elem(&query_scratch, &zero);
	if (!q)
		goto lost;
	n = bpf_probe_read_user_str(q->text, sizeof(q->text), (void *)str);
	if (n <= 0)
		goto lost;
	q->len = n - 1;
	if (bpf_map_update_elem(&queries, &pid, q, BPF_ANY))
		goto lost;
	return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY;
lost:
	count(PGOFF_CNT_QUERY_FAIL);
	return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY_LOST;
}

/*
 * The task's process id in its own (innermost) pid namespace: what
 * getpid() told it, and PostgreSQL keeps as its pid. Read once a thread.
 */
static __always_inline __u32 own_tgid(struct task_struct *task)
{
	struct pid *p = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid up;

	if (bpf_core_read(&up, sizeof(up), &p->numbers[level]))
		return 0;
	return up.nr;
}

/*
 * What the status entry says, from its fields: sets s as read_status
 * tells. An odd st_changecount: the backend is in the middle of writing
 * it (it was preempted there), so it says nothing now.
 */
static __always_inline void status_apply(const struct pgoff_target *t,
					 __u32 changecount, __u32 state,
					 __u64 query_id, struct pgoff_start *s)
{
	if ((changecount & 1) || state > PGOFF_AGG_PG_STATE_MASK ||
	    (t->status_ignored & (1u << state)))
		return;		/* or it says nothing (track_activities off) */
	s->flags |= PGOFF_F_PG_STATUS;
	s->changecount = changecount;
	s->pg_state = state;
	if (t->status_active & (1u << state)) {
		s->flags |= PGOFF_F_IN_STATEMENT;
		s->query_id = query_id;
	}
}

/* Whether the entry's layout (len: its length, read once) lets its
 * fields be read: within its length. */
static __always_inline bool status_layout_ok(const struct pgoff_target *t,
					     __u32 len)
{
	return len >= 8 && len <= PGOFF_STATUS_MAX &&
	       t->st_state_off <= len - 4 &&
	       (!t->st_query_id_off || t->st_query_id_off <= len - 8);
}

/*
 * The entry whole, in one read into the per-CPU scratch: for the
 * switch-out, which runs with interrupts off, so nothing else on its CPU
 * uses the scratch meanwhile. Returns whether it is pid's.
 */
static __always_inline bool status_read_whole(const struct pgoff_target *t,
					      __u64 entry, __u32 pid,
					      struct pgoff_start *s)
{
	__u32 soff = t->st_state_off, qoff = t->st_query_id_off, zero = 0;
	__u32 len = t->status_len;
	struct status_buf *b = bpf_map_lookup_elem(&status_scratch, &zero);

	/* the bounds on the values used, for the verifier */
	if (!b || !status_layout_ok(t, len) ||
	    len < 8 || len > PGOFF_STATUS_MAX ||
	    soff > PGOFF_STATUS_MAX - 4 || qoff > PGOFF_STATUS_MAX - 8 ||
	    bpf_probe_read_user(b->b, len, (void *)entry) ||
	    *(__u32 *)&b->b[4] != pid)
		return false;
	status_apply(t, *(__u32 *)&b->b[0], *(__u32 *)&b->b[soff],
		     qoff ? *(__u64 *)&b->b[qoff] : 0, s);
	return true;
}

/*
 * The same, each field read onto the stack: for a wait probe, which can
 * be preempted (by a switch-out that uses the scratch), and the tick, an
 * interrupt that can come into a wait probe's read. Three reads, not one:
 * fine where they are rare.
 */
static __always_inline bool status_read_fields(const struct pgoff_target *t,
					       __u64 entry, __u32 pid,
					       struct pgoff_start *s)
{
	__u32 head[2], state;	/* st_changecount, st_procpid */
	__u64 query_id = 0;
	__u32 qoff = t->st_query_id_off;

	if (!status_layout_ok(t, t->status_len) ||
	    bpf_probe_read_user(head, sizeof(head), (void *)entry) ||
	    head[1] != pid ||
	    bpf_probe_read_user(&state, sizeof(state),
				(void *)(entry + t->st_state_off)) ||
	    (qoff && bpf_probe_read_user(&query_id, sizeof(query_id),
					 (void *)(entry + qoff))))
		return false;
	status_apply(t, head[0], state, query_id, s);
	return true;
}

/*
 * The backend's own status entry (PgBackendStatus, which MyBEEntry points
 * to from the backend's start to its exit): st_changecount, which moves
 * at every statement's start and end, st_state, and the running
 * statement's query id. Trusted only while its st_procpid is the
 * backend's own pid: until the backend fills it, the slot holds its last
 * owner's. The entry's address is read once a thread (MyBEEntry is set
 * once). Sets PGOFF_F_PG_STATUS when read, and PGOFF_F_IN_STATEMENT when
 * a statement runs. Returns whether the entry was read and is the
 * backend's own (whatever it says). whole: read it in one (interrupts
 * off: status_read_whole), else field by field.
 */
static __always_inline bool read_status(struct task_struct *task,
					const struct pgoff_target *t,
					__u64 *entry, __u32 *entry_pid,
					struct pgoff_start *s, bool whole)
{
	if (!*entry) {
		__u64 p = 0;

		/* not set up yet, or never (the postmaster, the logger) */
		if (bpf_probe_read_user(&p, sizeof(p), (void *)t->status_ptr) ||
		    !p)
			return false;
		/* the pid first: the tick (an interrupt) may read them
		 * between two stores, and takes a set entry as whole */
		*entry_pid = own_tgid(task);
		barrier();
		*entry = p;
	}
	return whole ? status_read_whole(t, *entry, *entry_pid, s) :
		       status_read_fields(t, *entry, *entry_pid, s);
}

/*
 * The backend's wait event, through my_wait_event_info, which points
 * into its PGPROC from InitProcess to ProcKill. Its status entry is its
 * own (own: read_status) only inside that span: pgstat_bestart comes
 * after InitProcess, and at exit pgstat_beshutdown_hook (registered
 * later) runs before ProcKill. So while it is, the pointer read once is
 * still the one, and the wait event costs one read, not two; otherwise
 * both are read and nothing is kept. *at: the thread's kept pointer.
 */
static __always_inline bool read_wait_event(__u64 var_addr, __u64 *at,
					    bool own, __u32 *out)
{
	__u64 ptr = own ? *at : 0;

	if (!ptr) {
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)var_addr) ||
		    !ptr)
			return false;
		*at = own ? ptr : 0;
	}
	return bpf_probe_read_user(out, sizeof(*out), (void *)ptr) == 0;
}

/* A text kept for a statement goes (nobody may see SQL, or no status). */
static __always_inline void drop_kept_query(__u32 pid, struct thread *th)
{
	if (!th->query_kept)
		return;
	th->query_kept = 0;
	bpf_map_delete_elem(&queries, &pid);
}

/*
 * The running statement's text, read once a statement: st_changecount
 * (cc) moves at every statement's start and end, so while it is the one
 * the text was read at, the copy in `queries` is still the statement's,
 * and a switch-out in the middle of it makes no read, no copy and no
 * map update. The switch-in leaves a kept text in place.
 */
static __always_inline __u32 keep_query(__u32 pid, struct thread *th,
					__u64 var_addr, __u32 cc)
{
	__u32 f;

	if (th->query_kept && th->query_cc == cc)
		return PGOFF_F_IN_STATEMENT | PGOFF_F_QUERY;
	f = save_query(pid, var_addr);
	th->query_kept = (f & PGOFF_F_QUERY) != 0;
	th->query_cc = cc;
	return f;
}

/*
 * The running statement's text by its query id, if none is kept yet
 * (debug_query_string: the text of the statement the backend was sent,
 * as pg_stat_statements keeps it before normalizing).
 */
static __always_inline void save_query_text(const struct pgoff_start *s,
					    __u64 var_addr)
{
	struct pgoff_query_text_key k = {
		.query_id = s->query_id, .cluster = s->cluster,
	};
	__u32 zero = 0;
	__u64 str = 0;
	struct query *q;
	long n;

	if (bpf_map_lookup_elem(&query_texts, &k) ||
	    bpf_probe_read_user(&str, sizeof(str), (void *)var_addr) || !str ||
	    !(q = bpf_map_lookup_elem(&query_scratch, &zero)))
		return;
	n = bpf_probe_read_user_str(q->text, sizeof(q->text), (void *)str);
	if (n <= 0)
		return;
	q->len = n - 1;
	bpf_map_update_elem(&query_texts, &k, q, BPF_NOEXIST);
}

static __always_inline bool in_pg_wait(__u32 flags, __u32 info)
{
	return (flags & PGOFF_F_PG_WAIT) && info;
}

#endif
