/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_exporter_web_config.c - pgoff_exporter's --web.config.file: good
 * files as the exporter toolkit's users write them, bad ones refused with
 * the file and line at fault, and basic auth against real bcrypt hashes
 * (made here with libxcrypt).
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exporter/basic_auth.h"
#include "exporter/web_config.h"
#include "tests/unit/check.h"

static char err[512];

static int parse(const char *text, struct web_config *c)
{
	err[0] = '\0';
	return web_config_parse("web.yml", "/etc/pgoff", text, strlen(text), c,
				err, sizeof(err));
}

/* The file must be refused with an error naming web.yml:LINE and saying
 * what (want, a substring). */
static bool refused(const char *text, int line, const char *want)
{
	struct web_config c;
	char at[32];
	int r = parse(text, &c);

	snprintf(at, sizeof(at), "web.yml:%d: ", line);
	if (r != -EINVAL || strncmp(err, at, strlen(at)) || !strstr(err, want)) {
		fprintf(stderr, "file:\n%s\nreturned %d, error \"%s\"; want "
			"\"%s...%s...\"\n", text, r, err, at, want);
		if (!r)
			web_config_free(&c);
		return false;
	}
	return true;
}

static char hash_cost4[128];

static void make_hash(const char *password, char *out, size_t len)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data data = { 0 };

	if (!crypt_gensalt_rn("$2y$", 4, NULL, 0, salt, sizeof(salt)) ||
	    !crypt_rn(password, salt, &data, sizeof(data)))
		abort();
	if (strlen(data.output) >= len)
		abort();
	memcpy(out, data.output, strlen(data.output) + 1);
}

static void test_empty_file_is_plain_http(void)
{
	struct web_config c;

	CHECK(parse("", &c) == 0);
	CHECK(!c.tls && c.nusers == 0 && c.nheaders == 0);
	web_config_free(&c);
	CHECK(parse("# nothing yet\ntls_server_config:\nbasic_auth_users: ~\n", &c) == 0);
	CHECK(!c.tls && c.nusers == 0);
	web_config_free(&c);
}

