/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * classify.c - kernel stack -> wait type, refined by PostgreSQL's wait event.
 *
 * Stacks reach us two ways and the rules must work for both:
 *  - taken of a sleeping task (bpf_get_task_stack on the task switched in,
 *    like /proc/PID/stack): the kernel drops every frame in .sched.text /
 *    .spinlock.text (stack_trace_save_tsk -> in_sched_functions), so
 *    schedule*, io_schedule*, mutex_lock, down_read, rwsem_*_slowpath,
 *    wait_for_completion*, bit_wait_io, do_nanosleep, ... never appear and
 *    the leaf is their caller;
 *  - taken of the running task at the switch: those frames are present,
 *    under __schedule/schedule and perhaps BPF/tracepoint frames.
 * Hence the generic sleeping primitives are "weak" rules: they only name
 * the mechanism, and a specific rule further up (the caller, which is the
 * leaf in the first kind of stack) decides, so both kinds classify alike.
 */
#include <errno.h>
#include <string.h>

#include "broker/kernel/classify.h"
#include "broker/pg/pg_wait_names.h"

static const char *const wait_names[PGOFF_WAIT__COUNT] = {
	[PGOFF_WAIT_OTHER] = "other",
	[PGOFF_WAIT_LOCK] = "lock",
	[PGOFF_WAIT_IO] = "io",
	[PGOFF_WAIT_NET] = "net",
	[PGOFF_WAIT_POLL] = "poll",
	[PGOFF_WAIT_SLEEP] = "sleep",
	[PGOFF_WAIT_IPC] = "ipc",
	[PGOFF_WAIT_MEMORY] = "memory",
	[PGOFF_WAIT_CPU] = "cpu",
	[PGOFF_WAIT_ON_CPU] = "on_cpu",
};

const char *pgoff_wait_name(enum pgoff_wait w)
{
	if ((unsigned int)w >= PGOFF_WAIT__COUNT)
		return "unknown";
	return wait_names[w];
}

