/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * query_texts.h - the text of statements by query id, for members of
 * the query group (pgoffctl top --by query).
 *
 * While a member asks for rows by statement, the kernel keeps the first
 * text it sees of each statement (query id) in a bounded map; pgoffd adds
 * the texts of a reply's busiest statements, normalized as
 * pg_stat_statements shows them (sql_redact.h: literals as $n), to that
 * member's reply only. Ten seconds after the last such request the kernel
 * stops keeping texts (it then costs nothing).
 */
#ifndef PGOFF_QUERY_TEXTS_H
#define PGOFF_QUERY_TEXTS_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

struct tracer;

#define QUERY_TEXTS_LINGER_MS	10000	/* kept on this long after a request */
#define QUERY_TEXTS_PER_REPLY	50	/* the busiest rows' statements */

struct query_texts {
	struct tracer *tracer;
	bool on;
	int64_t asked_ms;
};

/*
 * A member of the query group asked for rows by statement (reply holds
 * them, "rows" with "query_id"): the kernel keeps texts from now on, and
 * reply gets "queries", {query id: normalized text}, for those known.
 */
void query_texts_answer(struct query_texts *q, json_object *reply,
			int64_t now_ms);

/* Once a tick: nobody asked for a while, the kernel keeps no texts. */
void query_texts_tick(struct query_texts *q, int64_t now_ms);

#endif
