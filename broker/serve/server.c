// SPDX-License-Identifier: GPL-2.0-only
/*
 * server.c - clients of pgoffd. One thread, non-blocking sockets, one
 * bounded output queue per client: a slow client loses events (counted
 * and told in-band), a client that stops reading is cut off; neither
 * ever stalls the broker or the other clients.
 *
 * Fair to every client, however hard one of them pushes:
 * - at most LINES_PER_ROUND requests of a client are answered per loop
 *   round; the lines it sent beyond that wait for the next round (a
 *   "pending" list, served through an eventfd that stays readable while
 *   the list is not empty: epoll would not report bytes already read);
 * - a client whose queue holds more than REPLY_BACKLOG unsent bytes is
 *   not read (nor are its requests answered, so no reply is computed
 *   that could not be queued) until its queue drains below that;
 * - status and ps replies come from a cache refreshed once per tick or
 *   when subscriptions change, so asking does not cost a walk of the
 *   kernel's tables or the process list each time;
 * - lines about clients go through a per-uid limit (log_limit.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "broker/serve/control_socket.h"
#include "broker/serve/log_limit.h"
#include "broker/loop.h"
#include "broker/record/replay_meta.h"
#include "broker/serve/server.h"
#include "common/linebuf.h"
#include "common/log.h"

#define MAX_SUBSCRIPTIONS 8
#define LINES_PER_ROUND	SERVER_LINES_PER_ROUND
#define REPLY_BACKLOG	SERVER_REPLY_BACKLOG
/* Stored records read for one client's replays in its turn of a loop
 * round (about 3.5 ms): replays share the loop with the live stream. */
#define REPLAY_PER_ROUND 512
/*
 * Work on the store (replays, past windows) is given out in turns each
 * loop round: one turn of each kind a uid at most, and at most this many
 * uids a round; the first client asked moves on every round. A member
 * with many connections adds no more to a round than one does, and every
 * job still moves on (an attacker review).
 */
#define REPLAY_TURNS	4
#define PAST_TURNS	2
/* The kinds of work on the store that take turns. */
enum work_kind { WORK_REPLAY, WORK_PAST, WORK_KINDS };

/* Past windows being summed at once: per uid, and in all (each holds up
 * to about 3.5 MiB). */
#define PAST_JOBS_PER_UID 2
#define PAST_JOBS_MAX	16

struct subscription {
	uint32_t id;
	struct filter filter;
	bool since;			/* asked with since_ns or resume_seq */
	bool replaying;			/* reading the store, not yet live */
	int64_t since_ns;
	uint64_t after_seq;		/* resume_seq: replay what follows */
	struct store_cursor cursor;
	uint64_t replayed, last_seq;
};

struct client {
	struct loop_handler ready;	/* epoll data: client_ready */
	struct server *server;
	int fd;
	struct peer peer;
	struct linebuf in;
	char *out;			/* queued bytes [out_off, out_len) */
	size_t out_len, out_off, out_cap;
	bool said_hello;
	bool sees_query;		/* root or in --query-group */
	bool closing;			/* flush, then close */
	const char *close_why;		/* said when it is closed */
	bool dead;			/* closed; freed by server_reap() */
	bool pending;			/* on the server's pending list */
	uint64_t newest_stored;		/* seq of the newest event queued to it
					   that the flight record keeps */
	uint32_t events;		/* what epoll reports for it now */
	uint64_t served_round;		/* last round its requests were read */
	time_t full_since;		/* queue full since (0: not full) */
	time_t stalled_since;		/* socket took nothing since (0: took) */
	uint64_t dropped;		/* events lost since last told */
	struct subscription subs[MAX_SUBSCRIPTIONS];
	size_t nsubs;
	uint32_t next_sub_id;
	void *past;			/* a stats request over the past being
					 * summed (hooks.past_*); NULL: none */
	struct pgoff_request past_req;	/* it, for its reply's id */
	uint64_t turn_round[WORK_KINDS];	/* its last turn on the store */
	struct client *next;
	struct client *next_pending;
};

/* A reply kept for a tick: its fields, as serialized, after the '{'. */
struct reply_cache {
	json_object *fields;		/* status: patched per request */
	char *text;			/* ps */
	size_t len;
};

struct server {
	struct loop_handler listen_ready;	/* epoll data: accept_one */
	int listen_fd, epfd;
	struct server_opts opts;
	char *socket_path;
	struct server_hooks hooks;
	struct client *clients;
	struct client *dead;		/* closed this loop round, not yet freed */
	size_t nclients;
	uid_t turn_last[WORK_KINDS];	/* the uid served last */
	uint64_t queue_drops;		/* all clients, since start */
	uint64_t replay_expired;	/* seqs replays lost to retention */
	uint64_t watch_drops;		/* clients epoll could not watch */
	struct loop_handler pending_ready;	/* epoll data: serve_pending */
	int pending_fd;			/* eventfd: readable while pending */
	struct client *pending;		/* lines read, not yet answered */
	uint64_t round;			/* loop rounds, for LINES_PER_ROUND */
	struct reply_cache status, ps;
	struct log_limit log_limit;
	size_t replaying;		/* subscriptions reading the store */
	size_t pasts;			/* clients with a past stats job */
	char *replay_buf;		/* one stored record */
};

static int64_t mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec;
}

