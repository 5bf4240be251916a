/* SPDX-License-Identifier: GPL-2.0-only */
/* conn.h - pgoffctl's connection to pgoffd: connect, hello, requests, stream. */
#ifndef PGOFF_CONN_H
#define PGOFF_CONN_H

#include <stdbool.h>
#include <json-c/json.h>
#include "common/linebuf.h"
#include "protocol/protocol.h"

/* Exit codes, documented in pgoffctl --help and the README. */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_NOCONNECT = 3,	/* cannot connect or permission denied */
	EXIT_TIMEOUT = 4,	/* --timeout before --count events */
	EXIT_ABSENT = -1,	/* internal: no broker there (conn_open_quiet) */
};

#define CONN_JSON_DEPTH	64	/* nesting accepted from the broker */
/* Besides root, the one user whose socket pgoffctl talks to. */
#define CONN_BROKER_USER "pgoffd"

struct conn {
	int fd;
	const char *path;
	struct linebuf in;
	int64_t next_id;
};

/*
 * Connect, check that root (or CONN_BROKER_USER) serves the socket, and say
 * hello. On failure prints why and returns an exit code (EXIT_NOCONNECT
 * when nobody, or someone else, serves it).
 */
int conn_open(struct conn *c, const char *path);
/* The same, but a broker that is not there is EXIT_ABSENT, unsaid. */
int conn_open_quiet(struct conn *c, const char *path, bool quiet_absent);
void conn_close(struct conn *c);

/* Send a request, wait for its reply; exit code on failure (printed). */
int conn_request(struct conn *c, struct pgoff_request *req, json_object **reply);

/*
 * Next line from the broker as an object, waiting at most timeout_ms
 * (-1: forever). Returns 1 with *obj, 0 on timeout, or -errno
 * (-EPIPE: the broker closed the connection; -EINTR: a signal came).
 */
int conn_next(struct conn *c, json_object **obj, int timeout_ms);
/* The same, as the line's text (NUL-terminated, valid until the next
 * call), not parsed. Returns 1 with *line, 0 on timeout, or -errno. */
int conn_next_line(struct conn *c, char **line, size_t *len, int timeout_ms);
/* A whole line is already read: conn_next will not wait for it. */
bool conn_buffered(const struct conn *c);

#endif
