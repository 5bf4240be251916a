/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_io_util.c - whole writes (client/io_util.c): a megabyte through a
 * pipe arrives whole while a timer interrupts the writer (EINTR, partial
 * writes); a socket whose peer is gone is -EPIPE with SIGPIPE left at
 * its default (it would kill the test); write() is for files,
 * send() for sockets only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "client/io_util.h"
#include "tests/unit/check.h"

#define BIG (1u << 20)

static void on_alarm(int sig)
{
	(void)sig;
}

/* A reader that takes its time; exits 0 when all BIG bytes came right. */
static void slow_reader(int fd)
{
	static unsigned char got[BIG];
	size_t n = 0;

	while (n < BIG) {
		ssize_t r = read(fd, got + n, BIG - n < 4096 ? BIG - n : 4096);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(2);
		n += (size_t)r;
		usleep(50);
	}
	for (size_t i = 0; i < BIG; i++)
		if (got[i] != (unsigned char)(i * 7))
			_exit(3);
	_exit(read(fd, got, 1) == 0 ? 0 : 4);
}

static void test_write_all_whole_through_signals(void)
{
	static unsigned char buf[BIG];
	/* no SA_RESTART: a write the timer interrupts returns early */
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval every = { { 0, 1000 }, { 0, 1000 } }, off = { 0 };
	int p[2], st = -1, err;
	pid_t r;

	for (size_t i = 0; i < BIG; i++)
		buf[i] = (unsigned char)(i * 7);
	CHECK(pipe(p) == 0);
	r = fork();
	CHECK(r >= 0);
	if (r == 0) {
		close(p[1]);
		slow_reader(p[0]);
	}
	close(p[0]);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	err = io_write_all(p[1], buf, BIG);
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	close(p[1]);
	CHECK(waitpid(r, &st, 0) == r);
	CHECK(err == 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_send_all_peer_gone_is_epipe(void)
{
	int sv[2];

	signal(SIGPIPE, SIG_DFL);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	close(sv[1]);
	CHECK(io_send_all(sv[0], "x\n", 2) == -EPIPE);
	close(sv[0]);
}

static void test_send_all_then_read(void)
{
	char got[8] = { 0 };
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(io_send_all(sv[0], "hello\n", 6) == 0);
	CHECK(read(sv[1], got, sizeof(got)) == 6);
	CHECK_STR(got, "hello\n");
	CHECK(io_send_all(sv[0], "", 0) == 0);
	close(sv[0]);
	close(sv[1]);
}

/* A file takes write(), not send(): the flame graph's --pprof file. */
static void test_file_is_written_not_sent(void)
{
	FILE *f = tmpfile();
	char got[8] = { 0 };

	CHECK(f);
	CHECK(io_write_all(fileno(f), "abc", 3) == 0);
	CHECK(io_send_all(fileno(f), "abc", 3) == -ENOTSOCK);
	CHECK(pread(fileno(f), got, sizeof(got), 0) == 3);
	CHECK_STR(got, "abc");
	fclose(f);
}

static void test_bad_fd(void)
{
	CHECK(io_write_all(-1, "a", 1) == -EBADF);
	CHECK(io_send_all(-1, "a", 1) == -EBADF);
}

int main(void)
{
	RUN(test_write_all_whole_through_signals);
	RUN(test_send_all_peer_gone_is_epipe);
	RUN(test_send_all_then_read);
	RUN(test_file_is_written_not_sent);
	RUN(test_bad_fd);
	return CHECK_DONE();
}
