// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_json_writer.c - libFuzzer target for the writer of event lines:
 * any bytes, written as a string, as text from outside (cut at a length
 * the input chooses) and as an integer, must come out exactly as json-c
 * writes the same values (pgoff_json_line's flags): the lines pgoffd
 * writes without json-c stay the lines it wrote with it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "broker/kernel/json_fields.h"
#include "broker/kernel/json_writer.h"
#include "protocol/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_writer w = { 0 };
	json_object *o;
	const char *want;
	const char *s = (const char *)data;
	/* text is read up to max bytes: within the input */
	size_t max = size ? data[0] % (size + 1) : 0, len;
	int64_t n = 0;

	if (size > 4096)
		return 0;
	memcpy(&n, data, size < sizeof(n) ? size : sizeof(n));
	o = json_object_new_object();
	json_object_object_add(o, "s", json_object_new_string_len(s, (int)size));
	json_add_text(o, "t", s, max);
	json_object_object_add(o, "n", json_object_new_int64(n));
	json_object_object_add(o, "a", json_object_new_array());
	json_object_array_add(json_object_object_get(o, "a"),
			      json_object_new_string_len(s, (int)size));
	json_writer_reset(&w);
	json_write_str_len(&w, "s", s, size);
	json_write_text(&w, "t", s, max);
	json_write_int(&w, "n", n);
	json_write_array(&w, "a");
	json_write_str_len(&w, NULL, s, size);
	json_write_end_array(&w);
	want = pgoff_json_line(o, &len);
	/* the writer leaves out the outer braces */
	if (w.buf.failed || w.buf.n != len - 2 || memcmp(w.buf.p, want + 1, len - 2))
		abort();
	json_object_put(o);
	json_writer_free(&w);
	return 0;
}
