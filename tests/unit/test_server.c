/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_server.c - pgoffd's socket server under clients that push: a
 * share of requests per loop round, lines already read answered without
 * a new EPOLLIN, no reading (and no replies computed) while a client's
 * replies are unsent, status and ps from a cache, a client that shuts
 * its side down still answered, one epoll cannot watch dropped and
 * counted, log lines about one uid limited; a replay whose client stops
 * reading is cut off after stuck-timeout, and one that retention
 * overtakes holds no removed segment and is told what expired. The
 * loop below is pgoffd's (main.c) without the BPF side; the hooks count
 * their calls. Runs as any user, in a directory of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "broker/loop.h"
#include "broker/serve/server.h"
#include "common/log.h"
#include "tests/unit/check.h"

static char dir[40], sock[80];
static int epfd;
static struct server *srv;
static struct server_opts opts;		/* as opened */
static unsigned int status_calls, ps_calls, filter_calls;
static size_t ps_rows = 10;
static FILE *devnull;		/* the log, unless a test looks at it */

static void status_hook(void *ctx, json_object *r)
{
	(void)ctx;
	status_calls++;
	json_object_object_add(r, "broker", json_object_new_string("test"));
	json_object_object_add(r, "clients", json_object_new_int(-1));
	json_object_object_add(r, "subscribers", json_object_new_int(-1));
	json_object_object_add(r, "calls", json_object_new_int((int)status_calls));
}

/* A ps reply of ps_rows rows of about 100 bytes. */
static void ps_hook(void *ctx, json_object *r)
{
	json_object *a = json_object_new_array();

	(void)ctx;
	ps_calls++;
	for (size_t i = 0; i < ps_rows; i++) {
		json_object *p = json_object_new_object();

		json_object_object_add(p, "pid", json_object_new_int64((int64_t)i));
		json_object_object_add(p, "backend_type", json_object_new_string(
			"client backend, with a long enough description here"));
		json_object_array_add(a, p);
	}
	json_object_object_add(r, "processes", a);
}

static void filter_hook(void *ctx)
{
	(void)ctx;
	filter_calls++;
}

/* One round of pgoffd's loop; returns how many events epoll gave. */
static int loop_round(int timeout_ms)
{
	struct epoll_event evs[64];
	int n = epoll_wait(epfd, evs, 64, timeout_ms);

	for (int i = 0; i < n; i++)
		loop_call(&evs[i]);
	server_flush(srv);
	server_reap(srv);
	return n;
}

static int client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		close(fd);
		return -1;
	}
	loop_round(100);	/* accepted */
	return fd;
}

/* Write all of text (the socket buffer holds what these tests send). */
static bool say(int fd, const char *text)
{
	size_t len = strlen(text);

	while (len) {
		ssize_t n = send(fd, text, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		text += n;
		len -= (size_t)n;
	}
	return true;
}

static char *repeat(const char *line, size_t n)
{
	size_t l = strlen(line);
	char *s = malloc(l * n + 1);

	for (size_t i = 0; i < n; i++)
		memcpy(s + i * l, line, l);
	s[l * n] = '\0';
	return s;
}

/* Read what is there now; lines counted, the last one kept. */
struct reader {
	size_t lines, bytes;
	char last[4096];
	size_t last_len;
	bool eof;
};

static void drain(int fd, struct reader *r)
{
	char buf[65536];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		r->bytes += (size_t)n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				r->lines++;
				r->last[r->last_len < sizeof(r->last) ?
					r->last_len : sizeof(r->last) - 1] = '\0';
				r->last_len = 0;
			} else if (r->last_len < sizeof(r->last) - 1) {
				r->last[r->last_len++] = buf[i];
			}
		}
	}
	if (n == 0)
		r->eof = true;
}

#define HELLO "{\"op\":\"hello\",\"version\":1}\n"
#define STATUS "{\"op\":\"status\"}\n"
#define PS "{\"op\":\"ps\"}\n"

/* 100 requests in one write: LINES_PER_ROUND a round, and the lines
 * read but not answered need no new EPOLLIN (the socket is empty). */
