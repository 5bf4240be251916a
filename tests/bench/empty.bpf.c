// SPDX-License-Identifier: GPL-2.0-only
/*
 * empty.bpf.c - for make bench only: programs that do nothing on the
 * hooks pgoff uses, so that the cost of running any program at all there
 * (the floor under pgoff's figures) is measured in the same run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* names start with sched_ (bench.sh's filter), at most 15 characters */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_sw_empty)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_wk_empty)
{
	return 0;
}
