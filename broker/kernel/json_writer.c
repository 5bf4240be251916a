// SPDX-License-Identifier: GPL-2.0-only
/* json_writer.c - JSON text without an object tree; see json_writer.h. */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/offcpu.h"
#include "broker/kernel/json_writer.h"
#include "common/utf8.h"

void json_writer_reset(struct json_writer *w)
{
	w->buf.n = 0;
	w->buf.failed = false;
	w->first = true;
}

void json_writer_free(struct json_writer *w)
{
	free(w->buf.p);
	memset(w, 0, sizeof(*w));
}

static inline void put(struct json_writer *w, const char *s, size_t len)
{
	struct grow_buf *b = &w->buf;

	/* in place once the buffer has grown to a line's size: most puts
	 * are a byte or a few (after a failure the text is not used) */
	if (b->n + len < b->cap) {
		memcpy(b->p + b->n, s, len);
		b->n += len;
		return;
	}
	grow_buf_put(b, s, len);
}

/* The separator, and the key inside an object. */
static void begin_value(struct json_writer *w, const char *key)
{
	if (!w->first)
		put(w, ",", 1);
	w->first = false;
	if (key) {
		put(w, "\"", 1);
		put(w, key, strlen(key));
		put(w, "\":", 2);
	}
}

void json_write_object(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	put(w, "{", 1);
	w->first = true;
}

void json_write_array(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	put(w, "[", 1);
	w->first = true;
}

/* the closed one is a value of its parent: the parent is not empty */
void json_write_end_object(struct json_writer *w)
{
	put(w, "}", 1);
	w->first = false;
}

void json_write_end_array(struct json_writer *w)
{
	put(w, "]", 1);
	w->first = false;
}

/* The escapes json-c writes: short ones where JSON has them, \u00xx
 * (lower-case hex) for other controls; '/' and DEL as they are. */
static const char *short_escape(unsigned char c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\b': return "\\b";
	case '\f': return "\\f";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default: return NULL;
	}
}

static void put_escaped(struct json_writer *w, const char *v, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	put(w, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];
		const char *esc;
		char u[6] = { '\\', 'u', '0', '0' };

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		/* the plain bytes before it in one copy */
		put(w, v + run, i - run);
		run = i + 1;
		esc = short_escape(c);
		if (esc) {
			put(w, esc, 2);
			continue;
		}
		u[4] = hex[c >> 4];
		u[5] = hex[c & 0xf];
		put(w, u, sizeof(u));
	}
	put(w, v + run, len - run);
	put(w, "\"", 1);
}

void json_write_str_len(struct json_writer *w, const char *key,
			const char *v, size_t len)
{
	begin_value(w, key);
	if (v)
		put_escaped(w, v, len);
	else
		put(w, "null", 4);
}

void json_write_str(struct json_writer *w, const char *key, const char *v)
{
	json_write_str_len(w, key, v, v ? strlen(v) : 0);
}

void json_write_text(struct json_writer *w, const char *key, const char *v,
		     size_t max)
{
	char clean[PGOFF_QUERY_MAX];	/* json_add_text's bound */

	if (max > sizeof(clean) - 1)
		max = sizeof(clean) - 1;
	json_write_str_len(w, key, clean, pgoff_utf8_clean(v, max, clean));
}

void json_write_int(struct json_writer *w, const char *key, int64_t v)
{
	char digits[24];
	size_t at = sizeof(digits);
	/* the magnitude unsigned: INT64_MIN has no positive int64 */
	uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		digits[--at] = (char)('0' + m % 10);
		m /= 10;
	} while (m);
	if (v < 0)
		digits[--at] = '-';
	begin_value(w, key);
	put(w, digits + at, sizeof(digits) - at);
}

void json_write_bool(struct json_writer *w, const char *key, bool v)
{
	begin_value(w, key);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void json_write_null(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	put(w, "null", 4);
}
