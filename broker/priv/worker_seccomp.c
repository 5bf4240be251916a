// SPDX-License-Identifier: GPL-2.0-only
/* worker_seccomp.c - a seccomp filter for the prober's workers; see
 * worker_seccomp.h. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "broker/priv/worker_seccomp.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "worker_seccomp: name this architecture's AUDIT_ARCH"
#endif

#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438	/* the same on every architecture */
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
			     offsetof(struct seccomp_data, field))
#define DENY_IF(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)

/* The flags of an open that may write or create: a worker reads only. */
#define OPEN_WRITES (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)
/* An argument's low 32 bits (the kernel reads open's flags as an int). */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "worker_seccomp: an argument's low word is at +4 here"
#endif
#define ARG_LO(i) offsetof(struct seccomp_data, args[i])
/* System call nr with flags in argument i: EPERM if they may write. */
#define DENY_WRITE_OPEN(nr, i) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i)), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, OPEN_WRITES, 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int worker_seccomp(void)
{
	struct sock_filter f[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		LOAD(nr),
		/* x32 calls carry this bit on x86-64: not ours either */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		DENY_IF(__NR_ptrace),
		DENY_IF(__NR_pidfd_getfd),
		DENY_IF(__NR_process_vm_readv),
		DENY_IF(__NR_process_vm_writev),
		/* nor by opening /proc/PID/mem (or anything) to write: the
		 * workers open files read-only; openat2's flags are behind a
		 * pointer, and io_uring would open past this filter */
		DENY_IF(__NR_openat2),
		DENY_IF(__NR_io_uring_setup),
#ifdef __NR_creat
		DENY_IF(__NR_creat),
#endif
#ifdef __NR_open
		DENY_WRITE_OPEN(__NR_open, 1),
#endif
		DENY_WRITE_OPEN(__NR_openat, 2),
		DENY_WRITE_OPEN(__NR_open_by_handle_at, 2),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(f) / sizeof(f[0])),
		.filter = f,
	};

	/* no_new_privs is the prober's already; set again, it costs nothing */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}
