// SPDX-License-Identifier: GPL-2.0-only
/*
 * syscall_wait.c - the kernel wait type of an aggregated off-CPU interval,
 * from what the sched_switch hook could know cheaply: the task state and
 * the system call the task was blocked in (no stack walk; the stacks of
 * streamed events are classified in classify.c, more precisely).
 */
#include <stddef.h>
#include <sys/syscall.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/classify.h"

struct syscall_rule {
	int nr;
	enum pgoff_wait wait;
	bool needs_disk;	/* only in uninterruptible sleep (D) */
};

/*
 * Only calls a PostgreSQL process blocks in. read/write-like calls are
 * I/O when the task sleeps uninterruptibly (the disk); in interruptible
 * sleep they wait on a pipe or socket, which says nothing more.
 */
static const struct syscall_rule rules[] = {
	{ SYS_futex, PGOFF_WAIT_LOCK, false },	/* POSIX semaphores */
	{ SYS_semop, PGOFF_WAIT_LOCK, false },
	{ SYS_semtimedop, PGOFF_WAIT_LOCK, false },
	{ SYS_flock, PGOFF_WAIT_LOCK, false },
#ifdef SYS_epoll_wait	/* not in asm-generic (arm64) */
	{ SYS_epoll_wait, PGOFF_WAIT_POLL, false },
#endif
	{ SYS_epoll_pwait, PGOFF_WAIT_POLL, false },
#ifdef SYS_epoll_pwait2
	{ SYS_epoll_pwait2, PGOFF_WAIT_POLL, false },
#endif
#ifdef SYS_poll	/* not in asm-generic (arm64) */
	{ SYS_poll, PGOFF_WAIT_POLL, false },
#endif
	{ SYS_ppoll, PGOFF_WAIT_POLL, false },
#ifdef SYS_select	/* not in asm-generic (arm64) */
	{ SYS_select, PGOFF_WAIT_POLL, false },	/* pg_usleep; refined by PG */
#endif
	{ SYS_pselect6, PGOFF_WAIT_POLL, false },
	{ SYS_nanosleep, PGOFF_WAIT_SLEEP, false },
	{ SYS_clock_nanosleep, PGOFF_WAIT_SLEEP, false },
	{ SYS_recvfrom, PGOFF_WAIT_NET, false },
	{ SYS_recvmsg, PGOFF_WAIT_NET, false },
	{ SYS_sendto, PGOFF_WAIT_NET, false },
	{ SYS_sendmsg, PGOFF_WAIT_NET, false },
	{ SYS_accept, PGOFF_WAIT_NET, false },
	{ SYS_accept4, PGOFF_WAIT_NET, false },
	{ SYS_connect, PGOFF_WAIT_NET, false },
	{ SYS_wait4, PGOFF_WAIT_IPC, false },
	{ SYS_waitid, PGOFF_WAIT_IPC, false },
#ifdef SYS_pause	/* not in asm-generic (arm64) */
	{ SYS_pause, PGOFF_WAIT_IPC, false },
#endif
	{ SYS_rt_sigsuspend, PGOFF_WAIT_IPC, false },
	{ SYS_rt_sigtimedwait, PGOFF_WAIT_IPC, false },
	{ SYS_read, PGOFF_WAIT_IO, true },
	{ SYS_pread64, PGOFF_WAIT_IO, true },
	{ SYS_readv, PGOFF_WAIT_IO, true },
	{ SYS_preadv, PGOFF_WAIT_IO, true },
	{ SYS_preadv2, PGOFF_WAIT_IO, true },
	{ SYS_write, PGOFF_WAIT_IO, true },
	{ SYS_pwrite64, PGOFF_WAIT_IO, true },
	{ SYS_writev, PGOFF_WAIT_IO, true },
	{ SYS_pwritev, PGOFF_WAIT_IO, true },
	{ SYS_pwritev2, PGOFF_WAIT_IO, true },
	{ SYS_fsync, PGOFF_WAIT_IO, false },
	{ SYS_fdatasync, PGOFF_WAIT_IO, false },
	{ SYS_sync_file_range, PGOFF_WAIT_IO, false },
	{ SYS_syncfs, PGOFF_WAIT_IO, false },
	{ SYS_fallocate, PGOFF_WAIT_IO, true },
	{ SYS_ftruncate, PGOFF_WAIT_IO, true },
	{ SYS_openat, PGOFF_WAIT_IO, true },
#ifdef SYS_unlink	/* not in asm-generic (arm64) */
	{ SYS_unlink, PGOFF_WAIT_IO, true },
#endif
	{ SYS_unlinkat, PGOFF_WAIT_IO, true },
#ifdef SYS_rename	/* not in asm-generic (arm64) */
	{ SYS_rename, PGOFF_WAIT_IO, true },
#endif
	{ SYS_renameat, PGOFF_WAIT_IO, true },
	{ SYS_newfstatat, PGOFF_WAIT_IO, true },
	{ SYS_getdents64, PGOFF_WAIT_IO, true },
	{ SYS_copy_file_range, PGOFF_WAIT_IO, true },
	{ SYS_io_uring_enter, PGOFF_WAIT_IO, false },
	{ SYS_io_getevents, PGOFF_WAIT_IO, false },
	{ SYS_mmap, PGOFF_WAIT_MEMORY, true },
	{ SYS_munmap, PGOFF_WAIT_MEMORY, true },
	{ SYS_mprotect, PGOFF_WAIT_MEMORY, true },
	{ SYS_madvise, PGOFF_WAIT_MEMORY, true },
	{ SYS_brk, PGOFF_WAIT_MEMORY, true },
	{ SYS_mremap, PGOFF_WAIT_MEMORY, true },
};

enum pgoff_wait pgoff_classify_syscall(int nr, unsigned int state)
{
	bool disk = state == PGOFF_AGG_DISK;

	if (state == PGOFF_AGG_RUNQ)
		return PGOFF_WAIT_CPU;
	if (state == PGOFF_AGG_ON_CPU)
		return PGOFF_WAIT_ON_CPU;
	if (nr == PGOFF_AGG_NO_SYSCALL)	/* a page fault: swap-in, reclaim, mapped file */
		return disk ? PGOFF_WAIT_MEMORY : PGOFF_WAIT_OTHER;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].nr == nr)
			return !rules[i].needs_disk || disk ? rules[i].wait :
							      PGOFF_WAIT_OTHER;
	return PGOFF_WAIT_OTHER;
}
