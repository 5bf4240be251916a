// SPDX-License-Identifier: GPL-2.0-only
/*
 * pg_status_layout_probe.c - compiled against one PostgreSQL major's
 * server headers by tools/gen_pg_status_layout.sh: prints where the
 * fields pgoff reads of a backend's own PgBackendStatus lie, and the
 * values of the BackendState it reads, as that major's compiler sees
 * them (x86-64). One line: a row of broker/pg/pg_status_layout_data.c.
 */
#include "postgres.h"
#if PG_VERSION_NUM >= 140000
#include "utils/backend_status.h"
#else
#include "pgstat.h"
#endif
#include <stddef.h>
#include <stdio.h>
#undef printf

int main(void)
{
#if PG_VERSION_NUM >= 140000
	int query_id = (int)offsetof(PgBackendStatus, st_query_id);
	int query_id_size = (int)sizeof(((PgBackendStatus *)0)->st_query_id);
#else
	int query_id = -1, query_id_size = 0;	/* no query ids before 14 */
#endif
#if PG_VERSION_NUM >= 180000
	int starting = STATE_STARTING;
#else
	int starting = -1;
#endif
	printf("\t{ .major = %d, .changecount = %d, .procpid = %d, "
	       ".state = %d, .query_id = %d, .query_id_size = %d, "
	       ".idle = %d, .running = %d, .idle_in_xact = %d, "
	       ".fastpath = %d, .idle_in_xact_aborted = %d, "
	       ".disabled = %d, .starting = %d },\n",
	       PG_VERSION_NUM / 10000,
	       (int)offsetof(PgBackendStatus, st_changecount),
	       (int)offsetof(PgBackendStatus, st_procpid),
	       (int)offsetof(PgBackendStatus, st_state), query_id,
	       query_id_size, STATE_IDLE, STATE_RUNNING,
	       STATE_IDLEINTRANSACTION, STATE_FASTPATH,
	       STATE_IDLEINTRANSACTION_ABORTED, STATE_DISABLED, starting);
	return 0;
}
