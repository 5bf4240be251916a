/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json_writer.h - JSON text written straight into a growing buffer, for
 * the lines pgoffd writes for every event (the recorder's and watchers'):
 * no object tree, no allocation once the buffer has grown. The text is
 * byte for byte what json-c writes with JSON_C_TO_STRING_PLAIN |
 * JSON_C_TO_STRING_NOSLASHESCAPE (pgoff_json_line): keys in the order
 * written, '"', '\' and controls escaped, every other byte as it is.
 *
 * A writer starts inside an object whose braces are left out: what it
 * holds are fields, for a caller that joins them into lines. A failed
 * allocation sticks (w->buf.failed), so a writer checks once at the end.
 */
#ifndef PGOFF_JSON_WRITER_H
#define PGOFF_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "broker/grow_buf.h"

struct json_writer {
	struct grow_buf buf;	/* the text; buf.p is the writer's to free */
	bool first;		/* nothing yet in the open object or array */
};

/* Empty again, its memory kept. */
void json_writer_reset(struct json_writer *w);
void json_writer_free(struct json_writer *w);

/*
 * Each value goes after key (a constant: not escaped) in an object, or
 * with key NULL into an array. A string v NULL is written null.
 */
void json_write_object(struct json_writer *w, const char *key);
void json_write_array(struct json_writer *w, const char *key);
/* ends the innermost open object or array */
void json_write_end_object(struct json_writer *w);
void json_write_end_array(struct json_writer *w);
void json_write_str(struct json_writer *w, const char *key, const char *v);
void json_write_str_len(struct json_writer *w, const char *key,
			const char *v, size_t len);
/* A string from outside (titles, comm, SQL, frames): its first max bytes
 * (up to a NUL) made valid UTF-8 ('?' for a bad byte), as json_add_text. */
void json_write_text(struct json_writer *w, const char *key, const char *v,
		     size_t max);
void json_write_int(struct json_writer *w, const char *key, int64_t v);
void json_write_bool(struct json_writer *w, const char *key, bool v);
void json_write_null(struct json_writer *w, const char *key);

#endif
