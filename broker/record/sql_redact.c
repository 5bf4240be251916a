// SPDX-License-Identifier: GPL-2.0-only
/* sql_redact.c - SQL with literals replaced by $n; see sql_redact.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "broker/grow_buf.h"
#include "broker/record/sql_redact.h"

enum token {
	TOK_KEEP,		/* copied as it is */
	TOK_LITERAL,		/* becomes $n */
	TOK_REST,		/* a literal to the end: $n, and nothing after */
	TOK_LINE_COMMENT,	/* dropped */
	TOK_BLOCK_COMMENT,	/* one space */
	TOK_PARAM,		/* $n already there: kept, and counted */
};

/* Parameter numbers are capped here: beyond, they are text like any. */
#define PARAM_CAP	1000000000ull

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* PostgreSQL's ident_start: any byte of a multibyte character too. */
static bool ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c >= 0x80;
}

static bool dolq_cont(unsigned char c)
{
	return ident_start(c) || is_digit(c);
}

static bool ident_cont(unsigned char c)
{
	return dolq_cont(c) || c == '$';
}

/*
 * The end of the quoted string whose opening quote is at q: past its
 * closing quote, or 0 when it has none. backslash: a backslash escapes
 * the next byte (E'' strings, or any string with
 * standard_conforming_strings off).
 */
static size_t quoted_end(const char *s, size_t len, size_t q, char quote,
			 bool backslash)
{
	for (size_t j = q + 1; j < len; j++) {
		if (backslash && s[j] == '\\') {
			j++;
			continue;
		}
		if (s[j] != quote)
			continue;
		if (j + 1 < len && s[j + 1] == quote) {
			j++;	/* a doubled quote is one inside */
			continue;
		}
		return j + 1;
	}
	return 0;
}

/*
 * A string constant from its opening quote at q, with the segments that
 * continue it after whitespace holding a newline ('a'\n'b' is one
 * constant). Sets *rest when its end is unknown or depends on
 * standard_conforming_strings.
 */
static size_t string_end(const char *s, size_t len, size_t q, bool escape,
			 bool *rest)
{
	for (;;) {
		size_t end = quoted_end(s, len, q, '\'', true), k;
		bool newline = false;

		/* a plain string ends where both readings say, or the rest
		 * might be literal under the reading not taken */
		if (!end || (!escape && quoted_end(s, len, q, '\'', false) != end)) {
			*rest = true;
			return len;
		}
		for (k = end; k < len && strchr(" \t\n\r\f", s[k]); k++)
			newline |= s[k] == '\n' || s[k] == '\r';
		if (!newline || k >= len || s[k] != '\'')
			return end;
		q = k;
	}
}

/* A $tag$ delimiter at i: its length, or 0 when there is none. */
static size_t dollar_tag(const char *s, size_t len, size_t i)
{
	size_t j = i + 1;

	if (j < len && ident_start((unsigned char)s[j]))
		while (j < len && dolq_cont((unsigned char)s[j]))
			j++;
	return j < len && s[j] == '$' ? j + 1 - i : 0;
}

static size_t number_end(const char *s, size_t len, size_t i)
{
	size_t j = i;

	/* 0x1F, 0o17, 0b101 (16); hex digits for all three: the more hidden */
	if (s[j] == '0' && j + 2 < len && s[j + 1] &&
	    strchr("xXoObB", s[j + 1]) &&
	    (is_hex((unsigned char)s[j + 2]) || s[j + 2] == '_')) {
		for (j += 2; j < len && (is_hex((unsigned char)s[j]) ||
					 s[j] == '_'); j++)
			;
		return j;
	}
	while (j < len && (is_digit((unsigned char)s[j]) || s[j] == '_'))
		j++;
	/* 1..10 (PL/pgSQL's range) is two numbers, not 1. and .10 */
	if (j < len && s[j] == '.' && !(j + 1 < len && s[j + 1] == '.')) {
		j++;
		while (j < len && (is_digit((unsigned char)s[j]) || s[j] == '_'))
			j++;
	}
	if (j < len && (s[j] == 'e' || s[j] == 'E')) {
		size_t k = j + 1;

		if (k < len && (s[k] == '+' || s[k] == '-'))
			k++;
		if (k < len && is_digit((unsigned char)s[k])) {
			j = k;
			while (j < len && is_digit((unsigned char)s[j]))
				j++;
		}
	}
	return j;
}

