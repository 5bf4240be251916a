/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * classify.h - what a PostgreSQL backend was waiting for while off the CPU.
 *
 * The kernel stack (symbolized, leaf first: frames[0] is nearest the
 * scheduler) says which kernel mechanism the task slept in; PostgreSQL's
 * wait_event_info says why, when the kernel mechanism is a generic event
 * wait (PostgreSQL waits for locks, clients, timeouts and most IPC on its
 * latch, i.e. in epoll_wait).
 */
#ifndef PGOFF_BROKER_CLASSIFY_H
#define PGOFF_BROKER_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pgoff_wait {
	PGOFF_WAIT_OTHER = 0,
	PGOFF_WAIT_LOCK,
	PGOFF_WAIT_IO,
	PGOFF_WAIT_NET,
	PGOFF_WAIT_POLL,
	PGOFF_WAIT_SLEEP,
	PGOFF_WAIT_IPC,
	PGOFF_WAIT_MEMORY,
	PGOFF_WAIT_CPU,
	PGOFF_WAIT_ON_CPU,	/* not off the CPU: on it inside a PostgreSQL
				 * wait, sampled (aggregation rows only) */
	PGOFF_WAIT__COUNT
};

/*
 * "other", "lock", "io", "net", "poll", "sleep", "ipc", "memory", "cpu",
 * "on_cpu";
 * a value outside the enum gives "unknown" (never NULL, safe to print).
 */
const char *pgoff_wait_name(enum pgoff_wait w);

/* Parse a name as above (exact, lower case): 0 and *out set, or -EINVAL. */
int pgoff_wait_parse(const char *name, enum pgoff_wait *out);

/*
 * Number of leading frames that are scheduler/BPF machinery and not the
 * reason for the wait (__schedule, schedule, preempt_schedule*,
 * schedule_preempt_disabled, __cond_resched, __traceiter_*, bpf_*,
 * finish_task_switch*, __switch_to*, ...): the caller drops them before
 * showing the stack. io_schedule*, schedule_timeout* and
 * schedule_hrtimeout* are kept: they say something. NULL (unsymbolized)
 * frames are dropped only when machinery follows them (an unnamed BPF
 * program above bpf_trace_run*).
 */
size_t pgoff_stack_skip(const char *const *frames, size_t n);

/*
 * Kernel-only view. preempted (the task was runnable when switched out)
 * gives CPU; otherwise frames are walked leaf first and the first frame
 * that matches a rule decides, except that a generic sleeping primitive
 * (mutex, rwsem, folio/bit wait, bio wait, ...) only says *how* the task
 * slept: a specific rule further up the stack says *why* and wins; with
 * none, the primitive's own type stands. No match => OTHER. NULL entries
 * (unknown symbols) are skipped. Compiler suffixes (".isra.0",
 * ".constprop.0", ".part.0", ".cold", ...) and "+0x.." offsets are
 * ignored.
 */
enum pgoff_wait pgoff_classify_stack(const char *const *frames, size_t n,
				     bool preempted);

/*
 * Kernel-only view of an aggregated interval (syscall_wait.c), where no
 * stack was walked: state is enum pgoff_agg_state, nr the system call
 * the task was blocked in or PGOFF_AGG_NO_SYSCALL. Run queue gives CPU;
 * futex and semaphores LOCK, epoll/poll/select POLL, nanosleep SLEEP,
 * socket calls NET, wait4/pause/sigsuspend IPC; read/write/open-like
 * calls IO only in uninterruptible sleep (else they waited on a pipe or
 * socket: OTHER); fsync-like IO; memory calls and page faults (no
 * system call) in uninterruptible sleep MEMORY. PGOFF_AGG_ON_CPU (a
 * sample of a running backend, not an interval) gives ON_CPU. Refine it
 * like a stack's.
 */
enum pgoff_wait pgoff_classify_syscall(int nr, unsigned int state);

/*
 * Final wait type. A generic event wait (POLL, and OTHER) is refined by
 * PostgreSQL's wait event class (high byte of wait_event_info):
 * 0x01 LWLock, 0x03 Lock, 0x04 BufferPin -> LOCK; 0x06 Client -> NET
 * (but ClientRead outside a statement, an idle backend waiting for its
 * next command, -> POLL; in_statement: debug_query_string was set, e.g.
 * COPY FROM STDIN waiting for data);
 * 0x0A IO -> IO; 0x09 Timeout -> SLEEP; 0x08 IPC -> IPC;
 * 0x05 Activity -> POLL. A specific kernel mechanism (LOCK, IO, NET,
 * SLEEP, IPC, MEMORY, CPU) is kept as it is. 0 = no PostgreSQL wait.
 */
enum pgoff_wait pgoff_wait_refine(enum pgoff_wait kernel,
				  uint32_t pg_wait_event_info, bool in_statement);

/*
 * An episode's wait type (an episode has no single stack): PostgreSQL's
 * class says it where it says what the wait is (as pgoff_wait_refine
 * does for a generic kernel wait); where it does not (Extension,
 * InjectionPoint, an unknown class) the kernel's view of its longest
 * blocked interval does (pgoff_classify_syscall: net, poll, io, ...), as
 * does a socket (net) whatever the class: dblink's and postgres_fdw's
 * waits for their remote server are net or poll, never other.
 */
enum pgoff_wait pgoff_episode_wait(enum pgoff_wait kernel,
				   uint32_t pg_wait_event_info,
				   bool in_statement);

/*
 * Whether time off the CPU is idle, as Oracle's ASH and pg_ash count
 * it (no active session): a background process waiting for work
 * (PostgreSQL's Activity class), the postmaster's loop, or a client
 * backend between statements (idle, idle in transaction: no statement
 * runs). backend_type NULL: not known (then the Activity class alone
 * decides). statement_known: whether in_statement was read (PostgreSQL
 * 13 tells no statement: its clients are never taken for idle).
 */
bool pgoff_wait_idle(const char *backend_type, uint32_t pg_wait_event_info,
		     bool statement_known, bool in_statement);

/*
 * When the two views disagree, why it matters; NULL when they agree or
 * one says nothing. The kernel blocked in a specific mechanism (io, lock,
 * net, sleep, memory) while PostgreSQL reported no wait event: that wait
 * is uninstrumented (e.g. pg_read_binary_file reading a cold file). Or
 * the kernel waited for I/O under a PostgreSQL wait of another class.
 * pg_known: wait_event_info was read at all.
 */
const char *pgoff_wait_mismatch(enum pgoff_wait kernel, bool pg_known,
				uint32_t pg_wait_event_info);

#endif