static void test_share_per_round(void)
{
	int fd = client();
	char *many = repeat(STATUS, 99);
	struct reader r = { 0 };
	struct timespec t0, t1;
	long long ms;
	int rounds = 0;

	CHECK(fd >= 0);
	CHECK(say(fd, HELLO) && say(fd, many));
	free(many);
	loop_round(100);
	drain(fd, &r);
	if (r.lines != SERVER_LINES_PER_ROUND)
		fprintf(stderr, "round 1: %zu replies\n", r.lines);
	CHECK(r.lines == SERVER_LINES_PER_ROUND);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (r.lines < 100 && rounds < 20) {
		loop_round(1000);	/* would sleep a second without the eventfd */
		rounds++;
		drain(fd, &r);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r.lines != 100 || rounds != 6)
		fprintf(stderr, "%zu replies after %d more rounds\n", r.lines, rounds);
	CHECK(r.lines == 100 && rounds == 6);	/* 84 more, 16 a round */
	/* without the eventfd, 5 rounds of a 1 s sleep: a bound halfway
	 * (the tests run side by side, and under ASan) */
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (ms >= 2500)
		fprintf(stderr, "the rounds took %lld ms\n", (long long)ms);
	CHECK(ms < 2500);
	/* the status hook ran once for all of them: a tick has not passed */
	if (status_calls != 1)
		fprintf(stderr, "status hook called %u times\n", status_calls);
	CHECK(status_calls == 1);
	close(fd);
	loop_round(100);
}

/* One client floods, another asks once: answered in the same round. */
static void test_flood_does_not_delay_others(void)
{
	int a = client(), b = client();
	char *flood = repeat(STATUS, 3000);
	struct reader ra = { 0 }, rb = { 0 };

	CHECK(a >= 0 && b >= 0);
	CHECK(say(a, HELLO) && say(a, flood));
	free(flood);
	CHECK(say(b, HELLO STATUS));
	loop_round(100);
	drain(a, &ra);
	drain(b, &rb);
	if (rb.lines != 2 || ra.lines > SERVER_LINES_PER_ROUND)
		fprintf(stderr, "quiet client: %zu replies; flooder %zu\n",
			rb.lines, ra.lines);
	CHECK(rb.lines == 2 && ra.lines <= SERVER_LINES_PER_ROUND);
	/* the counts are the server's own, whatever the cache holds */
	CHECK_CONTAINS(rb.last, "\"clients\":2,\"subscribers\":0");
	close(a);
	close(b);
	for (int i = 0; i < 5; i++)
		loop_round(10);
}

/*
 * A client that asks for large replies and never reads: once the socket
 * takes no more and REPLY_BACKLOG bytes wait, it is not read and no reply
 * is made; epoll does not wake the loop for it. When it reads, it is
 * served again, to the last request.
 */
static void test_unread_replies_stop_reading(void)
{
	int fd = client();
	char *many = repeat(PS, 4000);
	struct reader r = { 0 };
	size_t sent = strlen(many), off = 0;
	int rounds = 0, idle;

	CHECK(fd >= 0);
	ps_rows = 20;		/* about 2 KB a reply */
	CHECK(say(fd, HELLO));
	/* feed what the socket takes while the broker answers */
	while (off < sent && rounds < 2000) {
		ssize_t n = send(fd, many + off, sent - off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0)
			off += (size_t)n;
		loop_round(0);
		rounds++;
	}
	free(many);
	for (int i = 0; i < 50; i++)
		loop_round(0);
	/* nothing to do for it now: epoll must let the loop sleep */
	idle = loop_round(200);
	if (idle != 0)
		fprintf(stderr, "epoll woke the loop %d times for a client not read\n", idle);
	CHECK(idle == 0);
	drain(fd, &r);
	/* answered: what filled its socket buffer and queue, not 4000 */
	printf("# before reading: %zu replies (%zu bytes) of 4001\n",
	       r.lines, r.bytes);
	CHECK(r.lines < 1000);
	CHECK(ps_calls == 1);
	for (int i = 0; i < 20000 && r.lines < 4001; i++) {
		loop_round(10);
		drain(fd, &r);
	}
	if (r.lines != 4001)
		fprintf(stderr, "%zu replies once it read\n", r.lines);
	CHECK(r.lines == 4001);
	close(fd);
	loop_round(100);
	ps_rows = 10;
}

/* status and ps: cached within a tick; status also anew when the
 * subscriptions change. */
