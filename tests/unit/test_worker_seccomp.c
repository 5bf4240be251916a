// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_worker_seccomp.c - after worker_seccomp() a process can neither
 * take another's descriptor (pidfd_getfd) nor read or write another's
 * memory (process_vm_readv, ptrace, /proc/PID/mem opened to write), nor
 * open any file to write or create, and still reads files (/proc/PID/mem
 * too). Each call is aimed at the child itself, which the kernel always
 * allows: the same child without the filter shows that they work (Yama's
 * ptrace_scope would refuse most calls at another process anyway).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "broker/priv/worker_seccomp.h"
#include "tests/unit/check.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

/* The calls tried, in the order the child reports them. */
enum call {
	C_PIDFD_GETFD,
	C_VM_READV,
	C_PTRACE,
	C_MEM_RDWR,		/* open /proc/self/mem O_RDWR */
	C_MEM_WRONLY,		/* openat, O_WRONLY */
	C_MEM_WRITE,		/* a byte of its own memory changed through it */
	C_CREATE,		/* open(new file, O_RDONLY | O_CREAT) */
	C_TRUNC,		/* open(file, O_RDONLY | O_TRUNC) */
	C_CREAT,		/* creat() */
	C_OPENAT2,		/* openat2(O_RDWR) */
	C_IO_URING,		/* io_uring_setup */
	C_MEM_READ,		/* open /proc/self/mem O_RDONLY and read it */
	C_FILE_READ,		/* /proc/self/status: what workers read */
	C__COUNT,
};

static const char *const names[C__COUNT] = {
	[C_PIDFD_GETFD] = "pidfd_getfd",
	[C_VM_READV] = "process_vm_readv",
	[C_PTRACE] = "ptrace(PEEKDATA)",
	[C_MEM_RDWR] = "open(/proc/self/mem, O_RDWR)",
	[C_MEM_WRONLY] = "openat(/proc/self/mem, O_WRONLY)",
	[C_MEM_WRITE] = "pwrite through /proc/self/mem",
	[C_CREATE] = "open(new, O_RDONLY|O_CREAT)",
	[C_TRUNC] = "open(file, O_RDONLY|O_TRUNC)",
	[C_CREAT] = "creat(new)",
	[C_OPENAT2] = "openat2(O_RDWR)",
	[C_IO_URING] = "io_uring_setup",
	[C_MEM_READ] = "open(/proc/self/mem, O_RDONLY) and pread",
	[C_FILE_READ] = "open(/proc/self/status) and read",
};

/* Set by the parent: a directory the child may create files in. */
static char dir[64];

/* 0 if ret says it worked, else errno (-1 when errno is 0) */
static int result(long ret)
{
	return ret >= 0 ? 0 : errno ? errno : -1;
}

/* an fd back: 0 and closed, or the errno */
static int opened(int fd)
{
	if (fd < 0)
		return result(fd);
	close(fd);
	return 0;
}

