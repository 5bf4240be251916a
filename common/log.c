// SPDX-License-Identifier: GPL-2.0-only
/* log.c - stderr logging with levels, outside data escaped; see log.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/utf8.h"

static const char *log_prog = "pgoff";
static enum log_level log_level = LOG_LEVEL_INFO;
static FILE *log_out;

#define LOG_MSG_MAX 1024	/* bytes of a message before escaping */

void log_set_output(FILE *f)
{
	log_out = f;
}

size_t log_escape(const char *in, char *out, size_t outsize)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = strlen(in), o = 0;

	if (!outsize)
		return 0;
	for (size_t i = 0, n; i < len; i += n) {
		n = pgoff_utf8_char_len(in + i, len - i);
		if (n && !pgoff_utf8_is_control(in + i, n)) {
			if (o + n >= outsize)
				break;
			memcpy(out + o, in + i, n);
			o += n;
		} else if (in[i] == '\n') {
			if (o + 2 >= outsize)
				break;
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			/* a control whole (C1 is two bytes), or one bad byte */
			size_t k;

			n = n ? n : 1;
			if (o + 4 * n >= outsize)
				break;
			for (k = 0; k < n; k++) {
				unsigned char b = (unsigned char)in[i + k];

				out[o++] = '\\';
				out[o++] = 'x';
				out[o++] = hex[b >> 4];
				out[o++] = hex[b & 15];
			}
		}
	}
	out[o] = '\0';
	return o;
}

void log_init(const char *prog, enum log_level level)
{
	log_prog = prog;
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

static void emit(enum log_level level, int errnum, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "error", "warning", "info", "debug" };
	char msg[LOG_MSG_MAX], esc[4 * LOG_MSG_MAX];
	FILE *out = log_out ? log_out : stderr;
	int r;
	size_t n;

	if (level > log_level)
		return;
	r = vsnprintf(msg, sizeof(msg), fmt, ap);
	n = r < 0 ? 0 : (size_t)r;
	if (n >= sizeof(msg))
		n = sizeof(msg) - 1;
	msg[n] = '\0';
	while (n && msg[n - 1] == '\n')	/* libbpf ends its lines itself */
		msg[--n] = '\0';
	log_escape(msg, esc, sizeof(esc));
	fprintf(out, "%s: %s: %s", log_prog, tag[level], esc);
	if (errnum)
		fprintf(out, ": %s", strerror(errnum));
	fputc('\n', out);
}

void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	emit(level, 0, fmt, ap);
}

void log_warn(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	emit(LOG_LEVEL_WARN, errnum, fmt, ap);
	va_end(ap);
	errno = errnum;
}

#define LOG_AT(name, level)                              \
	void name(const char *fmt, ...)                  \
	{                                                \
		va_list ap;                              \
		va_start(ap, fmt);                       \
		emit(level, 0, fmt, ap);                 \
		va_end(ap);                              \
	}
LOG_AT(log_warnx, LOG_LEVEL_WARN)
LOG_AT(log_info, LOG_LEVEL_INFO)
LOG_AT(log_debug, LOG_LEVEL_DEBUG)

void log_fatal(int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(LOG_LEVEL_ERROR, errnum, fmt, ap);
	va_end(ap);
	exit(1);
}