int pgoff_wait_parse(const char *name, enum pgoff_wait *out)
{
	unsigned int i;

	if (!name || !out)
		return -EINVAL;
	for (i = 0; i < PGOFF_WAIT__COUNT; i++) {
		if (strcmp(name, wait_names[i]) == 0) {
			*out = (enum pgoff_wait)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Length of the function name proper. C identifiers have no '.', so the
 * first '.' starts a compiler suffix (.isra.0, .constprop.0, .part.0,
 * .cold, .llvm.NNN); '+' starts an offset, ' ' a "[module]" tag.
 */
static size_t base_len(const char *s)
{
	return strcspn(s, ". +\t");
}

enum match_kind { EXACT, PREFIX };

struct name_pat {
	unsigned char kind;
	const char *s;
};

static bool pat_match(const struct name_pat *p, const char *name, size_t len)
{
	size_t plen = strlen(p->s);

	if (p->kind == EXACT ? len != plen : len < plen)
		return false;
	return memcmp(name, p->s, plen) == 0;
}

/* --- scheduler / BPF machinery, dropped from the top of a stack --- */

static const struct name_pat machinery[] = {
	/* the switch itself */
	{ EXACT, "__schedule" },
	{ EXACT, "schedule" },
	{ EXACT, "schedule_idle" },
	{ EXACT, "schedule_preempt_disabled" },
	{ EXACT, "schedule_rtlock" },
	{ EXACT, "__schedule_loop" },
	{ EXACT, "__cond_resched" },
	{ EXACT, "_cond_resched" },
	{ PREFIX, "preempt_schedule" },	/* _irq, _notrace, _common, _thunk */
	{ PREFIX, "finish_task_switch" },
	{ PREFIX, "__switch_to" },	/* __switch_to, __switch_to_asm */
	{ EXACT, "context_switch" },
	/* tracepoint -> BPF program (raw_tp, tp_btf, trampolines) */
	{ PREFIX, "__traceiter_" },
	{ PREFIX, "__bpf_trace_" },
	{ PREFIX, "bpf_" },		/* bpf_trace_run*, bpf_prog_* */
	{ PREFIX, "__bpf_" },
	{ EXACT, "trace_call_bpf" },
	{ PREFIX, "perf_trace_" },
	{ EXACT, "perf_tp_event" },
};

static bool is_machinery(const char *name)
{
	size_t len = base_len(name), i;

	for (i = 0; i < sizeof(machinery) / sizeof(machinery[0]); i++)
		if (pat_match(&machinery[i], name, len))
			return true;
	return false;
}

size_t pgoff_stack_skip(const char *const *frames, size_t n)
{
	size_t skip = 0, i;

	if (!frames)
		return 0;
	for (i = 0; i < n; i++) {
		if (!frames[i])
			continue;	/* kept unless machinery follows */
		if (!is_machinery(frames[i]))
			break;
		skip = i + 1;
	}
	return skip;
}

/* --- classification rules --- */

struct rule {
	struct name_pat pat;
	unsigned char type;
	bool weak;	/* names the mechanism; a specific caller wins */
};

#define R(kind, str, t)	{ { kind, str }, PGOFF_WAIT_##t, false }
#define W(kind, str, t)	{ { kind, str }, PGOFF_WAIT_##t, true }

/*
 * Scanned in order for each frame (leaf first); the first entry that
 * matches a frame is that frame's rule, so a specific name must come
 * before a broader prefix that also covers it.
 */
static const struct rule rules[] = {
	/*
	 * User-space locks: futex is what pthread mutexes/condvars and
	 * PostgreSQL's POSIX semaphores (LWLock waits) sleep in. 5.x:
	 * futex_wait_queue_me, 6.x: futex_wait_queue, 6.18: futex_do_wait.
	 */
	R(PREFIX, "futex_", LOCK),
	R(PREFIX, "__futex_", LOCK),
	R(EXACT, "do_futex", LOCK),

	/*
	 * Kernel sleeping locks: a lock wait, unless the caller says what
	 * the lock guards (mmap_lock in a fault -> memory, a pipe's mutex
	 * -> ipc, the journal -> io). All .sched.text, so weak by nature.
	 */
	W(EXACT, "mutex_lock_io", IO),		/* before "mutex_lock" */
	W(PREFIX, "mutex_lock", LOCK),
	W(PREFIX, "__mutex_lock", LOCK),
	W(PREFIX, "ww_mutex_lock", LOCK),
	W(PREFIX, "__ww_mutex_lock", LOCK),
	W(PREFIX, "rwsem_down_", LOCK),		/* read/write slowpaths */
	W(PREFIX, "down_", LOCK),		/* down_read*, down_write* */
	W(EXACT, "down", LOCK),
	W(PREFIX, "__down", LOCK),		/* semaphore slowpaths */
	W(PREFIX, "percpu_down_", LOCK),
	W(PREFIX, "__percpu_down_", LOCK),
	W(PREFIX, "rt_mutex_", LOCK),		/* PI futexes; PREEMPT_RT */
	W(PREFIX, "__rt_mutex_", LOCK),
	W(PREFIX, "rt_spin_lock", LOCK),
	W(PREFIX, "rtlock_", LOCK),
	W(PREFIX, "ldsem_down_", LOCK),
	W(PREFIX, "__vma_start_write", LOCK),	/* per-VMA lock (6.4+) */

	/*
	 * Generic io waits (page cache folio bits, buffer bits, bios, the
	 * block layer's tags and throttles): io, unless a caller says the io
	 * serves memory (swap-in, reclaim writeback).
	 */
	W(PREFIX, "io_schedule", IO),
	W(PREFIX, "folio_wait_", IO),		/* _bit*, _writeback */
	W(PREFIX, "__folio_lock", IO),		/* _killable, _or_retry */
	W(PREFIX, "wait_on_page_", IO),		/* 5.x: _bit*, _writeback */
	W(PREFIX, "__lock_page", IO),		/* 5.x: _killable, _or_retry */
	W(EXACT, "bit_wait_io", IO),
	W(PREFIX, "wait_for_completion_io", IO),
	W(EXACT, "submit_bio_wait", IO),
	W(PREFIX, "bio_await", IO),
	W(PREFIX, "blk_", IO),			/* blk_mq_get_tag, flushes */
	W(PREFIX, "__blk_", IO),
	W(PREFIX, "rq_qos_", IO),		/* writeback throttling */
	W(PREFIX, "__rq_qos_", IO),
	W(EXACT, "wbt_wait", IO),

	/*
	 * Specific io: page-cache reads and file faults, fsync/fdatasync
	 * (ext4 + jbd2 journal commit, xfs log force), buffer-head writes,
	 * network and FUSE file systems, io_uring completions (PostgreSQL
	 * 18's io_method=io_uring waits for its reads there).
	 */
	R(EXACT, "filemap_read", IO),
	R(EXACT, "filemap_get_pages", IO),
	R(EXACT, "filemap_fault", IO),
	R(PREFIX, "__xfs_filemap_fault", IO),
	R(PREFIX, "xfs_filemap_fault", IO),
	R(EXACT, "do_page_mkwrite", IO),	/* write fault, file mapping */
	R(PREFIX, "filemap_fdatawait", IO),
	R(PREFIX, "__filemap_fdatawait", IO),
	R(PREFIX, "file_fdatawait", IO),
	R(EXACT, "file_write_and_wait_range", IO),
	R(EXACT, "__wait_on_buffer", IO),
	R(EXACT, "wait_on_buffer", IO),
	R(PREFIX, "__sync_dirty_buffer", IO),
	R(PREFIX, "sync_dirty_buffer", IO),
	R(EXACT, "fsync_buffers_list", IO),
	R(PREFIX, "jbd2_", IO),		/* jbd2_log_wait_commit, ... */
	R(EXACT, "start_this_handle", IO),	/* waiting for journal space */
	R(EXACT, "wait_transaction_locked", IO),
	R(EXACT, "add_transaction_credits", IO),
	R(EXACT, "ext4_sync_file", IO),
	R(PREFIX, "ext4_fsync", IO),
	R(PREFIX, "xlog_wait", IO),		/* xlog_wait, _on_iclog */
	R(PREFIX, "xfs_log_force", IO),
	R(EXACT, "xfs_file_fsync", IO),
	R(EXACT, "blkdev_issue_flush", IO),
	R(EXACT, "vfs_fsync_range", IO),
	R(EXACT, "do_fsync", IO),
	R(PREFIX, "blkcg_maybe_throttle", IO),
	R(EXACT, "rpc_wait_bit_killable", IO),	/* NFS */
	R(EXACT, "__rpc_execute", IO),
	R(EXACT, "nfs_wait_bit_killable", IO),
	R(PREFIX, "fuse_", IO),
	R(PREFIX, "__fuse_", IO),
	R(EXACT, "request_wait_answer", IO),	/* FUSE */
	R(PREFIX, "io_cqring_wait", IO),

	/*
	 * Sockets: waiting for data, a connection, peer backlog or send
	 * buffer space. The send-buffer wait is net, not memory: it clears
	 * when the peer reads.
	 */
	R(EXACT, "sk_wait_data", NET),
	R(PREFIX, "sk_stream_wait_", NET),	/* _memory, _connect, _close */
	R(EXACT, "sock_wait_for_wmem", NET),
	R(PREFIX, "sock_alloc_send_", NET),
	R(PREFIX, "__skb_wait_for_more_packets", NET),	/* UDP, unix dgram */
	R(PREFIX, "__skb_recv_", NET),
	R(EXACT, "unix_stream_read_generic", NET),
	R(EXACT, "unix_stream_data_wait", NET),
	R(EXACT, "unix_wait_for_peer", NET),
	R(PREFIX, "unix_dgram_recvmsg", NET),
	R(PREFIX, "tcp_recvmsg", NET),		/* tcp_recvmsg, _locked */
	R(EXACT, "inet_csk_accept", NET),
	R(EXACT, "inet_csk_wait_for_connect", NET),
	R(EXACT, "inet_wait_for_connect", NET),
	R(EXACT, "__inet_stream_connect", NET),
	R(EXACT, "sock_recvmsg", NET),
	R(EXACT, "sock_sendmsg", NET),

	/*
	 * Readiness waits: an event loop waiting for "anything". For a
	 * PostgreSQL backend this is the latch, so the wait event class says
	 * what it really waits for (pgoff_wait_refine).
	 */
	R(EXACT, "ep_poll", POLL),
	R(PREFIX, "do_epoll_", POLL),		/* do_epoll_wait, _pwait */
	R(EXACT, "poll_schedule_timeout", POLL),
	R(EXACT, "do_select", POLL),
	R(PREFIX, "core_sys_select", POLL),
	R(EXACT, "do_pselect", POLL),
	R(EXACT, "do_sys_poll", POLL),
	R(EXACT, "do_poll", POLL),

	/* Timed sleeps: nanosleep/clock_nanosleep, in-kernel msleep/usleep. */
	R(EXACT, "do_nanosleep", SLEEP),
	R(PREFIX, "hrtimer_nanosleep", SLEEP),
	R(PREFIX, "common_nsleep", SLEEP),	/* common_nsleep_timens too */
	R(EXACT, "alarm_timer_nsleep", SLEEP),
	R(PREFIX, "posix_cpu_nsleep", SLEEP),
	R(EXACT, "do_cpu_nanosleep", SLEEP),
	R(PREFIX, "msleep", SLEEP),
	R(PREFIX, "usleep_range", SLEEP),

	/*
	 * Waiting on another process through a kernel IPC object: pipes and
	 * FIFOs (6.18: anon_pipe_*, fifo_pipe_*), SysV semaphores and
	 * message queues, POSIX mqueues, child exit, signals.
	 */
	R(PREFIX, "pipe_", IPC),	/* pipe_read/_write (older), _wait* */
	R(PREFIX, "anon_pipe_", IPC),
	R(PREFIX, "fifo_pipe_", IPC),
	R(EXACT, "wait_for_partner", IPC),	/* FIFO open */
	R(EXACT, "do_semtimedop", IPC),
	R(EXACT, "__do_semtimedop", IPC),
	R(EXACT, "do_msgsnd", IPC),
	R(EXACT, "do_msgrcv", IPC),
	R(PREFIX, "do_mq_timed", IPC),
	R(EXACT, "wq_sleep", IPC),
	R(EXACT, "do_wait", IPC),		/* wait4/waitpid/waitid */
	R(EXACT, "kernel_wait4", IPC),
	R(EXACT, "kernel_waitid", IPC),
	R(PREFIX, "sigsuspend", IPC),
	R(EXACT, "do_sigtimedwait", IPC),
	R(EXACT, "__do_sys_pause", IPC),
	R(EXACT, "sys_pause", IPC),
	R(EXACT, "eventfd_read", IPC),

	/*
	 * Memory: swap-in, direct reclaim and compaction, memcg limits,
	 * dirty-page throttling, page migration. A generic io or lock wait
	 * under these is memory pressure, not the application's io.
	 */
	R(EXACT, "do_swap_page", MEMORY),
	R(PREFIX, "swap_read", MEMORY),		/* swap_read_folio (6.10+) */
	R(PREFIX, "swap_readpage", MEMORY),
	R(PREFIX, "swapin_", MEMORY),
	R(PREFIX, "swap_cluster_readahead", MEMORY),
	R(PREFIX, "shmem_swapin", MEMORY),
	R(PREFIX, "__alloc_pages_slowpath", MEMORY),
	R(PREFIX, "__alloc_pages_direct_", MEMORY),
	R(PREFIX, "try_to_free_", MEMORY),	/* _pages, _mem_cgroup_pages */
	R(EXACT, "do_try_to_free_pages", MEMORY),
	R(PREFIX, "shrink_", MEMORY),
	R(EXACT, "throttle_direct_reclaim", MEMORY),
	R(EXACT, "reclaim_throttle", MEMORY),
	R(PREFIX, "try_to_compact_pages", MEMORY),
	R(PREFIX, "compact_zone", MEMORY),
	R(PREFIX, "mem_cgroup_handle_over_high", MEMORY),
	R(PREFIX, "__mem_cgroup_handle_over_high", MEMORY),
	R(PREFIX, "try_charge_memcg", MEMORY),
	R(PREFIX, "mem_cgroup_out_of_memory", MEMORY),
	R(PREFIX, "balance_dirty_pages", MEMORY),
	R(PREFIX, "migration_entry_wait", MEMORY),
	R(PREFIX, "mempool_alloc", MEMORY),

	/*
	 * mmap_lock, the address-space lock: a wait for it in a fault or an
	 * mmap/munmap/mprotect/madvise is memory management, not an
	 * application lock (a single-threaded backend only meets it against
	 * /proc readers, khugepaged and the like). Plain page-fault frames
	 * come last: reached only when nothing more specific is below them.
	 */
	R(EXACT, "lock_mm_and_find_vma", MEMORY),
	R(EXACT, "get_mmap_lock_carefully", MEMORY),
	R(EXACT, "vm_mmap_pgoff", MEMORY),
	R(PREFIX, "__vm_munmap", MEMORY),
	R(EXACT, "vm_munmap", MEMORY),
	R(EXACT, "do_mprotect_pkey", MEMORY),
	R(EXACT, "do_madvise", MEMORY),
	R(EXACT, "__mm_populate", MEMORY),
	R(EXACT, "do_user_addr_fault", MEMORY),
	R(EXACT, "exc_page_fault", MEMORY),
	R(EXACT, "do_page_fault", MEMORY),
	R(EXACT, "handle_mm_fault", MEMORY),
	R(EXACT, "__handle_mm_fault", MEMORY),
};

#undef R
#undef W

static const struct rule *find_rule(const char *name)
{
	size_t len = base_len(name), i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (pat_match(&rules[i].pat, name, len))
			return &rules[i];
	return NULL;
}

enum pgoff_wait pgoff_classify_stack(const char *const *frames, size_t n,
				     bool preempted)
{
	const struct rule *weak = NULL, *r;
	size_t i;

	if (preempted)
		return PGOFF_WAIT_CPU;
	if (!frames)
		return PGOFF_WAIT_OTHER;
	for (i = 0; i < n; i++) {
		if (!frames[i])
			continue;
		r = find_rule(frames[i]);
		if (!r)
			continue;
		if (!r->weak)
			return (enum pgoff_wait)r->type;
		if (!weak)
			weak = r;	/* the leafmost primitive */
	}
	return weak ? (enum pgoff_wait)weak->type : PGOFF_WAIT_OTHER;
}

bool pgoff_wait_idle(const char *backend_type, uint32_t pg_wait_event_info,
		     bool statement_known, bool in_statement)
{
	if (pg_wait_event_info >> 24 == 0x05)	/* Activity */
		return true;
	if (!backend_type)
		return false;
	if (strcmp(backend_type, "postmaster") == 0)
		return true;
	return strcmp(backend_type, "client backend") == 0 && statement_known &&
	       !in_statement;
}

enum pgoff_wait pgoff_wait_refine(enum pgoff_wait kernel,
				  uint32_t pg_wait_event_info, bool in_statement)
{
	/* Only a generic event wait needs PostgreSQL to say what it is. */
	if (kernel != PGOFF_WAIT_POLL && kernel != PGOFF_WAIT_OTHER)
		return kernel;

	switch (pg_wait_event_info >> 24) {
	case PG_CLASS_LWLOCK:
	case PG_CLASS_LOCK:
	case PG_CLASS_BUFFERPIN:
		return PGOFF_WAIT_LOCK;
	case PG_CLASS_CLIENT:
		/* ClientRead (id 0 in 14..17) between statements: idle */
		return (pg_wait_event_info & 0xFFFFFFu) == 0 && !in_statement ?
			       PGOFF_WAIT_POLL : PGOFF_WAIT_NET;
	case PG_CLASS_IO:
		return PGOFF_WAIT_IO;
	case PG_CLASS_TIMEOUT:
		return PGOFF_WAIT_SLEEP;
	case PG_CLASS_IPC:
		return PGOFF_WAIT_IPC;
	case PG_CLASS_ACTIVITY:
		return PGOFF_WAIT_POLL;
	default:	/* 0 (none), Extension, InjectionPoint, unknown */
		return kernel;
	}
}

enum pgoff_wait pgoff_episode_wait(enum pgoff_wait kernel,
				   uint32_t pg_wait_event_info,
				   bool in_statement)
{
	enum pgoff_wait pg = pgoff_wait_refine(PGOFF_WAIT_OTHER,
					       pg_wait_event_info, in_statement);

	return kernel == PGOFF_WAIT_NET || pg == PGOFF_WAIT_OTHER ? kernel : pg;
}

const char *pgoff_wait_mismatch(enum pgoff_wait kernel, bool pg_known,
				uint32_t pg_wait_event_info)
{
	if (!pg_known)
		return NULL;
	switch (kernel) {
	case PGOFF_WAIT_IO:
		if (!pg_wait_event_info)
			return "the kernel waited for I/O; PostgreSQL reported no "
			       "wait event (uninstrumented I/O)";
		if (pg_wait_event_info >> 24 != PG_CLASS_IO)
			return "the kernel waited for I/O under a PostgreSQL "
			       "wait event of another class";
		return NULL;
	case PGOFF_WAIT_LOCK:
	case PGOFF_WAIT_NET:
	case PGOFF_WAIT_SLEEP:
	case PGOFF_WAIT_MEMORY:
		if (!pg_wait_event_info)
			return "the kernel blocked in a specific mechanism; "
			       "PostgreSQL reported no wait event (uninstrumented)";
		return NULL;
	default:	/* poll, ipc, other: generic; cpu: preemption is anywhere */
		return NULL;
	}
}
