/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_classify.c - kernel stack -> wait type, and the PostgreSQL refinement.
 *
 * Stacks are leaf first. Where a comment says "real", the stack was
 * recorded on Linux 6.18 (x86_64, ext4 without journal), either
 *  - from /proc/PID/stack of a blocked process ("/proc form": the same
 *    walk bpf_get_task_stack does, without .sched.text frames), or
 *  - with perf record -e sched:sched_switch -g ("switch form": the task's
 *    own stack at the switch, __schedule and schedule on top);
 * PostgreSQL ones from a PostgreSQL 15.18 cluster with pg_stat_activity
 * showing the wait event. Other stacks are written from the kernel sources.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/kernel/classify.h"
#include "tests/unit/check.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define CLASSIFY(st) pgoff_classify_stack((st), N(st), false)

/* PostgreSQL wait_event_info values (class in the high byte). */
#define PG_LWLOCK_WALWRITE	0x01000000u
#define PG_LOCK_TRANSACTIONID	0x03000005u
#define PG_BUFFERPIN		0x04000000u
#define PG_ACTIVITY_AUTOVAC	0x05000000u
#define PG_CLIENT_READ		0x06000000u
#define PG_CLIENT_WRITE		0x06000001u
#define PG_EXTENSION		0x07000000u
#define PG_IPC_BGWORKER		0x08000000u
#define PG_TIMEOUT_PGSLEEP	0x09000001u
#define PG_TIMEOUT_VACDELAY	0x09000005u
#define PG_IO_WALSYNC		0x0A000000u
#define PG_INJECTION_POINT	0x0B000000u

/* --- real stacks, /proc form --- */

/*
 * real: PostgreSQL backend waiting on a row lock (Lock/transactionid);
 * the same stack for an idle client (Client/ClientRead), pg_sleep
 * (Timeout/PgSleep) and the idle autovacuum launcher (Activity).
 */
