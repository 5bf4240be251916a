// SPDX-License-Identifier: GPL-2.0-only
/* http.c - the exporter's HTTP(S) server with libmicrohttpd; see http.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "exporter/basic_auth.h"
#include "exporter/http.h"
#include "exporter/self_stats.h"
#include "protocol/log.h"

#define REALM "pgoff_exporter"
#define PEM_MAX_BYTES (1 << 20)

struct http_server {
	struct http_options o;
	struct MHD_Daemon *daemon;
	char *cert_pem, *key_pem;
	int fd;
	struct basic_auth auth;
};

int http_listen_socket(const char *address, int *out, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | AI_PASSIVE,
	}, *res = NULL, *ai;
	char host[256];
	const char *colon = strrchr(address, ':'), *port;
	size_t hlen;
	int fd = -1, one = 1, zero = 0, ret;

	if (!colon || !colon[1]) {
		snprintf(err, errlen, "--web.listen-address '%s': HOST:PORT is "
			 "needed (':PORT' for every address)", address);
		return -EINVAL;
	}
	port = colon + 1;
	hlen = (size_t)(colon - address);
	if (hlen >= 2 && address[0] == '[' && address[hlen - 1] == ']') {
		address++;	/* [::1]:port */
		hlen -= 2;
	}
	if (hlen >= sizeof(host)) {
		snprintf(err, errlen, "--web.listen-address: the host is too long");
		return -EINVAL;
	}
	memcpy(host, address, hlen);
	host[hlen] = '\0';
	if (!hlen)
		hints.ai_family = AF_INET6;	/* both families, below */
	ret = getaddrinfo(hlen ? host : NULL, port, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "--web.listen-address '%s': %s", address,
			 gai_strerror(ret));
		return -EINVAL;
	}
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!hlen)	/* ":port": IPv4 too, through the IPv6 socket */
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", address,
			 strerror(-ret));
		return ret;
	}
	*out = fd;
	return 0;
}

static char *read_pem(const char *path, const char *what, char *err,
		      size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "tls_server_config.%s %s: %s", what, path,
			 strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > PEM_MAX_BYTES) {
		snprintf(err, errlen, "tls_server_config.%s %s: not a PEM file "
			 "of at most 1 MiB", what, path);
		goto fail;
	}
	buf = calloc(1, (size_t)st.st_size + 1);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "tls_server_config.%s %s: %s", what,
				 path, n ? strerror(errno) : "it shrank");
			goto fail;
		}
		got += (size_t)n;
	}
	close(fd);
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status,
				 const char *type, char *body, size_t len,
				 bool must_free, const struct http_server *s)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, must_free ?
					    MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	for (size_t i = 0; s->o.web && i < s->o.web->nheaders; i++)
		MHD_add_response_header(r, s->o.web->headers[i].name,
					s->o.web->headers[i].value);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(c, REALM, r);
	else
		ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_static(struct MHD_Connection *c, unsigned status,
				   const char *msg, const struct http_server *s)
{
	return send_text(c, status, "text/plain; charset=utf-8", (char *)msg,
			 strlen(msg), false, s);
}

/* 0: let it through; else the status of the answer already queued. */
static int authorize(struct http_server *s, struct MHD_Connection *c,
		     enum MHD_Result *queued)
{
	char *user, *password = NULL;
	int ret;

	if (!s->o.web || !s->o.web->nusers)
		return 0;
	user = MHD_basic_auth_get_username_password(c, &password);
	ret = basic_auth_check_cached(&s->auth, user, password);
	if (ret == -EACCES)
		log_debug("refused a request: %s", user ? "wrong user or password" :
			  "no credentials");
	else if (ret == -ENOMEM)
		log_warnx("cannot check a password: out of memory");
	else if (ret)
		log_warnx("cannot check a password: crypt_rn failed (does this "
			  "libxcrypt support bcrypt?)");
	if (password) {
		explicit_bzero(password, strlen(password));
		MHD_free(password);
	}
	if (user)
		MHD_free(user);
	if (!ret)
		return 0;
	if (ret == -EACCES) {
		*queued = send_static(c, MHD_HTTP_UNAUTHORIZED, "Unauthorized\n", s);
		return MHD_HTTP_UNAUTHORIZED;
	}
	*queued = send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			      "cannot check the password\n", s);
	return MHD_HTTP_INTERNAL_SERVER_ERROR;
}

static enum MHD_Result landing(struct http_server *s, struct MHD_Connection *c)
{
	char *page = NULL;
	int n;

	/* main.c lets the path hold no character HTML would need escaped */
	n = asprintf(&page,
		     "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		     "<title>pgoff exporter</title></head><body>\n"
		     "<h1>pgoff exporter</h1>\n"
		     "<p>Where PostgreSQL backends spend their time off the CPU, "
		     "from pgoffd, for Prometheus.</p>\n"
		     "<p><a href=\"%s\">Metrics</a></p>\n"
		     "<p>Version %s (%s).</p>\n</body></html>\n",
		     s->o.telemetry_path, s->o.version, s->o.revision);
	if (n < 0)
		return MHD_NO;
	return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", page,
			 (size_t)n, true, s);
}

