// SPDX-License-Identifier: GPL-2.0-only
/* cpu_tick.c - a BPF program on a CPU clock event of each online CPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "broker/kernel/cpu_tick.h"

static int cpu_clock_open(int cpu, uint64_t period_ns)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = period_ns;	/* the CPU clock counts nanoseconds */
	a.exclude_idle = 1;		/* no program run for an idle CPU */
	a.disabled = 1;			/* enabled once the program is set */
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int cpu_tick_attach(struct cpu_tick *t, struct bpf_program *prog,
		    uint64_t period_ns)
{
	int cpus = libbpf_num_possible_cpus();

	memset(t, 0, sizeof(*t));
	if (cpus <= 0)
		return cpus < 0 ? cpus : -ENODEV;
	t->links = calloc((size_t)cpus, sizeof(*t->links));
	if (!t->links)
		return -ENOMEM;
	t->period_ns = period_ns;
	for (int cpu = 0; cpu < cpus; cpu++) {
		int fd = cpu_clock_open(cpu, period_ns), err;
		struct bpf_link *l;

		if (fd < 0 && errno == ENODEV)
			continue;	/* possible, not online */
		if (fd < 0) {
			err = -errno;
			cpu_tick_detach(t);
			return err;
		}
		l = bpf_program__attach_perf_event(prog, fd);
		if (!l) {
			err = -errno;
			close(fd);
			cpu_tick_detach(t);
			return err;
		}
		t->links[t->n++] = l;	/* the link owns the fd */
	}
	if (!t->n) {
		cpu_tick_detach(t);
		return -ENODEV;
	}
	return 0;
}

void cpu_tick_detach(struct cpu_tick *t)
{
	for (int i = 0; i < t->n; i++)
		bpf_link__destroy(t->links[i]);
	free(t->links);
	memset(t, 0, sizeof(*t));
}