static const char *const pg_latch[] = {
	"do_epoll_wait", "__x64_sys_epoll_wait", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: PostgreSQL 15 pg_usleep() = select(), in Timeout/VacuumDelay */
static const char *const pg_usleep_select[] = {
	"poll_schedule_timeout.constprop.0", "do_select", "core_sys_select",
	"do_pselect.constprop.0", "__x64_sys_pselect6", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: python3 threading.Event().wait() */
static const char *const futex_proc[] = {
	"futex_do_wait", "__futex_wait", "futex_wait", "do_futex",
	"__x64_sys_futex", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* real: python3 time.sleep() (clock_nanosleep; do_nanosleep is __sched) */
static const char *const nanosleep_proc[] = {
	"hrtimer_nanosleep", "common_nsleep_timens",
	"__x64_sys_clock_nanosleep", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: cat reading an empty pipe; python3 writing a full one */
static const char *const pipe_read_proc[] = {
	"anon_pipe_read", "vfs_read", "ksys_read", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

static const char *const pipe_write_proc[] = {
	"anon_pipe_write", "vfs_write", "ksys_write", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: recv() on a unix socketpair */
static const char *const unix_recv_proc[] = {
	"unix_stream_read_generic", "unix_stream_recvmsg", "sock_recvmsg",
	"__sys_recvfrom", "__x64_sys_recvfrom", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: recv() on a loopback TCP socket (wait_woken is generic) */
static const char *const tcp_recv_proc[] = {
	"wait_woken", "sk_wait_data", "tcp_recvmsg_locked", "tcp_recvmsg",
	"sock_recvmsg", "__sys_recvfrom", "__x64_sys_recvfrom",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* real: accept() on a listening TCP socket */
static const char *const tcp_accept_proc[] = {
	"inet_csk_accept", "inet_accept", "do_accept", "__sys_accept4",
	"__x64_sys_accept4", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* real: bash waiting for its child */
static const char *const waitpid_proc[] = {
	"do_wait", "kernel_wait4", "__do_sys_wait4", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: signal.sigtimedwait(), signal.pause(), SysV semop() */
static const char *const sigtimedwait_proc[] = {
	"do_sigtimedwait.isra.0", "__x64_sys_rt_sigtimedwait",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

static const char *const pause_proc[] = {
	"__do_sys_pause", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

static const char *const semop_proc[] = {
	"__do_semtimedop", "do_semtimedop", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: poll() and epoll_wait() in python3 */
static const char *const poll_proc[] = {
	"poll_schedule_timeout.constprop.0", "do_sys_poll", "__x64_sys_poll",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* --- real stacks, switch form --- */

/* real: PostgreSQL backend in LWLock wait (WALWrite) under commit load */
static const char *const pg_lwlock_futex[] = {
	"__schedule", "schedule", "futex_do_wait", "__futex_wait",
	"futex_wait", "do_futex", "__x64_sys_futex", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: PostgreSQL WAL fdatasync, waiting for writeback */
static const char *const pg_fdatasync_wb[] = {
	"__schedule", "schedule", "io_schedule", "folio_wait_bit",
	"folio_wait_writeback", "__filemap_fdatawait_range",
	"file_write_and_wait_range", "generic_buffers_fsync_noflush",
	"ext4_fsync_nojournal.constprop.0", "ext4_sync_file", "do_fsync",
	"__x64_sys_fdatasync", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: PostgreSQL WAL fdatasync, waiting for the cache flush */
static const char *const pg_fdatasync_flush[] = {
	"__schedule", "schedule", "schedule_timeout", "io_schedule_timeout",
	"wait_for_completion_io_timeout", "submit_bio_wait",
	"blkdev_issue_flush", "ext4_sync_file", "do_fsync",
	"__x64_sys_fdatasync", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: fsync writing the inode's buffer */
static const char *const fsync_inode_buffer[] = {
	"__schedule", "schedule", "io_schedule", "bit_wait_io",
	"__wait_on_bit", "out_of_line_wait_on_bit", "__sync_dirty_buffer",
	"ext4_write_inode", "__writeback_single_inode",
	"writeback_single_inode", "sync_inode_metadata",
	"generic_buffers_fsync_noflush", "ext4_fsync_nojournal.constprop.0",
	"ext4_sync_file", "do_fsync", "__x64_sys_fsync", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: pread() of a page not in the page cache */
static const char *const pread_uncached[] = {
	"__schedule", "schedule", "io_schedule", "folio_wait_bit_common",
	"filemap_get_pages", "filemap_read", "vfs_read", "__x64_sys_pread64",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* real: touching an mmap()ed file page not in the page cache */
static const char *const file_fault[] = {
	"__schedule", "schedule", "io_schedule", "folio_wait_bit_common",
	"filemap_fault", "__do_fault", "do_fault", "__handle_mm_fault",
	"handle_mm_fault", "exc_page_fault", "asm_exc_page_fault",
};

/* real: sleep 1 (coreutils) */
static const char *const nanosleep_switch[] = {
	"__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep",
	"common_nsleep", "__x64_sys_clock_nanosleep", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* real: a page fault waiting for mmap_lock held by a munmap() thread */
static const char *const mmap_lock_fault[] = {
	"__schedule", "schedule", "schedule_preempt_disabled",
	"rwsem_down_read_slowpath", "down_read_killable",
	"lock_mm_and_find_vma", "exc_page_fault", "asm_exc_page_fault",
};

/* real: mmap() waiting for mmap_lock held by a faulting thread */
static const char *const mmap_lock_mmap[] = {
	"__schedule", "schedule", "schedule_preempt_disabled",
	"rwsem_down_write_slowpath", "down_write_killable", "vm_mmap_pgoff",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* real: preempted by an interrupt while running in user space */
static const char *const preempt_irq[] = {
	"__schedule", "schedule", "irqentry_exit_to_user_mode",
	"asm_common_interrupt",
};

/* real: PostgreSQL open() waiting on a parallel dentry lookup */
static const char *const pg_dalloc[] = {
	"__schedule", "schedule", "d_alloc_parallel", "path_openat",
	"do_filp_open", "do_sys_openat2", "__x64_sys_openat",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* --- stacks written from the kernel sources --- */

/* ext4 with a journal (data=ordered): fsync waits for the jbd2 commit */
static const char *const fsync_jbd2[] = {
	"jbd2_log_wait_commit", "jbd2_complete_transaction",
	"ext4_fsync_journal", "ext4_sync_file", "vfs_fsync_range",
	"do_fsync", "__x64_sys_fdatasync", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* xfs fsync forcing the log */
static const char *const fsync_xfs[] = {
	"xlog_wait_on_iclog", "xfs_log_force_seq", "xfs_file_fsync",
	"vfs_fsync_range", "do_fsync", "__x64_sys_fsync", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* 6.1-era names: futex_wait_queue, pipe_read, wait_on_page_bit_common */
static const char *const futex_61[] = {
	"__schedule", "schedule", "futex_wait_queue", "futex_wait",
	"do_futex", "__x64_sys_futex", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

static const char *const pipe_read_61[] = {
	"pipe_read", "vfs_read", "ksys_read", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/*
 * real: io_uring_enter(GETEVENTS) waiting for a completion, as PostgreSQL
 * 18's io_method=io_uring does for a read (pgaio_uring_wait_one)
 */
static const char *const io_uring_wait[] = {
	"io_cqring_wait", "__do_sys_io_uring_enter", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

static const char *const pread_515[] = {
	"io_schedule", "wait_on_page_bit_common", "filemap_get_pages",
	"filemap_read", "ext4_file_read_iter", "vfs_read",
	"__x64_sys_pread64", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* i_rwsem contended by two writers of one file: a kernel lock wait */
static const char *const i_rwsem_write[] = {
	"__schedule", "schedule", "schedule_preempt_disabled",
	"rwsem_down_write_slowpath", "down_write", "ext4_buffered_write_iter",
	"vfs_write", "__x64_sys_pwrite64", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* a pipe's mutex held by another writer: the pipe says ipc */
static const char *const pipe_mutex[] = {
	"__schedule", "schedule", "schedule_preempt_disabled",
	"__mutex_lock.constprop.0", "anon_pipe_write", "vfs_write",
	"ksys_write", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
};

/* swap-in: the folio lock and the bio wait serve a fault on swap */
static const char *const swapin_lock[] = {
	"io_schedule", "folio_wait_bit_common", "__folio_lock_or_retry",
	"do_swap_page", "__handle_mm_fault", "handle_mm_fault",
	"exc_page_fault", "asm_exc_page_fault",
};

static const char *const swapin_zram[] = {
	"submit_bio_wait", "swap_read_folio_bdev_sync", "swap_read_folio",
	"do_swap_page", "__handle_mm_fault", "handle_mm_fault",
	"exc_page_fault", "asm_exc_page_fault",
};

/* direct reclaim waiting for writeback while allocating */
static const char *const reclaim_wb[] = {
	"io_schedule", "folio_wait_bit", "folio_wait_writeback",
	"shrink_folio_list", "shrink_lruvec", "shrink_node",
	"do_try_to_free_pages", "try_to_free_pages",
	"__alloc_pages_slowpath.constprop.0", "__alloc_frozen_pages_noprof",
	"alloc_pages_mpol", "folio_alloc_mpol_noprof", "do_anonymous_page",
	"__handle_mm_fault", "handle_mm_fault", "exc_page_fault",
	"asm_exc_page_fault",
};

/* dirty throttling in a buffered write */
static const char *const dirty_throttle[] = {
	"balance_dirty_pages", "balance_dirty_pages_ratelimited_flags",
	"generic_perform_write", "ext4_buffered_write_iter", "vfs_write",
	"__x64_sys_pwrite64", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* switch form as a BPF program sees it: prog, trampoline, tracepoint */
static const char *const bpf_epoll[] = {
	"bpf_prog_6deef7357e7b4530_on_switch", "bpf_trace_run4",
	"__bpf_trace_sched_switch", "__traceiter_sched_switch", "__schedule",
	"schedule", "schedule_hrtimeout_range_clock", "do_epoll_wait",
	"__x64_sys_epoll_wait", "do_syscall_64",
	"entry_SYSCALL_64_after_hwframe",
};

/* --- names --- */

static void test_names(void)
{
	static const char *const want[PGOFF_WAIT__COUNT] = {
		"other", "lock", "io", "net", "poll", "sleep", "ipc",
		"memory", "cpu", "on_cpu",
	};
	enum pgoff_wait w, got;

	for (w = PGOFF_WAIT_OTHER; w < PGOFF_WAIT__COUNT; w++) {
		CHECK_STR(pgoff_wait_name(w), want[w]);
		got = PGOFF_WAIT__COUNT;
		CHECK(pgoff_wait_parse(want[w], &got) == 0);
		CHECK(got == w);
	}
	CHECK_STR(pgoff_wait_name(PGOFF_WAIT__COUNT), "unknown");
	CHECK_STR(pgoff_wait_name((enum pgoff_wait)-1), "unknown");
}

static void test_parse_bad(void)
{
	enum pgoff_wait got = PGOFF_WAIT_CPU;

	CHECK(pgoff_wait_parse("", &got) == -EINVAL);
	CHECK(pgoff_wait_parse("IO", &got) == -EINVAL);
	CHECK(pgoff_wait_parse("io ", &got) == -EINVAL);
	CHECK(pgoff_wait_parse("i", &got) == -EINVAL);
	CHECK(pgoff_wait_parse("unknown", &got) == -EINVAL);
	CHECK(pgoff_wait_parse("memoryx", &got) == -EINVAL);
	CHECK(pgoff_wait_parse(NULL, &got) == -EINVAL);
	CHECK(pgoff_wait_parse("io", NULL) == -EINVAL);
	CHECK(got == PGOFF_WAIT_CPU);	/* untouched on error */
}

/* --- skip --- */

static void test_skip_switch_form(void)
{
	CHECK(pgoff_stack_skip(pg_lwlock_futex, N(pg_lwlock_futex)) == 2);
	CHECK(pgoff_stack_skip(nanosleep_switch, N(nanosleep_switch)) == 2);
	/* schedule_preempt_disabled is machinery, rwsem_* is not */
	CHECK(pgoff_stack_skip(mmap_lock_fault, N(mmap_lock_fault)) == 3);
	/* io_schedule and schedule_timeout say something: kept */
	CHECK(pgoff_stack_skip(pread_uncached, N(pread_uncached)) == 2);
	CHECK(pgoff_stack_skip(pg_fdatasync_flush,
			       N(pg_fdatasync_flush)) == 2);
	CHECK(pgoff_stack_skip(bpf_epoll, N(bpf_epoll)) == 6);
	CHECK_STR(bpf_epoll[6], "schedule_hrtimeout_range_clock");
}

static void test_skip_proc_form(void)
{
	CHECK(pgoff_stack_skip(pg_latch, N(pg_latch)) == 0);
	CHECK(pgoff_stack_skip(futex_proc, N(futex_proc)) == 0);
	CHECK(pgoff_stack_skip(pread_515, N(pread_515)) == 0);
	CHECK(pgoff_stack_skip(pg_latch, 0) == 0);
	CHECK(pgoff_stack_skip(NULL, 3) == 0);
}

static void test_skip_variants(void)
{
	static const char *const preempt[] = {
		"__schedule", "preempt_schedule_irq", "irqentry_exit",
		"asm_sysvec_apic_timer_interrupt",
	};
	static const char *const cond[] = {
		"__schedule", "__cond_resched", "generic_perform_write",
	};
	static const char *const suffixed[] = {
		"finish_task_switch.isra.0", "__switch_to_asm",
		"__schedule+0x628/0x1500", "schedule.cold", "do_select",
	};
	static const char *const unnamed_prog[] = {
		NULL, "bpf_trace_run4", "__bpf_trace_sched_switch",
		"__schedule", "schedule", "do_nanosleep",
	};
	static const char *const unnamed_leaf[] = {
		NULL, "do_nanosleep", "hrtimer_nanosleep",
	};
	static const char *const null_after[] = {
		"__schedule", "schedule", NULL, "pipe_read",
	};
	static const char *const all[] = { "__schedule", "schedule" };
	static const char *const keep[] = {
		"schedule_timeout", "schedule_hrtimeout_range", "io_schedule",
	};
	/* a scheduler-ish name that is not the scheduler */
	static const char *const lookalike[] = {
		"schedule_work", "__schedule", "schedule",
	};

	CHECK(pgoff_stack_skip(preempt, N(preempt)) == 2);
	CHECK(pgoff_stack_skip(cond, N(cond)) == 2);
	CHECK(pgoff_stack_skip(suffixed, N(suffixed)) == 4);
	CHECK(pgoff_stack_skip(unnamed_prog, N(unnamed_prog)) == 5);
	CHECK(pgoff_stack_skip(unnamed_leaf, N(unnamed_leaf)) == 0);
	/* a NULL after the last machinery frame stays for the caller */
	CHECK(pgoff_stack_skip(null_after, N(null_after)) == 2);
	CHECK(pgoff_stack_skip(all, N(all)) == 2);
	CHECK(pgoff_stack_skip(keep, N(keep)) == 0);
	CHECK(pgoff_stack_skip(lookalike, N(lookalike)) == 0);
}

/* --- classify --- */

static void test_pg_latch_is_poll(void)
{
	CHECK(CLASSIFY(pg_latch) == PGOFF_WAIT_POLL);
	CHECK(CLASSIFY(bpf_epoll) == PGOFF_WAIT_POLL);
	CHECK(pgoff_classify_stack(bpf_epoll + 6, N(bpf_epoll) - 6, false) ==
	      PGOFF_WAIT_POLL);
}

static void test_pg_latch_refined(void)
{
	enum pgoff_wait k = CLASSIFY(pg_latch);

	CHECK(pgoff_wait_refine(k, PG_LOCK_TRANSACTIONID, false) == PGOFF_WAIT_LOCK);
	/* waiting for the next command is idle; waiting to send is net */
	CHECK(pgoff_wait_refine(k, PG_CLIENT_READ, false) == PGOFF_WAIT_POLL);
	/* mid-statement (COPY FROM STDIN): the client is slow to send */
	CHECK(pgoff_wait_refine(k, PG_CLIENT_READ, true) == PGOFF_WAIT_NET);
	CHECK(pgoff_wait_refine(k, PG_TIMEOUT_PGSLEEP, true) == PGOFF_WAIT_SLEEP);
	CHECK(pgoff_wait_refine(k, PG_CLIENT_WRITE, false) == PGOFF_WAIT_NET);
	CHECK(pgoff_wait_refine(k, PG_TIMEOUT_PGSLEEP, false) == PGOFF_WAIT_SLEEP);
	CHECK(pgoff_wait_refine(k, PG_ACTIVITY_AUTOVAC, false) == PGOFF_WAIT_POLL);
	CHECK(pgoff_wait_refine(k, 0, false) == PGOFF_WAIT_POLL);
}

static void test_pg_usleep(void)
{
	enum pgoff_wait k = CLASSIFY(pg_usleep_select);

	CHECK(k == PGOFF_WAIT_POLL);
	CHECK(pgoff_wait_refine(k, PG_TIMEOUT_VACDELAY, false) == PGOFF_WAIT_SLEEP);
	CHECK(CLASSIFY(poll_proc) == PGOFF_WAIT_POLL);
}

static void test_futex(void)
{
	CHECK(CLASSIFY(futex_proc) == PGOFF_WAIT_LOCK);
	CHECK(CLASSIFY(pg_lwlock_futex) == PGOFF_WAIT_LOCK);
	CHECK(CLASSIFY(futex_61) == PGOFF_WAIT_LOCK);
	/* a specific kernel mechanism is not overridden by PostgreSQL */
	CHECK(pgoff_wait_refine(CLASSIFY(pg_lwlock_futex),
				PG_LWLOCK_WALWRITE, false) == PGOFF_WAIT_LOCK);
	CHECK(pgoff_wait_refine(CLASSIFY(pg_lwlock_futex),
				PG_CLIENT_READ, false) == PGOFF_WAIT_LOCK);
}

static void test_sleep(void)
{
	CHECK(CLASSIFY(nanosleep_proc) == PGOFF_WAIT_SLEEP);
	CHECK(CLASSIFY(nanosleep_switch) == PGOFF_WAIT_SLEEP);
}

static void test_ipc(void)
{
	CHECK(CLASSIFY(pipe_read_proc) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(pipe_write_proc) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(pipe_read_61) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(pipe_mutex) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(waitpid_proc) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(sigtimedwait_proc) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(pause_proc) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(semop_proc) == PGOFF_WAIT_IPC);
}

static void test_net(void)
{
	CHECK(CLASSIFY(unix_recv_proc) == PGOFF_WAIT_NET);
	CHECK(CLASSIFY(tcp_recv_proc) == PGOFF_WAIT_NET);
	CHECK(CLASSIFY(tcp_accept_proc) == PGOFF_WAIT_NET);
}

static void test_io(void)
{
	CHECK(CLASSIFY(pg_fdatasync_wb) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(pg_fdatasync_flush) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(fsync_inode_buffer) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(fsync_jbd2) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(fsync_xfs) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(pread_uncached) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(pread_515) == PGOFF_WAIT_IO);
	CHECK(CLASSIFY(io_uring_wait) == PGOFF_WAIT_IO);
	/* fault-in of a file page is io, not memory */
	CHECK(CLASSIFY(file_fault) == PGOFF_WAIT_IO);
}

static void test_memory(void)
{
	CHECK(CLASSIFY(mmap_lock_fault) == PGOFF_WAIT_MEMORY);
	CHECK(CLASSIFY(mmap_lock_mmap) == PGOFF_WAIT_MEMORY);
	CHECK(CLASSIFY(swapin_lock) == PGOFF_WAIT_MEMORY);
	CHECK(CLASSIFY(swapin_zram) == PGOFF_WAIT_MEMORY);
	CHECK(CLASSIFY(reclaim_wb) == PGOFF_WAIT_MEMORY);
	CHECK(CLASSIFY(dirty_throttle) == PGOFF_WAIT_MEMORY);
}

static void test_kernel_lock(void)
{
	static const char *const plain_mutex[] = {
		"__mutex_lock.constprop.0", "mutex_lock", NULL,
		"some_driver_ioctl", "__x64_sys_ioctl",
	};
	/* mutex_lock_io comes before the mutex_lock prefix in the table */
	static const char *const mutex_io[] = {
		"mutex_lock_io", "some_driver_fn",
	};

	CHECK(CLASSIFY(i_rwsem_write) == PGOFF_WAIT_LOCK);
	CHECK(CLASSIFY(plain_mutex) == PGOFF_WAIT_LOCK);
	CHECK(CLASSIFY(mutex_io) == PGOFF_WAIT_IO);
}

/*
 * A stack of a sleeping task (bpf_get_task_stack) lacks the .sched.text
 * frames; it must classify as the same stack taken at the switch.
 */
static bool in_sched_text(const char *f)
{
	static const char *const sched_text[] = {
		"__schedule", "schedule", "schedule_preempt_disabled",
		"schedule_timeout", "io_schedule", "io_schedule_timeout",
		"wait_for_completion_io_timeout", "bit_wait_io",
		"__wait_on_bit",
		"out_of_line_wait_on_bit", "do_nanosleep",
		"rwsem_down_read_slowpath", "rwsem_down_write_slowpath",
		"down_read_killable", "down_write_killable", "down_write",
		"__mutex_lock.constprop.0", "schedule_hrtimeout_range_clock",
	};
	size_t i;

	for (i = 0; i < N(sched_text); i++)
		if (strcmp(f, sched_text[i]) == 0)
			return true;
	return false;
}

static void test_proc_form_agrees(void)
{
	static const struct {
		const char *const *st;
		size_t n;
	} cases[] = {
		{ pg_lwlock_futex, N(pg_lwlock_futex) },
		{ pg_fdatasync_wb, N(pg_fdatasync_wb) },
		{ pg_fdatasync_flush, N(pg_fdatasync_flush) },
		{ fsync_inode_buffer, N(fsync_inode_buffer) },
		{ pread_uncached, N(pread_uncached) },
		{ file_fault, N(file_fault) },
		{ nanosleep_switch, N(nanosleep_switch) },
		{ mmap_lock_fault, N(mmap_lock_fault) },
		{ mmap_lock_mmap, N(mmap_lock_mmap) },
		{ pipe_mutex, N(pipe_mutex) },
		{ bpf_epoll, N(bpf_epoll) },
	};
	const char *proc[32];
	size_t c, i, m;

	for (c = 0; c < N(cases); c++) {
		for (i = m = 0; i < cases[c].n; i++)
			if (!in_sched_text(cases[c].st[i]) &&
			    strncmp(cases[c].st[i], "bpf_", 4) != 0 &&
			    strncmp(cases[c].st[i], "__bpf_", 6) != 0 &&
			    strncmp(cases[c].st[i], "__traceiter_", 12) != 0)
				proc[m++] = cases[c].st[i];
		CHECK(m < cases[c].n);
		CHECK(pgoff_classify_stack(proc, m, false) ==
		      pgoff_classify_stack(cases[c].st, cases[c].n, false));
	}
}

static void test_preempted(void)
{
	CHECK(pgoff_classify_stack(preempt_irq, N(preempt_irq), true) ==
	      PGOFF_WAIT_CPU);
	/* preempted wins over whatever the stack says */
	CHECK(pgoff_classify_stack(pg_latch, N(pg_latch), true) ==
	      PGOFF_WAIT_CPU);
	CHECK(pgoff_classify_stack(NULL, 0, true) == PGOFF_WAIT_CPU);
	/* not preempted, but nothing in it says why */
	CHECK(CLASSIFY(preempt_irq) == PGOFF_WAIT_OTHER);
}

static void test_other_and_refine(void)
{
	enum pgoff_wait k = CLASSIFY(pg_dalloc);

	CHECK(k == PGOFF_WAIT_OTHER);
	CHECK(pgoff_wait_refine(k, PG_IO_WALSYNC, false) == PGOFF_WAIT_IO);
	CHECK(pgoff_wait_refine(k, 0, false) == PGOFF_WAIT_OTHER);
}

static void test_null_frames(void)
{
	static const char *const nulls[] = { NULL, NULL, NULL };
	static const char *const leading[] = {
		NULL, NULL, "do_epoll_wait", "__x64_sys_epoll_wait",
	};
	static const char *const between[] = {
		"wait_woken", NULL, "sk_wait_data", "tcp_recvmsg",
	};

	CHECK(CLASSIFY(nulls) == PGOFF_WAIT_OTHER);
	CHECK(CLASSIFY(leading) == PGOFF_WAIT_POLL);
	CHECK(CLASSIFY(between) == PGOFF_WAIT_NET);
	CHECK(pgoff_classify_stack(NULL, 4, false) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_classify_stack(pg_latch, 0, false) == PGOFF_WAIT_OTHER);
}

static void test_suffixes(void)
{
	static const char *const cases[][2] = {
		{ "futex_wait_queue.isra.0", "lock" },
		{ "do_select.cold", "poll" },
		{ "filemap_fault.constprop.0.isra.0", "io" },
		{ "do_nanosleep.part.0", "sleep" },
		{ "core_sys_select.cold", "poll" },
		{ "jbd2_log_wait_commit.cold", "io" },
		{ "pipe_read+0x1c/0x2a0", "ipc" },
		{ "xfs_log_force_seq [xfs]", "io" },
		{ "sigsuspend.isra.0", "ipc" },
		{ "tcp_recvmsg_locked.cold", "net" },
		{ "__alloc_pages_slowpath.constprop.0", "memory" },
		{ "__folio_lock_or_retry.llvm.123", "io" },
		/* exact rules must not match longer names */
		{ "do_selective", "other" },
		{ "do_wait_intr", "other" },
		{ "futex", "other" },
		{ "do_futexes", "other" },
		{ "ep_poll_callback", "other" },
		{ "", "other" },
	};
	size_t i;

	for (i = 0; i < N(cases); i++)
		CHECK_STR(pgoff_wait_name(pgoff_classify_stack(&cases[i][0], 1,
							       false)),
			  cases[i][1]);
}

static void test_leaf_first(void)
{
	/* a specific rule nearer the leaf decides over one further up */
	static const char *const pipe_then_poll[] = {
		"anon_pipe_read", "do_epoll_wait",
	};
	static const char *const poll_then_pipe[] = {
		"do_epoll_wait", "anon_pipe_read",
	};
	/* a generic wait with no specific caller keeps its own type */
	static const char *const bare_folio[] = {
		"folio_wait_bit_common", "mystery_fn",
	};

	CHECK(CLASSIFY(pipe_then_poll) == PGOFF_WAIT_IPC);
	CHECK(CLASSIFY(poll_then_pipe) == PGOFF_WAIT_POLL);
	CHECK(CLASSIFY(bare_folio) == PGOFF_WAIT_IO);
}

/* --- refine --- */

static void test_refine_generic(void)
{
	static const struct {
		uint32_t info;
		enum pgoff_wait want;
	} cases[] = {
		{ PG_LWLOCK_WALWRITE, PGOFF_WAIT_LOCK },
		{ PG_LOCK_TRANSACTIONID, PGOFF_WAIT_LOCK },
		{ PG_BUFFERPIN, PGOFF_WAIT_LOCK },
		{ PG_CLIENT_READ, PGOFF_WAIT_POLL },
		{ PG_CLIENT_WRITE, PGOFF_WAIT_NET },
		{ PG_IO_WALSYNC, PGOFF_WAIT_IO },
		{ PG_TIMEOUT_PGSLEEP, PGOFF_WAIT_SLEEP },
		{ PG_IPC_BGWORKER, PGOFF_WAIT_IPC },
		{ PG_ACTIVITY_AUTOVAC, PGOFF_WAIT_POLL },
		{ 0x0A00002Au, PGOFF_WAIT_IO },	/* low bits are the event */
	};
	size_t i;

	for (i = 0; i < N(cases); i++) {
		CHECK(pgoff_wait_refine(PGOFF_WAIT_POLL, cases[i].info, false) ==
		      cases[i].want);
		CHECK(pgoff_wait_refine(PGOFF_WAIT_OTHER, cases[i].info, false) ==
		      cases[i].want);
	}
}

static void test_refine_keeps(void)
{
	static const uint32_t infos[] = {
		0, PG_LWLOCK_WALWRITE, PG_LOCK_TRANSACTIONID, PG_BUFFERPIN,
		PG_ACTIVITY_AUTOVAC, PG_CLIENT_READ, PG_EXTENSION,
		PG_IPC_BGWORKER, PG_TIMEOUT_PGSLEEP, PG_IO_WALSYNC,
		PG_INJECTION_POINT, 0xFF000000u,
	};
	enum pgoff_wait w;
	size_t i;

	/* a specific kernel mechanism stands, whatever PostgreSQL says */
	for (w = PGOFF_WAIT_LOCK; w < PGOFF_WAIT__COUNT; w++) {
		if (w == PGOFF_WAIT_POLL)
			continue;
		for (i = 0; i < N(infos); i++)
			CHECK(pgoff_wait_refine(w, infos[i], false) == w);
	}
	/* no wait event, or a class without a meaning here: unchanged */
	CHECK(pgoff_wait_refine(PGOFF_WAIT_POLL, 0, false) == PGOFF_WAIT_POLL);
	CHECK(pgoff_wait_refine(PGOFF_WAIT_OTHER, 0, false) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_wait_refine(PGOFF_WAIT_POLL, PG_EXTENSION, false) ==
	      PGOFF_WAIT_POLL);
	CHECK(pgoff_wait_refine(PGOFF_WAIT_OTHER, PG_INJECTION_POINT, false) ==
	      PGOFF_WAIT_OTHER);
	CHECK(pgoff_wait_refine(PGOFF_WAIT_OTHER, 0x02000000u, false) ==
	      PGOFF_WAIT_OTHER);
}

/*
 * An episode: PostgreSQL's class where it says what the wait is; the
 * kernel's view of its longest interval where it does not, or on a
 * socket (dblink, postgres_fdw: never "other").
 */
static void test_episode_wait(void)
{
	/* a dblink or postgres_fdw call waiting for its remote server */
	CHECK(pgoff_episode_wait(PGOFF_WAIT_POLL, PG_EXTENSION | 2, true) ==
	      PGOFF_WAIT_POLL);
	CHECK(pgoff_episode_wait(PGOFF_WAIT_NET, PG_EXTENSION | 2, true) ==
	      PGOFF_WAIT_NET);
	CHECK(pgoff_episode_wait(PGOFF_WAIT_POLL, PG_INJECTION_POINT | 1,
				 true) == PGOFF_WAIT_POLL);
	CHECK(pgoff_episode_wait(PGOFF_WAIT_NET, PG_IPC_BGWORKER, true) ==
	      PGOFF_WAIT_NET);
	/* where the class says it, the class stands */
	CHECK(pgoff_episode_wait(PGOFF_WAIT_LOCK, PG_IO_WALSYNC, false) ==
	      PGOFF_WAIT_IO);	/* AIO's completion, a futex */
	CHECK(pgoff_episode_wait(PGOFF_WAIT_CPU, PG_LOCK_TRANSACTIONID,
				 true) == PGOFF_WAIT_LOCK);
	CHECK(pgoff_episode_wait(PGOFF_WAIT_POLL, PG_CLIENT_READ, false) ==
	      PGOFF_WAIT_POLL);
	CHECK(pgoff_episode_wait(PGOFF_WAIT_POLL, PG_TIMEOUT_PGSLEEP, true) ==
	      PGOFF_WAIT_SLEEP);
	/* nothing says anything: other */
	CHECK(pgoff_episode_wait(PGOFF_WAIT_OTHER, PG_EXTENSION, true) ==
	      PGOFF_WAIT_OTHER);
}

/* The two views disagreeing is worth a flag; agreeing or silent is not. */
static void test_mismatch(void)
{
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_IO, true, 0) != NULL);
	CHECK(strstr(pgoff_wait_mismatch(PGOFF_WAIT_IO, true, 0),
		     "uninstrumented I/O"));
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_IO, true, PG_IO_WALSYNC) == NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_IO, true,
				  PG_LOCK_TRANSACTIONID) != NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_IO, false, 0) == NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_LOCK, true, 0) != NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_LOCK, true,
				  PG_LWLOCK_WALWRITE) == NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_POLL, true, 0) == NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_CPU, true, 0) == NULL);
	CHECK(pgoff_wait_mismatch(PGOFF_WAIT_OTHER, true, 0) == NULL);
}

/* Idle time as ASH counts it: waiting for work, or between statements. */
static void test_idle(void)
{
	CHECK(pgoff_wait_idle("checkpointer", 0x05000009, true, false));
	CHECK(pgoff_wait_idle(NULL, 0x05000001, false, false));	/* Activity */
	CHECK(pgoff_wait_idle("postmaster", 0, false, false));
	CHECK(pgoff_wait_idle("client backend", 0x06000000, true, false));
	CHECK(!pgoff_wait_idle("client backend", 0x06000000, true, true));	/* COPY FROM STDIN */
	CHECK(!pgoff_wait_idle("client backend", 0x06000000, false, false));	/* 13: not known */
	CHECK(!pgoff_wait_idle("client backend", 0x03000004, true, true));	/* a lock */
	CHECK(!pgoff_wait_idle("checkpointer", 0x0A00001C, true, false));	/* its I/O */
	CHECK(!pgoff_wait_idle(NULL, 0, true, false));
	CHECK(!pgoff_wait_idle("autovacuum worker", 0, true, false));
}

int main(void)
{
	RUN(test_mismatch);
	RUN(test_names);
	RUN(test_parse_bad);
	RUN(test_skip_switch_form);
	RUN(test_skip_proc_form);
	RUN(test_skip_variants);
	RUN(test_pg_latch_is_poll);
	RUN(test_pg_latch_refined);
	RUN(test_pg_usleep);
	RUN(test_futex);
	RUN(test_sleep);
	RUN(test_ipc);
	RUN(test_net);
	RUN(test_io);
	RUN(test_memory);
	RUN(test_kernel_lock);
	RUN(test_proc_form_agrees);
	RUN(test_preempted);
	RUN(test_other_and_refine);
	RUN(test_null_frames);
	RUN(test_suffixes);
	RUN(test_leaf_first);
	RUN(test_refine_generic);
	RUN(test_refine_keeps);
	RUN(test_episode_wait);
	RUN(test_idle);
	return CHECK_DONE();
}
