// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof_write - profiles from client/pprof.c for tests/unit/test_pprof_go.sh
 * to read with go tool pprof (the reference decoder):
 *   pprof_write fixed OUT         a known profile: a lock wait under two
 *                                 pids, a sleep, hostile names and labels
 *   pprof_write random SEED OUT   random samples (frames drawn from a
 *                                 small set, some hostile), then prints
 *                                 "samples S intervals C ns T" as added
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client/pprof.h"

static int save(const struct pprof *p, const char *path)
{
	const char *comments[] = { "pprof_write", "a comment with \x1b[31m escapes" };
	struct pprof_meta m = {
		.time_nanos = 1796352600000000000, .duration_nanos = 15000000000,
		.comments = comments, .ncomments = 2,
	};
	unsigned char *buf;
	size_t len;
	FILE *f;
	int err = pprof_encode_gzip(p, &m, &buf, &len);

	if (err) {
		fprintf(stderr, "pprof_encode_gzip: %s\n", strerror(-err));
		return 1;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}

#define ADD(p, ns, labels, nl, ...)                                         \
	pprof_add((p), (const char *const[]){ __VA_ARGS__ },               \
		  sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *), \
		  (labels), (nl), (ns))

static int fixed(const char *path)
{
	struct pprof *p = pprof_new();
	struct pprof_label a[] = {
		{ "wait_event_type", "Lock", 0 }, { "wait_event", "transactionid", 0 },
		{ "wait", "lock", 0 }, { "backend_type", "client backend", 0 },
		{ "database", "shop", 0 }, { "cluster", "/var/lib/postgresql/15/main", 0 },
		{ "query_id", "-6365623389011187613", 0 }, { "pid", NULL, 4242 },
	}, b[8], s[] = {
		{ "wait_event_type", "Timeout", 0 }, { "wait_event", "PgSleep", 0 },
		{ "wait", "sleep", 0 }, { "database", "bad\x1b]0;title\x07\xff db", 0 },
		{ "pid", NULL, 4343 },
	};
	char *huge = malloc(1 << 20);
	int err = 0;

	if (!p || !huge)
		return 1;
	memset(huge, 'x', (1 << 20) - 1);
	huge[(1 << 20) - 1] = '\0';
	memcpy(b, a, sizeof(a));
	b[7].num = 4243;
	err |= ADD(p, 3000000000, a, 8, "Lock:transactionid", "wait: lock",
		   "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
		   "__x64_sys_epoll_wait", "do_epoll_wait");
	err |= ADD(p, 1000000000, a, 8, "Lock:transactionid", "wait: lock",
		   "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
		   "__x64_sys_epoll_wait", "do_epoll_wait");
	err |= ADD(p, 500000000, b, 8, "Lock:transactionid", "wait: lock",
		   "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
		   "__x64_sys_epoll_wait", "do_epoll_wait");
	err |= ADD(p, 250000000, s, 5, "Timeout:PgSleep", "wait: sleep",
		   "evil\n\x1b[2Jframe\x9b\x01", huge, "do_epoll_wait");
	pprof_free(p);
	free(huge);
	if (err) {
		fprintf(stderr, "pprof_add failed\n");
		return 1;
	}
	p = pprof_new();	/* again, kept this time */
	huge = malloc(1 << 20);
	memset(huge, 'x', (1 << 20) - 1);
	huge[(1 << 20) - 1] = '\0';
	ADD(p, 3000000000, a, 8, "Lock:transactionid", "wait: lock",
	    "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
	    "__x64_sys_epoll_wait", "do_epoll_wait");
	ADD(p, 1000000000, a, 8, "Lock:transactionid", "wait: lock",
	    "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
	    "__x64_sys_epoll_wait", "do_epoll_wait");
	ADD(p, 500000000, b, 8, "Lock:transactionid", "wait: lock",
	    "entry_SYSCALL_64_after_hwframe", "do_syscall_64",
	    "__x64_sys_epoll_wait", "do_epoll_wait");
	ADD(p, 250000000, s, 5, "Timeout:PgSleep", "wait: sleep",
	    "evil\n\x1b[2Jframe\x9b\x01", huge, "do_epoll_wait");
	free(huge);
	err = save(p, path);
	pprof_free(p);
	return err;
}

static int random_profile(unsigned seed, const char *path)
{
	static const char *const names[] = {
		"Lock:transactionid", "IO:WALSync", "wait: lock", "wait: io",
		"schedule_hrtimeout_range", "do_epoll_wait", "ext4_sync_file",
		"\x01\x02\x03", "\xc3\x28 bad", "caf\xc3\xa9", "a;b c", "%s%n",
	};
	static const char *const values[] = { "shop", "client backend", "\x1b[31m", "" };
	const size_t nnames = sizeof(names) / sizeof(names[0]);
	struct pprof *p = pprof_new();
	uint64_t total = 0, count = 0;
	int err = 0;

	srandom(seed);
	for (int i = 0; p && i < 2000; i++) {
		const char *frames[PPROF_MAX_DEPTH];
		struct pprof_label l[3] = {
			{ "database", values[random() % 4], 0 },
			{ "pid", NULL, random() % 5 + 1 },
			{ "wait", values[random() % 4], 0 },
		};
		size_t n = (size_t)(random() % 8) + 1;
		uint64_t ns = (uint64_t)random() * (uint64_t)(random() % 1000);

		for (size_t k = 0; k < n; k++)
			frames[k] = names[random() % nnames];
		err = pprof_add(p, frames, n, l, (size_t)(random() % 4), ns);
		if (err)
			break;
		total += ns;
		count++;
	}
	if (!p || err) {
		fprintf(stderr, "pprof_add: %s\n", strerror(p ? -err : ENOMEM));
		pprof_free(p);
		return 1;
	}
	printf("samples %zu intervals %" PRIu64 " ns %" PRIu64 "\n",
	       pprof_samples(p), count, total);
	err = save(p, path);
	pprof_free(p);
	return err;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "fixed") == 0)
		return fixed(argv[2]);
	if (argc == 4 && strcmp(argv[1], "random") == 0)
		return random_profile((unsigned)strtoul(argv[2], NULL, 10), argv[3]);
	fprintf(stderr, "usage: pprof_write fixed OUT | random SEED OUT\n");
	return 2;
}
