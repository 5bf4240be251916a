/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * io_util.h - whole writes for pgoffctl and pgoff_exporter: all of a
 * buffer, again after a signal (EINTR) or a partial write.
 */
#ifndef PGOFF_IO_UTIL_H
#define PGOFF_IO_UTIL_H

#include <stddef.h>

/* All len bytes to fd (a file, a pipe, standard output) with write().
 * Returns 0 or -errno. */
int io_write_all(int fd, const void *buf, size_t len);
/* All len bytes to the socket fd with send(MSG_NOSIGNAL): a peer that
 * is gone is -EPIPE, never SIGPIPE. Returns 0 or -errno. */
int io_send_all(int fd, const void *buf, size_t len);

#endif
