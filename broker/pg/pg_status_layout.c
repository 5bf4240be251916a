// SPDX-License-Identifier: GPL-2.0-only
/* pg_status_layout.c - see pg_status_layout.h. */
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/pg/pg_status_layout.h"

const struct pg_status_layout *pg_status_layout(int major)
{
	for (size_t i = 0; i < pg_status_layouts_n; i++)
		if (pg_status_layouts[i].major == major)
			return &pg_status_layouts[i];
	return NULL;
}

/* Bit s for each state value s of 0..7 given (-1: none). */
static uint8_t state_bits(int a, int b)
{
	uint8_t m = 0;

	if (a >= 0 && a < 8)
		m |= 1u << a;
	if (b >= 0 && b < 8)
		m |= 1u << b;
	return m;
}

void pg_status_target(int major, uint64_t status_ptr, struct pgoff_target *t)
{
	const struct pg_status_layout *l = pg_status_layout(major);
	int end;

	t->status_ptr = 0;
	if (!l || !status_ptr || l->changecount != 0 || l->procpid != 4)
		return;		/* the kernel reads them at 0 and 4 */
	end = l->state + 4;
	if (l->query_id >= 0 && l->query_id + l->query_id_size > end)
		end = l->query_id + l->query_id_size;
	if (end > PGOFF_STATUS_MAX || (l->query_id >= 0 && l->query_id_size != 8))
		return;
	t->status_ptr = status_ptr;
	t->status_len = (uint16_t)end;
	t->st_state_off = (uint16_t)l->state;
	t->st_query_id_off = l->query_id >= 0 ? (uint16_t)l->query_id : 0;
	t->status_active = state_bits(l->running, l->fastpath);
	t->status_ignored = state_bits(l->disabled, -1);
}

const char *pg_status_state_name(const struct pg_status_layout *l, int state)
{
	if (!l || state < 0)
		return NULL;
	/* pg_stat_activity's spelling (pg_stat_get_activity) */
	if (state == l->idle)
		return "idle";
	if (state == l->running)
		return "active";
	if (state == l->idle_in_xact)
		return "idle in transaction";
	if (state == l->fastpath)
		return "fastpath function call";
	if (state == l->idle_in_xact_aborted)
		return "idle in transaction (aborted)";
	if (state == l->disabled)
		return "disabled";
	if (state == l->starting)
		return "starting";
	return NULL;
}

int pg_status_state_active(const struct pg_status_layout *l, int state)
{
	return l && state >= 0 && (state == l->running || state == l->fastpath);
}