static void test_reply_cache(void)
{
	int fd = client();
	struct reader r = { 0 };
	unsigned int s0 = status_calls, p0 = ps_calls;

	CHECK(fd >= 0);
	server_tick(srv);	/* a new tick: nothing cached */
	CHECK(say(fd, HELLO "{\"op\":\"status\",\"id\":7}\n" PS PS STATUS));
	loop_round(100);
	drain(fd, &r);
	CHECK(r.lines == 5);
	CHECK(status_calls == s0 + 1 && ps_calls == p0 + 1);
	server_tick(srv);
	CHECK(say(fd, STATUS PS));
	loop_round(100);
	drain(fd, &r);
	CHECK(status_calls == s0 + 2 && ps_calls == p0 + 2);
	CHECK(say(fd, "{\"op\":\"subscribe\",\"min_duration_ns\":1000000}\n" STATUS));
	loop_round(100);
	drain(fd, &r);
	CHECK(filter_calls > 0);
	CHECK(status_calls == s0 + 3 && ps_calls == p0 + 2);
	CHECK_CONTAINS(r.last, "\"subscribers\":1");
	/* the id is the request's own, the fields the cache's */
	CHECK(say(fd, "{\"op\":\"status\",\"id\":42}\n"));
	loop_round(100);
	drain(fd, &r);
	CHECK_CONTAINS(r.last, "{\"id\":42,\"ok\":true,\"broker\":\"test\",\"clients\":1,");
	close(fd);
	loop_round(100);
}

/* Requests, then shutdown(SHUT_WR): every reply comes, then the close. */
static void test_half_close_gets_its_replies(void)
{
	int fd = client();
	struct reader r = { 0 };

	CHECK(fd >= 0);
	CHECK(say(fd, HELLO STATUS STATUS STATUS));
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 10 && !r.eof; i++) {
		loop_round(100);
		drain(fd, &r);
	}
	if (r.lines != 4 || !r.eof)
		fprintf(stderr, "%zu replies, eof %d\n", r.lines, r.eof);
	CHECK(r.lines == 4 && r.eof);
	close(fd);
}

/* pgoffd's end of the one connection open now: a socket accepted on sock. */
static int accepted_fd(void)
{
	int found = -1, count = 0;

	for (int fd = 0; fd < 1024; fd++) {
		struct sockaddr_un sa = { 0 };
		socklen_t len = sizeof(sa);
		int listening = 0;
		socklen_t olen = sizeof(listening);

		if (getsockname(fd, (struct sockaddr *)&sa, &len) ||
		    sa.sun_family != AF_UNIX || strcmp(sa.sun_path, sock) ||
		    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &olen) ||
		    listening)
			continue;
		found = fd;
		count++;
	}
	if (count != 1)
		fprintf(stderr, "%d accepted sockets open, not 1\n", count);
	return count == 1 ? found : -1;
}

/* A client whose socket epoll stops watching (epoll_ctl fails when its
 * events change): dropped and counted, not left to stall or spin. */
static void test_unwatchable_client_dropped(void)
{
	char *many = repeat(PS, 400);
	struct reader r = { 0 };
	int fd, theirs;

	loop_round(100);	/* the clients before are gone */
	fd = client();
	theirs = accepted_fd();
	CHECK(fd >= 0 && theirs >= 0);
	CHECK(server_watch_drops(srv) == 0);
	ps_rows = 20;		/* about 2 KB a reply: more than its socket takes */
	CHECK(say(fd, HELLO) && say(fd, many));
	loop_round(100);	/* read; answered over the next rounds */
	/* what ENOMEM would do to EPOLL_CTL_MOD: the next change fails,
	 * when its replies fill the socket and want EPOLLOUT */
	CHECK(epoll_ctl(epfd, EPOLL_CTL_DEL, theirs, NULL) == 0);
	for (int i = 0; i < 100 && !server_watch_drops(srv); i++)
		loop_round(10);
	for (int i = 0; i < 100 && !r.eof; i++)
		drain(fd, &r);
	if (!r.eof || server_watch_drops(srv) != 1)
		fprintf(stderr, "eof %d after %zu replies, %llu clients dropped\n",
			r.eof, r.lines, (unsigned long long)server_watch_drops(srv));
	free(many);
	ps_rows = 10;
	close(fd);
	CHECK(r.eof && server_watch_drops(srv) == 1);
}

/* The server's clock (CLOCK_MONOTONIC), in whole seconds. */
static long long mono_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec;
}

