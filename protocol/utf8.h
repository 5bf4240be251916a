/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * utf8.h - make foreign text safe for a JSON line. Process titles, comm
 * and SQL come in the server's encoding (maybe LATIN1) or cut mid-
 * character by a length limit; clients parse strictly as UTF-8.
 */
#ifndef PGOFF_UTF8_H
#define PGOFF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Copy the first len bytes of in (stopping at a NUL) to out, which holds
 * at least len + 1 bytes; every byte that is not part of a well-formed
 * UTF-8 sequence becomes '?'. Returns the length written (NUL excluded).
 */
size_t pgoff_utf8_clean(const char *in, size_t len, char *out);

/* Whether the len bytes at s are well-formed UTF-8 with no control
 * character (below 0x20, or 0x7f): safe to print on a terminal. */
bool pgoff_utf8_printable(const char *s, size_t len);

#endif
