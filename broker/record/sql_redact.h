/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sql_redact.h - SQL text with its literals replaced by $n, as
 * pg_stat_statements shows it, for the flight recorder's
 * record-queries = redacted.
 *
 * A small tokenizer of PostgreSQL's lexical rules, not a parser:
 * - string constants ('', E'', N'', U&'', B'', X'' and continuations
 *   across a newline), dollar-quoted strings and numbers (decimal,
 *   exponent, 0x/0o/0b, with underscores) become $n; a leading minus stays
 *   an operator;
 * - $n are numbered after the highest parameter the text already has
 *   (a prepared statement's $1 stays $1, its literals go on from $2), or
 *   the highest $n inside a name (ident$1), so that none reads the same;
 * - comments (-- and nested block comments) are dropped, a block comment
 *   leaving one space: they can hold anything, an application's tags or
 *   literals commented out;
 * - identifiers, quoted identifiers, keywords and operators stay as they
 *   are.
 * What it cannot tell safely, it hides: an unterminated string, quoted
 * identifier or dollar quote (a query cut at the kernel's limit) ends the
 * text with one $n, and so does a plain string whose end depends on
 * standard_conforming_strings (a backslash before a quote), since the
 * rest could be literal under the other reading.
 */
#ifndef PGOFF_SQL_REDACT_H
#define PGOFF_SQL_REDACT_H

#include <stddef.h>

/*
 * The redacted text of sql[0..len) (any bytes; a NUL ends it early),
 * malloc'd and NUL-terminated, its length in *out_len; NULL when memory
 * ran out.
 */
char *sql_redact(const char *sql, size_t len, size_t *out_len);

#endif
