// SPDX-License-Identifier: GPL-2.0-only
/* web_config.c - the exporter toolkit's web config file; see web_config.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>
#include "exporter/basic_auth.h"
#include "exporter/web_config.h"

#define WEB_CONFIG_MAX_BYTES (1 << 20)

struct parse {
	const char *name, *dir;
	yaml_document_t *doc;
	struct web_config *c;
	char *err;
	size_t errlen;
	int min_version, max_version;	/* 0 … 3 for TLS 1.0 … 1.3 */
	bool prefer_server;
};

static int fail(struct parse *p, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parse *p, const yaml_node_t *at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (at)
		snprintf(p->err, p->errlen, "%s:%zu: %s", p->name,
			 at->start_mark.line + 1, msg);
	else
		snprintf(p->err, p->errlen, "%s: %s", p->name, msg);
	return -EINVAL;
}

static yaml_node_t *node(struct parse *p, int i)
{
	return yaml_document_get_node(p->doc, i);
}

/* A scalar's text; NULL for a null (~, null, empty) or a non-scalar. */
static const char *scalar(const yaml_node_t *n)
{
	const char *s;

	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	s = (const char *)n->data.scalar.value;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!*s || strcmp(s, "~") == 0 || strcasecmp(s, "null") == 0))
		return NULL;
	return s;
}

static bool is_null(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && !scalar(n);
}

/* A string value: a scalar with no NUL byte in it. */
static int string_value(struct parse *p, const yaml_node_t *n,
			const char *what, const char **out)
{
	const char *s = scalar(n);

	if (!s)
		return fail(p, n, "%s: a string is needed here", what);
	if (strlen(s) != n->data.scalar.length)
		return fail(p, n, "%s: contains a NUL byte", what);
	*out = s;
	return 0;
}

static int bool_value(struct parse *p, const yaml_node_t *n, const char *what,
		      bool *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	const char *s = scalar(n);

	for (size_t i = 0; s && i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = true, 0;
		if (strcasecmp(s, no[i]) == 0)
			return *out = false, 0;
	}
	return fail(p, n, "%s: true or false is needed here", what);
}

static int need_mapping(struct parse *p, const yaml_node_t *n, const char *what)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(p, n, "%s: a mapping (key: value lines) is needed here",
			    what);
	return 0;
}

/* Iterate a mapping's pairs: key text and value node; duplicate keys
 * are refused (the last one would silently win). */
typedef int (*pair_fn)(struct parse *p, const yaml_node_t *key,
		       const char *k, yaml_node_t *v);

static int each_pair(struct parse *p, const yaml_node_t *map, const char *what,
		     pair_fn fn)
{
	yaml_node_pair_t *pair, *other;
	int ret;

	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = node(p, pair->key), *val = node(p, pair->value);
		const char *k;

		if (!key || !val)
			return fail(p, map, "%s: a broken mapping", what);
		ret = string_value(p, key, what, &k);
		if (ret)
			return ret;
		for (other = map->data.mapping.pairs.start; other < pair; other++) {
			const char *o = scalar(node(p, other->key));

			if (o && strcmp(o, k) == 0)
				return fail(p, key, "%s: '%s' is given twice",
					    what, k);
		}
		ret = fn(p, key, k, val);
		if (ret)
			return ret;
	}
	return 0;
}

/* A path from the file, relative to its directory as the toolkit does. */
static int path_value(struct parse *p, const yaml_node_t *n, const char *what,
		      char **out)
{
	const char *s;
	int ret = string_value(p, n, what, &s);

	if (ret)
		return ret;
	if (!*s)
		return fail(p, n, "%s: an empty path", what);
	free(*out);
	if (s[0] == '/' || !p->dir)
		*out = strdup(s);
	else if (asprintf(out, "%s/%s", p->dir, s) < 0)
		*out = NULL;
	return *out ? 0 : -ENOMEM;
}

static int tls_version(struct parse *p, const yaml_node_t *n, const char *what,
		       int *out)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	const char *s;
	int ret = string_value(p, n, what, &s);

	if (ret)
		return ret;
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return *out = i, 0;
	return fail(p, n, "%s: '%s' is not TLS10, TLS11, TLS12 or TLS13", what, s);
}