/* 200 connections of one uid, 400 lines to say: 10 are told a second,
 * and a summary when a second with more ends. (They take a second or
 * two; beside another test under ASan, more: counted.) */
static void test_log_lines_per_uid(void)
{
	char *buf = NULL;
	size_t len = 0, lines = 0;
	FILE *f = open_memstream(&buf, &len);
	long long first = mono_seconds(), seconds;

	log_set_output(f);
	for (int i = 0; i < 200; i++) {
		int fd = client();

		close(fd);
		loop_round(10);
	}
	server_tick(srv);	/* within the second: nothing told yet */
	seconds = mono_seconds() - first + 1;
	log_set_output(devnull);
	fclose(f);
	for (char *p = buf; p && *p; p++)
		lines += *p == '\n';
	if (lines > (size_t)(11 * seconds) || lines >= 400)
		fprintf(stderr, "%zu log lines in %lld seconds:\n%s", lines,
			seconds, buf);
	free(buf);
	CHECK(lines <= (size_t)(11 * seconds) && lines < 400);
}

static struct store *store;
static uint64_t last_seq;

/* What pgoffd does with an event: add it to the store's batch, then
 * publish it. The batch is never flushed here as pgoffd's loop does once
 * a round: the server must store it before it sends, and a replay that
 * reaches the store's end must read it. */
static void event_as(bool kept, bool published)
{
	struct event_meta m = { .tgid = 7, .duration_ns = 5000000,
				.wait = PGOFF_WAIT_IO };
	struct event_lines l;
	struct timespec t;
	char line[600];
	int n;

	clock_gettime(CLOCK_REALTIME, &t);
	last_seq++;
	n = snprintf(line, sizeof(line), "{\"type\":\"offcpu\",\"seq\":%llu,"
		     "\"pid\":7,\"duration_ns\":5000000,\"wait\":\"io\","
		     "\"pad\":\"%0400d\"}", (unsigned long long)last_seq, 0);
	if (kept)
		store_add(store, last_seq,
			  (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec, line,
			  (size_t)n, 0);
	l = (struct event_lines){ .plain = line, .plain_len = (size_t)n };
	m.seq = last_seq;
	m.stored = kept;
	if (published)
		server_publish(srv, &l, &m);
}

static void event(void)
{
	event_as(true, true);
}

/* The lines of a stream: each event's seq must follow the last one. */
struct seq_reader {
	char part[4096];
	size_t len;
	uint64_t next;			/* the seq expected */
	size_t events, bad, lines;
	size_t unstored;		/* events read before they were stored */
	uint64_t replayed_at;		/* events read when "replayed" came */
	bool replayed;
	/* "expired" items: how many, the last one's range, and the seq of
	 * the event read before it */
	size_t expired;
	uint64_t exp_first, exp_last, before_exp;
};

static void read_seqs(int fd, struct seq_reader *r)
{
	char buf[65536];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			const char *p;

			if (buf[i] != '\n') {
				if (r->len < sizeof(r->part) - 1)
					r->part[r->len++] = buf[i];
				continue;
			}
			r->part[r->len] = '\0';
			r->len = 0;
			r->lines++;
			if (strstr(r->part, "\"type\":\"replayed\"")) {
				r->replayed = true;
				r->replayed_at = r->events;
			} else if (strstr(r->part, "\"cause\":\"expired\"")) {
				/* it goes on from the seq after the range */
				p = strstr(r->part, "\"first_seq\":");
				r->exp_first = p ? strtoull(p + 12, NULL, 10) : 0;
				p = strstr(r->part, "\"last_seq\":");
				r->exp_last = p ? strtoull(p + 11, NULL, 10) : 0;
				if (r->exp_first != r->next)
					r->bad++;
				r->before_exp = r->next - 1;
				r->next = r->exp_last + 1;
				r->expired++;
			} else if ((p = strstr(r->part, "\"seq\":"))) {
				if (strtoull(p + 6, NULL, 10) != r->next)
					r->bad++;
				if (strtoull(p + 6, NULL, 10) >
				    store_last_seq(store))
					r->unstored++;
				r->next = strtoull(p + 6, NULL, 10) + 1;
				r->events++;
			}
		}
	}
}

/*
 * The batch being made is written before a client is sent one of its
 * events, and only then: a live watcher of events the store does not
 * keep (below record-min) leaves it to grow.
 */
