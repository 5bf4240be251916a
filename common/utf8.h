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

/*
 * Length of the well-formed UTF-8 character at s (at most n bytes, n > 0),
 * or 0 when the bytes there are not one (a stray continuation byte, an
 * overlong form, a surrogate, a sequence cut short, above U+10FFFF).
 */
size_t pgoff_utf8_char_len(const char *s, size_t n);

/*
 * Whether the well-formed character of len bytes at s is a control a
 * terminal may act on: C0 (U+0000-U+001F), DEL, or C1 (U+0080-U+009F,
 * which include CSI, U+009B, the one-character form of ESC [).
 */
bool pgoff_utf8_is_control(const char *s, size_t len);

/*
 * Text from outside (pgoffd, and through it any local process: comm,
 * process titles, data directories, stack frames) for one cell of a
 * table on a terminal. Copies in (up to its NUL) to out, which holds
 * outsize >= 1 bytes, NUL-terminated: every control character (see
 * pgoff_utf8_is_control; newline and tab too) becomes '?', and so does
 * every byte that is not part of a well-formed UTF-8 character. A
 * character that does not fit whole is left out with the rest, so a cut
 * never splits one. *cut (may be NULL) says whether anything was left
 * out. out may be in itself (nothing gets longer). Returns the length
 * written. The one sanitizer for pgoffctl's tables (and its folded and
 * SVG flame graphs); --json output is json-c's to escape.
 */
size_t pgoff_utf8_cell(const char *in, char *out, size_t outsize, bool *cut);

#endif
