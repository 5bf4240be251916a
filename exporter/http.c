// SPDX-License-Identifier: GPL-2.0-only
/* http.c - the exporter's HTTP(S) server with libmicrohttpd; see http.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "exporter/auth_limit.h"
#include "exporter/basic_auth.h"
#include "exporter/http.h"
#include "exporter/profile.h"
#include "exporter/self_stats.h"
#include "common/log.h"

#define REALM "pgoff_exporter"
#define PEM_MAX_BYTES (1 << 20)
/* Each connection has a thread of its own, so that one slow client (a
 * header trickled in, a bcrypt check) holds up no other. libmicrohttpd
 * closes a connection past these at once; they bound the threads. */
#define CONNECTION_LIMIT	128u
#define PER_ADDRESS_LIMIT	16u
/* Below them, a new connection past these closes the oldest one that
 * has no whole request yet (of its address, or of all): one that is
 * answered needs its header for a millisecond, so whoever holds
 * connections open only makes room. The gap to the hard limits is for
 * the connections closed and not yet gone. An IPv6 address counts by its
 * /64, as for the limit on wrong passwords. */
#define CROWD_TOTAL		96u
#define CROWD_PER_ADDRESS	8u
/* Whatever trickles in, a request must be whole this long after its
 * connection opened or its previous answer was sent (a connection kept
 * alive between scrapes is closed then, as by an idle timeout) */
#define HEADER_DEADLINE_MS	(HTTP_HEADER_DEADLINE_S * 1000)
#define IDLE_TIMEOUT_S		30u	/* libmicrohttpd's: no byte either way */
/* pprof profiles being made at once (each a replay of pgoffd's flight
 * record on a connection of its own, at most PROFILE_REPLAY_DEADLINE_MS);
 * past that a request is answered 503 with Retry-After */
#define PROFILE_CONCURRENCY	2u
#define PROFILE_RETRY_S		5u
/* Lines about clients (wrong passwords, deadlines, libmicrohttpd's): at
 * most LOG_WINDOW_LINES of a kind in LOG_WINDOW_MS, then one line
 * counting the rest; the metrics count them all */
#define LOG_WINDOW_MS		10000
#define LOG_WINDOW_LINES	5

/* A connection, from libmicrohttpd's start to its close notification
 * (the socket is open until that returns). */
struct http_conn {
	struct http_conn *prev, *next;
	int fd;
	struct auth_limit_key key;	/* its client's address */
	int64_t deadline_ms;	/* 0: a request is being answered */
	bool cut;		/* shut down (deadline, room): closing */
};

enum { LOG_WRONG, LOG_LIMITED, LOG_CLOSED, LOG_MHD, LOG_KINDS };

struct log_window {
	const char *what;	/* "wrong passwords" */
	int64_t end_ms;
	unsigned lines;
	uint64_t held;
};

struct http_server {
	struct http_options o;
	struct MHD_Daemon *daemon;
	char *cert_pem, *key_pem;
	int fd;
	struct basic_auth auth;
	/* one scrape at a time: the connection to pgoffd and what it holds
	 * from one scrape to the next (held counters, streaks) */
	pthread_mutex_t scrape_lock;
	/* one bcrypt check at a time (check_password) */
	pthread_mutex_t check_lock;
	/* lock: everything below; wake: the watcher, when a deadline or a
	 * log line may be due sooner than it thought */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct auth_limit limit;
	struct ex_http counts;
	struct log_window logs[LOG_KINDS];
	struct http_conn *conns;
	unsigned profiles;	/* being made */
	bool watching, stop;
	pthread_t watcher;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Under s->lock: whether a line of w's kind may be written now; first
 * the count of what an earlier window held back, if it is over. */
static void log_window_flush(struct log_window *w, int64_t now)
{
	if (w->held && now >= w->end_ms) {
		log_warnx("%" PRIu64 " more %s in %d s, not logged one by one "
			  "(the metrics count them)", w->held, w->what,
			  LOG_WINDOW_MS / 1000);
		w->held = 0;
	}
}

static bool log_window_allow(struct log_window *w, int64_t now)
{
	log_window_flush(w, now);
	if (now >= w->end_ms) {
		w->end_ms = now + LOG_WINDOW_MS;
		w->lines = 0;
	}
	if (w->lines < LOG_WINDOW_LINES) {
		w->lines++;
		return true;
	}
	w->held++;
	return false;
}

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

/* retry_after: seconds for a 429's or 503's Retry-After, else 0 */
static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status,
				 const char *type, char *body, size_t len,
				 bool must_free, const struct http_server *s,
				 unsigned retry_after)
{
	char retry[16];

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
	if (strcmp(type, "application/octet-stream") == 0)	/* a profile */
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					"attachment; filename=\"profile.pb.gz\"");
	if (retry_after) {
		snprintf(retry, sizeof(retry), "%u", retry_after);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	}
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
			 strlen(msg), false, s, 0);
}