static void test_batch_written_for_stored_only(void)
{
	struct seq_reader r = { 0 };
	int fd = client();

	CHECK(fd >= 0);
	CHECK(say(fd, HELLO "{\"op\":\"subscribe\",\"view\":\"both\"}\n"));
	for (int round = 0; round < 50; round++)
		loop_round(2);
	store_flush(store);
	r.next = last_seq + 1;
	event();			/* kept, sent */
	for (int i = 0; i < 3; i++) {
		event_as(false, true);	/* sent, not kept */
		loop_round(2);
		read_seqs(fd, &r);
	}
	CHECK(store_pending_since(store) == -1);	/* written when sent */
	for (int i = 0; i < 3; i++)
		event_as(false, true);
	event_as(true, false);		/* kept, for nobody */
	for (int i = 0; i < 3; i++) {
		event_as(false, true);
		loop_round(2);
		read_seqs(fd, &r);
	}
	if (store_pending_since(store) == -1)
		fprintf(stderr, "the batch was written for events the store "
			"does not keep\n");
	CHECK(store_pending_since(store) != -1);
	CHECK(r.events == 10);
	store_flush(store);
	close(fd);
	loop_round(10);
}

/*
 * A client that resumes from the last seq it was sent, while the events
 * after it are still in the batch being made (within RECORDER_BATCH_MS of
 * them): it gets them all, in order, then live ones.
 */
static void test_resume_pending(void)
{
	struct seq_reader r = { 0 };
	uint64_t seen;
	char req[200];
	int fd;

	for (int i = 0; i < 20; i++)
		event();
	store_flush(store);		/* what a client was sent is written */
	seen = last_seq;
	for (int i = 0; i < 10; i++)
		event();		/* added, not yet written */
	r.next = seen + 1;
	fd = client();
	CHECK(fd >= 0);
	snprintf(req, sizeof(req), HELLO "{\"op\":\"subscribe\",\"view\":"
		 "\"both\",\"resume_seq\":%llu}\n", (unsigned long long)seen);
	CHECK(say(fd, req));
	for (int round = 0; round < 200 && !r.replayed; round++) {
		loop_round(5);
		read_seqs(fd, &r);
	}
	for (int i = 0; i < 5; i++) {
		event();
		loop_round(5);
		read_seqs(fd, &r);
	}
	if (r.bad || r.events != last_seq - seen)
		fprintf(stderr, "resumed after %llu: read %zu events (%zu out "
			"of order) of the %llu after it\n",
			(unsigned long long)seen, r.events, r.bad,
			(unsigned long long)(last_seq - seen));
	CHECK(r.replayed);
	CHECK(r.bad == 0);
	CHECK(r.events == last_seq - seen);
	close(fd);
	loop_round(10);
}

/*
 * A replay that takes many loop rounds while events keep coming: every
 * event once, in seq order, stored ones first, then live, none lost
 * between the two.
 */
static void test_replay_then_live(void)
{
	struct seq_reader r = { .next = 1 };
	uint64_t stored, after;
	int fd;

	for (int i = 0; i < 5000; i++)
		event();
	stored = last_seq;
	fd = client();
	CHECK(fd >= 0);
	CHECK(say(fd, HELLO "{\"op\":\"subscribe\",\"view\":\"both\","
		       "\"since_ns\":0}\n"));
	for (int round = 0; round < 20000 && !r.replayed; round++) {
		event();	/* live, during the replay */
		loop_round(0);
		read_seqs(fd, &r);
	}
	after = last_seq;
	for (int i = 0; i < 100; i++) {
		event();
		loop_round(0);
	}
	for (int i = 0; i < 50; i++) {
		loop_round(10);
		read_seqs(fd, &r);
	}
	if (r.bad || r.unstored || r.events != last_seq ||
	    r.replayed_at <= stored || r.replayed_at > after)
		fprintf(stderr, "stored %llu, %llu by the replay's end, %llu in "
			"all; read %zu events (%zu out of order, %zu before "
			"they were stored), replayed after %llu\n",
			(unsigned long long)stored, (unsigned long long)after,
			(unsigned long long)last_seq, r.events, r.bad,
			r.unstored, (unsigned long long)r.replayed_at);
	CHECK(r.replayed);
	CHECK(after > stored + 5);	/* events came during the replay */
	/* the replay took in what was stored while it ran */
	CHECK(r.replayed_at > stored && r.replayed_at <= after);
	CHECK(r.bad == 0);
	CHECK(r.unstored == 0);
	CHECK(r.events == last_seq);
	close(fd);
	loop_round(10);
}