static enum MHD_Result metrics(struct http_server *s, struct MHD_Connection *c)
{
	struct ex_scrape sc = {
		.version = s->o.version, .revision = s->o.revision,
		.per_pid = s->o.per_pid,
	};
	struct ex_process self;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	broker_client_scrape(s->o.broker, &sc);
	sc.wall_now = (double)time(NULL);
	if (self_stats_read(&self) == 0)
		sc.self = &self;
	f = open_memstream(&body, &len);
	if (!f)
		return send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory\n", s);
	ret = ex_render(f, &sc);
	if (fclose(f) || ret) {
		log_warnx("rendering the metrics: %s", strerror(ret ? -ret : EIO));
		free(body);
		return send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "cannot render the metrics; see the exporter's "
				   "log\n", s);
	}
	return send_text(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			 body, len, true, s);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct http_server *s = cls;
	enum MHD_Result queued;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (*upload_data_size)	/* a body to a GET: not ours to read */
		return MHD_NO;
	if (authorize(s, c, &queued))
		return queued;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "only GET and HEAD\n", s);
	if (strcmp(url, s->o.telemetry_path) == 0)
		return metrics(s, c);
	if (strcmp(url, "/") == 0)
		return landing(s, c);
	return send_static(c, MHD_HTTP_NOT_FOUND, "Not Found\n", s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	log_vmsg(LOG_LEVEL_WARN, fmt, ap);
}

/* The certificate and key of web, if it has TLS, into *cert and *key. */
static int load_tls(const struct web_config *web, char **cert, char **key,
		    char *err, size_t errlen)
{
	*cert = *key = NULL;
	if (!web || !web->tls)
		return 0;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen, "this libmicrohttpd has no TLS support (GnuTLS)");
		return -ENOTSUP;
	}
	*cert = read_pem(web->cert_file, "cert_file", err, errlen);
	*key = *cert ? read_pem(web->key_file, "key_file", err, errlen) : NULL;
	if (*key)
		return 0;
	free(*cert);
	*cert = NULL;
	return -EINVAL;
}

static void free_key(char *key)
{
	if (key)
		explicit_bzero(key, strlen(key));
	free(key);
}

/* libmicrohttpd on s->fd with s's web config, certificate and key. */
static int start_daemon(struct http_server *s, char *err, size_t errlen)
{
	/* ITC: MHD_quiesce_daemon hands the socket back for a reload */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			 MHD_USE_ITC;
	bool tls = s->o.web && s->o.web->tls;

	s->daemon = MHD_start_daemon(
		flags | (tls ? MHD_USE_TLS : 0), 0, NULL, NULL, answer, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,	/* first: all */
		MHD_OPTION_LISTEN_SOCKET, s->fd,
		MHD_OPTION_CONNECTION_LIMIT, 64u,
		MHD_OPTION_CONNECTION_TIMEOUT, 30u,
		tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, s->cert_pem,
		MHD_OPTION_HTTPS_MEM_KEY, s->key_pem,
		MHD_OPTION_HTTPS_PRIORITIES, tls ? s->o.web->priorities : NULL,
		MHD_OPTION_END);
	if (s->daemon)
		return 0;
	snprintf(err, errlen, "cannot start the HTTP%s server on %s%s",
		 tls ? "S" : "", s->o.listen_address, tls ?
		 " (is key_file the key of cert_file, both PEM? see the "
		 "warning above)" : "");
	return -EINVAL;
}

int http_start(const struct http_options *o, struct http_server **out,
	       char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->fd = -1;
	if (o->web)
		basic_auth_init(&s->auth, o->web);
	ret = load_tls(o->web, &s->cert_pem, &s->key_pem, err, errlen);
	if (!ret)
		ret = http_listen_socket(o->listen_address, &s->fd, err, errlen);
	if (!ret)
		ret = start_daemon(s, err, errlen);
	if (!ret) {
		*out = s;
		return 0;
	}
	if (s->fd >= 0)
		close(s->fd);
	free(s->cert_pem);
	free_key(s->key_pem);
	free(s);
	return ret;
}

int http_reload(struct http_server *s, const struct web_config *web,
		char *err, size_t errlen)
{
	const struct web_config *old_web = s->o.web;
	char *cert, *key, *old_cert = s->cert_pem, *old_key = s->key_pem;
	int ret = load_tls(web, &cert, &key, err, errlen);

	if (ret)
		return ret;	/* still serving as before */
	/* stop accepting (connections wait in the socket's backlog), let
	 * the request in progress end, and start again on the same socket */
	if (MHD_quiesce_daemon(s->daemon) != s->fd) {
		snprintf(err, errlen, "libmicrohttpd cannot hand back its socket");
		free(cert);
		free_key(key);
		return -EIO;
	}
	MHD_stop_daemon(s->daemon);
	s->o.web = web;
	s->cert_pem = cert;
	s->key_pem = key;
	basic_auth_free(&s->auth);
	basic_auth_init(&s->auth, web);
	ret = start_daemon(s, err, errlen);
	if (ret) {	/* as it was, or nothing */
		char again[256];

		free(cert);
		free_key(key);
		s->o.web = old_web;
		s->cert_pem = old_cert;
		s->key_pem = old_key;
		basic_auth_init(&s->auth, old_web);
		if (start_daemon(s, again, sizeof(again))) {
			snprintf(err + strlen(err), errlen - strlen(err),
				 "; and again with the previous file: %s", again);
			return -EIO;
		}
		return ret;
	}
	free(old_cert);
	free_key(old_key);
	return 0;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	if (s->fd >= 0)
		close(s->fd);
	free(s->cert_pem);
	free_key(s->key_pem);
	basic_auth_free(&s->auth);
	free(s);
}
