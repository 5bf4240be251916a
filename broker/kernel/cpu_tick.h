/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cpu_tick.h - a BPF program run on every CPU at a fixed period of CPU
 * clock (a software perf event a CPU), for what only sampling can see:
 * the wait a backend running on a CPU is in.
 */
#ifndef PGOFF_CPU_TICK_H
#define PGOFF_CPU_TICK_H

#include <stdint.h>

struct bpf_program;
struct bpf_link;

struct cpu_tick {
	struct bpf_link **links;	/* one a CPU online at attach */
	int n;
	uint64_t period_ns;
};

/*
 * Attach prog to a CPU clock event of period_ns on each online CPU.
 * A CPU brought online later is not sampled. Returns 0 (t->n CPUs) or
 * -errno, with nothing attached.
 */
int cpu_tick_attach(struct cpu_tick *t, struct bpf_program *prog,
		    uint64_t period_ns);
void cpu_tick_detach(struct cpu_tick *t);	/* zeroed t: a no-op */

#endif
