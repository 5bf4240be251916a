/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * terminal_safe.h - for tests of pgoffctl's text output: whether what it
 * printed is shown by a terminal as it is, checked byte by byte here
 * rather than with the sanitizer under test.
 */
#ifndef PGOFF_TESTS_TERMINAL_SAFE_H
#define PGOFF_TESTS_TERMINAL_SAFE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/utf8.h"

/*
 * Every line of text is well-formed UTF-8 with no C0 or C1 control
 * character and no DEL, and there are want_lines lines (a newline that
 * came from outside would make one more). On failure says which line
 * and why on stderr.
 */
static inline bool terminal_safe(const char *text, size_t want_lines)
{
	size_t lines = 0;

	for (const char *line = text; *line; lines++) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const unsigned char *u = (const unsigned char *)line;

		if (!pgoff_utf8_printable(line, len)) {
			fprintf(stderr, "line %zu has a C0 control, DEL or bad "
				"UTF-8: \"%.*s\"\n", lines + 1, (int)len, line);
			return false;
		}
		for (size_t i = 0; i + 1 < len; i++) {
			if (u[i] == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f) {
				fprintf(stderr, "line %zu has the C1 control "
					"U+00%02X at byte %zu\n", lines + 1,
					u[i + 1], i);
				return false;
			}
		}
		if (!nl) {
			lines++;
			break;
		}
		line = nl + 1;
	}
	if (want_lines && lines != want_lines) {
		fprintf(stderr, "%zu lines, want %zu:\n%s", lines, want_lines,
			text);
		return false;
	}
	return true;
}

#endif
