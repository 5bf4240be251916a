// SPDX-License-Identifier: GPL-2.0-only
/*
 * json_out.c - see json_out.h. Outside strings a JSON text is ASCII
 * without DEL, so every DEL or C1 byte pair found is inside a string,
 * where \u007f and \u0080-\u009f mean the same characters.
 */
#include "client/json_out.h"
#include "protocol/protocol.h"

void json_out_line(FILE *out, const char *line, size_t len)
{
	const unsigned char *s = (const unsigned char *)line;
	size_t run = 0, i = 0;

	while (i < len) {
		unsigned int cp;
		size_t n;

		if (s[i] == 0x7f) {
			cp = 0x7f;
			n = 1;
		} else if (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 &&
			   s[i + 1] <= 0x9f) {
			cp = s[i + 1];
			n = 2;
		} else {
			i++;
			continue;
		}
		fwrite(line + run, 1, i - run, out);
		fprintf(out, "\\u%04x", cp);
		i += n;
		run = i;
	}
	fwrite(line + run, 1, len - run, out);
	fputc('\n', out);
}

void json_out(FILE *out, json_object *obj)
{
	size_t len;
	const char *line = pgoff_json_line(obj, &len);

	json_out_line(out, line, len);
}