/* The client's address, as text for the log, and as the limit's key. */
static void client_address(struct MHD_Connection *c, char *text, size_t len,
			   struct auth_limit_key *key)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	auth_limit_key(sa, key);
	snprintf(text, len, "an unknown address");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
			  text, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
			  text, (socklen_t)len);
}

/* Under s->lock: whether key may have its password checked; if not,
 * counted and (at a limited rate) logged. */
static bool limit_allows(struct http_server *s, const struct auth_limit_key *key,
			 const char *addr, unsigned *retry_s)
{
	int64_t now = now_ms();

	if (auth_limit_allow(&s->limit, key, now, retry_s))
		return true;
	s->counts.auth_rate_limited++;
	if (log_window_allow(&s->logs[LOG_LIMITED], now))
		log_warnx("too many wrong passwords from %s: its requests are "
			  "answered 429 without a check for %u s", addr, *retry_s);
	pthread_cond_signal(&s->wake);	/* a count of lines held may be due */
	return false;
}

/*
 * The password check: a remembered right password first (no bcrypt, and
 * no limit: a scraper sharing its address with a guesser gets in), then
 * the address's limit, then bcrypt, one check at a time (a flood of
 * wrong passwords keeps one CPU busy, not all, and each check sees the
 * outcome of the ones before). Returns 0, -EACCES (wrong), -EAGAIN (not
 * checked: *retry_s), or what basic_auth_check returns.
 */
static int check_password(struct http_server *s, struct MHD_Connection *c,
			  const char *user, const char *password,
			  unsigned *retry_s)
{
	struct auth_limit_key key;
	char addr[INET6_ADDRSTRLEN];
	bool allowed, say = false;
	int ret;

	if (basic_auth_remembered(&s->auth, user, password) == 0)
		return 0;
	client_address(c, addr, sizeof(addr), &key);
	/* an address over its limit waits for no other's check */
	pthread_mutex_lock(&s->lock);
	allowed = limit_allows(s, &key, addr, retry_s);
	pthread_mutex_unlock(&s->lock);
	if (!allowed)
		return -EAGAIN;
	pthread_mutex_lock(&s->check_lock);
	pthread_mutex_lock(&s->lock);
	allowed = limit_allows(s, &key, addr, retry_s);
	pthread_mutex_unlock(&s->lock);
	ret = allowed ? basic_auth_check_remember(&s->auth, user, password) :
	      -EAGAIN;
	if (ret == -EACCES) {
		pthread_mutex_lock(&s->lock);
		auth_limit_fail(&s->limit, &key, now_ms());
		s->counts.auth_wrong++;
		say = log_window_allow(&s->logs[LOG_WRONG], now_ms());
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&s->check_lock);
	if (say)
		log_warnx("a wrong user or password from %s", addr);
	return ret;
}

/* 0: let it through; else the status of the answer already queued. */
static int authorize(struct http_server *s, struct MHD_Connection *c,
		     enum MHD_Result *queued)
{
	char *user, *password = NULL;
	unsigned retry_s = 0;
	int ret;

	if (!s->o.web || !s->o.web->nusers)
		return 0;
	user = MHD_basic_auth_get_username_password(c, &password);
	if (user) {
		ret = check_password(s, c, user, password, &retry_s);
	} else {
		pthread_mutex_lock(&s->lock);
		s->counts.auth_missing++;
		pthread_mutex_unlock(&s->lock);
		ret = -EACCES;
	}
	if (ret == -ENOMEM)
		log_warnx("cannot check a password: out of memory");
	else if (ret && ret != -EACCES && ret != -EAGAIN)
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
	if (ret == -EAGAIN) {
		static const char later[] = "too many wrong passwords from this "
					    "address; try again later\n";

		*queued = send_text(c, MHD_HTTP_TOO_MANY_REQUESTS,
				    "text/plain; charset=utf-8", (char *)later,
				    sizeof(later) - 1, false, s, retry_s);
		return MHD_HTTP_TOO_MANY_REQUESTS;
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
		     "<p><a href=\"" HTTP_PROFILE_PATH "\">Off-CPU profile</a> "
		     "(pprof: go tool pprof, Pyroscope, Parca; ?seconds=N)</p>\n"
		     "<p>Version %s (%s).</p>\n</body></html>\n",
		     s->o.telemetry_path, s->o.version, s->o.revision);
	if (n < 0)
		return MHD_NO;
	return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", page,
			 (size_t)n, true, s, 0);
}

