/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_syscall_wait.c - the kernel wait type of an aggregated interval,
 * from task state and system call, and its refinement by PostgreSQL.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/classify.h"
#include "tests/unit/check.h"

#define S PGOFF_AGG_SLEEP
#define D PGOFF_AGG_DISK

static void test_run_queue_is_cpu(void)
{
	CHECK(pgoff_classify_syscall(SYS_epoll_pwait, PGOFF_AGG_RUNQ) == PGOFF_WAIT_CPU);
	CHECK(pgoff_classify_syscall(PGOFF_AGG_NO_SYSCALL, PGOFF_AGG_RUNQ) ==
	      PGOFF_WAIT_CPU);
}

/* a sample of a running backend: on the CPU, whatever its wait event */
static void test_on_cpu_sample(void)
{
	CHECK(pgoff_classify_syscall(PGOFF_AGG_NO_SYSCALL, PGOFF_AGG_ON_CPU) ==
	      PGOFF_WAIT_ON_CPU);
	CHECK(pgoff_wait_refine(PGOFF_WAIT_ON_CPU, 0x0A000000u, true) ==
	      PGOFF_WAIT_ON_CPU);
}

static void test_postgres_calls(void)
{
	CHECK(pgoff_classify_syscall(SYS_epoll_pwait, S) == PGOFF_WAIT_POLL);
	CHECK(pgoff_classify_syscall(SYS_futex, S) == PGOFF_WAIT_LOCK);
	CHECK(pgoff_classify_syscall(SYS_semop, S) == PGOFF_WAIT_LOCK);
	CHECK(pgoff_classify_syscall(SYS_pselect6, S) == PGOFF_WAIT_POLL);
	CHECK(pgoff_classify_syscall(SYS_clock_nanosleep, S) == PGOFF_WAIT_SLEEP);
	CHECK(pgoff_classify_syscall(SYS_sendto, S) == PGOFF_WAIT_NET);
	CHECK(pgoff_classify_syscall(SYS_fdatasync, D) == PGOFF_WAIT_IO);
	CHECK(pgoff_classify_syscall(SYS_fdatasync, S) == PGOFF_WAIT_IO);
	CHECK(pgoff_classify_syscall(SYS_wait4, S) == PGOFF_WAIT_IPC);
	/* io_uring_enter(GETEVENTS) sleeps interruptibly for its completions */
	CHECK(pgoff_classify_syscall(SYS_io_uring_enter, S) == PGOFF_WAIT_IO);
}

/* read and write are disk I/O only in uninterruptible sleep */
static void test_read_write_need_disk(void)
{
	CHECK(pgoff_classify_syscall(SYS_pread64, D) == PGOFF_WAIT_IO);
	CHECK(pgoff_classify_syscall(SYS_read, D) == PGOFF_WAIT_IO);
	CHECK(pgoff_classify_syscall(SYS_read, S) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_classify_syscall(SYS_write, S) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_classify_syscall(SYS_openat, D) == PGOFF_WAIT_IO);
}

static void test_faults_and_unknown(void)
{
	CHECK(pgoff_classify_syscall(PGOFF_AGG_NO_SYSCALL, D) == PGOFF_WAIT_MEMORY);
	CHECK(pgoff_classify_syscall(PGOFF_AGG_NO_SYSCALL, S) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_classify_syscall(SYS_getpid, S) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_classify_syscall(30000, D) == PGOFF_WAIT_OTHER);
	CHECK(pgoff_classify_syscall(SYS_epoll_pwait, PGOFF_AGG_OTHER) ==
	      PGOFF_WAIT_POLL);
}

/* What top shows: the latch wait refined by PostgreSQL's class. */
static void test_refined_like_a_stack(void)
{
	enum pgoff_wait poll = pgoff_classify_syscall(SYS_epoll_pwait, S);

	CHECK(pgoff_wait_refine(poll, 0x03000005u, false) == PGOFF_WAIT_LOCK);
	CHECK(pgoff_wait_refine(poll, 0x06000000u, false) == PGOFF_WAIT_POLL);
	CHECK(pgoff_wait_refine(poll, 0x06000000u, true) == PGOFF_WAIT_NET);
	CHECK(pgoff_wait_refine(poll, 0x09000001u, false) == PGOFF_WAIT_SLEEP);
	CHECK(pgoff_wait_refine(pgoff_classify_syscall(SYS_pread64, D),
				0x06000000u, false) == PGOFF_WAIT_IO);
}

int main(void)
{
	RUN(test_run_queue_is_cpu);
	RUN(test_on_cpu_sample);
	RUN(test_postgres_calls);
	RUN(test_read_write_need_disk);
	RUN(test_faults_and_unknown);
	RUN(test_refined_like_a_stack);
	return CHECK_DONE();
}
