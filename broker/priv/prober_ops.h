/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prober_ops.h - what pgoffd may ask of the prober, and how often. The
 * prober is privileged; pgoffd, which talks to it, is not, and is the
 * side an attacker would own first. A descriptor handed over twice would
 * leak the first or swap, under the prober, the maps it writes, so the
 * hand-overs are taken once, in their order; anything else ends the
 * prober.
 */
#ifndef PGOFF_PROBER_OPS_H
#define PGOFF_PROBER_OPS_H

#include <stdbool.h>
#include <stdint.h>

enum prober_op {
	OP_PROBE = 1,		/* a would-be postmaster: trace it? */
	OP_MAPS,		/* the maps' descriptors (once) */
	OP_USDT_KNOWN,		/* a binary pgoffd linked (before OP_USDT) */
	OP_USDT,		/* the wait probes' program (once) */
	OP_NAMES,		/* a traced cluster's run-time names */
	OP__COUNT
};

struct prober_op_rule {
	bool once;		/* a second one is refused */
	enum prober_op not_after;	/* refused once this one came; 0: none */
};

static const struct prober_op_rule prober_op_rules[OP__COUNT] = {
	[OP_PROBE] = { false, 0 },
	[OP_MAPS] = { true, 0 },
	[OP_USDT_KNOWN] = { false, OP_USDT },
	[OP_USDT] = { true, 0 },
	[OP_NAMES] = { false, 0 },
};

/* Whether op may come now, given the ops taken so far (a bit each,
 * *taken updated when it may). */
static inline bool prober_op_take(uint32_t op, uint32_t *taken)
{
	const struct prober_op_rule *r;

	if (op == 0 || op >= OP__COUNT)
		return false;
	r = &prober_op_rules[op];
	if ((r->once && (*taken & (1u << op))) ||
	    (r->not_after && (*taken & (1u << r->not_after))))
		return false;
	*taken |= 1u << op;
	return true;
}

#endif
