// SPDX-License-Identifier: GPL-2.0-only
/* query_texts.c - statements' texts for the query group; see query_texts.h. */
#include <stdlib.h>
#include <string.h>
#include "broker/kernel/json_fields.h"
#include "broker/kernel/query_texts.h"
#include "broker/record/sql_redact.h"
#include "broker/kernel/tracer.h"
#include "protocol/protocol.h"
#include "common/units.h"

void query_texts_answer(struct query_texts *q, json_object *reply,
			int64_t now_ms)
{
	json_object *rows, *texts = json_object_new_object();
	char text[PGOFF_QUERY_MAX];
	size_t n = 0, len;

	q->asked_ms = now_ms;
	if (!q->on && tracer_set_query_texts(q->tracer, true) == 0)
		q->on = true;
	if (!json_object_object_get_ex(reply, "rows", &rows) ||
	    !json_object_is_type(rows, json_type_array)) {
		json_object_put(texts);
		return;
	}
	/* rows come longest first: the busiest statements' texts */
	for (size_t i = 0; i < json_object_array_length(rows) &&
	     n < QUERY_TEXTS_PER_REPLY; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		const char *id_s;
		int64_t cluster = 0;
		uint64_t id;
		char *norm;

		if (!pgoff_get_string(row, "query_id", &id_s) ||
		    pgoff_parse_query_id(id_s, &id) ||
		    json_object_object_get_ex(texts, id_s, NULL))
			continue;
		pgoff_get_int64(row, "cluster", &cluster);
		if (tracer_query_text(q->tracer, id, (uint32_t)cluster, text,
				      sizeof(text), &len))
			continue;
		norm = sql_redact(text, len, &len);
		if (!norm)
			break;
		/* (the server's encoding, maybe cut: made valid UTF-8) */
		json_add_text(texts, id_s, norm, len);
		free(norm);
		n++;
	}
	json_object_object_add(reply, "queries", texts);
}

void query_texts_tick(struct query_texts *q, int64_t now_ms)
{
	if (q->on && now_ms - q->asked_ms >= QUERY_TEXTS_LINGER_MS &&
	    tracer_set_query_texts(q->tracer, false) == 0)
		q->on = false;
}