static int tls_pair(struct parse *p, const yaml_node_t *key, const char *k,
		    yaml_node_t *v)
{
	const char *s;
	int ret;

	if (strcmp(k, "cert_file") == 0)
		return path_value(p, v, "tls_server_config.cert_file",
				  &p->c->cert_file);
	if (strcmp(k, "key_file") == 0)
		return path_value(p, v, "tls_server_config.key_file",
				  &p->c->key_file);
	if (strcmp(k, "min_version") == 0)
		return tls_version(p, v, "tls_server_config.min_version",
				   &p->min_version);
	if (strcmp(k, "max_version") == 0)
		return tls_version(p, v, "tls_server_config.max_version",
				   &p->max_version);
	if (strcmp(k, "prefer_server_cipher_suites") == 0)
		return bool_value(p, v, "tls_server_config.prefer_server_cipher_suites",
				  &p->prefer_server);
	if (strcmp(k, "client_auth_type") == 0) {
		ret = string_value(p, v, "tls_server_config.client_auth_type", &s);
		if (ret)
			return ret;
		if (strcmp(s, "NoClientCert") != 0)
			return fail(p, v, "tls_server_config.client_auth_type: "
				    "'%s' is not supported by pgoff_exporter "
				    "(only NoClientCert: use basic_auth_users)", s);
		return 0;
	}
	if (strcmp(k, "client_ca_file") == 0 && is_null(v))
		return 0;
	if (strcmp(k, "client_ca_file") == 0 || strcmp(k, "cipher_suites") == 0 ||
	    strcmp(k, "curve_preferences") == 0 || strcmp(k, "cert") == 0 ||
	    strcmp(k, "key") == 0 || strcmp(k, "client_allowed_sans") == 0)
		return fail(p, key, "tls_server_config.%s is not supported by "
			    "pgoff_exporter; remove it (GnuTLS's default cipher "
			    "suites and curves apply; certificates come from "
			    "cert_file and key_file)", k);
	return fail(p, key, "tls_server_config: unknown key '%s'", k);
}

static bool header_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)	/* an HTTP token */
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

static int header_pair(struct parse *p, const yaml_node_t *key, const char *k,
		       yaml_node_t *v)
{
	struct web_config *c = p->c;
	const char *s;
	int ret;

	if (!header_name_ok(k))
		return fail(p, key, "http_server_config.headers: '%s' is not a "
			    "header name", k);
	if (strcasecmp(k, "Content-Type") == 0 ||
	    strcasecmp(k, "Content-Length") == 0 ||
	    strcasecmp(k, "Content-Encoding") == 0 ||
	    strcasecmp(k, "WWW-Authenticate") == 0 ||
	    strcasecmp(k, "Connection") == 0 ||
	    strcasecmp(k, "Transfer-Encoding") == 0)
		return fail(p, key, "http_server_config.headers: %s is set by "
			    "the exporter and cannot be configured", k);
	ret = string_value(p, v, "http_server_config.headers", &s);
	if (ret)
		return ret;
	for (const char *q = s; *q; q++)
		if ((unsigned char)*q < 0x20 && *q != '\t')
			return fail(p, v, "http_server_config.headers: the value "
				    "of %s has a control character", k);
	if (c->nheaders == WEB_MAX_HEADERS)
		return fail(p, key, "http_server_config.headers: more than %d",
			    WEB_MAX_HEADERS);
	c->headers[c->nheaders].name = strdup(k);
	c->headers[c->nheaders].value = strdup(s);
	c->nheaders++;
	return c->headers[c->nheaders - 1].name &&
	       c->headers[c->nheaders - 1].value ? 0 : -ENOMEM;
}

static int http_pair(struct parse *p, const yaml_node_t *key, const char *k,
		     yaml_node_t *v)
{
	bool http2;

	if (strcmp(k, "http2") == 0)	/* a wish: HTTP/1.1 is what there is */
		return bool_value(p, v, "http_server_config.http2", &http2);
	if (strcmp(k, "headers") == 0) {
		if (is_null(v))
			return 0;
		return need_mapping(p, v, "http_server_config.headers") ?:
		       each_pair(p, v, "http_server_config.headers", header_pair);
	}
	return fail(p, key, "http_server_config: unknown key '%s'", k);
}

static int user_pair(struct parse *p, const yaml_node_t *key, const char *k,
		     yaml_node_t *v)
{
	struct web_config *c = p->c;
	const char *hash;
	int ret;

	if (!*k || strchr(k, ':'))
		return fail(p, key, "basic_auth_users: '%s' cannot be a user name "
			    "(empty, or with a colon)", k);
	ret = string_value(p, v, "basic_auth_users", &hash);
	if (ret)
		return fail(p, v, "basic_auth_users: the password hash of '%s' "
			    "is missing", k);
	if (!bcrypt_hash_valid(hash))
		return fail(p, v, "basic_auth_users: the password hash of '%s' "
			    "is not a bcrypt hash ($2y$, $2b$ or $2a$, 60 "
			    "characters; make one with htpasswd -nBC 10 %s)", k, k);
	if (c->nusers == WEB_MAX_USERS)
		return fail(p, key, "basic_auth_users: more than %d users",
			    WEB_MAX_USERS);
	c->users[c->nusers].name = strdup(k);
	c->users[c->nusers].hash = strdup(hash);
	c->nusers++;
	return c->users[c->nusers - 1].name && c->users[c->nusers - 1].hash ?
	       0 : -ENOMEM;
}

