/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * server.h - the permission-checked Unix socket: accept, authorize with
 * the peer's kernel credentials, answer requests, fan events out to
 * subscribers through bounded per-client queues.
 */
#ifndef PGOFF_SERVER_H
#define PGOFF_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "broker/kernel/event.h"
#include "broker/serve/filter.h"
#include "broker/record/store.h"
#include "protocol/protocol.h"

struct server;

/* Requests of one client answered per loop round; the rest wait. */
#define SERVER_LINES_PER_ROUND	16
/* A client with this many unsent bytes queued is not read (its requests
 * not answered) until the queue drains below it. */
#define SERVER_REPLY_BACKLOG	(64 * 1024)

struct server_opts {
	const char *socket_path;
	const char *group_name;		/* access group */
	gid_t group;
	bool has_query_group;		/* --query-group given */
	gid_t query_group;		/* members see SQL text */
	size_t max_clients;
	size_t max_clients_per_uid;
	size_t queue_bytes;		/* per-client output queue */
	unsigned int stuck_timeout_s;	/* queue full this long: cut off */
	uint64_t min_floor_ns;		/* no subscription goes below this */
	struct store *store;		/* the flight recorder's; NULL: off */
	uint64_t record_min_ns;		/* what it holds: a replay's floor */
};

struct server_hooks {
	/* fill a status reply with the broker's own fields; called at most
	 * once a tick, or when subscriptions change (the server caches what
	 * it gives and sets "clients" and "subscribers" itself) */
	void (*status)(void *ctx, json_object *reply);
	/* fill a ps reply: the traced processes; at most once a tick */
	void (*ps)(void *ctx, json_object *reply);
	/* fill a stats reply: the kernel's aggregation */
	void (*stats)(void *ctx, const struct pgoff_request *req,
		      bool sees_query, json_object *reply);
	/* a stats request over the past (has_since), summed a share at a
	 * time in successive loop rounds, so that the live stream is not
	 * held up: past_start gives its job (NULL: no memory), past_step
	 * sums a share (true: more to sum), past_finish fills the reply
	 * after the last step, in the same round, and frees the job;
	 * past_cancel frees it unfinished (the client went away) */
	void *(*past_start)(void *ctx, const struct pgoff_request *req);
	bool (*past_step)(void *ctx, void *job);
	void (*past_finish)(void *ctx, void *job, json_object *reply);
	void (*past_cancel)(void *ctx, void *job);
	/* fill a history reply: what the flight recorder holds */
	void (*history)(void *ctx, json_object *reply);
	/* the union of subscriptions changed: push it into the kernel */
	void (*filter_changed)(void *ctx);
	void *ctx;
};

/* Creates the socket (see server.c for the checks) and registers with
 * epfd: the socket, each client and an eventfd readable while some client
 * has requests held back for a later round (so epoll_wait does not
 * sleep). Their epoll data is a struct loop_handler (loop.h). */
int server_open(struct server **out, const struct server_opts *opts,
		const struct server_hooks *hooks, int epfd);
/* Tell every client why ("bye"), close them and the socket; the file
 * stays (see control_socket.h). NULL-safe. */
void server_close(struct server *s, const char *reason);

/*
 * Settings changed (SIGHUP): groups, limits, floor. Clients no longer in
 * the group are told and closed; who sees SQL is decided again.
 */
void server_reconfigure(struct server *s, const struct server_opts *o);
/* Send what the round queued for each client: one write each. Ends the
 * loop round: each client may have its share of requests answered again. */
void server_flush(struct server *s);
/* Free clients closed during this loop round; call after each batch. */
void server_reap(struct server *s);
/*
 * Once a second, after the registry's scan: cut off clients that stopped
 * reading (a live subscriber's queue full, or a replaying or
 * unsubscribed client's socket taking nothing, for stuck-timeout); the
 * cached status and ps replies are dropped (asked again from the hooks
 * when next wanted).
 */
void server_tick(struct server *s);


/* An event to every subscriber whose filter matches, with SQL to those
 * allowed to see it; not to a subscription still replaying the store
 * (the event is stored before it is published: the replay gets to it). */
void server_publish(struct server *s, const struct event_lines *lines,
		    const struct event_meta *meta);
/* Tell every subscriber of a loss that happened before any filter. */
void server_publish_drop(struct server *s, const char *cause, uint64_t count);

size_t server_client_count(const struct server *s);
/* Clients with at least one subscription. */
size_t server_subscriber_count(const struct server *s);
uint64_t server_queue_drops(const struct server *s);
/* Seqs that replays lost because retention removed them before their
 * clients read them (told as "expired"; an upper bound of events). */
uint64_t server_replay_expired(const struct server *s);
/* Clients dropped because epoll could not watch their socket. */
uint64_t server_watch_drops(const struct server *s);
/* The union of live subscriptions; false when nobody subscribes. */
bool server_filter_union(const struct server *s, struct kernel_filter *k);
/* The same over the subscriptions that want user stacks on intervals:
 * what decides at switch-out whether a user stack is walked. */
bool server_ustack_union(const struct server *s, struct kernel_filter *k);

#endif