static enum MHD_Result metrics(struct http_server *s, struct MHD_Connection *c)
{
	struct ex_scrape sc = {
		.version = s->o.version, .revision = s->o.revision,
		.per_pid = s->o.per_pid,
	};
	struct ex_process self;
	struct ex_http counts;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	f = open_memstream(&body, &len);
	if (!f)
		return send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory\n", s);
	pthread_mutex_lock(&s->lock);
	counts = s->counts;
	pthread_mutex_unlock(&s->lock);
	sc.http = &counts;
	/* what sc borrows from the broker client stays until the next scrape */
	pthread_mutex_lock(&s->scrape_lock);
	broker_client_scrape(s->o.broker, &sc);
	sc.wall_now = (double)time(NULL);
	if (self_stats_read(&self) == 0)
		sc.self = &self;
	ret = ex_render(f, &sc);
	pthread_mutex_unlock(&s->scrape_lock);
	if (fclose(f) || ret) {
		log_warnx("rendering the metrics: %s", strerror(ret ? -ret : EIO));
		free(body);
		return send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "cannot render the metrics; see the exporter's "
				   "log\n", s);
	}
	return send_text(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
			 body, len, true, s, 0);
}

/* The seconds a profile request asks for: PROFILE_DEFAULT_SECONDS, or
 * ?seconds=N; 0 if that is not a number in range. */
static unsigned profile_seconds(struct MHD_Connection *c)
{
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "seconds");
	unsigned long v;
	char *end;

	if (!arg)
		return PROFILE_DEFAULT_SECONDS;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < 1 ||
	    v > PROFILE_MAX_SECONDS)
		return 0;
	return (unsigned)v;
}

/*
 * GET HTTP_PROFILE_PATH: a pprof profile of the last seconds, from
 * pgoffd's flight record (profile.h). Not under scrape_lock: a profile
 * has its own connection to pgoffd, and /metrics goes on meanwhile. At
 * most PROFILE_CONCURRENCY at once.
 */
static enum MHD_Result profile(struct http_server *s, struct MHD_Connection *c)
{
	unsigned seconds = profile_seconds(c);
	unsigned char *gz = NULL;
	size_t len = 0;
	char err[300], *msg;
	bool busy;
	int ret, n;

	if (!seconds) {
		pthread_mutex_lock(&s->lock);
		s->counts.profiles_bad++;
		pthread_mutex_unlock(&s->lock);
		n = asprintf(&msg, "seconds: a whole number from 1 to %d\n",
			     PROFILE_MAX_SECONDS);
		return n < 0 ? MHD_NO : send_text(c, MHD_HTTP_BAD_REQUEST,
			"text/plain; charset=utf-8", msg, (size_t)n, true, s, 0);
	}
	pthread_mutex_lock(&s->lock);
	busy = s->profiles >= PROFILE_CONCURRENCY;
	if (busy)
		s->counts.profiles_busy++;
	else
		s->profiles++;
	pthread_mutex_unlock(&s->lock);
	if (busy) {
		static const char later[] = "profiles are being made for other "
					    "requests; try again later\n";

		return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "text/plain; charset=utf-8", (char *)later,
				 sizeof(later) - 1, false, s, PROFILE_RETRY_S);
	}
	ret = profile_collect(s->o.broker->socket, seconds, &gz, &len, err,
			      sizeof(err));
	pthread_mutex_lock(&s->lock);
	s->profiles--;
	if (ret)
		s->counts.profiles_failed++;
	else
		s->counts.profiles_served++;
	pthread_mutex_unlock(&s->lock);
	if (ret) {
		log_warnx("a profile of %u s: %s", seconds, err);
		n = asprintf(&msg, "%s\n", err);
		return n < 0 ? MHD_NO : send_text(c, ret == -ENOMEM ?
			MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_SERVICE_UNAVAILABLE,
			"text/plain; charset=utf-8", msg, (size_t)n, true, s, 0);
	}
	return send_text(c, MHD_HTTP_OK, "application/octet-stream", (char *)gz,
			 len, true, s, 0);
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
	if (!*con_cls) {	/* a new request: its header is whole */
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		struct http_conn *hc = ci ? ci->socket_context : NULL;

		*con_cls = s;
		pthread_mutex_lock(&s->lock);
		if (hc)
			hc->deadline_ms = 0;
		pthread_mutex_unlock(&s->lock);
	}
	if (*upload_data_size)	/* a body to a GET: not ours to read */
		return MHD_NO;
	if (authorize(s, c, &queued))
		return queued;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "only GET and HEAD\n", s);
	if (strcmp(url, s->o.telemetry_path) == 0)
		return metrics(s, c);
	if (strcmp(url, HTTP_PROFILE_PATH) == 0)
		return profile(s, c);
	if (strcmp(url, "/") == 0)
		return landing(s, c);
	return send_static(c, MHD_HTTP_NOT_FOUND, "Not Found\n", s);
}