/* A line about a client, within its uid's share of the log. */
static void client_log(struct server *s, uid_t uid, enum log_level level,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void client_log(struct server *s, uid_t uid, enum log_level level,
		       const char *fmt, ...)
{
	va_list ap;

	if (level > log_get_level() || !log_limit_allow(&s->log_limit, uid,
							 mono_s()))
		return;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

static void reply_cache_clear(struct reply_cache *r)
{
	json_object_put(r->fields);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

/* Subscriptions changed: the kernel's filter, and what status says. */
static void subscriptions_changed(struct server *s)
{
	reply_cache_clear(&s->status);
	if (s->hooks.filter_changed)
		s->hooks.filter_changed(s->hooks.ctx);
}

static size_t queued(const struct client *c)
{
	return c->out_len - c->out_off;
}

/* Read from c: not while closing, nor while its replies wait unsent. */
static bool readable(const struct client *c)
{
	return !c->closing && queued(c) <= REPLY_BACKLOG;
}

/* Lines are held that this round did not answer: next round will. */
static void set_pending(struct server *s, struct client *c)
{
	uint64_t one = 1;

	if (c->pending || c->dead)
		return;
	if (!s->pending && write(s->pending_fd, &one, sizeof(one)) < 0)
		log_warn("eventfd");
	c->pending = true;
	c->next_pending = s->pending;
	s->pending = c;
}

static void end_replays(struct server *s, struct client *c)
{
	for (size_t i = 0; i < c->nsubs; i++) {
		if (!c->subs[i].replaying)
			continue;
		store_cursor_close(&c->subs[i].cursor);
		c->subs[i].replaying = false;
		s->replaying--;
	}
}

/* c's past window, unfinished: nobody will have its reply. */
static void cancel_past(struct server *s, struct client *c)
{
	if (!c->past)
		return;
	s->hooks.past_cancel(s->hooks.ctx, c->past);
	c->past = NULL;
	s->pasts--;
}

/*
 * Close now, free later: epoll may still hold this client's events in
 * the batch being handled.
 */
static void drop_client(struct server *s, struct client *c, const char *why)
{
	struct client **pp;
	bool had_subs = c->nsubs > 0;

	client_log(s, c->peer.uid, LOG_LEVEL_INFO,
		   "client uid %u pid %d: disconnected (%s)", c->peer.uid,
		   c->peer.pid, why);
	for (pp = &s->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	for (pp = &s->pending; c->pending && *pp; pp = &(*pp)->next_pending) {
		if (*pp == c) {
			*pp = c->next_pending;
			c->pending = false;
			break;
		}
	}
	s->nclients--;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->dead = true;
	end_replays(s, c);
	cancel_past(s, c);
	c->nsubs = 0;
	c->next = s->dead;
	s->dead = c;
	if (had_subs)
		subscriptions_changed(s);
}

static void client_free(struct client *c)
{
	linebuf_free(&c->in);
	free(c->out);
	free(c);
}

void server_reap(struct server *s)
{
	while (s->dead) {
		struct client *c = s->dead;

		s->dead = c->next;
		client_free(c);
	}
}

/*
 * What epoll reports for c: input while it may be read (EPOLLRDHUP too:
 * level-triggered, it would fire every round otherwise), output while
 * the socket would not take its queue. EPOLLHUP/ERR come always.
 * Returns -1 when c is gone: a socket epoll cannot watch as asked (no
 * memory) would stall or wake every round, so it is dropped, counted.
 */
static int update_events(struct server *s, struct client *c, bool want_out)
{
	uint32_t events = (readable(c) ? EPOLLIN | EPOLLRDHUP : 0) |
			  (want_out ? EPOLLOUT : 0);
	char why[96];
	int err;

	if (events == c->events)
		return 0;
	err = loop_watch(s->epfd, EPOLL_CTL_MOD, c->fd, events, &c->ready);
	if (err) {
		s->watch_drops++;
		snprintf(why, sizeof(why), "its socket cannot be watched: %s",
			 strerror(-err));
		drop_client(s, c, why);
		return -1;
	}
	c->events = events;
	return 0;
}

/*
 * Write what the socket takes now. Returns -1 if the client is gone.
 * A client whose backlog went below REPLY_BACKLOG is read again, its
 * held lines first.
 */
static int flush(struct server *s, struct client *c)
{
	bool was_readable = readable(c), wrote = false;

	/* no event goes out before it is stored: after a kill -9 the
	 * record holds every event a client was sent (see store_add). Only
	 * for those: a live watcher of events the store does not keep
	 * (below record-min) must not cut the batches to a loop round's */
	if (s->opts.store) {
		uint64_t first = store_pending_first_seq(s->opts.store);

		if (first && first <= c->newest_stored)
			store_flush(s->opts.store);
	}

	while (queued(c)) {
		ssize_t n = send(c->fd, c->out + c->out_off, queued(c),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (wrote)
				c->stalled_since = 0;
			else if (!c->stalled_since)
				c->stalled_since = time(NULL);
			if (!was_readable && readable(c) &&
			    linebuf_has_line(&c->in))
				set_pending(s, c);
			return update_events(s, c, true);
		}
		if (n <= 0) {
			drop_client(s, c, "write failed");
			return -1;
		}
		c->out_off += (size_t)n;
		wrote = true;
	}
	c->out_off = c->out_len = 0;
	c->full_since = 0;
	c->stalled_since = 0;
	/* a client that is done sending still gets the reply of a past
	 * window it asked for (stored_work_some steps it) */
	if (c->closing && !c->past) {
		drop_client(s, c, c->close_why ? c->close_why :
			    "closed by broker");
		return -1;
	}
	if (!was_readable && linebuf_has_line(&c->in))
		set_pending(s, c);
	return update_events(s, c, false);
}

/* Append a line made of n parts if it fits in the bounded queue. */
static bool enqueue_parts(struct client *c, const char *const *part,
			  const size_t *len, size_t n)
{
	size_t total = 1;	/* the newline */

	for (size_t i = 0; i < n; i++)
		total += len[i];
	if (c->out_off && c->out_len + total > c->out_cap) {
		memmove(c->out, c->out + c->out_off, queued(c));
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + total > c->out_cap)
		return false;
	for (size_t i = 0; i < n; i++) {
		memcpy(c->out + c->out_len, part[i], len[i]);
		c->out_len += len[i];
	}
	c->out[c->out_len++] = '\n';
	return true;
}

static bool enqueue(struct client *c, const char *line, size_t len)
{
	return enqueue_parts(c, &line, &len, 1);
}

/* A reply; lost (and said) if the queue is full, which REPLY_BACKLOG
 * keeps from happening to an answered request. */
static void send_parts(struct server *s, struct client *c,
		       const char *const *part, const size_t *len, size_t n)
{
	if (!enqueue_parts(c, part, len, n))
		client_log(s, c->peer.uid, LOG_LEVEL_WARN,
			   "client uid %u pid %d: reply lost, queue full",
			   c->peer.uid, c->peer.pid);
}

static void send_obj(struct server *s, struct client *c, json_object *obj)
{
	size_t len;
	const char *line = pgoff_json_line(obj, &len);

	send_parts(s, c, &line, &len, 1);
	json_object_put(obj);
}

static void send_error(struct server *s, struct client *c,
		       const struct pgoff_request *req, const char *code,
		       const char *message)
{
	send_obj(s, c, pgoff_reply_error(req, code, message));
}

/*
 * An ok reply to req whose fields are cached (text: the serialized
 * fields after their '{'): {"id":N,"ok":true,<text>, without building
 * or serializing the fields again.
 */
static void send_cached(struct server *s, struct client *c,
			const struct pgoff_request *req, const char *text,
			size_t len)
{
	char head[64];
	const char *part[2] = { head, text };
	size_t plen[2];
	int n;

	if (req->has_id)
		n = snprintf(head, sizeof(head), "{\"id\":%lld,\"ok\":true%s",
			     (long long)req->id, text[0] == '}' ? "" : ",");
	else
		n = snprintf(head, sizeof(head), "{\"ok\":true%s",
			     text[0] == '}' ? "" : ",");
	plen[0] = (size_t)n;
	plen[1] = len;
	send_parts(s, c, part, plen, 2);
}

static void answer_hello(struct server *s, struct client *c,
			 const struct pgoff_request *req)
{
	json_object *r;

	if (req->hello.version != PGOFF_PROTO_VERSION) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "protocol version %lld is not supported; this pgoffd "
			 "speaks version %d",
			 (long long)req->hello.version, PGOFF_PROTO_VERSION);
		send_error(s, c, req, PGOFF_ERR_VERSION, msg);
		return;
	}
	c->said_hello = true;
	r = pgoff_reply_ok(req);
	json_object_object_add(r, "version",
			       json_object_new_int(PGOFF_PROTO_VERSION));
	json_object_object_add(r, "broker", json_object_new_string(
				       "pgoffd " PGOFF_VERSION));
	send_obj(s, c, r);
}

/*
 * status from its cache: what the hook gave at most a tick ago (or since
 * subscriptions changed), with the server's own counts patched in fresh
 * (json-c replaces a member in place, so the order stays).
 */
static void answer_status(struct server *s, struct client *c,
			  const struct pgoff_request *req)
{
	struct reply_cache *r = &s->status;
	const char *text;
	size_t len;

	if (!r->fields) {
		r->fields = json_object_new_object();
		if (s->hooks.status)
			s->hooks.status(s->hooks.ctx, r->fields);
	}
	if (json_object_object_get_ex(r->fields, "clients", NULL))
		json_object_object_add(r->fields, "clients", json_object_new_int64(
			(int64_t)server_client_count(s)));
	if (json_object_object_get_ex(r->fields, "subscribers", NULL))
		json_object_object_add(r->fields, "subscribers", json_object_new_int64(
			(int64_t)server_subscriber_count(s)));
	text = pgoff_json_line(r->fields, &len);
	send_cached(s, c, req, text + 1, len - 1);
}

/* ps from its cache, serialized once a tick. */
static void answer_ps(struct server *s, struct client *c,
		      const struct pgoff_request *req)
{
	struct reply_cache *r = &s->ps;

	if (!r->text) {
		json_object *f = json_object_new_object();
		const char *text;
		size_t len;

		if (s->hooks.ps)
			s->hooks.ps(s->hooks.ctx, f);
		text = pgoff_json_line(f, &len);
		r->text = strndup(text + 1, len - 1);
		r->len = len - 1;
		json_object_put(f);
		if (!r->text) {
			send_error(s, c, req, PGOFF_ERR_LIMIT,
				   "pgoffd is out of memory");
			return;
		}
	}
	send_cached(s, c, req, r->text, r->len);
}

static size_t pasts_of(const struct server *s, uid_t uid)
{
	size_t n = 0;

	for (const struct client *c = s->clients; c; c = c->next)
		n += c->past && c->peer.uid == uid;
	return n;
}

/*
 * A past window: summed in the rounds to come (server_flush), one per
 * connection at a time. Its length has no cap of its own: what it reads
 * is what the store holds (record-max-age, record-max-size), a share a
 * round (about 0.2 s of pgoffd's time an hour of TPC-B) in turns per
 * user, so that a window of days keeps its own client waiting, never
 * pgoffd's other clients.
 */
static void start_past(struct server *s, struct client *c,
		       const struct pgoff_request *req)
{
	if (c->past) {
		send_error(s, c, req, PGOFF_ERR_BUSY,
			   "one stats request over the past at a time per "
			   "connection: the last one is still being summed");
		return;
	}
	if (pasts_of(s, c->peer.uid) >= PAST_JOBS_PER_UID ||
	    s->pasts >= PAST_JOBS_MAX) {
		send_error(s, c, req, PGOFF_ERR_BUSY,
			   s->pasts >= PAST_JOBS_MAX ?
			   "pgoffd is summing as many stats requests over the "
			   "past as it takes at once; ask again" :
			   "at most 2 stats requests over the past at a time "
			   "per user: the others are still being summed");
		return;
	}
	c->past = s->hooks.past_start ?
		  s->hooks.past_start(s->hooks.ctx, req) : NULL;
	if (!c->past) {
		send_error(s, c, req, PGOFF_ERR_LIMIT,
			   "pgoffd is out of memory for a stats request over "
			   "the past");
		return;
	}
	c->past_req = *req;
	s->pasts++;
}

/* A share of c's past window; its reply when the last is summed. */
static void past_some(struct server *s, struct client *c)
{
	json_object *r;

	if (s->hooks.past_step(s->hooks.ctx, c->past))
		return;
	r = pgoff_reply_ok(&c->past_req);
	s->hooks.past_finish(s->hooks.ctx, c->past, r);
	c->past = NULL;
	s->pasts--;
	send_obj(s, c, r);
}

/* The uids that had a turn of one kind this round. */
struct turns {
	uid_t uid[REPLAY_TURNS > PAST_TURNS ? REPLAY_TURNS : PAST_TURNS];
	size_t n, max;
};

static bool turn_take(struct turns *t, uid_t uid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->uid[i] == uid)
			return false;
	if (t->n == t->max)
		return false;
	t->uid[t->n++] = uid;
	return true;
}

static void answer_stats(struct server *s, struct client *c,
			 const struct pgoff_request *req)
{
	json_object *r;

	if (req->stats.has_since && !s->opts.store) {
		send_error(s, c, req, PGOFF_ERR_BAD_REQUEST,
			   "no past: pgoffd does not record (record = no)");
		return;
	}
	if (req->stats.has_since) {
		start_past(s, c, req);
		return;
	}
	r = pgoff_reply_ok(req);
	if (s->hooks.stats)
		s->hooks.stats(s->hooks.ctx, req, c->sees_query, r);
	send_obj(s, c, r);
}

static void answer_history(struct server *s, struct client *c,
			   const struct pgoff_request *req)
{
	json_object *r;

	if (!s->opts.store || !s->hooks.history) {
		send_error(s, c, req, PGOFF_ERR_BAD_REQUEST,
			   "no history: pgoffd does not record (record = no)");
		return;
	}
	r = pgoff_reply_ok(req);
	s->hooks.history(s->hooks.ctx, r);
	send_obj(s, c, r);
}

/* Seqs first..last are no longer stored: an "expired" item. */
static void send_expired(struct server *s, struct client *c, uint64_t first,
			 uint64_t last)
{
	char line[200];
	int len = snprintf(line, sizeof(line),
			   "{\"type\":\"dropped\",\"count\":%llu,\"cause\":\""
			   PGOFF_DROP_EXPIRED "\",\"first_seq\":%llu,"
			   "\"last_seq\":%llu}",
			   (unsigned long long)(last - first + 1),
			   (unsigned long long)first, (unsigned long long)last);

	send_parts(s, c, (const char *const[]){ line },
		   (size_t[]){ (size_t)len }, 1);
}

/*
 * Resuming after seq: the seqs between it and the oldest the store holds
 * are gone (retention, or a store that started after them). Their number
 * is an upper bound of the events lost: seqs of events never stored (below
 * record-min) or that the filter would not match are in it too.
 */
static void tell_expired(struct server *s, struct client *c, uint64_t seq)
{
	struct store_info i;
	uint64_t held;

	store_info(s->opts.store, &i);
	held = i.records ? i.first_seq : store_last_seq(s->opts.store) + 1;
	if (held <= seq + 1)
		return;
	send_expired(s, c, seq + 1, held - 1);
}

static void answer_subscribe(struct server *s, struct client *c,
			     const struct pgoff_request *req)
{
	struct subscription *sub;
	struct pgoff_error err;
	json_object *r;

	if (c->nsubs == MAX_SUBSCRIPTIONS) {
		char msg[80];

		snprintf(msg, sizeof(msg),
			 "at most %d subscriptions per connection",
			 MAX_SUBSCRIPTIONS);
		send_error(s, c, req, PGOFF_ERR_LIMIT, msg);
		return;
	}
	sub = &c->subs[c->nsubs];
	if (filter_compile(&req->subscribe, s->opts.min_floor_ns, &sub->filter,
			   &err)) {
		send_error(s, c, req, err.code, err.message);
		return;
	}
	sub->since = req->subscribe.has_since || req->subscribe.has_resume;
	if (sub->since && !s->opts.store) {
		send_error(s, c, req, PGOFF_ERR_BAD_REQUEST,
			   "nothing to replay: pgoffd does not record "
			   "(record = no)");
		return;
	}
	if (sub->since) {
		/* below record-min nothing was stored: live alone would
		 * give those, a gap in the replay's */
		uint64_t floor = s->opts.min_floor_ns > s->opts.record_min_ns ?
				 s->opts.min_floor_ns : s->opts.record_min_ns;

		filter_set_floor(&sub->filter, floor);
		sub->since_ns = req->subscribe.has_since ?
				req->subscribe.since_ns : 0;
		sub->after_seq = req->subscribe.has_resume ?
				 (uint64_t)req->subscribe.resume_seq : 0;
		sub->replaying = true;
		sub->replayed = sub->last_seq = 0;
		if (req->subscribe.has_resume)
			store_cursor_init_seq(s->opts.store, &sub->cursor,
					      sub->after_seq);
		else
			store_cursor_init(s->opts.store, &sub->cursor,
					  sub->since_ns);
		s->replaying++;
	}
	c->nsubs++;
	sub->id = ++c->next_sub_id;
	client_log(s, c->peer.uid, LOG_LEVEL_INFO,
		   "client uid %u pid %d: subscription %u, %zu pids, min %llu ns%s",
		   c->peer.uid, c->peer.pid, sub->id, sub->filter.npids,
		   (unsigned long long)sub->filter.min_duration_ns,
		   c->sees_query ? ", with queries" : "");
	r = pgoff_reply_ok(req);
	json_object_object_add(r, "subscription", json_object_new_int64(sub->id));
	json_object_object_add(r, "min_duration_ns", json_object_new_int64(
		(int64_t)sub->filter.min_duration_ns));
	json_object_object_add(r, "query", json_object_new_boolean(c->sees_query));
	if (sub->since)
		json_object_object_add(r, "replay", json_object_new_boolean(true));
	send_obj(s, c, r);
	if (req->subscribe.has_resume)
		tell_expired(s, c, sub->after_seq);
	subscriptions_changed(s);
}

static void answer(struct server *s, struct client *c, const char *line,
		   size_t len)
{
	struct pgoff_request req;
	struct pgoff_error err;

	if (pgoff_request_decode(line, len, &req, &err)) {
		send_error(s, c, req.has_id ? &req : NULL, err.code,
			   err.message);
		return;
	}
	if (!c->said_hello && req.op != PGOFF_OP_HELLO) {
		send_error(s, c, &req, PGOFF_ERR_NEED_HELLO,
			   "the first request must be hello");
		return;
	}
	switch (req.op) {
	case PGOFF_OP_HELLO:
		answer_hello(s, c, &req);
		break;
	case PGOFF_OP_STATUS:
		answer_status(s, c, &req);
		break;
	case PGOFF_OP_SUBSCRIBE:
		answer_subscribe(s, c, &req);
		break;
	case PGOFF_OP_PS:
		answer_ps(s, c, &req);
		break;
	case PGOFF_OP_STATS:
		answer_stats(s, c, &req);
		break;
	case PGOFF_OP_HISTORY:
		answer_history(s, c, &req);
		break;
	}
}

/*
 * Read and answer c's requests: at most LINES_PER_ROUND this round, and
 * none while its queue holds REPLY_BACKLOG bytes or more (they would not
 * be sent any time soon). Lines held beyond that wait on the pending
 * list; what is still in the socket, for the next EPOLLIN.
 */
static void serve(struct server *s, struct client *c)
{
	unsigned int budget = LINES_PER_ROUND;
	bool framing_lost = false;

	if (c->served_round == s->round) {	/* its share of this round */
		if (readable(c) && linebuf_has_line(&c->in))
			set_pending(s, c);
		return;
	}
	c->served_round = s->round;
	while (budget && readable(c)) {
		char *line;
		size_t len;
		int got = linebuf_next(&c->in, &line, &len);
		ssize_t n;

		if (got == 1) {
			answer(s, c, line, len);
			budget--;
			continue;
		}
		if (got == -EMSGSIZE) {
			framing_lost = true;
			break;
		}
		n = linebuf_fill(&c->in, c->fd);
		if (n == -EAGAIN)
			break;
		if (n == -EMSGSIZE) {
			framing_lost = true;
			break;
		}
		if (n == 0) {
			/* the client is done sending: answer what it sent,
			 * then close (flush does, once the queue is empty) */
			c->closing = true;
			c->close_why = "closed by client";
			break;
		}
		if (n < 0) {
			drop_client(s, c, "read failed");
			return;
		}
	}
	if (framing_lost) {
		char why[64];

		/* framing is lost: say why, then close */
		snprintf(why, sizeof(why), "request line longer than %d bytes",
			 PGOFF_MAX_REQUEST_LINE);
		send_error(s, c, NULL, PGOFF_ERR_LINE_TOO_LONG, why);
		cancel_past(s, c);
		c->closing = true;
	}
	if (readable(c) && linebuf_has_line(&c->in))
		set_pending(s, c);
	flush(s, c);
}

/* Clients with lines held from an earlier round: their next share. */
/* The eventfd: some clients have lines held back from a past round. */
static void serve_pending(void *ctx, uint32_t events)
{
	struct server *s = ctx;
	struct client *list = s->pending, *c;
	uint64_t n;

	(void)events;
	if (read(s->pending_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("eventfd");
	s->pending = NULL;
	while ((c = list)) {
		list = c->next_pending;
		c->pending = false;
		c->next_pending = NULL;
		if (!c->dead)
			serve(s, c);
	}
}

static bool sees_query(const struct server *s, const struct peer *p)
{
	return p->uid == 0 || (s->opts.has_query_group &&
			       peer_allowed(p, s->opts.query_group));
}

static size_t clients_of(const struct server *s, uid_t uid)
{
	size_t n = 0;

	for (const struct client *c = s->clients; c; c = c->next)
		n += c->peer.uid == uid;
	return n;
}

/*
 * Whether the peer may connect now: NULL, or the error code, with what to
 * tell it in msg. Said in the log, within its uid's share.
 */
static const char *admit(struct server *s, const struct peer *p, char *msg,
			 size_t len)
{
	if (!peer_allowed(p, s->opts.group)) {
		client_log(s, p->uid, LOG_LEVEL_WARN,
			   "client uid %u pid %d: denied (not in group %s)",
			   p->uid, p->pid, s->opts.group_name);
		snprintf(msg, len,
			 "permission denied: uid %u is not in group '%s'; ask "
			 "an administrator to add you to it",
			 p->uid, s->opts.group_name);
		return PGOFF_ERR_FORBIDDEN;
	}
	if (s->nclients >= s->opts.max_clients) {
		client_log(s, p->uid, LOG_LEVEL_WARN,
			   "client uid %u pid %d: refused, %zu clients",
			   p->uid, p->pid, s->nclients);
		snprintf(msg, len, "pgoffd serves at most %zu clients",
			 s->opts.max_clients);
		return PGOFF_ERR_TOO_MANY;
	}
	/* one user cannot take every slot (root is not counted) */
	if (p->uid != 0 && clients_of(s, p->uid) >= s->opts.max_clients_per_uid) {
		client_log(s, p->uid, LOG_LEVEL_WARN,
			   "client uid %u pid %d: refused, the user has %zu "
			   "connections", p->uid, p->pid,
			   s->opts.max_clients_per_uid);
		snprintf(msg, len, "pgoffd serves at most %zu "
			 "connections per user; uid %u has that many",
			 s->opts.max_clients_per_uid, p->uid);
		return PGOFF_ERR_TOO_MANY;
	}
	return NULL;
}

/* One error line on a fresh socket always fits; the caller closes it. */
static void tell_refused(int fd, const char *code, const char *msg)
{
	json_object *e = pgoff_reply_error(NULL, code, msg);
	size_t len;
	const char *line = pgoff_json_line(e, &len);

	if (send(fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("could not tell the refused client why");
	json_object_put(e);
}

static void client_ready(void *ctx, uint32_t events);

/* An admitted connection becomes a client that epoll watches: 0, or
 * -errno (said; the caller closes fd). */
static int add_client(struct server *s, int fd, const struct peer *p)
{
	struct client *c = calloc(1, sizeof(*c));
	int err;

	if (!c || linebuf_init(&c->in, PGOFF_MAX_REQUEST_LINE) ||
	    !(c->out = malloc(s->opts.queue_bytes))) {
		log_warnx("out of memory for a new client");
		if (c)
			client_free(c);
		return -ENOMEM;
	}
	c->ready = (struct loop_handler){ client_ready, c };
	c->server = s;
	c->fd = fd;
	c->peer = *p;
	c->out_cap = s->opts.queue_bytes;
	err = loop_watch(s->epfd, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP,
			 &c->ready);
	if (err) {
		log_warnx("epoll_ctl: %s", strerror(-err));
		client_free(c);
		return err;
	}
	c->events = EPOLLIN | EPOLLRDHUP;
	c->served_round = s->round - 1;	/* not yet served */
	c->sees_query = sees_query(s, &c->peer);
	c->next = s->clients;
	s->clients = c;
	s->nclients++;
	client_log(s, c->peer.uid, LOG_LEVEL_INFO,
		   "client uid %u pid %d: connected%s", c->peer.uid, c->peer.pid,
		   c->sees_query ? " (may see queries)" : "");
	return 0;
}

/* The socket is readable: one connection, admitted or refused. */
static void accept_one(void *ctx, uint32_t events)
{
	struct server *s = ctx;
	struct peer peer;
	const char *code;
	char msg[256];
	int fd = accept4(s->listen_fd, NULL, NULL,
			 SOCK_NONBLOCK | SOCK_CLOEXEC);

	(void)events;
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("accept");
		return;
	}
	if (control_socket_peer(fd, &peer)) {
		log_warn("cannot read peer credentials");
	} else if ((code = admit(s, &peer, msg, sizeof(msg)))) {
		tell_refused(fd, code, msg);
	} else if (add_client(s, fd, &peer) == 0) {
		return;
	}
	close(fd);
}

int server_open(struct server **out, const struct server_opts *opts,
		const struct server_hooks *hooks, int epfd)
{
	struct server *s = calloc(1, sizeof(*s));
	int fd, err;

	if (!s)
		return -ENOMEM;
	s->pending_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->pending_fd < 0) {
		err = -errno;
		free(s);
		return err;
	}
	fd = control_socket_create(opts->socket_path, opts->group);
	if (fd < 0) {
		close(s->pending_fd);
		free(s);
		return fd;
	}
	s->listen_ready = (struct loop_handler){ accept_one, s };
	s->pending_ready = (struct loop_handler){ serve_pending, s };
	s->listen_fd = fd;
	s->epfd = epfd;
	s->opts = *opts;
	s->socket_path = strdup(opts->socket_path);
	s->opts.socket_path = s->socket_path;
	s->hooks = *hooks;
	s->round = 1;
	s->replay_buf = malloc(STORE_MAX_PAYLOAD + 1);
	err = !s->socket_path || !s->replay_buf ? -ENOMEM :
	      loop_watch(epfd, EPOLL_CTL_ADD, fd, EPOLLIN, &s->listen_ready);
	if (!err)
		err = loop_watch(epfd, EPOLL_CTL_ADD, s->pending_fd, EPOLLIN,
				 &s->pending_ready);
	if (err) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
		close(fd);	/* the file stays: the next start removes it */
		close(s->pending_fd);
		free(s->socket_path);
		free(s->replay_buf);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void server_close(struct server *s, const char *reason)
{
	if (!s)
		return;
	s->hooks.filter_changed = NULL;
	while (s->clients) {
		struct client *c = s->clients;
		json_object *bye = json_object_new_object();
		size_t len;
		const char *line;

		json_object_object_add(bye, "type", json_object_new_string("bye"));
		json_object_object_add(bye, "reason",
				       json_object_new_string(reason));
		line = pgoff_json_line(bye, &len);
		enqueue(c, line, len);
		json_object_put(bye);
		c->closing = true;
		if (flush(s, c) == 0 && s->clients == c)
			drop_client(s, c, "broker exiting");
	}
	server_reap(s);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->listen_fd, NULL);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pending_fd, NULL);
	close(s->pending_fd);
	reply_cache_clear(&s->status);
	reply_cache_clear(&s->ps);
	log_limit_flush(&s->log_limit, INT64_MAX);
	close(s->listen_fd);
	/* No longer root, pgoffd cannot remove the socket from its root-owned
	 * directory: the file stays, refusing connections (pgoffctl says
	 * pgoffd is not running), and the next start removes it. */
	log_info("leaving %s for the next start to remove", s->socket_path);
	free(s->socket_path);
	free(s->replay_buf);
	free(s);
}

/* A client's socket is ready (or its events were handed out before it
 * was closed this round: dead). */
static void client_ready(void *ctx, uint32_t events)
{
	struct client *c = ctx;
	struct server *s = c->server;

	if (c->dead)
		return;
	if (events & EPOLLOUT) {
		if (flush(s, c))
			return;
	}
	if ((events & (EPOLLHUP | EPOLLERR)) && !readable(c)) {
		/* gone, and not to be read: these come level-triggered */
		drop_client(s, c, "closed by client");
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		serve(s, c);
}


void server_reconfigure(struct server *s, const struct server_opts *o)
{
	struct client *c = s->clients, *next;

	s->opts.group = o->group;
	s->opts.group_name = o->group_name;
	s->opts.has_query_group = o->has_query_group;
	s->opts.query_group = o->query_group;
	s->opts.max_clients = o->max_clients;
	s->opts.max_clients_per_uid = o->max_clients_per_uid;
	s->opts.queue_bytes = o->queue_bytes;	/* for new clients */
	s->opts.stuck_timeout_s = o->stuck_timeout_s;
	s->opts.min_floor_ns = o->min_floor_ns;
	s->opts.record_min_ns = o->record_min_ns;
	/* rights are checked again: a user removed from the group goes */
	for (; c; c = next) {
		next = c->next;
		if (!peer_allowed(&c->peer, s->opts.group)) {
			send_error(s, c, NULL, PGOFF_ERR_FORBIDDEN,
				   "permission denied: no longer in the access "
				   "group after a configuration reload");
			cancel_past(s, c);
			c->closing = true;
			flush(s, c);
			continue;
		}
		c->sees_query = sees_query(s, &c->peer);
		for (size_t i = 0; i < c->nsubs; i++)
			filter_set_floor(&c->subs[i].filter,
					 c->subs[i].since &&
					 o->record_min_ns > o->min_floor_ns ?
					 o->record_min_ns : o->min_floor_ns);
	}
	subscriptions_changed(s);
}

/* The replay is done: said with the last seq, then the stream is live. */
static void replay_done(struct server *s, struct client *c,
			struct subscription *sub)
{
	char line[200];
	int n = snprintf(line, sizeof(line),
			 "{\"type\":\"replayed\",\"subscription\":%u,"
			 "\"count\":%llu,\"last_seq\":%llu}", sub->id,
			 (unsigned long long)sub->replayed,
			 (unsigned long long)sub->last_seq);

	store_cursor_close(&sub->cursor);
	sub->replaying = false;
	s->replaying--;
	send_parts(s, c, (const char *const[]){ line }, (size_t[]){ (size_t)n },
		   1);
	client_log(s, c->peer.uid, LOG_LEVEL_INFO,
		   "client uid %u pid %d: subscription %u replayed %llu stored "
		   "events, now live", c->peer.uid, c->peer.pid, sub->id,
		   (unsigned long long)sub->replayed);
}

/*
 * Stored events for a replaying subscription, as its queue has room
 * (a replay never drops: it waits for the client): up to records.
 */
static void replay_some(struct server *s, struct client *c,
			struct subscription *sub, unsigned int records)
{
	for (unsigned int k = 0; k < records; k++) {
		struct store_hdr h;
		struct event_meta m;
		json_object *ev;
		int r;

		uint64_t first, last;

		/* room for the longest record and the end notice */
		if (queued(c) + STORE_MAX_PAYLOAD + 256 > c->out_cap)
			return;	/* EPOLLOUT brings it back */
		/* retention removed what it had not read yet (the client
		 * did not read): said before what follows, as --resume
		 * past what is held is */
		if (store_cursor_lost(&sub->cursor, &first, &last)) {
			if (first <= sub->after_seq)
				first = sub->after_seq + 1;
			if (first <= last) {
				s->replay_expired += last - first + 1;
				send_expired(s, c, first, last);
			}
		}
		r = store_next(s->opts.store, &sub->cursor, &h, s->replay_buf,
			       STORE_MAX_PAYLOAD + 1);
		if (r <= 0) {
			if (r < 0)
				client_log(s, c->peer.uid, LOG_LEVEL_WARN,
					   "replay for uid %u ended early: %s",
					   c->peer.uid, strerror(-r));
			replay_done(s, c, sub);
			return;
		}
		if (h.wall_ns < sub->since_ns || h.seq <= sub->after_seq)
			continue;
		ev = json_tokener_parse(s->replay_buf);
		if (ev && replay_meta(ev, &m) == 0 &&
		    filter_match(&sub->filter, &m)) {
			size_t len = h.len;
			/* stored SQL and user stacks only for those who
			 * get them live */
			const char *line = replay_line(ev, s->replay_buf, &len,
						       c->sees_query,
						       sub->filter.user_stack);

			if (enqueue(c, line, len)) {
				sub->replayed++;
				sub->last_seq = h.seq;
			}
		}
		json_object_put(ev);
	}
}

/* c's replaying subscriptions, a share of REPLAY_PER_ROUND each. */
static void client_replays(struct server *s, struct client *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nsubs; i++)
		n += c->subs[i].replaying;
	for (size_t i = 0; i < c->nsubs; i++)
		if (c->subs[i].replaying)
			replay_some(s, c, &c->subs[i], REPLAY_PER_ROUND / n);
}

/* Whether c has work of kind k that can move on now: a replay whose
 * queue has room (a full one waits for EPOLLOUT), a past window. */
static bool work_ready(const struct client *c, enum work_kind k)
{
	if (k == WORK_PAST)
		return c->past != NULL;
	if (c->closing || queued(c) + STORE_MAX_PAYLOAD + 256 > c->out_cap)
		return false;
	for (size_t i = 0; i < c->nsubs; i++)
		if (c->subs[i].replaying)
			return true;
	return false;
}

static bool turn_had(const struct turns *t, uid_t uid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->uid[i] == uid)
			return true;
	return false;
}

/*
 * The next turn of kind k: the first uid after last (in uid order,
 * wrapping) with ready work and no turn yet this round, and of its
 * clients the one whose last turn is oldest. NULL: none.
 */
static struct client *next_turn(struct server *s, enum work_kind k,
				uid_t last, const struct turns *done)
{
	struct client *best = NULL;
	bool best_after = false;

	for (struct client *c = s->clients; c; c = c->next) {
		uid_t uid = c->peer.uid;
		bool after = uid > last;

		if (!work_ready(c, k) || turn_had(done, uid))
			continue;
		if (!best || (after && !best_after) ||
		    (after == best_after &&
		     (uid < best->peer.uid ||
		      (uid == best->peer.uid &&
		       c->turn_round[k] < best->turn_round[k])))) {
			best = c;
			best_after = after;
		}
	}
	return best;
}

/*
 * This round's turns on the store (see REPLAY_TURNS): uids in turn, not
 * connections, so a member's many connections count as one. True when
 * work that can move on is left for the next round (the loop does not
 * sleep then); a replay waiting for its client to read is not.
 */
static bool stored_work_some(struct server *s)
{
	static const size_t max[WORK_KINDS] = { REPLAY_TURNS, PAST_TURNS };
	bool more = false;

	if (!s->replaying && !s->pasts)
		return false;
	for (int k = 0; k < WORK_KINDS; k++) {
		struct turns done = { .max = max[k] };
		struct client *c;

		while (done.n < done.max &&
		       (c = next_turn(s, k, s->turn_last[k], &done))) {
			turn_take(&done, c->peer.uid);
			s->turn_last[k] = c->peer.uid;
			c->turn_round[k] = s->round;
			if (k == WORK_PAST)
				past_some(s, c);
			else
				client_replays(s, c);
		}
		for (c = s->clients; c && !more; c = c->next)
			more = work_ready(c, k);
	}
	return more;
}

void server_flush(struct server *s)
{
	struct client *c = s->clients, *next;
	bool more = stored_work_some(s);

	if (more) {	/* the next round goes on without sleeping */
		uint64_t one = 1;

		if (write(s->pending_fd, &one, sizeof(one)) < 0)
			log_warn("eventfd");
	}
	c = s->clients;

	for (; c; c = next) {
		next = c->next;	/* flush may drop c */
		if (queued(c))
			flush(s, c);
	}
	s->round++;	/* each client may have LINES_PER_ROUND answered again */
}

static bool replays(const struct client *c)
{
	for (size_t i = 0; i < c->nsubs; i++)
		if (c->subs[i].replaying)
			return true;
	return false;
}

void server_tick(struct server *s)
{
	time_t now = time(NULL), stuck = (time_t)s->opts.stuck_timeout_s;
	struct client *c = s->clients, *next;

	/* what the hooks said is a tick old: asked again when wanted */
	reply_cache_clear(&s->status);
	reply_cache_clear(&s->ps);
	log_limit_flush(&s->log_limit, mono_s());
	for (; c; c = next) {
		next = c->next;
		if (c->full_since && now - c->full_since >= stuck)
			drop_client(s, c, "stopped reading");
		/* replies nobody reads, or a replay, which waits for its
		 * client instead of dropping events (live events are the
		 * rule above): the socket took nothing for that long */
		else if (c->stalled_since &&
			 (!c->nsubs || c->closing || replays(c)) &&
			 now - c->stalled_since >= stuck)
			drop_client(s, c, "stopped reading");
	}
}

static void deliver(struct server *s, struct client *c, const char *line,
		    size_t len)
{
	if (c->dropped) {
		char note[128];
		int n = snprintf(note, sizeof(note),
				 "{\"type\":\"dropped\",\"count\":%llu,"
				 "\"cause\":\"" PGOFF_DROP_CLIENT_QUEUE "\"}",
				 (unsigned long long)c->dropped);

		/* the loss is told before the next event, or both wait */
		if (queued(c) + (size_t)n + len + 2 > c->out_cap ||
		    !enqueue(c, note, (size_t)n))
			goto lost;
		c->dropped = 0;
	}
	if (enqueue(c, line, len))
		return;		/* sent by server_flush() after this round */
lost:
	c->dropped++;
	s->queue_drops++;
	if (!c->full_since)
		c->full_since = time(NULL);
}

void server_publish(struct server *s, const struct event_lines *lines,
		    const struct event_meta *meta)
{
	struct client *c = s->clients, *next;

	for (; c; c = next) {
		next = c->next;	/* deliver may drop c */
		for (size_t i = 0; i < c->nsubs; i++) {
			if (c->subs[i].replaying ||
			    !filter_match(&c->subs[i].filter, meta))
				continue;
			/* user_stack only for those who asked for it */
			bool us = c->subs[i].filter.user_stack &&
				  lines->with_ustack;

			if (meta->stored && meta->seq > c->newest_stored)
				c->newest_stored = meta->seq;
			if (c->sees_query && lines->with_query && us)
				deliver(s, c, lines->with_query_ustack,
					lines->with_query_ustack_len);
			else if (c->sees_query && lines->with_query)
				deliver(s, c, lines->with_query,
					lines->with_query_len);
			else if (us)
				deliver(s, c, lines->with_ustack,
					lines->with_ustack_len);
			else
				deliver(s, c, lines->plain, lines->plain_len);
			break;
		}
	}
}

void server_publish_drop(struct server *s, const char *cause, uint64_t count)
{
	struct client *c = s->clients, *next;
	char line[160];
	int n = snprintf(line, sizeof(line),
			 "{\"type\":\"dropped\",\"count\":%llu,\"cause\":\"%s\"}",
			 (unsigned long long)count, cause);

	for (; c; c = next) {
		next = c->next;
		if (c->nsubs)
			deliver(s, c, line, (size_t)n);
	}
}

size_t server_client_count(const struct server *s)
{
	return s->nclients;
}

size_t server_subscriber_count(const struct server *s)
{
	size_t n = 0;

	for (const struct client *c = s->clients; c; c = c->next)
		n += c->nsubs > 0;
	return n;
}

uint64_t server_queue_drops(const struct server *s)
{
	return s->queue_drops;
}

uint64_t server_replay_expired(const struct server *s)
{
	return s->replay_expired;
}

uint64_t server_watch_drops(const struct server *s)
{
	return s->watch_drops;
}

bool server_filter_union(const struct server *s, struct kernel_filter *k)
{
	kernel_filter_init(k);
	for (const struct client *c = s->clients; c; c = c->next)
		for (size_t i = 0; i < c->nsubs; i++)
			kernel_filter_add(k, &c->subs[i].filter, c->sees_query);
	return kernel_filter_done(k);
}

bool server_ustack_union(const struct server *s, struct kernel_filter *k)
{
	kernel_filter_init(k);
	for (const struct client *c = s->clients; c; c = c->next)
		for (size_t i = 0; i < c->nsubs; i++)
			if (c->subs[i].filter.user_stack &&
			    c->subs[i].filter.view != PGOFF_VIEW_WAITS)
				kernel_filter_add(k, &c->subs[i].filter, false);
	return kernel_filter_done(k);
}
