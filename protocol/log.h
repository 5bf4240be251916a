/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log.h - one small logging module for pgoffd and pgoffctl.
 * Everything goes to stderr; stdout is for data only.
 */
#ifndef PGOFF_LOG_H
#define PGOFF_LOG_H

#include <stdarg.h>

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

/* prog is prefixed to every line; level is the most verbose level shown. */
void log_init(const char *prog, enum log_level level);
enum log_level log_get_level(void);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* + strerror(errno) */
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Startup failures: message (with errno text when errnum != 0), exit 1. */
void log_fatal(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

#endif
