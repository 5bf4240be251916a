/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * web_config.h - --web.config.file: TLS and basic auth for the HTTP
 * server, in the YAML format of the Prometheus exporter toolkit, so that
 * operators reuse the files they have:
 *
 *   tls_server_config:
 *     cert_file: server.crt          # relative to the file's directory
 *     key_file: server.key
 *     min_version: TLS12             # TLS10 … TLS13; max_version too
 *     client_auth_type: NoClientCert # the only one supported
 *     prefer_server_cipher_suites: true
 *   http_server_config:
 *     http2: true                    # accepted; libmicrohttpd speaks 1.1
 *     headers: { X-Frame-Options: deny }
 *   basic_auth_users:
 *     prometheus: $2y$10$...         # bcrypt hashes only
 *
 * A key the exporter cannot honour (cipher_suites, client certificates)
 * is an error, not ignored: a file meant to restrict TLS must not serve
 * without the restriction. Every error names the file and line.
 */
#ifndef PGOFF_EXPORTER_WEB_CONFIG_H
#define PGOFF_EXPORTER_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define WEB_MAX_USERS	64
#define WEB_MAX_HEADERS	16

struct web_user {
	char *name;
	char *hash;		/* bcrypt: $2a$, $2b$ or $2y$ */
};

struct web_header {
	char *name, *value;
};

struct web_config {
	bool tls;
	char *cert_file, *key_file;	/* absolute, or as given */
	/* GnuTLS priority string for libmicrohttpd ("NORMAL:-VERS-ALL:…") */
	char priorities[160];
	struct web_user users[WEB_MAX_USERS];
	size_t nusers;
	struct web_header headers[WEB_MAX_HEADERS];
	size_t nheaders;
};

/*
 * Parse a file's text. name is the file's name for messages; dir (may be
 * NULL) is what relative paths are relative to. Returns 0, -EINVAL with
 * "NAME:LINE: what" in err, or -ENOMEM. An empty file is an empty config
 * (plain HTTP, no auth). On failure c holds nothing to free.
 */
int web_config_parse(const char *name, const char *dir, const char *text,
		     size_t len, struct web_config *c, char *err, size_t errlen);
/* Read and parse a file (at most 1 MiB). Returns as above, or -errno
 * when it cannot be read (err says why). */
int web_config_load(const char *path, struct web_config *c, char *err,
		    size_t errlen);
void web_config_free(struct web_config *c);

#endif
