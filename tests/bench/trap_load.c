// SPDX-License-Identifier: GPL-2.0-only
/*
 * trap_load - for make bench only: load one uprobe program of a BPF
 * object (the other programs are not loaded) and link it to one site of a
 * file the way pgoffd links pg_usdt (broker/priv/usdt.c): a uprobe_multi link
 * with a cookie, every process of the file. Prints "attached" once the
 * link exists, keeps it until SIGTERM or SIGINT, then exits.
 * usage: trap_load OBJECT PROGRAM FILE OFFSET [COOKIE]
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* BPF_TRACE_UPROBE_MULTI (Linux 6.6), not in Debian 12's headers */
#define TRACE_UPROBE_MULTI 48

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

/* BPF_LINK_CREATE for one uprobe_multi site, in the kernel's layout */
static int link_site(int prog_fd, const char *path, __u64 offset, __u64 cookie)
{
	union {
		union bpf_attr attr;
		struct {
			__u32 prog_fd, target_fd, attach_type, flags;
			__u64 path, offsets, ref_ctr_offsets, cookies;
			__u32 cnt, uprobe_flags, pid;
		} um;
		char room[128];
	} a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.um.prog_fd = (__u32)prog_fd;
	a.um.attach_type = TRACE_UPROBE_MULTI;
	a.um.path = (__u64)(uintptr_t)path;
	a.um.offsets = (__u64)(uintptr_t)&offset;
	a.um.cookies = (__u64)(uintptr_t)&cookie;
	a.um.cnt = 1;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	sigset_t stop, open_mask;
	char *end;
	__u64 offset, cookie = 0;
	int err, link;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: trap_load OBJECT PROGRAM FILE OFFSET [COOKIE]\n");
		return 2;
	}
	errno = 0;
	offset = strtoull(argv[4], &end, 0);
	if (errno || *end || end == argv[4]) {
		fprintf(stderr, "trap_load: OFFSET '%s' is not a number\n", argv[4]);
		return 2;
	}
	if (argc == 6) {
		cookie = strtoull(argv[5], &end, 0);
		if (errno || *end || end == argv[5]) {
			fprintf(stderr, "trap_load: COOKIE '%s' is not a number\n", argv[5]);
			return 2;
		}
	}
	/* blocked until sigsuspend: a signal before it is not lost */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &open_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "trap_load: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, argv[2]);
	if (!prog) {
		fprintf(stderr, "trap_load: %s has no program %s\n", argv[1], argv[2]);
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	bpf_program__set_expected_attach_type(prog, TRACE_UPROBE_MULTI);
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "trap_load: load %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	link = link_site(bpf_program__fd(prog), argv[3], offset, cookie);
	if (link < 0) {
		fprintf(stderr, "trap_load: link %s to %s+%llu: %s\n", argv[2],
			argv[3], (unsigned long long)offset, strerror(-link));
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (!done)
		sigsuspend(&open_mask);
	close(link);
	bpf_object__close(obj);
	return 0;
}
