// SPDX-License-Identifier: GPL-2.0-only
/* conn.c - connect to pgoffd and exchange JSON lines; see conn.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "client/conn.h"
#include "client/io_util.h"
#include "common/log.h"

/* The group that owns the socket (or its directory): the one to join. */
static const char *socket_group(const char *path)
{
	char copy[PATH_MAX];
	struct stat st;
	struct group *gr;

	snprintf(copy, sizeof(copy), "%s", path);
	if (stat(path, &st) && stat(dirname(copy), &st))
		return "pgoff";
	gr = getgrgid(st.st_gid);
	return gr ? gr->gr_name : "pgoff";
}

static int connect_failed(const char *path, int err)
{
	if (err == EACCES || err == EPERM)
		log_warnx("permission denied on %s: join the group '%s' "
			  "(an administrator runs: usermod -aG %s $USER; then "
			  "log in again)", path, socket_group(path),
			  socket_group(path));
	else if (err == ECONNREFUSED)
		/* pgoffd, no longer root, leaves its socket when it stops */
		log_warnx("pgoffd is not running (stale socket %s); start it "
			  "or pass --socket / PGOFF_SOCKET", path);
	else if (err == ENOENT)
		log_warnx("pgoffd is not running (no socket at %s); start it "
			  "or pass --socket / PGOFF_SOCKET", path);
	else
		log_warnx("cannot connect to %s: %s", path, strerror(err));
	return EXIT_NOCONNECT;
}

/*
 * Who answers must be pgoffd before anything is sent: anyone can create a
 * socket where --socket or PGOFF_SOCKET points and serve made-up data. A
 * stream socket's SO_PEERCRED are the listener's at listen(), which pgoffd
 * does as root before it drops; its own user (CONN_BROKER_USER) is
 * accepted too.
 */
static int check_server(int fd, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const struct passwd *pw;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		log_warn("cannot tell who serves %s", path);
		return EXIT_NOCONNECT;
	}
	if (cred.uid == 0)
		return EXIT_OK;
	pw = getpwnam(CONN_BROKER_USER);
	if (pw && pw->pw_uid == cred.uid)
		return EXIT_OK;
	pw = getpwuid(cred.uid);
	log_warnx("%s is served by uid %u (%s, pid %d), not by pgoffd (root "
		  "or user %s): not talking to it; check --socket and "
		  "PGOFF_SOCKET", path, (unsigned int)cred.uid,
		  pw ? pw->pw_name : "no such user", (int)cred.pid,
		  CONN_BROKER_USER);
	return EXIT_NOCONNECT;
}

int conn_open(struct conn *c, const char *path)
{
	return conn_open_quiet(c, path, false);
}

int conn_open_quiet(struct conn *c, const char *path, bool quiet_absent)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pgoff_request hello = { .op = PGOFF_OP_HELLO };
	json_object *reply;
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->path = path;
	c->next_id = 1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("socket path too long: %s", path);
		return EXIT_USAGE;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (linebuf_init(&c->in, PGOFF_MAX_LINE))
		return EXIT_ERROR;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return EXIT_ERROR;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (quiet_absent && (errno == ENOENT || errno == ECONNREFUSED))
			return EXIT_ABSENT;
		return connect_failed(path, errno);
	}
	ret = check_server(c->fd, path);
	if (ret != EXIT_OK)
		return ret;
	hello.hello.version = PGOFF_PROTO_VERSION;
	ret = conn_request(c, &hello, &reply);
	if (ret == EXIT_OK)
		json_object_put(reply);
	return ret;
}

void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	linebuf_free(&c->in);
}

int conn_request(struct conn *c, struct pgoff_request *req, json_object **reply)
{
	struct pgoff_error err;
	json_object *obj = NULL;
	const char *line;
	size_t len;
	int ret;

	req->has_id = true;
	req->id = c->next_id++;
	obj = pgoff_request_encode(req);
	line = pgoff_json_line(obj, &len);
	ret = io_send_all(c->fd, line, len);
	if (!ret)
		ret = io_send_all(c->fd, "\n", 1);
	json_object_put(obj);
	/* a refused connection may be closed before we could write: read why */
	do {
		obj = NULL;
		ret = conn_next(c, &obj, 10000);
	} while (ret == -EINTR ||
		 (ret == 1 && !json_object_object_get_ex(obj, "ok", NULL) &&
		  (json_object_put(obj), 1)));
	if (ret == 0) {
		log_warnx("pgoffd did not answer within 10 s");
		return EXIT_ERROR;
	}
	if (ret < 0) {
		log_warnx("connection to pgoffd lost: %s", strerror(-ret));
		return EXIT_ERROR;
	}
	if (pgoff_reply_check(obj, &err)) {
		json_object_put(obj);
		if (strcmp(err.code, PGOFF_ERR_FORBIDDEN) == 0) {
			log_warnx("%s", err.message);
			return EXIT_NOCONNECT;
		}
		if (strcmp(err.code, PGOFF_ERR_VERSION) == 0) {
			log_warnx("incompatible pgoffctl and pgoffd: %s",
				  err.message);
			return EXIT_ERROR;
		}
		log_warnx("pgoffd refused the request: %s", err.message);
		/* pgoffctl only sends what its options say: a usage error */
		if (strcmp(err.code, PGOFF_ERR_BAD_REQUEST) == 0 ||
		    strcmp(err.code, PGOFF_ERR_LIMIT) == 0)
			return EXIT_USAGE;
		return EXIT_ERROR;
	}
	*reply = obj;
	return EXIT_OK;
}

int conn_next_line(struct conn *c, char **line, size_t *len, int timeout_ms)
{
	for (;;) {
		int got = linebuf_next(&c->in, line, len);
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (got == 1)
			return 1;
		if (got < 0)
			return -EMSGSIZE;
		r = poll(&pfd, 1, timeout_ms);
		if (r < 0)	/* -EINTR too: the caller's signal flag decides */
			return -errno;
		if (r == 0)
			return 0;
		n = linebuf_fill(&c->in, c->fd);
		if (n == 0 || n == -ECONNRESET)
			return -EPIPE;
		if (n < 0 && n != -EAGAIN)
			return (int)n;
	}
}

int conn_next(struct conn *c, json_object **obj, int timeout_ms)
{
	struct pgoff_error err;
	char *line;
	size_t len;
	int r = conn_next_line(c, &line, &len, timeout_ms);

	if (r != 1)
		return r;
	*obj = pgoff_parse_line(line, len, CONN_JSON_DEPTH, &err);
	if (!*obj) {
		log_warnx("bad line from pgoffd: %s", err.message);
		return -EPROTO;
	}
	return 1;
}

bool conn_buffered(const struct conn *c)
{
	return linebuf_has_line(&c->in);
}