static void child(bool filtered, int out)
{
	static volatile char target = 'a';
	char buf[16] = "x", got[16], path[128];
	struct iovec local = { got, sizeof(got) }, remote = { buf, sizeof(buf) };
	struct open_how how = { .flags = O_RDWR };
	uint32_t uring_params[30] = { 0 };	/* struct io_uring_params */
	int r[C__COUNT], pidfd, fd;
	char w = 'b';

	for (int i = 0; i < C__COUNT; i++)
		r[i] = -2;	/* not tried */
	if (filtered && worker_seccomp())
		_exit(3);
	fd = open("/proc/self/status", O_RDONLY);	/* what workers do */
	r[C_FILE_READ] = fd < 0 ? result(fd) : result(read(fd, got, sizeof(got)));
	pidfd = (int)syscall(__NR_pidfd_open, getpid(), 0);
	r[C_PIDFD_GETFD] = pidfd < 0 ? -3 :
			   result(syscall(__NR_pidfd_getfd, pidfd, fd, 0));
	r[C_VM_READV] = result(process_vm_readv(getpid(), &local, 1, &remote,
						1, 0));
	/* PTRACE_PEEKDATA of an invalid pid: ESRCH when allowed */
	errno = 0;
	r[C_PTRACE] = syscall(SYS_ptrace, 2 /* PTRACE_PEEKDATA */, 0x7fffffff,
			      0, 0) == -1 && errno == ESRCH ? 0 : result(-1);
	r[C_MEM_RDWR] = opened(open("/proc/self/mem", O_RDWR));
	fd = openat(AT_FDCWD, "/proc/self/mem", O_WRONLY);
	r[C_MEM_WRONLY] = result(fd);
	if (fd >= 0) {
		r[C_MEM_WRITE] = result(pwrite(fd, &w, 1,
					       (off_t)(uintptr_t)&target));
		if (!r[C_MEM_WRITE] && target != 'b')
			r[C_MEM_WRITE] = -4;	/* written, not changed */
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/created%d", dir, filtered);
	r[C_CREATE] = opened(open(path, O_RDONLY | O_CREAT, 0600));
	snprintf(path, sizeof(path), "%s/full", dir);
	r[C_TRUNC] = opened(open(path, O_RDONLY | O_TRUNC));
	snprintf(path, sizeof(path), "%s/creat%d", dir, filtered);
	r[C_CREAT] = opened(creat(path, 0600));
	snprintf(path, sizeof(path), "%s/full", dir);
	r[C_OPENAT2] = opened((int)syscall(__NR_openat2, AT_FDCWD, path, &how,
					   sizeof(how)));
	r[C_IO_URING] = opened((int)syscall(__NR_io_uring_setup, 1,
					    uring_params));
	fd = open("/proc/self/mem", O_RDONLY);
	r[C_MEM_READ] = fd < 0 ? result(fd) :
			result(pread(fd, got, 1, (off_t)(uintptr_t)&target));
	if (fd >= 0)
		close(fd);
	_exit(write(out, r, sizeof(r)) == sizeof(r) ? 0 : 4);
}

/* The child's results into r; false if it did not report. */
static bool run_child(bool filtered, int r[C__COUNT])
{
	int status = -1, p[2];
	pid_t pid;
	bool got;

	if (pipe(p))
		return false;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(filtered, p[1]);
	}
	close(p[1]);
	got = pid > 0 && read(p[0], r, C__COUNT * sizeof(int)) ==
			 (ssize_t)(C__COUNT * sizeof(int));
	close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return false;
	return got;
}

static const char *said(int r, char *buf, size_t len)
{
	if (r == 0)
		return "worked";
	if (r > 0)
		return strerror(r);
	if (r == -2)
		return "not tried";
	snprintf(buf, len, "(%d)", r);
	return buf;
}

static void test_denied_in_worker(void)
{
	int plain[C__COUNT], filtered[C__COUNT];
	char a[16], b[16], full[96];
	bool ran_plain, ran_filtered;
	struct stat st;
	off_t kept;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-seccomp.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(full, sizeof(full), "%s/full", dir);
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "12345678", 8) == 8);
	close(fd);
	/* the filtered child first: its O_TRUNC must leave the 8 bytes */
	ran_filtered = run_child(true, filtered);
	kept = stat(full, &st) == 0 ? st.st_size : -1;
	ran_plain = run_child(false, plain);
	for (int i = 0; ran_plain && ran_filtered && i < C__COUNT; i++)
		printf("# %-42s without the filter: %-8s with it: %s\n",
		       names[i], said(plain[i], a, sizeof(a)),
		       said(filtered[i], b, sizeof(b)));
	printf("# after the filtered child, the file has %lld of its 8 bytes\n",
	       (long long)kept);
	for (const char *n = "created0\0created1\0creat0\0creat1\0full\0"; *n;
	     n += strlen(n) + 1) {
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", dir, n);
		unlink(path);
	}
	rmdir(dir);
	CHECK(ran_plain && ran_filtered);
	/* without the filter, every call works (io_uring may be off in
	 * this kernel: kernel.io_uring_disabled) */
	if (plain[C_IO_URING] != 0)
		printf("# io_uring is off here: only the filter's EPERM is "
		       "checked for it\n");
	for (int i = 0; i < C__COUNT; i++)
		CHECK(plain[i] == 0 || i == C_IO_URING);
	/* with it: the reads work, everything else is EPERM (the write
	 * through /proc/self/mem is not tried: it could not be opened) */
	CHECK(filtered[C_FILE_READ] == 0);
	CHECK(filtered[C_MEM_READ] == 0);
	for (int i = 0; i < C__COUNT; i++)
		if (i != C_FILE_READ && i != C_MEM_READ && i != C_MEM_WRITE)
			CHECK(filtered[i] == EPERM);
	CHECK(filtered[C_MEM_WRITE] == -2);
	CHECK(kept == 8);
}

int main(void)
{
	RUN(test_denied_in_worker);
	return CHECK_DONE();
}