/* Rounds until every one of n streams has said "replayed". */
static int rounds_to_replay(const int *fds, size_t n)
{
	struct seq_reader r[3] = { 0 };
	int rounds = 0;

	for (size_t done = 0; done < n && rounds < 1000; rounds++) {
		loop_round(0);
		done = 0;
		for (size_t i = 0; i < n; i++) {
			read_seqs(fds[i], &r[i]);
			done += r[i].replayed;
		}
	}
	return rounds;
}

/*
 * Replays of one uid share one turn a round: three connections replaying
 * the store with a filter that matches nothing (nothing is queued, so
 * nothing holds a replay back) take three times the rounds one does.
 */
static void test_replays_take_turns_per_uid(void)
{
	const char *sub = HELLO "{\"op\":\"subscribe\",\"view\":\"both\","
			  "\"since_ns\":0,\"pids\":[1]}\n";
	int fds[3], one, three;

	for (int i = 0; i < 3; i++) {
		fds[i] = client();
		CHECK(fds[i] >= 0);
	}
	CHECK(say(fds[0], sub));
	one = rounds_to_replay(fds, 1);
	for (int i = 0; i < 3; i++)
		CHECK(say(fds[i], sub));
	three = rounds_to_replay(fds, 3);
	fprintf(stderr, "# one replay: %d rounds; three of one uid: %d\n",
		one, three);
	CHECK(one > 2 && one < 1000);
	CHECK(three >= 3 * one - 3 && three < 1000);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	loop_round(10);
}

/*
 * Two replays of one uid whose clients do not read: once their queues
 * are full nothing can move on, and the loop sleeps (no round is asked
 * for through the eventfd); it did not, when the uid's other replay
 * said "more" each round.
 */
static void test_full_replays_let_the_loop_sleep(void)
{
	const char *sub = HELLO "{\"op\":\"subscribe\",\"view\":\"both\","
			  "\"since_ns\":0}\n";
	int fds[2], woke = 0;

	for (int i = 0; i < 2; i++) {
		fds[i] = client();
		CHECK(fds[i] >= 0);
	}
	for (int i = 0; i < 2; i++)
		CHECK(say(fds[i], sub));
	for (int round = 0; round < 200; round++)
		loop_round(0);
	for (int round = 0; round < 5; round++)
		woke += loop_round(20);
	if (woke)
		fprintf(stderr, "the loop woke %d times in 5 rounds\n", woke);
	CHECK(woke == 0);
	for (int i = 0; i < 2; i++)
		close(fds[i]);
	loop_round(10);
}

/* Files of the state directory this process holds open, removed. */
static int deleted_open(void)
{
	char path[64], target[512];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strstr(target, dir) && strstr(target, "(deleted)"))
			n++;
	}
	return n;
}

/*
 * A replay whose client stops reading: its queue fills, the replay
 * waits; once its socket has taken nothing for stuck-timeout, it is cut
 * off as a live subscriber whose queue stays full (it never was: with a
 * subscription, only a full live queue counted).
 */
static void test_stalled_replay_cut_off(void)
{
	const char *sub = HELLO "{\"op\":\"subscribe\",\"view\":\"both\","
			  "\"since_ns\":0}\n";
	struct server_opts o = opts;
	struct reader r = { 0 };
	size_t before;
	int fd = client();

	CHECK(fd >= 0);
	CHECK(say(fd, sub));
	for (int round = 0; round < 300; round++)
		loop_round(0);
	before = server_client_count(srv);
	o.stuck_timeout_s = 1;
	server_reconfigure(srv, &o);
	/* a tick after a whole second (time() counts seconds) */
	nanosleep(&(struct timespec){ 2, 100 * 1000 * 1000 }, NULL);
	server_tick(srv);
	loop_round(0);
	for (int i = 0; i < 200 && !r.eof; i++) {
		drain(fd, &r);
		loop_round(1);
	}
	printf("# a replay not read: %zu clients before the tick, %zu after; "
	       "it read %zu lines then %s\n", before,
	       server_client_count(srv), r.lines,
	       r.eof ? "end of file" : "no end of file");
	server_reconfigure(srv, &opts);
	close(fd);
	loop_round(10);
	CHECK(r.eof);
}

