/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * loop.h - what pgoffd's epoll data points at: the handler of a ready fd
 * and its context, as redis's aeFileProc. The loop calls it and knows no
 * fd's owner. Whoever watches an fd keeps its handler in memory until the
 * fd is no longer watched and the round is over: epoll_wait may have
 * handed out its events already (see server_reap).
 */
#ifndef PGOFF_LOOP_H
#define PGOFF_LOOP_H

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>

struct loop_handler {
	void (*fn)(void *ctx, uint32_t events);	/* EPOLLIN, ... */
	void *ctx;
};

/* epoll_ctl ADD or MOD of fd, with h as its data: 0 or -errno. */
static inline int loop_watch(int epfd, int op, int fd, uint32_t events,
			     struct loop_handler *h)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	return epoll_ctl(epfd, op, fd, &ev) ? -errno : 0;
}

/* One event of epoll_wait: its handler's call. */
static inline void loop_call(const struct epoll_event *ev)
{
	const struct loop_handler *h = ev->data.ptr;

	h->fn(h->ctx, ev->events);
}

#endif