/* The token at i: its kind, and where it ends; *param for TOK_PARAM. */
static size_t next_token(const char *s, size_t len, size_t i, enum token *kind,
			 uint64_t *param)
{
	unsigned char c = (unsigned char)s[i], d = i + 1 < len ? s[i + 1] : 0;
	bool rest = false;
	size_t j;

	*kind = TOK_KEEP;
	if (c == '-' && d == '-') {
		*kind = TOK_LINE_COMMENT;
		for (j = i; j < len && s[j] != '\n' && s[j] != '\r'; j++)
			;
		return j;
	}
	if (c == '/' && d == '*') {
		unsigned int depth = 0;

		*kind = TOK_BLOCK_COMMENT;
		for (j = i; j + 1 < len; j++) {
			if (s[j] == '/' && s[j + 1] == '*') {
				depth++;
				j++;
			} else if (s[j] == '*' && s[j + 1] == '/') {
				j++;
				if (!--depth)
					return j + 1;
			}
		}
		return len;	/* unterminated: the rest is comment */
	}
	if (c == '\'') {
		j = string_end(s, len, i, false, &rest);
		*kind = rest ? TOK_REST : TOK_LITERAL;
		return j;
	}
	if (c == '"' || ((c == 'u' || c == 'U') && d == '&' && i + 2 < len &&
			 s[i + 2] == '"')) {
		j = quoted_end(s, len, c == '"' ? i : i + 2, '"', false);
		if (!j)
			*kind = TOK_REST;
		return j ? j : len;
	}
	if (ident_start(c)) {
		size_t q = 0;
		bool escape = false;

		if (d == '\'' && strchr("eE", c))
			q = i + 1, escape = true;
		else if (d == '\'' && strchr("nNbBxX", c))
			q = i + 1;
		else if ((c == 'u' || c == 'U') && d == '&' && i + 2 < len &&
			 s[i + 2] == '\'')
			q = i + 2;
		if (q) {
			j = string_end(s, len, q, escape, &rest);
			*kind = rest ? TOK_REST : TOK_LITERAL;
			return j;
		}
		for (j = i + 1; j < len && ident_cont((unsigned char)s[j]); j++)
			;
		return j;
	}
	if (c == '$' && is_digit(d)) {
		uint64_t n = 0;

		for (j = i + 1; j < len && is_digit((unsigned char)s[j]); j++)
			if (n < PARAM_CAP)
				n = n * 10 + (uint64_t)(s[j] - '0');
		*kind = TOK_PARAM;
		*param = n < PARAM_CAP ? n : 0;
		return j;
	}
	if (c == '$') {
		size_t tag = dollar_tag(s, len, i);

		if (!tag)
			return i + 1;
		for (j = i + tag; j + tag <= len; j++)
			if (memcmp(s + j, s + i, tag) == 0) {
				*kind = TOK_LITERAL;
				return j + tag;
			}
		*kind = TOK_REST;
		return len;
	}
	if (c == '.' && d == '.')
		return i + 2;	/* .. (a range) is no start of .10 */
	if (is_digit(c) || (c == '.' && is_digit(d))) {
		*kind = TOK_LITERAL;
		return number_end(s, len, i);
	}
	return i + 1;
}

/*
 * The highest $n inside a name (ident$1: PostgreSQL allows $ after a
 * name's first byte) between i and end; 0 if none. Not a parameter, but
 * a reader sees $1 there: placeholders go on after it, never clash.
 */
static uint64_t highest_in_name(const char *s, size_t i, size_t end)
{
	uint64_t top = 0;

	for (; i < end; i++) {
		uint64_t n = 0;

		if (s[i] != '$')
			continue;
		while (i + 1 < end && is_digit((unsigned char)s[i + 1])) {
			if (n < PARAM_CAP)
				n = n * 10 + (uint64_t)(s[++i] - '0');
			else
				i++;
		}
		if (n < PARAM_CAP && n > top)
			top = n;
	}
	return top;
}

/* text at the end of o, kept NUL-terminated (grow_buf keeps the room) */
static void put(struct grow_buf *o, const char *text, size_t n)
{
	grow_buf_put(o, text, n);
	if (!o->failed)
		o->p[o->n] = '\0';
}

char *sql_redact(const char *sql, size_t len, size_t *out_len)
{
	struct grow_buf o = { 0 };
	uint64_t top = 0, param = 0;
	enum token kind;
	size_t i, end;

	len = strnlen(sql, len);
	/* first the highest parameter there is: ours go on after it */
	for (i = 0; i < len; i = end) {
		end = next_token(sql, len, i, &kind, &param);
		if (kind == TOK_KEEP)
			param = highest_in_name(sql, i, end);
		if ((kind == TOK_PARAM || kind == TOK_KEEP) && param > top)
			top = param;
	}
	put(&o, "", 0);
	for (i = 0; i < len; i = end) {
		char num[24];

		end = next_token(sql, len, i, &kind, &param);
		switch (kind) {
		case TOK_KEEP:
		case TOK_PARAM:
			put(&o, sql + i, end - i);
			break;
		case TOK_LITERAL:
		case TOK_REST:
			/* after a name or a $, $n would read as part of it */
			if (o.n && ident_cont(o.p[o.n - 1]))
				put(&o, " ", 1);
			put(&o, num, (size_t)snprintf(num, sizeof(num), "$%llu",
						      (unsigned long long)++top));
			break;
		case TOK_BLOCK_COMMENT:
			put(&o, " ", 1);
			break;
		case TOK_LINE_COMMENT:
			break;
		}
	}
	if (o.failed) {
		free(o.p);
		return NULL;
	}
	*out_len = o.n;
	return (char *)o.p;
}