/*
 * A replay whose client reads nothing while retention removes the
 * segment it reads: pgoffd holds no removed file for it, and when the
 * client reads again it is told which seqs expired ("dropped", cause
 * "expired": from the one after the last it was sent to the one before
 * the first held), then gets the events from the first held on.
 */
static void test_replay_overtaken_by_retention(void)
{
	const char *sub = HELLO "{\"op\":\"subscribe\",\"view\":\"both\","
			  "\"since_ns\":0}\n";
	struct store_opts small = { .max_bytes = 64 * 1024,
				    .max_age_ns = 86400000000000LL,
				    .seg_bytes = 8192 };
	struct store_opts big = { .max_bytes = 1ULL << 30,
				  .max_age_ns = 86400000000000LL };
	struct seq_reader r = { .next = 1 };
	struct store_info i;
	int held_before, held_after, fd;

	for (int k = 0; k < 3000; k++)	/* more than its queue and socket */
		event();
	store_flush(store);
	fd = client();
	CHECK(fd >= 0);
	CHECK(say(fd, sub));
	for (int round = 0; round < 300; round++)
		loop_round(0);
	held_before = deleted_open();
	/* small segments from now on: the big ones go */
	store_set_limits(store, &small);
	for (int k = 0; k < 400; k++) {
		event();
		if (k % 50 == 0)
			store_flush(store);
	}
	store_flush(store);
	store_info(store, &i);
	held_after = deleted_open();
	for (int k = 0; k < 20000 && !r.replayed; k++) {
		loop_round(0);
		read_seqs(fd, &r);
	}
	store_set_limits(store, &big);
	printf("# removed files held open: %d before retention, %d after; the "
	       "store holds seqs %llu-%llu\n", held_before, held_after,
	       (unsigned long long)i.first_seq, (unsigned long long)i.last_seq);
	printf("# the client read %zu events, %zu out of order, then %zu "
	       "expired items (the last %llu-%llu, after seq %llu), %s\n",
	       r.events, r.bad, r.expired, (unsigned long long)r.exp_first,
	       (unsigned long long)r.exp_last,
	       (unsigned long long)r.before_exp,
	       r.replayed ? "replayed" : "no end of replay");
	close(fd);
	loop_round(10);
	CHECK(held_after == 0);
	/* every seq once: the events, then the range, then the rest */
	CHECK(r.replayed && r.expired == 1 && r.bad == 0);
	CHECK(r.exp_last + 1 == i.first_seq && r.next == last_seq + 1);
	CHECK(server_replay_expired(srv) == r.exp_last - r.exp_first + 1);
}

/* A past job that takes PAST_STEPS steps. */
#define PAST_STEPS 3
static void *past_start_hook(void *ctx, const struct pgoff_request *req)
{
	int *left = malloc(sizeof(*left));

	(void)ctx;
	(void)req;
	if (left)
		*left = PAST_STEPS;
	return left;
}

static bool past_step_hook(void *ctx, void *job)
{
	(void)ctx;
	return --*(int *)job > 0;
}

static void past_cancel_hook(void *ctx, void *job)
{
	(void)ctx;
	free(job);
}

static void past_finish_hook(void *ctx, void *job, json_object *r)
{
	(void)r;
	past_cancel_hook(ctx, job);
}

/*
 * Stats over the past: two jobs a uid at once (a third is refused with
 * busy), and the uid's jobs take one step a round between them.
 */
static void test_past_jobs_per_uid(void)
{
	struct reader r[3] = { 0 };
	struct timespec t;
	char req[160];
	int fds[3], rounds = 0;

	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(req, sizeof(req), HELLO "{\"op\":\"stats\",\"since_ns\":%lld}\n",
		 (long long)(t.tv_sec - 600) * 1000000000LL);
	for (int i = 0; i < 3; i++) {
		fds[i] = client();
		CHECK(fds[i] >= 0);
	}
	for (int i = 0; i < 3; i++)
		CHECK(say(fds[i], req));
	loop_round(100);
	drain(fds[2], &r[2]);
	if (!strstr(r[2].last, "\"busy\""))
		fprintf(stderr, "third: %s\n", r[2].last);
	CHECK(r[2].lines == 2 && strstr(r[2].last, "\"busy\""));
	while ((r[0].lines < 2 || r[1].lines < 2) && rounds < 100) {
		loop_round(0);
		rounds++;
		drain(fds[0], &r[0]);
		drain(fds[1], &r[1]);
	}
	fprintf(stderr, "# both answered after %d more rounds\n", rounds);
	CHECK(strstr(r[0].last, "\"ok\":true") && strstr(r[1].last, "\"ok\":true"));
	/* 6 steps, one a round, the first taken in the round that read them */
	CHECK(rounds >= 2 * PAST_STEPS - 2 && rounds <= 2 * PAST_STEPS + 2);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	loop_round(10);
}

