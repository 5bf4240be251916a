/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json_out.h - pgoffctl's --json lines, safe on a terminal too. json-c
 * escapes C0 controls in strings but writes DEL and C1 controls
 * (U+0080-U+009F, CSI among them) as they are; any process can put them
 * in its comm, and a DBA may read --json on a terminal. They are written
 * as \u escapes, which every JSON parser reads back the same.
 */
#ifndef PGOFF_JSON_OUT_H
#define PGOFF_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>

/* One JSON text of len bytes, then a newline, DEL and C1 escaped. */
void json_out_line(FILE *out, const char *line, size_t len);
/* An object as one line (pgoff_json_line), the same way. */
void json_out(FILE *out, json_object *obj);

#endif
