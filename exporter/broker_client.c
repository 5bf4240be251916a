// SPDX-License-Identifier: GPL-2.0-only
/* broker_client.c - the exporter's requests to pgoffd; see broker_client.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include "exporter/broker_client.h"
#include "common/log.h"

void broker_client_init(struct broker_client *b, const char *socket)
{
	memset(b, 0, sizeof(*b));
	b->socket = socket;
	b->conn.fd = -1;
}

static double mono_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void forget_answers(struct broker_client *b)
{
	json_object_put(b->status);
	b->status = NULL;
	json_object_put(b->ps);
	b->ps = NULL;
	sv_free(&b->labels);
	sv_free(&b->queries);
}

static void disconnect(struct broker_client *b)
{
	conn_close(&b->conn);
	b->connected = false;
}

static int connect_broker(struct broker_client *b)
{
	int ret = conn_open_quiet(&b->conn, b->socket, true);

	if (ret != EXIT_OK) {
		conn_close(&b->conn);
		if (ret == EXIT_ABSENT && !b->said_absent)
			log_warnx("pgoffd is not running (no broker at %s); "
				  "pgoff_broker_up is 0 until it is", b->socket);
		b->said_absent |= ret == EXIT_ABSENT;
		return -ECONNREFUSED;
	}
	b->connected = true;
	b->said_absent = false;
	b->connects++;
	log_info("connected to pgoffd at %s", b->socket);
	/* a new connection may be a new pgoffd: its counters start at 0 */
	mono_reset(&b->mono);
	mono_reset(&b->mono_q);
	sv_free(&b->pids_prev);
	sv_free(&b->pids);
	b->have_prev = b->have_pids = false;
	streaks_reset(&b->streaks);
	return 0;
}

static int stats(struct broker_client *b, enum pgoff_stats_by by,
		 struct sv_snapshot *out)
{
	struct pgoff_request req = { .op = PGOFF_OP_STATS };
	json_object *reply;
	char err[160];
	int ret;

	req.stats.by = by;
	if (conn_request(&b->conn, &req, &reply) != EXIT_OK)
		return -EPIPE;
	ret = sv_parse(reply, out, err, sizeof(err));
	json_object_put(reply);
	if (ret)
		log_warnx("pgoffd's stats reply (by %s): %s",
			  pgoff_stats_by_name(by), err);
	return ret;
}

/* status, ps, stats by labels, stats by pid: all or nothing. */
static int ask(struct broker_client *b)
{
	struct pgoff_request req = { .op = PGOFF_OP_STATUS };
	struct pgoff_request ps = { .op = PGOFF_OP_PS };
	struct sv_snapshot pids;
	int ret;

	forget_answers(b);
	if (conn_request(&b->conn, &req, &b->status) != EXIT_OK) {
		b->status = NULL;
		return -EPIPE;
	}
	if (conn_request(&b->conn, &ps, &b->ps) != EXIT_OK) {
		b->ps = NULL;
		return -EPIPE;
	}
	ret = stats(b, PGOFF_STATS_BY_LABELS, &b->labels);
	if (ret)
		return ret;
	ret = mono_apply(&b->mono, &b->labels);
	if (ret) {
		log_warnx("out of memory holding the counters");
		return ret;
	}
	if (b->top_queries) {
		ret = stats(b, PGOFF_STATS_BY_QUERY, &b->queries);
		if (!ret && mono_apply(&b->mono_q, &b->queries)) {
			log_warnx("out of memory holding the counters by statement");
			ret = -ENOMEM;
		}
		if (ret)
			return ret;
	}
	ret = stats(b, PGOFF_STATS_BY_PID, &pids);
	if (ret)
		return ret;
	if (b->have_pids && pids.now_ns == b->pids.now_ns) {
		/* pgoffd's reading is shared for 100 ms: the same snapshot,
		 * and the earlier window stays the one to average over */
		sv_free(&pids);
		return 0;
	}
	sv_free(&b->pids_prev);
	b->pids_prev = b->pids;
	b->have_prev = b->have_pids;
	b->pids = pids;
	b->have_pids = true;
	if (b->have_prev && streaks_update(&b->streaks, &b->pids_prev, &b->pids))
		log_warnx("out of memory following waits across scrapes");
	return 0;
}

void broker_client_scrape(struct broker_client *b, struct ex_scrape *s)
{
	double start = mono_seconds();
	int ret = -ECONNREFUSED;

	/* a connection kept from an earlier scrape may be dead (pgoffd
	 * restarted): one more try on a new one */
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh = !b->connected;

		if (!b->connected && connect_broker(b))
			break;
		ret = ask(b);
		if (!ret)
			break;
		disconnect(b);
		if (fresh)
			break;
	}
	s->up = ret == 0;
	if (ret) {
		b->errors++;
		forget_answers(b);
	}
	s->status = s->up ? b->status : NULL;
	s->ps = s->up ? b->ps : NULL;
	s->labels = s->up ? &b->labels : NULL;
	s->queries = s->up && b->top_queries ? &b->queries : NULL;
	s->top_queries = b->top_queries;
	s->pids = s->up && b->have_pids ? &b->pids : NULL;
	s->pids_prev = s->up && b->have_prev ? &b->pids_prev : NULL;
	s->fetch_seconds = mono_seconds() - start;
	s->broker_connects = b->connects;
	s->broker_errors = b->errors;
	s->counter_decreases = b->mono.decreases;
	s->streaks = s->up && b->have_prev ? &b->streaks : NULL;
}

void broker_client_close(struct broker_client *b)
{
	forget_answers(b);
	sv_free(&b->pids);
	sv_free(&b->pids_prev);
	mono_reset(&b->mono);
	mono_reset(&b->mono_q);
	streaks_reset(&b->streaks);
	disconnect(b);
}
