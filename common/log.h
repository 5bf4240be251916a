/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log.h - one small logging module for pgoffd and pgoffctl.
 * Everything goes to stderr; stdout is for data only.
 *
 * Messages carry outside data (data directories, process titles, comm,
 * database names, pgoffd's error messages in pgoffctl): each formatted
 * message is escaped whole before it is written, so that no line can be
 * forged in the journal and no terminal sequence gets through.
 */
#ifndef PGOFF_LOG_H
#define PGOFF_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

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
/*
 * A message as it is written: newline as the two characters \n; every
 * other C0 control, DEL, C1 control (U+0080-U+009F, each of its bytes)
 * and every byte of ill-formed UTF-8 as \xNN. into out (outsize > 0),
 * NUL-terminated, cut at a whole escape. Returns the length written.
 */
size_t log_escape(const char *in, char *out, size_t outsize);
/* Where lines go: f, or stderr when f is NULL (tests). */
void log_set_output(FILE *f);

/* Startup failures: message (with errno text when errnum != 0), exit 1. */
void log_fatal(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

#endif
