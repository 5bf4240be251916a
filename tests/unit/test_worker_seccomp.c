// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_worker_seccomp.c - after worker_seccomp() a process can neither
 * take another's descriptor (pidfd_getfd) nor read another's memory
 * (process_vm_readv) nor ptrace, and still reads files. Each call is
 * aimed at the child itself, which the kernel always allows: the same
 * child without the filter shows that they work (Yama's ptrace_scope
 * would refuse most calls at another process anyway).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "broker/worker_seccomp.h"
#include "tests/unit/check.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

/* 1 if the call failed with EPERM, 0 if it worked, 2 otherwise */
static int refused(long ret)
{
	return ret == -1 ? (errno == EPERM ? 1 : 2) : 0;
}

/* In a child: exit with one bit per call refused (pidfd_getfd 1,
 * process_vm_readv 2, ptrace 4), 64 if a file could not be read. */
static int child(bool filtered)
{
	char buf[16] = "x", got[16];
	struct iovec local = { got, sizeof(got) }, remote = { buf, sizeof(buf) };
	int pidfd, fd, bits = 0, r;

	if (filtered && worker_seccomp())
		return 128;
	fd = open("/proc/self/status", O_RDONLY);	/* what workers do */
	if (fd < 0 || read(fd, got, sizeof(got)) <= 0)
		return 64;
	pidfd = (int)syscall(__NR_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return 32;		/* pidfd_open stays allowed */
	r = refused(syscall(__NR_pidfd_getfd, pidfd, fd, 0));
	bits |= r == 1 ? 1 : r == 2 ? 16 : 0;
	r = refused(process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	bits |= r == 1 ? 2 : r == 2 ? 16 : 0;
	/* PTRACE_PEEKDATA of an invalid pid: ESRCH when allowed */
	errno = 0;
	r = (int)syscall(SYS_ptrace, 2 /* PTRACE_PEEKDATA */, 0x7fffffff, 0, 0);
	bits |= (r == -1 && errno == EPERM) ? 4 : 0;
	return bits;
}

static int run_child(bool filtered)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(child(filtered));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_denied_in_worker(void)
{
	int plain = run_child(false), filtered = run_child(true);

	printf("# without the filter: %d, with it: %d (7: all three refused)\n",
	       plain, filtered);
	CHECK(plain == 0);
	CHECK(filtered == 7);
}

int main(void)
{
	RUN(test_denied_in_worker);
	return CHECK_DONE();
}