static void test_toolkit_file(void)
{
	struct web_config c;
	char text[1024];

	snprintf(text, sizeof(text),
		 "# as the exporter toolkit documents it\n"
		 "tls_server_config:\n"
		 "  cert_file: server.crt\n"
		 "  key_file: /etc/ssl/private/server.key\n"
		 "  client_auth_type: \"NoClientCert\"\n"
		 "  min_version: TLS13\n"
		 "  prefer_server_cipher_suites: false\n"
		 "http_server_config:\n"
		 "  http2: true\n"
		 "  headers:\n"
		 "    Strict-Transport-Security: max-age=31536000\n"
		 "    X-Frame-Options: deny\n"
		 "basic_auth_users:\n"
		 "  prometheus: %s\n"
		 "  'grafana': '%s'\n", hash_cost4, hash_cost4);
	CHECK(parse(text, &c) == 0);
	CHECK(c.tls);
	CHECK_STR(c.cert_file, "/etc/pgoff/server.crt");
	CHECK_STR(c.key_file, "/etc/ssl/private/server.key");
	CHECK_STR(c.priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	CHECK(c.nusers == 2);
	CHECK_STR(c.users[0].name, "prometheus");
	CHECK_STR(c.users[1].name, "grafana");
	CHECK_STR(c.users[1].hash, hash_cost4);
	CHECK(c.nheaders == 2);
	CHECK_STR(c.headers[1].name, "X-Frame-Options");
	CHECK_STR(c.headers[1].value, "deny");
	web_config_free(&c);
}

static void test_tls_defaults(void)
{
	struct web_config c;

	CHECK(parse("tls_server_config: {cert_file: a.crt, key_file: a.key}\n", &c) == 0);
	/* the toolkit's defaults: TLS 1.2 and up, the server's preference */
	CHECK_STR(c.priorities,
		  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE");
	web_config_free(&c);
}

static void test_bad_files(void)
{
	char text[512];

	CHECK(refused("tls_server_config:\n  cert_file: [a\n", 3,
		      "flow sequence that began on line 2"));
	CHECK(refused("a: b\n  c: d\n", 2, "mapping values are not allowed"));
	CHECK(refused("a: \"unterminated\n", 2, "quoted scalar"));
	CHECK(refused("- a\n- b\n", 1, "a mapping"));
	CHECK(refused("tls_server_config:\n  key_file: k\n", 2, "cert_file is missing"));
	CHECK(refused("tls_server_config:\n  cert_file: c\n", 2, "key_file is missing"));
	CHECK(refused("tls_server_config:\n  cert_file: c\n  key_file: k\n"
		      "  min_version: TLS13\n  max_version: TLS12\n", 2,
		      "min_version is above"));
	CHECK(refused("tls_server_config:\n  cert_file: c\n  key_file: k\n"
		      "  min_version: SSL3\n", 4, "'SSL3' is not TLS10"));
	CHECK(refused("tls_server_config:\n  cert_file: c\n  key_file: k\n"
		      "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", 4,
		      "cipher_suites is not supported"));
	CHECK(refused("tls_server_config:\n  cert_file: c\n  key_file: k\n"
		      "  client_auth_type: RequireAndVerifyClientCert\n", 4,
		      "not supported by pgoff_exporter"));
	CHECK(refused("tls_server_config:\n  cert_file: c\n  cert_file: d\n", 3,
		      "'cert_file' is given twice"));
	CHECK(refused("tls_server_config:\n  cert_file: \"\"\n", 2, "an empty path"));
	CHECK(refused("tls_server_config:\n  cert_file: [a]\n", 2,
		      "a string is needed"));
	CHECK(refused("tls_server_config:\n  cert_file: \"a\\0b\"\n", 2,
		      "NUL byte"));
	CHECK(refused("tls_server_config:\n  certfile: a\n", 2, "unknown key 'certfile'"));
	CHECK(refused("tls_config:\n  cert_file: a\n", 1, "unknown key 'tls_config'"));
	CHECK(refused("basic_auth_users:\n  alice: secret\n", 2, "not a bcrypt hash"));
	CHECK(refused("basic_auth_users:\n  alice: $1$abc$defghijklmnop\n", 2,
		      "not a bcrypt hash"));
	CHECK(refused("basic_auth_users:\n  alice:\n", 2, "hash of 'alice' is missing"));
	snprintf(text, sizeof(text), "basic_auth_users:\n  \"a:b\": %s\n", hash_cost4);
	CHECK(refused(text, 2, "cannot be a user name"));
	CHECK(refused("basic_auth_users: [alice]\n", 1, "a mapping"));
	CHECK(refused("http_server_config:\n  http2: maybe\n", 2, "true or false"));
	CHECK(refused("http_server_config:\n  headers:\n    Content-Type: x\n", 3,
		      "set by the exporter"));
	CHECK(refused("http_server_config:\n  headers:\n    \"Bad Name\": x\n", 3,
		      "not a header name"));
	CHECK(refused("http_server_config:\n  headers:\n    X-A: \"a\\nb\"\n", 3,
		      "control character"));
	CHECK(refused("basic_auth_users: {}\n---\nbasic_auth_users: {}\n", 3,
		      "a second YAML document"));
}

static void test_load_file(void)
{
	char dir[] = "/tmp/pgoff-webcfg.XXXXXX", path[64], text[256];
	struct web_config c;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	CHECK(web_config_load(path, &c, err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "web.yml: cannot read it: No such file"));
	f = fopen(path, "w");
	CHECK(f);
	snprintf(text, sizeof(text), "tls_server_config:\n  cert_file: s.crt\n"
		 "  key_file: s.key\n");
	fputs(text, f);
	fclose(f);
	CHECK(web_config_load(path, &c, err, sizeof(err)) == 0);
	snprintf(text, sizeof(text), "%s/s.crt", dir);
	CHECK_STR(c.cert_file, text);
	web_config_free(&c);
	f = fopen(path, "w");
	CHECK(f);
	fputs("basic_auth_users:\n  bob: nope\n", f);
	fclose(f);
	CHECK(web_config_load(path, &c, err, sizeof(err)) == -EINVAL);
	snprintf(text, sizeof(text), "%s:2: ", path);
	CHECK(strncmp(err, text, strlen(text)) == 0);
	unlink(path);
	rmdir(dir);
}

static void test_bcrypt_hash_valid(void)
{
	CHECK(bcrypt_hash_valid(hash_cost4));
	CHECK(bcrypt_hash_valid("$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"));
	CHECK(!bcrypt_hash_valid("$2x$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"));
	CHECK(!bcrypt_hash_valid("$2a$03$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"));
	CHECK(!bcrypt_hash_valid("$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhW"));
	CHECK(!bcrypt_hash_valid("$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lh!y"));
}

static void test_basic_auth(void)
{
	struct web_config c;
	char text[512], other[128];

	make_hash("other secret", other, sizeof(other));
	snprintf(text, sizeof(text), "basic_auth_users:\n  prometheus: %s\n"
		 "  grafana: %s\n", hash_cost4, other);
	CHECK(parse(text, &c) == 0);
	CHECK(basic_auth_check(&c, "prometheus", "secret") == 0);
	CHECK(basic_auth_check(&c, "grafana", "other secret") == 0);
	CHECK(basic_auth_check(&c, "prometheus", "other secret") == -EACCES);
	CHECK(basic_auth_check(&c, "prometheus", "Secret") == -EACCES);
	CHECK(basic_auth_check(&c, "prometheus", "") == -EACCES);
	CHECK(basic_auth_check(&c, "prometheus", NULL) == -EACCES);
	CHECK(basic_auth_check(&c, "nobody", "secret") == -EACCES);
	CHECK(basic_auth_check(&c, NULL, NULL) == -EACCES);
	CHECK(basic_auth_check(&c, "prometheu", "secret") == -EACCES);
	CHECK(basic_auth_check(&c, "prometheusx", "secret") == -EACCES);
	web_config_free(&c);
	CHECK(parse("", &c) == 0);
	CHECK(basic_auth_check(&c, "prometheus", "secret") == -EACCES);
}

/* As the HTTP server asks: the remembered password, else bcrypt. */
static int cached(struct basic_auth *a, const char *user, const char *password)
{
	if (basic_auth_remembered(a, user, password) == 0)
		return 0;
	return basic_auth_check_remember(a, user, password);
}

/* The remembered password: right again is accepted, anything else is
 * still refused, and no password is kept in clear. */
static void test_basic_auth_cached(void)
{
	struct web_config c;
	struct basic_auth a;
	char text[512], other[128];

	make_hash("other secret", other, sizeof(other));
	snprintf(text, sizeof(text), "basic_auth_users:\n  prometheus: %s\n"
		 "  grafana: %s\n", hash_cost4, other);
	CHECK(parse(text, &c) == 0);
	basic_auth_init(&a, &c);
	CHECK(cached(&a, "prometheus", "wrong") == -EACCES);
	CHECK(a.accepted[0][0] == '\0');
	CHECK(basic_auth_remembered(&a, "prometheus", "secret") == -EACCES);
	CHECK(cached(&a, "prometheus", "secret") == 0);
	CHECK(strncmp(a.accepted[0], "$5$rounds=1000$", 15) == 0);
	CHECK(basic_auth_remembered(&a, "prometheus", "secret") == 0);
	CHECK(basic_auth_remembered(&a, "prometheus", "secreT") == -EACCES);
	CHECK(!strstr(a.accepted[0], "secret"));
	CHECK(cached(&a, "prometheus", "secret") == 0);
	CHECK(cached(&a, "prometheus", "secreT") == -EACCES);
	CHECK(cached(&a, "prometheus", NULL) == -EACCES);
	/* one user's remembered password is not another's */
	CHECK(cached(&a, "grafana", "secret") == -EACCES);
	CHECK(cached(&a, "grafana", "other secret") == 0);
	CHECK(cached(&a, "nobody", "secret") == -EACCES);
	basic_auth_free(&a);
	CHECK(a.accepted[0][0] == '\0');
	web_config_free(&c);
}

int main(void)
{
	make_hash("secret", hash_cost4, sizeof(hash_cost4));
	RUN(test_empty_file_is_plain_http);
	RUN(test_toolkit_file);
	RUN(test_tls_defaults);
	RUN(test_bad_files);
	RUN(test_load_file);
	RUN(test_bcrypt_hash_valid);
	RUN(test_basic_auth);
	RUN(test_basic_auth_cached);
	return CHECK_DONE();
}