static int top_pair(struct parse *p, const yaml_node_t *key, const char *k,
		    yaml_node_t *v)
{
	int ret;

	if (strcmp(k, "tls_server_config") == 0) {
		if (is_null(v))
			return 0;
		ret = need_mapping(p, v, k);
		if (ret)
			return ret;
		p->c->tls = v->data.mapping.pairs.top > v->data.mapping.pairs.start;
		ret = each_pair(p, v, k, tls_pair);
		if (ret || !p->c->tls)
			return ret;
		if (!p->c->cert_file)
			return fail(p, v, "tls_server_config: cert_file is missing");
		if (!p->c->key_file)
			return fail(p, v, "tls_server_config: key_file is missing");
		if (p->min_version > p->max_version)
			return fail(p, v, "tls_server_config: min_version is above "
				    "max_version");
		return 0;
	}
	if (strcmp(k, "http_server_config") == 0)
		return is_null(v) ? 0 : need_mapping(p, v, k) ?:
		       each_pair(p, v, k, http_pair);
	if (strcmp(k, "basic_auth_users") == 0)
		return is_null(v) ? 0 : need_mapping(p, v, k) ?:
		       each_pair(p, v, k, user_pair);
	return fail(p, key, "unknown key '%s' (tls_server_config, "
		    "http_server_config or basic_auth_users)", k);
}

/* libyaml's own words, with the line where what it parsed began. */
static void yaml_error(const yaml_parser_t *y, const char *name, char *err,
		       size_t errlen)
{
	if (y->context)
		snprintf(err, errlen, "%s:%zu: %s (%s that began on line %zu)",
			 name, y->problem_mark.line + 1,
			 y->problem ? y->problem : "not YAML", y->context,
			 y->context_mark.line + 1);
	else
		snprintf(err, errlen, "%s:%zu: %s", name,
			 y->problem_mark.line + 1,
			 y->problem ? y->problem : "not YAML");
}

static void make_priorities(struct parse *p)
{
	static const char *const vers[] = { "+VERS-TLS1.0", "+VERS-TLS1.1",
					    "+VERS-TLS1.2", "+VERS-TLS1.3" };
	size_t n;

	n = (size_t)snprintf(p->c->priorities, sizeof(p->c->priorities),
			     "NORMAL:-VERS-ALL");
	for (int v = p->max_version; v >= p->min_version; v--)
		n += (size_t)snprintf(p->c->priorities + n,
				      sizeof(p->c->priorities) - n, ":%s", vers[v]);
	if (p->prefer_server)
		snprintf(p->c->priorities + n, sizeof(p->c->priorities) - n,
			 ":%%SERVER_PRECEDENCE");
}

int web_config_parse(const char *name, const char *dir, const char *text,
		     size_t len, struct web_config *c, char *err, size_t errlen)
{
	struct parse p = {
		.name = name, .dir = dir, .c = c, .err = err, .errlen = errlen,
		.min_version = 2, .max_version = 3, .prefer_server = true,
	};
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	yaml_node_t *root;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		ret = parser.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
		yaml_error(&parser, name, err, errlen);
		yaml_parser_delete(&parser);
		return ret;
	}
	p.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root))
		ret = need_mapping(&p, root, "the file") ?:
		      each_pair(&p, root, "the file", top_pair);
	if (!ret) {	/* a second document would be ignored: refuse it */
		if (!yaml_parser_load(&parser, &extra)) {
			yaml_error(&parser, name, err, errlen);
			ret = -EINVAL;
		} else {
			if (yaml_document_get_root_node(&extra))
				ret = fail(&p, yaml_document_get_root_node(&extra),
					   "a second YAML document; only one "
					   "is read");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (ret) {
		web_config_free(c);
		return ret;
	}
	make_priorities(&p);
	return 0;
}

int web_config_load(const char *path, struct web_config *c, char *err,
		    size_t errlen)
{
	char *text = NULL, *dir = NULL, *slash;
	struct stat st;
	size_t got = 0;
	int fd, ret;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot read it: %s", path,
			 strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > WEB_CONFIG_MAX_BYTES) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file of at most 1 MiB",
			 path);
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	dir = strdup(path);
	if (!text || !dir) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : -EIO;
			snprintf(err, errlen, "%s: cannot read it: %s", path,
				 n ? strerror(errno) : "it shrank");
			goto out;
		}
		got += (size_t)n;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	ret = web_config_parse(path, slash ? dir : NULL, text, got, c, err, errlen);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	free(dir);
	return ret;
}

void web_config_free(struct web_config *c)
{
	free(c->cert_file);
	free(c->key_file);
	for (size_t i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	for (size_t i = 0; i < c->nheaders; i++) {
		free(c->headers[i].name);
		free(c->headers[i].value);
	}
	memset(c, 0, sizeof(*c));
}