/* A client that asks for a past window and is done sending (shuts its
 * side down) still gets the reply, then the end. */
static void test_past_reply_after_half_close(void)
{
	struct reader r = { 0 };
	struct timespec t;
	char req[160];
	int fd = client();

	CHECK(fd >= 0);
	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(req, sizeof(req), HELLO "{\"op\":\"stats\",\"since_ns\":%lld}\n",
		 (long long)(t.tv_sec - 600) * 1000000000LL);
	CHECK(say(fd, req) && shutdown(fd, SHUT_WR) == 0);
	for (int round = 0; round < 20 && !r.eof; round++) {
		loop_round(10);
		drain(fd, &r);
	}
	if (r.lines != 2 || !r.eof)
		fprintf(stderr, "%zu lines, eof %d, last: %s\n", r.lines, r.eof,
			r.last);
	CHECK(r.lines == 2 && strstr(r.last, "\"ok\":true") && r.eof);
	close(fd);
}

int main(void)
{
	struct server_opts o = {
		.socket_path = sock, .group_name = "test", .group = getegid(),
		.max_clients = 64, .max_clients_per_uid = 32,
		.queue_bytes = 1 << 20, .stuck_timeout_s = 30,
		.min_floor_ns = 100000,
	};
	struct server_hooks h = { .status = status_hook, .ps = ps_hook,
				  .filter_changed = filter_hook,
				  .past_start = past_start_hook,
				  .past_step = past_step_hook,
				  .past_finish = past_finish_hook,
				  .past_cancel = past_cancel_hook };
	struct store_opts so = { .max_bytes = 1ULL << 30,
				 .max_age_ns = 86400000000000LL };
	char state[80];
	int rc, err, dfd;

	snprintf(dir, sizeof(dir), "/tmp/pgoff-test-server.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(dir, 0755);
	snprintf(sock, sizeof(sock), "%s/run/pgoffd.sock", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	dfd = mkdir(state, 0700) ? -1 :
	      open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || store_open(&store, dfd, &so)) {
		perror(state);
		return 1;
	}
	o.store = store;
	opts = o;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	log_init("pgoffd", LOG_LEVEL_INFO);
	devnull = fopen("/dev/null", "w");
	log_set_output(devnull);
	err = server_open(&srv, &o, &h, epfd);
	if (err) {
		fprintf(stderr, "server_open: %s\n", strerror(-err));
		return 1;
	}
	RUN(test_share_per_round);
	RUN(test_flood_does_not_delay_others);
	RUN(test_unread_replies_stop_reading);
	RUN(test_reply_cache);
	RUN(test_half_close_gets_its_replies);
	RUN(test_unwatchable_client_dropped);
	RUN(test_log_lines_per_uid);
	RUN(test_resume_pending);
	RUN(test_replay_then_live);
	RUN(test_replays_take_turns_per_uid);
	RUN(test_past_jobs_per_uid);
	RUN(test_full_replays_let_the_loop_sleep);
	RUN(test_past_reply_after_half_close);
	RUN(test_stalled_replay_cut_off);
	/* it removes what is stored: after those reading all of it */
	RUN(test_replay_overtaken_by_retention);
	/* last: it stores only some of the seqs the others expect */
	RUN(test_batch_written_for_stored_only);
	rc = CHECK_DONE();
	server_close(srv, "shutdown");
	unlink(sock);
	snprintf(sock, sizeof(sock), "%s/run", dir);
	rmdir(sock);
	store_close(store);
	snprintf(sock, sizeof(sock), "rm -rf %s/state", dir);
	if (system(sock))
		fprintf(stderr, "%s failed\n", sock);
	rmdir(dir);
	log_set_output(NULL);
	fclose(devnull);
	return rc;
}
