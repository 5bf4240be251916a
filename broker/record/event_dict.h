/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event_dict.h - the preset dictionary the flight recorder compresses
 * stored event lines with (the aggregation's records use none). Every
 * stored record needs it as it is to read back: pgoffd, and the bench's
 * stretch_store, which rewrites a store.
 */
#ifndef PGOFF_EVENT_DICT_H
#define PGOFF_EVENT_DICT_H

#include <stddef.h>

extern const char event_dict[];
extern const size_t event_dict_len;	/* without the closing NUL */

#endif
