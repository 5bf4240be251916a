// SPDX-License-Identifier: GPL-2.0-only
/* utf8.c - replace what is not well-formed UTF-8 (RFC 3629); see utf8.h. */
#include <string.h>
#include "common/utf8.h"

/* Length of the well-formed sequence at s (at most n bytes), or 0. */
static size_t sequence_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;	/* continuation byte, overlong lead, > U+10FFFF */
	/* the second byte's range excludes overlongs and surrogates */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

size_t pgoff_utf8_clean(const char *in, size_t len, char *out)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0, n;

	while (i < len && s[i]) {
		size_t end = i;

		/* the sequence must not run past a NUL either */
		while (end < len && end - i < 4 && s[end])
			end++;
		n = sequence_len(s + i, end - i);
		if (!n) {
			out[o++] = '?';
			i++;
			continue;
		}
		for (size_t k = 0; k < n; k++)
			out[o++] = (char)s[i++];
	}
	out[o] = '\0';
	return o;
}

size_t pgoff_utf8_char_len(const char *s, size_t n)
{
	return n ? sequence_len((const unsigned char *)s, n) : 0;
}

bool pgoff_utf8_is_control(const char *in, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;

	if (len == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	/* U+0080..U+009F: 0xc2 0x80..0x9f */
	return len == 2 && s[0] == 0xc2 && s[1] <= 0x9f;
}

size_t pgoff_utf8_cell(const char *in, char *out, size_t outsize, bool *cut)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0, n;

	if (cut)
		*cut = false;
	if (!outsize)
		return 0;
	while (s[i]) {
		size_t end = i;

		/* a sequence never runs past the NUL */
		while (end - i < 4 && s[end])
			end++;
		n = sequence_len(s + i, end - i);
		if (!n || pgoff_utf8_is_control(in + i, n)) {
			/* a bad byte alone, or a control whole, is one '?' */
			n = n ? n : 1;
			if (o + 1 >= outsize)
				break;
			out[o++] = '?';
			i += n;
			continue;
		}
		if (o + n >= outsize)
			break;
		memmove(out + o, s + i, n);	/* out may be in */
		o += n;
		i += n;
	}
	if (cut)
		*cut = s[i] != '\0';
	out[o] = '\0';
	return o;
}

bool pgoff_utf8_printable(const char *in, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;

	for (size_t i = 0, n; i < len; i += n) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return false;
		n = sequence_len(s + i, len - i);
		if (!n)
			return false;
	}
	return true;
}
