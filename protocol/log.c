// SPDX-License-Identifier: GPL-2.0-only
/* log.c - stderr logging with levels; see log.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "protocol/log.h"

static const char *log_prog = "pgoff";
static enum log_level log_level = LOG_LEVEL_INFO;

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
	char msg[1024];
	size_t n;

	if (level > log_level)
		return;
	n = (size_t)vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n >= sizeof(msg))
		n = sizeof(msg) - 1;
	while (n && msg[n - 1] == '\n')	/* libbpf ends its lines itself */
		msg[--n] = '\0';
	fprintf(stderr, "%s: %s: %s", log_prog, tag[level], msg);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
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
