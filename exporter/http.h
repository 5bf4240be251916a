/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * http.h - pgoff_exporter's HTTP(S) server, libmicrohttpd with a thread
 * per connection, so that a slow client holds up no other: the telemetry
 * path, a landing page at "/", basic auth (limited per address,
 * auth_limit.h) and TLS from the web config. A request must be whole
 * HTTP_HEADER_DEADLINE_S after its connection opened or its previous
 * answer, whatever trickles in (not the answer: a profile may take
 * seconds); scrapes ask pgoffd one at a time. HTTP_PROFILE_PATH serves
 * pprof profiles, a few at once (profile.h).
 */
#ifndef PGOFF_EXPORTER_HTTP_H
#define PGOFF_EXPORTER_HTTP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include "exporter/broker_client.h"
#include "exporter/web_config.h"

#define HTTP_HEADER_DEADLINE_S	10
/* the pprof endpoint (profile.h), where Go programs serve theirs */
#define HTTP_PROFILE_PATH	"/debug/pprof/profile"

struct http_server;

struct http_options {
	const char *listen_address;	/* "host:port", "[v6]:port", ":port" */
	const char *telemetry_path;
	const struct web_config *web;	/* NULL: plain HTTP, no auth */
	struct broker_client *broker;
	bool per_pid;
	const char *version, *revision;
};

/*
 * Listen and serve in libmicrohttpd's thread. Returns 0 with *out, or
 * -errno with err saying what failed (the address, a certificate);
 * -HTTP_BAD_TLS_FILE: tls_server_config's certificate or key cannot be
 * read (the configuration's fault, not the host's).
 */
#define HTTP_BAD_TLS_FILE ENOKEY

int http_start(const struct http_options *o, struct http_server **out,
	       char *err, size_t errlen);
/*
 * Serve with another web config (SIGHUP): its certificate and key are
 * read first, and a file that cannot be used changes nothing. The socket
 * stays open, so no connection is refused meanwhile. Returns 0; -errno
 * with err when the new config cannot be served (the old one still is);
 * -EIO when neither can (the server is down: the caller exits).
 * web must outlive the server or the next reload.
 */
int http_reload(struct http_server *s, const struct web_config *web,
		char *err, size_t errlen);
/* Stop serving (waits for a scrape in progress) and free. */
void http_stop(struct http_server *s);

/* "host:port" into a listening TCP socket (exposed for the tests). */
int http_listen_socket(const char *address, int *fd, char *err, size_t errlen);

#endif
