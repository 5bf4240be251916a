// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_sql_redact.c - libFuzzer target for the redactor of stored SQL
 * (record-queries = redacted): any query text a backend may run, cut at
 * any byte. It never reads past the text, its output is bounded (a
 * literal byte becomes at most "$" and ten digits), and redacting the
 * redacted text changes nothing: no literal is left to take out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "broker/record/sql_redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len, len2;
	char *once = sql_redact((const char *)data, size, &len), *twice;

	if (!once)
		return 0;
	if (len != strlen(once) || len > 11 * size)
		abort();
	twice = sql_redact(once, len, &len2);
	if (twice && (len2 != len || memcmp(once, twice, len)))
		abort();
	free(once);
	free(twice);
	return 0;
}
