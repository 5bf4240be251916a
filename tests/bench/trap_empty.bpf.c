// SPDX-License-Identifier: GPL-2.0-only
/*
 * trap_empty.bpf.c - for make bench only: a uprobe program that does
 * nothing, so that usdt_trap.sh times the uprobe trap alone (the
 * breakpoint, the kernel's entry and exit, its uprobe bookkeeping).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int trap_empty(struct pt_regs *ctx)
{
	(void)ctx;
	return 0;
}
