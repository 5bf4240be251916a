// SPDX-License-Identifier: GPL-2.0-only
/*
 * floor_load - for make bench only: load floor.bpf.c's programs, mark a
 * PostgreSQL cluster's postmaster and its processes in their task-local
 * storage with the run-time addresses of my_wait_event_info and
 * debug_query_string (found as pgoffd's prober finds them, by the same
 * code), keep the programs attached until SIGTERM or SIGINT, then say what
 * they did. Backends forked later inherit the mark in the kernel.
 *
 * usage: floor_load all|wait|none POSTMASTER_PID
 *   (the reads of the backend's memory a switch-out makes: the wait
 *   event and the query pointer, the wait event only, or none)
 *
 * Exits non-zero, with a message, when it finds no process or no symbol,
 * or when the programs attributed no interval or failed more than 1 % of
 * their reads: a floor that measured nothing must not look like a cheap
 * one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "broker/priv/pg_probe.h"
#include "tests/bench/floor.h"
#include "bench/floor.skel.h"

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

struct marking {
	int map_fd;
	struct floor_backend mark;
	int err;		/* the first update that failed, -errno */
};

/* Gives pid its storage; a process gone meanwhile is skipped. */
static int mark_process(void *ctx, uint32_t pid)
{
	struct marking *m = ctx;
	int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

	if (pidfd < 0)
		return 0;
	if (bpf_map_update_elem(m->map_fd, &pidfd, &m->mark, BPF_NOEXIST) &&
	    errno != EEXIST && errno != ENOENT) {
		m->err = -errno;
		fprintf(stderr, "floor_load: marking pid %u: %s\n", pid,
			strerror(errno));
	}
	close(pidfd);
	return m->err;
}

/* The per-CPU results, summed. */
static int sum_results(int map_fd, struct floor_result *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct floor_result *per_cpu;
	__u32 zero = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &zero, per_cpu)) {
		free(per_cpu);
		return -errno;
	}
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < ncpu; i++) {
		sum->switch_outs += per_cpu[i].switch_outs;
		sum->intervals += per_cpu[i].intervals;
		sum->read_failures += per_cpu[i].read_failures;
		sum->marks_failed += per_cpu[i].marks_failed;
	}
	free(per_cpu);
	return 0;
}

static int parse_reads(const char *s, __u32 *reads)
{
	if (strcmp(s, "all") == 0)
		*reads = FLOOR_READS_ALL;
	else if (strcmp(s, "wait") == 0)
		*reads = FLOOR_READS_WAIT;
	else if (strcmp(s, "none") == 0)
		*reads = FLOOR_READS_NONE;
	else
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	static struct pg_cluster_info cluster;	/* 14 kB: not on the stack */
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stop, waiting;
	struct marking m = { .map_fd = -1 };
	struct floor_bpf *skel = NULL;
	struct floor_result sum;
	unsigned long pm;
	__u32 reads;
	char *end;
	int found, err, ret = 1;

	if (argc != 3 || parse_reads(argv[1], &reads)) {
		fprintf(stderr, "usage: floor_load all|wait|none POSTMASTER_PID\n");
		return 2;
	}
	errno = 0;
	pm = strtoul(argv[2], &end, 10);
	if (errno || end == argv[2] || *end || !pm || pm > INT_MAX) {
		fprintf(stderr, "floor_load: %s is not a pid\n", argv[2]);
		return 2;
	}
	err = pg_probe_cluster("/proc", (uint32_t)pm, NULL, &cluster);
	if (err) {
		fprintf(stderr, "floor_load: postmaster %lu: %s\n", pm,
			cluster.why[0] ? cluster.why : err == -EAGAIN ?
			"no postmaster.pid naming it in its working directory" :
			strerror(-err));
		return 1;
	}
	if (!cluster.wait_event_ptr || !cluster.query_ptr) {
		fprintf(stderr, "floor_load: postmaster %lu: %s\n", pm,
			cluster.pg_missing[0] ? cluster.pg_missing :
			"its binary exports no debug_query_string");
		return 1;
	}
	/* blocked until sigsuspend: a signal before it is not lost */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, &waiting);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor_load: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->floor_reads = reads;
	err = floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor_load: load: %s\n", strerror(-err));
		goto cleanup;
	}
	/* marked before the fork handler is attached: a fork in between
	 * is the same postmaster's child, found by the walk below */
	m.map_fd = bpf_map__fd(skel->maps.backends);
	m.mark.wait_event_var = cluster.wait_event_ptr;
	m.mark.query_var = cluster.query_ptr;
	if (mark_process(&m, (uint32_t)pm))
		goto cleanup;
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor_load: attach: %s\n", strerror(-err));
		goto cleanup;
	}
	found = pg_probe_descendants("/proc", &cluster, mark_process, &m);
	if (m.err)
		goto cleanup;
	if (found <= 0) {
		fprintf(stderr, "floor_load: postmaster %lu: %s\n", pm,
			found ? strerror(-found) : "no process of its own");
		goto cleanup;
	}
	while (!done)
		sigsuspend(&waiting);

	err = sum_results(bpf_map__fd(skel->maps.results), &sum);
	if (err) {
		fprintf(stderr, "floor_load: results: %s\n", strerror(-err));
		goto cleanup;
	}
	fprintf(stderr, "floor_load: %d processes marked at start; %llu "
		"switch-outs, %llu intervals, %llu failed reads, %llu forks "
		"not marked\n", found, (unsigned long long)sum.switch_outs,
		(unsigned long long)sum.intervals,
		(unsigned long long)sum.read_failures,
		(unsigned long long)sum.marks_failed);
	if (!sum.intervals)
		fprintf(stderr, "floor_load: no interval attributed: nothing "
			"was measured\n");
	else if (sum.read_failures * 100 > sum.switch_outs)
		fprintf(stderr, "floor_load: more than 1 %% of the reads "
			"failed: the figure is not that of reads that work\n");
	else if (sum.marks_failed)
		fprintf(stderr, "floor_load: backends went unmarked\n");
	else
		ret = 0;
cleanup:
	floor_bpf__destroy(skel);
	return ret;
}
