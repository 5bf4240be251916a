/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * worker_seccomp.h - what the prober's workers may not do. They keep
 * CAP_SYS_PTRACE (to read other users' /proc files) and parse what
 * hostile processes put there; code that ran in one must not reach into
 * another process with it: not the prober, which holds the uprobe
 * program, nor a backend. ptrace, pidfd_getfd and process_vm_readv and
 * _writev fail with EPERM after worker_seccomp(); so does any open that
 * may write or create (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC: open, openat,
 * open_by_handle_at; creat, openat2 and io_uring_setup whatever they ask),
 * so /proc/PID/mem opens read-only at most; and so does every system call
 * of another architecture's ABI (x32, i386 through int 0x80).
 */
#ifndef PGOFF_BROKER_WORKER_SECCOMP_H
#define PGOFF_BROKER_WORKER_SECCOMP_H

/* 0, or -errno (the caller goes on without it: it is a second line). */
int worker_seccomp(void);

#endif