/* A request answered (or given up): the next one on the connection has
 * its deadline from now. */
static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct http_conn *hc = ci ? ci->socket_context : NULL;

	(void)toe;
	*con_cls = NULL;
	pthread_mutex_lock(&s->lock);
	if (hc && !hc->cut) {
		hc->deadline_ms = now_ms() + HEADER_DEADLINE_MS;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

/*
 * Under s->lock: close hc early (its thread reads the end of the socket
 * and libmicrohttpd closes it): at its header deadline, or to make room
 * (crowded).
 */
static void cut(struct http_server *s, struct http_conn *hc, bool crowded,
		int64_t now)
{
	shutdown(hc->fd, SHUT_RDWR);
	hc->deadline_ms = 0;
	hc->cut = true;
	if (crowded)
		s->counts.crowded_out++;
	else
		s->counts.header_timeouts++;
	if (!log_window_allow(&s->logs[LOG_CLOSED], now))
		return;
	if (crowded)
		log_warnx("closed a connection that had no whole request yet, "
			  "to make room for a new one");
	else
		log_warnx("closed a connection that sent no whole request in "
			  "%d s", HTTP_HEADER_DEADLINE_S);
}

/* Under s->lock: when hc from key is one too many, the oldest connection
 * (of key, or of all) without a whole request, but hc; NULL if none. */
static struct http_conn *crowded(struct http_server *s, struct http_conn *hc)
{
	struct http_conn *oldest = NULL, *oldest_here = NULL;
	unsigned all = 0, here = 0;

	for (struct http_conn *o = s->conns; o; o = o->next) {
		bool same = !memcmp(&o->key, &hc->key, sizeof(o->key));

		if (o->cut)
			continue;
		all++;
		here += same;
		if (o == hc || !o->deadline_ms)
			continue;
		if (!oldest || o->deadline_ms < oldest->deadline_ms)
			oldest = o;
		if (same && (!oldest_here ||
			     o->deadline_ms < oldest_here->deadline_ms))
			oldest_here = o;
	}
	if (here > CROWD_PER_ADDRESS)
		return oldest_here;
	return all > CROWD_TOTAL ? oldest : NULL;
}

/* A connection opened (its deadline starts; it may crowd out another) or
 * closed (before libmicrohttpd closes its socket, so that no fd is shut
 * down after it was reused). */
static void connection_event(void *cls, struct MHD_Connection *c,
			     void **socket_context,
			     enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;
	struct http_conn *hc = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ca = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		struct http_conn *victim;
		int64_t now;

		if (!ci)
			return;
		hc = calloc(1, sizeof(*hc));
		if (!hc) {	/* no deadline to hold it to: not served */
			shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		hc->fd = ci->connect_fd;
		auth_limit_key(ca ? ca->client_addr : NULL, &hc->key);
		pthread_mutex_lock(&s->lock);
		now = now_ms();
		hc->deadline_ms = now + HEADER_DEADLINE_MS;
		hc->next = s->conns;
		if (s->conns)
			s->conns->prev = hc;
		s->conns = hc;
		victim = crowded(s, hc);
		if (victim)
			cut(s, victim, true, now);
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		/* before its thread starts, which is the only one to read it */
		*socket_context = hc;
		return;
	}
	if (!hc)
		return;
	pthread_mutex_lock(&s->lock);
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		s->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	pthread_mutex_unlock(&s->lock);
	free(hc);
	*socket_context = NULL;
}

/*
 * The watcher: closes each connection whose request is not whole by its
 * deadline, and writes the counts of lines held back. It sleeps until
 * the next deadline.
 */
static void *watch(void *arg)
{
	struct http_server *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		int64_t now = now_ms(), next = INT64_MAX;
		struct timespec until;

		for (struct http_conn *hc = s->conns; hc; hc = hc->next) {
			if (!hc->deadline_ms)
				continue;
			if (hc->deadline_ms > now) {
				next = hc->deadline_ms < next ? hc->deadline_ms : next;
				continue;
			}
			cut(s, hc, false, now);
		}
		for (int i = 0; i < LOG_KINDS; i++) {
			log_window_flush(&s->logs[i], now);
			if (s->logs[i].held && s->logs[i].end_ms < next)
				next = s->logs[i].end_ms;
		}
		if (next == INT64_MAX) {
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		until.tv_sec = (time_t)(next / 1000);
		until.tv_nsec = (long)(next % 1000) * 1000000;
		pthread_cond_timedwait(&s->wake, &s->lock, &until);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* libmicrohttpd's messages, one per refused connection among them:
 * counted, and logged at a limited rate. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	bool say;

	pthread_mutex_lock(&s->lock);
	/* its only words for a connection over CONNECTION_LIMIT or
	 * PER_ADDRESS_LIMIT */
	if (strstr(fmt, "reached connection limit"))
		s->counts.connections_refused++;
	say = log_window_allow(&s->logs[LOG_MHD], now_ms());
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (say)
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
	return -HTTP_BAD_TLS_FILE;
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
	/* ITC: MHD_quiesce_daemon hands the socket back for a reload; poll:
	 * select() would fail past descriptor 1023 */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			 MHD_USE_ERROR_LOG | MHD_USE_ITC;
	bool tls = s->o.web && s->o.web->tls;

	s->daemon = MHD_start_daemon(
		flags | (tls ? MHD_USE_TLS : 0), 0, NULL, NULL, answer, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,	/* first: all */
		MHD_OPTION_LISTEN_SOCKET, s->fd,
		MHD_OPTION_CONNECTION_LIMIT, CONNECTION_LIMIT,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, PER_ADDRESS_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT_S,
		MHD_OPTION_NOTIFY_CONNECTION, connection_event, s,
		MHD_OPTION_NOTIFY_COMPLETED, request_done, s,
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

/* The locks and the watcher. */
static int server_init(struct http_server *s, char *err, size_t errlen)
{
	pthread_condattr_t attr;
	int ret;

	s->logs[LOG_WRONG].what = "wrong passwords";
	s->logs[LOG_LIMITED].what = "requests refused unchecked (429)";
	s->logs[LOG_CLOSED].what = "connections closed (header deadline, room)";
	s->logs[LOG_MHD].what = "libmicrohttpd messages";
	pthread_mutex_init(&s->scrape_lock, NULL);
	pthread_mutex_init(&s->check_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&s->watcher, NULL, watch, s);
	if (ret) {
		snprintf(err, errlen, "cannot start a thread: %s", strerror(ret));
		return -ret;
	}
	s->watching = true;
	return 0;
}

/* Stop the watcher (libmicrohttpd's threads are stopped), free all. */
static void server_free(struct http_server *s)
{
	if (s->watching) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->watcher, NULL);
	}
	pthread_mutex_lock(&s->lock);	/* what it held back, said */
	for (int i = 0; i < LOG_KINDS; i++)
		log_window_flush(&s->logs[i], INT64_MAX);
	pthread_mutex_unlock(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->scrape_lock);
	pthread_mutex_destroy(&s->check_lock);
	free(s->cert_pem);
	free_key(s->key_pem);
	basic_auth_free(&s->auth);
	free(s);
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
	basic_auth_init(&s->auth, o->web);
	ret = server_init(s, err, errlen);
	if (!ret)
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
	server_free(s);
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
		basic_auth_free(&s->auth);
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
	server_free(s);
}
