/* SPDX-License-Identifier: GPL-2.0-only */
/* render.h - human-readable forms of what pgoffd sends. */
#ifndef PGOFF_RENDER_H
#define PGOFF_RENDER_H

#include <stdio.h>
#include <json-c/json.h>

/* Column header for render_event lines. */
void render_event_header(FILE *out);
/* One offcpu event as one aligned line. */
void render_event(FILE *out, json_object *ev);
/* A ps reply: clusters, then one line per process. */
void render_ps(FILE *out, json_object *ps);
/* A status reply as "key: value" lines. */
void render_status(FILE *out, json_object *status);

#endif
