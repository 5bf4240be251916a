// SPDX-License-Identifier: GPL-2.0-only
/* profile.c - the exporter's pprof endpoint; see profile.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "client/conn.h"
#include "client/event_frames.h"
#include "client/pprof.h"
#include "exporter/profile.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/since.h"

struct window {
	int64_t since, until;			/* wall clock ns */
	uint64_t events, idle, lost, not_added;
	int first_error;
};

static int64_t wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Whether the event ended in (since, until]. */
static bool in_window(json_object *ev, const struct window *w)
{
	const char *t;
	int64_t ns;

	return pgoff_get_string(ev, "time", &t) && pgoff_parse_rfc3339(t, &ns) == 0 &&
	       ns > w->since && ns <= w->until;
}

/* The replay into p, to its "replayed" mark. */
static int replay(struct conn *c, struct pprof *p, struct window *w,
		  char *err, size_t errlen)
{
	int64_t end = monotonic_ms() + PROFILE_REPLAY_DEADLINE_MS;

	for (;;) {
		int64_t left = end - monotonic_ms(), n = 0;
		const char *type = "";
		json_object *ev;
		int ret;

		if (left <= 0) {
			snprintf(err, errlen, "pgoffd's replay of the flight record "
				 "did not end within %d s", PROFILE_REPLAY_DEADLINE_MS / 1000);
			return -ETIMEDOUT;
		}
		ret = conn_next(c, &ev, (int)left);
		if (ret == 0 || ret == -EINTR)
			continue;
		if (ret < 0) {
			snprintf(err, errlen, "the connection to pgoffd broke: %s",
				 strerror(-ret));
			return -EPIPE;
		}
		pgoff_get_string(ev, "type", &type);
		if (strcmp(type, "replayed") == 0) {
			json_object_put(ev);
			return 0;
		}
		if (strcmp(type, "offcpu") == 0 && in_window(ev, w)) {
			if (event_is_idle(ev)) {
				w->idle++;
			} else {
				w->events++;
				ret = event_pprof_add(p, ev, false, false);
				if (ret && !w->not_added++)
					w->first_error = ret;
			}
		} else if (strcmp(type, "dropped") == 0 &&
			   pgoff_get_int64(ev, "count", &n) && n > 0) {
			w->lost += (uint64_t)n;
		} else if (strcmp(type, "bye") == 0) {
			json_object_put(ev);
			snprintf(err, errlen, "pgoffd is stopping");
			return -EPIPE;
		}
		json_object_put(ev);
	}
}

int profile_collect(const char *socket, unsigned seconds, unsigned char **gz,
		    size_t *len, char *err, size_t errlen)
{
	struct pgoff_request req = { .op = PGOFF_OP_SUBSCRIBE };
	struct window w = { 0 };
	char comment[3][200];
	const char *comments[3] = { comment[0], comment[1], comment[2] };
	struct pprof_meta m = { .comments = comments };
	struct pprof *p = NULL;
	json_object *reply;
	int64_t min_ns = 0;
	struct conn c;
	int ret;

	if (seconds < 1 || seconds > PROFILE_MAX_SECONDS) {
		snprintf(err, errlen, "seconds: 1 to %d", PROFILE_MAX_SECONDS);
		return -EINVAL;
	}
	w.until = wall_ns() - (int64_t)PROFILE_SETTLE_MS * 1000000;
	w.since = w.until - (int64_t)seconds * 1000000000;
	ret = conn_open_quiet(&c, socket, true);
	if (ret != EXIT_OK) {
		conn_close(&c);
		snprintf(err, errlen, "pgoffd is not running, or refused the "
			 "exporter (see its log)");
		return -ECONNREFUSED;
	}
	req.subscribe.view = PGOFF_VIEW_INTERVALS;
	req.subscribe.has_since = true;
	req.subscribe.since_ns = w.since;
	ret = conn_request(&c, &req, &reply);
	if (ret != EXIT_OK) {
		conn_close(&c);
		snprintf(err, errlen, "pgoffd refused to replay its flight "
			 "record (does it keep one? record = yes); see the "
			 "exporter's log");
		return ret == EXIT_USAGE ? -ENOTSUP : -EPIPE;
	}
	pgoff_get_int64(reply, "min_duration_ns", &min_ns);
	json_object_put(reply);
	p = pprof_new();
	ret = p ? replay(&c, p, &w, err, errlen) : -ENOMEM;
	conn_close(&c);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret)
		goto out;
	if (w.lost || w.not_added)
		log_warnx("profile of %u s: %" PRIu64 " intervals lost, %" PRIu64
			  " not in the profile (%s)", seconds, w.lost, w.not_added,
			  w.first_error == -E2BIG ? "more distinct samples than "
			  "it holds" : strerror(-w.first_error));
	snprintf(comment[0], sizeof(comment[0]), "pgoff_exporter: %" PRIu64
		 " off-CPU intervals of %.3f ms or more (pgoffd's record-min) "
		 "that ended in %u s", w.events, (double)min_ns / 1e6, seconds);
	snprintf(comment[1], sizeof(comment[1]), "%" PRIu64 " idle intervals "
		 "left out (processes waiting for work, clients between "
		 "statements)", w.idle);
	m.ncomments = 2;
	if (w.lost || w.not_added) {
		snprintf(comment[2], sizeof(comment[2]), "%" PRIu64 " intervals "
			 "lost, %" PRIu64 " not in the profile", w.lost, w.not_added);
		m.ncomments = 3;
	}
	m.time_nanos = w.since;
	m.duration_nanos = w.until - w.since;
	ret = pprof_encode_gzip(p, &m, gz, len);
	if (ret)
		snprintf(err, errlen, "cannot encode the profile: %s", strerror(-ret));
out:
	pprof_free(p);
	return ret;
}
