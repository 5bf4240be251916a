/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_event.c - ring records to JSON lines: the exact lines (time and
 * start aside, which follow the clocks) for an interval with and without
 * SQL and a user stack, an episode, a waker, and a process pgoffd does
 * not know. A fake /proc holds one cluster of PostgreSQL 15.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "broker/kernel/event.h"
#include "broker/kernel/ksyms.h"
#include "broker/pg/pg_registry.h"
#include "broker/pg/usyms.h"
#include "tests/unit/check.h"

#define POSTMASTER	100
#define BACKEND		101
#define WAKER		102
/* two clusters of PostgreSQL 18: run-time names are each one's own */
#define PM18A		200
#define BE18A		201
#define PM18B		300
#define BE18B		301

static char proc_root[64];
static struct event_ctx ctx;
static struct pg_registry *registry;

static void write_file(const char *name, uint32_t pid, const char *text,
		       size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", proc_root, pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, name);
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void fake_process(uint32_t pid, uint32_t ppid, const char *cmdline,
			 size_t cmdline_len)
{
	char stat[160];

	snprintf(stat, sizeof(stat), "%u (postgres) S %u 0 0 0 0 0 0 0 0 0 0 "
		 "0 0 0 0 0 0 7777 0\n", pid, ppid);
	write_file("stat", pid, stat, strlen(stat));
	write_file("status", pid, "Name:\tpostgres\nUid:\t1000\t1000\t1000\t1000\n",
		   strlen("Name:\tpostgres\nUid:\t1000\t1000\t1000\t1000\n"));
	write_file("cmdline", pid, cmdline, cmdline_len);
}

/* The cluster the registry asks about next, probed: id 1 (15) or 2, 3
 * (18), as its postmaster's pid says. */
static int probe_one(void)
{
	struct pg_cluster_info info;
	uint32_t asked, pids[2];
	size_t npids;

	if (!pg_registry_next_probe(registry, 0, &asked))
		return -1;
	memset(&info, 0, sizeof(info));
	info.postmaster_pid = asked;
	info.uid = 1000;
	info.port = 5432;
	if (asked == POSTMASTER) {
		info.id = 1;
		info.major = 15;
		info.has_sysid = 1;
		info.system_identifier = 7321456789012345678ull;
		info.dir_dev = 0x10301;
		info.dir_ino = 131074;
		snprintf(info.data_dir, sizeof(info.data_dir), "/data");
		snprintf(info.version, sizeof(info.version), "15.8");
		pids[0] = BACKEND;
		pids[1] = WAKER;
		npids = 2;
	} else {
		info.id = asked == PM18A ? 2 : 3;
		info.major = 18;
		info.dir_dev = 0x10301;
		info.dir_ino = 200000 + info.id;
		snprintf(info.data_dir, sizeof(info.data_dir), "/data18-%u",
			 info.id);
		snprintf(info.version, sizeof(info.version), "18.6");
		pids[0] = asked + 1;
		npids = 1;
	}
	return pg_registry_probed(registry, &info, pids, npids, 0) ? 0 : -1;
}

#define CONTAINER "3f1c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3"

/* One cluster (PostgreSQL 15) with a backend and a checkpointer, in a
 * container; two of 18 with a backend each. */
static int setup(void)
{
	static const char pm[] = "/usr/lib/postgresql/15/bin/postgres\0-D\0/data";
	static const char pm18[] = "/usr/lib/postgresql/18/bin/postgres\0-D\0/d18";
	static const char be[] = "postgres: alice shop [local] SELECT";
	static const char ck[] = "postgres: checkpointer";
	char kallsyms[96];
	FILE *f;

	static const char cg[] = "0::/system.slice/docker-" CONTAINER ".scope/"
				 "system.slice/postgresql.service\n";
	char self[160];

	snprintf(proc_root, sizeof(proc_root), "/tmp/pgoff-test-event.XXXXXX");
	if (!mkdtemp(proc_root))
		return -1;
	/* a host with cgroup v2 only; the cluster in a container with
	 * systemd in it */
	snprintf(self, sizeof(self), "%s/self", proc_root);
	mkdir(self, 0700);
	snprintf(self, sizeof(self), "%s/self/cgroup", proc_root);
	f = fopen(self, "w");
	if (!f || fputs("0::/\n", f) == EOF || fclose(f))
		return -1;
	fake_process(POSTMASTER, 1, pm, sizeof(pm));
	write_file("cgroup", POSTMASTER, cg, sizeof(cg) - 1);
	fake_process(BACKEND, POSTMASTER, be, sizeof(be));
	fake_process(WAKER, POSTMASTER, ck, sizeof(ck));
	fake_process(PM18A, 1, pm18, sizeof(pm18));
	fake_process(BE18A, PM18A, be, sizeof(be));
	fake_process(PM18B, 1, pm18, sizeof(pm18));
	fake_process(BE18B, PM18B, be, sizeof(be));
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", proc_root);
	f = fopen(kallsyms, "w");
	if (!f)
		return -1;
	fprintf(f, "ffffffff81000000 T __schedule\nffffffff81001000 T "
		"schedule\nffffffff81002000 T futex_wait\nffffffff81003000 T "
		"do_syscall_64\n");
	fclose(f);
	ctx.ksyms = ksyms_load(kallsyms);
	if (!ctx.ksyms || pg_registry_new(&registry, proc_root, 0) ||
	    pg_registry_scan(registry, 0))
		return -1;
	for (int i = 0; i < 3; i++)
		if (probe_one())
			return -1;
	ctx.registry = registry;
	return 0;
}

static struct pgoff_record interval(void)
{
	struct pgoff_record r;

	memset(&r, 0, sizeof(r));
	r.kind = PGOFF_REC_INTERVAL;
	r.start_ns = 1000000;
	r.wake_ns = 1400000;
	r.end_ns = 1500000;
	r.pid = BACKEND;
	r.tgid = BACKEND;
	r.cluster = 1;
	r.pg_wait_event_info = 0x03000004;	/* Lock/tuple */
	r.flags = PGOFF_F_PG_WAIT | PGOFF_F_WOKEN | PGOFF_F_WAKER_TRACED |
		  PGOFF_F_WAKER_PG_WAIT | PGOFF_F_IN_STATEMENT |
		  PGOFF_F_PG_STATUS;
	r.pg_state = 2;				/* 15's STATE_RUNNING */
	r.query_id = 0x8000000000000001ULL;	/* shown as a signed bigint */
	r.waker_pid = WAKER;
	r.waker_tgid = WAKER;
	r.waker_pg_wait_event_info = 0x0A000000;
	memcpy(r.comm, "postgres", 9);
	memcpy(r.waker_comm, "postgres", 9);
	r.stack[0] = 0xffffffff81000010;	/* __schedule */
	r.stack[1] = 0xffffffff81001010;	/* schedule */
	r.stack[2] = 0xffffffff81002010;	/* futex_wait */
	r.stack[3] = 0xffffffff81003010;	/* do_syscall_64 */
	r.stack[4] = 0x1234;			/* in no known text */
	r.stack_bytes = 5 * 8;
	return r;
}

/*
 * s without its "time" and "start" fields, which follow the clocks, cut
 * out of the text so that every other byte is compared as pgoffd wrote
 * it (escapes, field order); s must also parse as one JSON object.
 */
static const char *timeless(const char *s, size_t len)
{
	static char buf[PGOFF_MAX_LINE];
	static const char time_key[] = ",\"time\":\"", start_key[] = "\",\"start\":\"";
	json_object *o = json_tokener_parse(s);
	const char *t = strstr(s, time_key), *st, *end;

	json_object_put(o);
	if (!o || strlen(s) != len || len >= sizeof(buf))
		return "(not one JSON object of the length given)";
	st = t ? strstr(t + sizeof(time_key) - 1, start_key) : NULL;
	end = st ? strchr(st + sizeof(start_key) - 1, '"') : NULL;
	if (!end)
		return "(no \"time\" and \"start\" fields)";
	snprintf(buf, sizeof(buf), "%.*s%s", (int)(t - s), s, end + 1);
	return buf;
}

#define PG_BACKEND "\"pg\":{\"wait_event_info\":50331652,\"wait_event_type\":" \
	"\"Lock\",\"wait_event\":\"tuple\",\"backend_type\":\"client " \
	"backend\",\"database\":\"shop\",\"user\":\"alice\",\"state\":\"active\"," \
	"\"query_id\":\"-9223372036854775807\",\"cluster\":" CLUSTER "}"
/* the cluster: its id from the prober's facts (see test_cluster_ident),
 * the container and service from its postmaster's cgroup file */
#define CLUSTER "{\"id\":1,\"cluster_id\":\"13e382a564cd7b20\",\"owner\":1000," \
	"\"container\":{\"runtime\":\"docker\",\"id\":\"" CONTAINER "\"}," \
	"\"data_dir\":\"/data\",\"port\":5432,\"version\":\"15.8\"," \
	"\"unit\":\"postgresql.service\"}"
#define WAKER_CK "\"waker\":{\"pid\":102,\"tid\":102,\"comm\":\"postgres\"," \
	"\"backend_type\":\"checkpointer\",\"wait_event_info\":167772160," \
	"\"wait_event_type\":\"IO\",\"wait_event\":\"BaseBackupRead\"}"
#define INTERVAL_HEAD "{\"type\":\"offcpu\",\"seq\":%d,\"pid\":101,\"tid\":101," \
	"\"comm\":\"postgres\",\"duration_ns\":500000,\"blocked_ns\":400000," \
	"\"runq_ns\":100000,\"wait\":\"lock\",\"kernel_wait\":\"lock\"," \
	PG_BACKEND "," WAKER_CK ",\"stack\":[\"futex_wait\",\"do_syscall_64\"," \
	"\"[unknown]\"]"

static void test_interval_plain(void)
{
	struct pgoff_record r = interval();
	struct event_lines lines;
	struct event_meta meta;
	char want[4096];

	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
	snprintf(want, sizeof(want), INTERVAL_HEAD "}", (int)ctx.seq);
	CHECK_STR(timeless(lines.plain, lines.plain_len), want);
	CHECK(!lines.with_query && !lines.with_ustack);
	CHECK(!meta.episode && meta.tgid == BACKEND &&
	      meta.duration_ns == 500000 && meta.wait == PGOFF_WAIT_LOCK &&
	      meta.has_pg_wait && meta.pg_wait_event_info == 0x03000004);
	CHECK_STR(meta.pg_wait_event, "tuple");
	CHECK_STR(meta.database, "shop");
	CHECK_STR(meta.backend_type, "client backend");
}

/*
 * A wakeup during the thread's own switch-out, stamped before its start
 * was: the interval is all waiting for a CPU, and its waker is told. A
 * stamp after the end (none is) would leave it all blocked.
 */
static void test_woken_in_switch_out(void)
{
	struct pgoff_record r = interval();
	struct event_lines lines;
	struct event_meta meta;

	r.wake_ns = r.start_ns - 300;
	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
	CHECK(strstr(lines.plain, "\"blocked_ns\":0,\"runq_ns\":500000,") != NULL);
	CHECK(strstr(lines.plain, "\"waker\":{\"pid\":102,") != NULL);
	r.wake_ns = r.end_ns + 1;
	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
	CHECK(strstr(lines.plain, "\"blocked_ns\":500000,\"runq_ns\":0,") != NULL);
}

/*
 * An interval whose switch-in the kernel did not report, closed at the
 * thread's next switch-out: its stack was not walked, and that says why;
 * one that ended at its wakeup says its run-queue part is unknown.
 */
static void test_switch_in_unseen(void)
{
	struct pgoff_record r = interval();
	struct event_lines lines;
	struct event_meta meta;

	r.flags |= PGOFF_F_SWITCH_IN_UNSEEN;
	r.stack_bytes = PGOFF_STACK_NOT_WALKED;
	r.state = PGOFF_AGG_SLEEP;		/* its kernel wait: the system call's */
	r.syscall = SYS_epoll_pwait;
	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
	CHECK_CONTAINS(lines.plain, "\"kernel_wait\":\"poll\"");
	CHECK_CONTAINS(lines.plain, "\"stack\":[],\"stack_error\":\"not walked: "
		       "the kernel reported no switch back onto a CPU");
	CHECK(strstr(lines.plain, "runq_unknown") == NULL);
	r.flags |= PGOFF_F_END_AT_WAKE;
	r.end_ns = r.wake_ns;
	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
	CHECK_CONTAINS(lines.plain, "\"runq_ns\":0,\"runq_unknown\":\"the kernel "
		       "reported no switch back onto a CPU: the interval ends "
		       "at its wakeup\"");
}

/* An interval with its SQL and a user stack of one frame. */
struct query_ustack_record {
	struct pgoff_record_query rq;
	struct pgoff_ustack us;
};

static void query_ustack_record(struct query_ustack_record *rec,
				const char *sql)
{
	memset(rec, 0, sizeof(*rec));
	rec->rq.rec = interval();
	rec->rq.rec.flags |= PGOFF_F_QUERY | PGOFF_F_USTACK;
	rec->rq.rec.query_len = (uint32_t)strlen(sql);
	memcpy(rec->rq.query, sql, strlen(sql) + 1);
	rec->us.bytes = 8;
	rec->us.ips[0] = 0x400000;
}

/* its user stack, as the test's ctx (no symbolizer) names it */
#define NO_USYMS ",\"user_stack\":[],\"user_stack_error\":" \
	"\"pgoffd has no user stack symbolizer\""

static void test_interval_query_and_ustack(void)
{
	struct query_ustack_record rec;
	struct event_lines lines;
	struct event_meta meta;
	char want[4096], head[2048];
	static const char nosym[] = NO_USYMS;

	query_ustack_record(&rec, "SELECT 1");
	ctx.want_query = true;
	ctx.want_ustack = true;
	CHECK(event_encode(&ctx, &rec, sizeof(rec), &lines, &meta) == 0);
	snprintf(head, sizeof(head), INTERVAL_HEAD, (int)ctx.seq);
	snprintf(want, sizeof(want), "%s}", head);
	CHECK_STR(timeless(lines.plain, lines.plain_len), want);
	snprintf(want, sizeof(want), "%s%s}", head, nosym);
	CHECK_STR(timeless(lines.with_ustack, lines.with_ustack_len), want);
	snprintf(want, sizeof(want), "%s,\"query\":\"SELECT 1\"}", head);
	CHECK_STR(timeless(lines.with_query, lines.with_query_len), want);
	snprintf(want, sizeof(want), "%s,\"query\":\"SELECT 1\"%s}", head, nosym);
	CHECK_STR(timeless(lines.with_query_ustack,
			   lines.with_query_ustack_len), want);
	ctx.want_query = false;
	ctx.want_ustack = false;
}

/* The recorder's lines with SQL redacted (record-queries = redacted),
 * without the SQL as it is when no subscriber sees it; a query not seen
 * stays null with its reason. */
static void test_interval_redacted(void)
{
	struct query_ustack_record rec;
	struct event_lines lines;
	struct event_meta meta;
	char want[4096], head[2048];
	static const char nosym[] = NO_USYMS;

	query_ustack_record(&rec, "UPDATE t SET a = 'secret' WHERE id = 42 "
			    "AND ident$1 = 7");
	ctx.want_redacted = true;
	ctx.want_ustack = true;
	CHECK(event_encode(&ctx, &rec, sizeof(rec), &lines, &meta) == 0);
	CHECK(!lines.with_query && !lines.with_query_ustack);
	snprintf(head, sizeof(head), INTERVAL_HEAD, (int)ctx.seq);
	snprintf(want, sizeof(want), "%s,\"query\":\"UPDATE t SET a = $2 WHERE "
		 "id = $3 AND ident$1 = $4\",\"query_redacted\":true}", head);
	CHECK_STR(timeless(lines.with_redacted, lines.with_redacted_len), want);
	snprintf(want, sizeof(want), "%s,\"query\":\"UPDATE t SET a = $2 WHERE "
		 "id = $3 AND ident$1 = $4\",\"query_redacted\":true%s}", head,
		 nosym);
	CHECK_STR(timeless(lines.with_redacted_ustack,
			   lines.with_redacted_ustack_len), want);
	/* both forms when a subscriber sees SQL too */
	ctx.want_query = true;
	CHECK(event_encode(&ctx, &rec, sizeof(rec), &lines, &meta) == 0);
	CHECK_CONTAINS(lines.with_query, "'secret'");
	CHECK(!strstr(lines.with_redacted, "secret"));
	/* not seen: null and why, not marked redacted */
	rec.rq.rec.flags &= ~(PGOFF_F_QUERY | PGOFF_F_USTACK);
	rec.rq.rec.flags |= PGOFF_F_QUERY_UNSEEN;
	CHECK(event_encode(&ctx, &rec.rq.rec, sizeof(rec.rq.rec), &lines,
			   &meta) == 0);
	CHECK_CONTAINS(lines.with_redacted, "\"query\":null,\"query_error\":");
	CHECK(!strstr(lines.with_redacted, "query_redacted"));
	ctx.want_redacted = false;
	ctx.want_query = false;
	ctx.want_ustack = false;
}

/* A stack the kernel did not walk, SQL not seen, a process not known. */
static void test_interval_unknown_process(void)
{
	struct pgoff_record r = interval();
	struct event_lines lines;
	struct event_meta meta;
	char want[4096];

	r.pid = r.tgid = 999;
	r.cluster = 7;
	r.flags = PGOFF_F_PREEMPTED | PGOFF_F_PG_NO_SYMBOL | PGOFF_F_QUERY_UNSEEN;
	r.stack_bytes = PGOFF_STACK_NOT_WALKED;
	ctx.want_query = true;
	ctx.want_ustack = true;
	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
	snprintf(want, sizeof(want), "{\"type\":\"offcpu\",\"seq\":%d,\"pid\":999,"
		 "\"tid\":999,\"comm\":\"postgres\",\"duration_ns\":500000,"
		 "\"blocked_ns\":0,\"runq_ns\":500000,\"wait\":\"cpu\","
		 "\"kernel_wait\":\"cpu\",\"pg\":{\"missing\":{\"wait_event\":"
		 "\"symbol unknown\",\"backend_type\":\"process title not "
		 "readable yet\"}},\"stack\":[],\"stack_error\":\"not available "
		 "with the raw_tp fallback\"}", (int)ctx.seq);
	CHECK_STR(timeless(lines.plain, lines.plain_len), want);
	CHECK_CONTAINS(lines.with_ustack, "\"user_stack\":null,"
		       "\"user_stack_error\":\"not walked: the interval began");
	CHECK_CONTAINS(lines.with_query_ustack, "\"query\":null,\"query_error\":"
		       "\"not captured: the interval began before any "
		       "subscriber could see queries\",\"user_stack\":null");
	CHECK(meta.wait == PGOFF_WAIT_CPU && !meta.has_pg_wait &&
	      !meta.database && !meta.backend_type && !meta.pg_wait_event);
	ctx.want_query = false;
	ctx.want_ustack = false;
}

static void test_episode(void)
{
	struct pgoff_episode e;
	struct event_lines lines;
	struct event_meta meta;
	char want[4096];

	memset(&e, 0, sizeof(e));
	e.kind = PGOFF_REC_EPISODE;
	e.pid = e.tgid = BACKEND;
	e.cluster = 1;
	e.pg_wait_event_info = 0x03000004;
	e.intervals = 3;
	e.flags = PGOFF_F_WOKEN | PGOFF_F_WAKER_TRACED | PGOFF_F_IN_STATEMENT |
		  PGOFF_F_PG_STATUS;
	e.pg_state = 2;
	e.query_id = 0x8000000000000001ULL;
	e.waker_pid = e.waker_tgid = WAKER;
	e.start_ns = 1000000;
	e.end_ns = 3000000;
	e.blocked_ns = 1500000;
	e.runq_ns = 200000;
	e.oncpu_ns = 300000;
	e.bounds = PGOFF_EP_START_PROBE | PGOFF_EP_DONE_PROBE;
	memcpy(e.comm, "postgres", 9);
	memcpy(e.waker_comm, "postgres", 9);
	CHECK(event_encode(&ctx, &e, sizeof(e), &lines, &meta) == 0);
	snprintf(want, sizeof(want), "{\"type\":\"episode\",\"seq\":%d,\"pid\":101,"
		 "\"tid\":101,\"comm\":\"postgres\",\"duration_ns\":2000000,"
		 "\"blocked_ns\":1500000,\"runq_ns\":200000,\"on_cpu_ns\":300000,"
		 "\"intervals\":3,\"boundary\":\"exact\",\"wait\":\"lock\","
		 PG_BACKEND ",\"waker\":{\"pid\":102,\"tid\":102,\"comm\":"
		 "\"postgres\",\"backend_type\":\"checkpointer\"}}", (int)ctx.seq);
	CHECK_STR(timeless(lines.plain, lines.plain_len), want);
	CHECK(!lines.with_query && !lines.with_ustack);
	CHECK(meta.episode && meta.tgid == BACKEND &&
	      meta.duration_ns == 2000000 && meta.wait == PGOFF_WAIT_LOCK);
	CHECK_STR(meta.pg_wait_event, "tuple");
}

/*
 * Text from outside and numbers at their limits, in a hand-made event:
 * each line byte for byte. Strings are escaped as JSON wants ('"', '\',
 * controls; '/' and DEL as they are); comm, titles, SQL and user frames
 * are made valid UTF-8 first ('?' for a bad byte), kernel names are not.
 */
#define HOSTILE_HEAD "{\"type\":\"offcpu\",\"seq\":9223372036854775807," \
	"\"pid\":7,\"tid\":4294967295,\"comm\":\"a\\\"b\\\\c/\\u0001\\u001f\x7f?" \
	"\\n\\t\\b\\f\\r\",\"duration_ns\":-9223372036854775801,\"blocked_ns\":-1," \
	"\"runq_ns\":-9223372036854775808,\"wait\":\"lock\",\"kernel_wait\":" \
	"\"io\",\"mismatch\":\"views \\\"differ\\\"\",\"pg\":{\"wait_event_info\":" \
	"4294967295,\"wait_event_type\":\"class 0xff id 65535\",\"wait_event\":" \
	"\"class 0xff id 65535\",\"missing\":{\"wait_event_name\":\"names " \
	"\\\"missing\\\"\",\"backend_type\":\"process title not readable yet\"}}," \
	"\"waker\":{\"pid\":7,\"tid\":4294967295,\"comm\":\"0123456789abcde?\"," \
	"\"wait_event_info\":167772160,\"wait_event_type\":\"IO\",\"wait_event\":" \
	"\"BaseBackupRead\"},\"stack\":[\"futex_wait\",\"[unknown]\",\"we\\\"ird" \
	"\\\\/\\u0002\xff\"],\"stack_error\":\"kernel stack could not be read\""
#define HOSTILE_QUERY ",\"query\":\"SELECT '\\\"a\\\\b/' \\u0004 ?? \xc3\xa9\"," \
	"\"query_truncated\":true"
#define HOSTILE_REDACTED ",\"query\":\"SELECT $1 \\u0004 ?? \xc3\xa9\"," \
	"\"query_truncated\":true,\"query_redacted\":true"
#define HOSTILE_USTACK ",\"user_stack\":[\"main\",\"\xc3\xa9t?\",\"q\\\"\\\\/" \
	"\\u0003\"]}"

static void test_hostile_text(void)
{
	static const char comm[PGOFF_COMM_LEN] =
		"a\"b\\c/\x01\x1f\x7f\xff\n\t\b\f\r";
	static const char waker_comm[PGOFF_COMM_LEN] = {
		'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b',
		'c', 'd', 'e', '\xc3' };	/* cut in a character, no NUL */
	static const char sql[] = "SELECT '\"a\\b/' \x04 \xff\xfe \xc3\xa9";
	static struct event e;
	struct event_lines lines;
	uint64_t seq = ctx.seq;

	memset(&e, 0, sizeof(e));
	e.start_ns = 5;
	e.end_ns = 5 + (1ULL << 63) + 7;
	e.pid = UINT32_MAX;
	e.tgid = 7;
	e.comm = comm;
	e.blocked_ns = UINT64_MAX;
	e.runq_ns = 1ULL << 63;
	e.wait = PGOFF_WAIT_LOCK;
	e.kernel_wait = PGOFF_WAIT_IO;
	e.mismatch = "views \"differ\"";
	e.has_pg_wait = true;
	e.pg_wait_event_info = UINT32_MAX;	/* no cluster: raw ids */
	e.pg_name_missing = "names \"missing\"";
	e.woken = true;
	e.waker = (struct event_waker){ .pid = UINT32_MAX, .tgid = 7,
		.comm = waker_comm, .traced = true, .has_pg_wait = true,
		.pg_major = 15, .pg_wait_event_info = 0x0A000000 };
	e.stack[0] = "futex_wait";
	e.stack[2] = "we\"ird\\/\x02\xff";
	e.stack_len = 3;
	e.stack_error = "kernel stack could not be read";
	e.ustack_walked = true;
	strcpy(e.ustack[0], "main");
	strcpy(e.ustack[1], "\xc3\xa9t\xc3");
	strcpy(e.ustack[2], "q\"\\/\x03");
	e.ustack_len = 3;
	e.query_told = true;
	e.query = sql;
	e.query_len = strlen(sql);
	e.query_truncated = true;
	ctx.seq = INT64_MAX - 1;
	ctx.want_query = ctx.want_redacted = ctx.want_ustack = true;
	CHECK(event_lines_encode(&ctx, &e, &lines) == 0);
	ctx.seq = seq;
	ctx.want_query = ctx.want_redacted = ctx.want_ustack = false;
	CHECK_STR(timeless(lines.plain, lines.plain_len), HOSTILE_HEAD "}");
	CHECK_STR(timeless(lines.with_ustack, lines.with_ustack_len),
		  HOSTILE_HEAD HOSTILE_USTACK);
	CHECK_STR(timeless(lines.with_query, lines.with_query_len),
		  HOSTILE_HEAD HOSTILE_QUERY "}");
	CHECK_STR(timeless(lines.with_query_ustack, lines.with_query_ustack_len),
		  HOSTILE_HEAD HOSTILE_QUERY HOSTILE_USTACK);
	CHECK_STR(timeless(lines.with_redacted, lines.with_redacted_len),
		  HOSTILE_HEAD HOSTILE_REDACTED "}");
	CHECK_STR(timeless(lines.with_redacted_ustack,
			   lines.with_redacted_ustack_len),
		  HOSTILE_HEAD HOSTILE_REDACTED HOSTILE_USTACK);
}

/* An episode with nulls (wait_event_info 0), an inferred boundary, no
 * waker, and its cluster: the same fields as the ps reply's cluster. */
static void test_episode_nulls(void)
{
	static struct event e;
	struct event_lines lines;
	json_object *cl;
	char want[2048];

	memset(&e, 0, sizeof(e));
	e.episode = true;
	e.start_ns = 1000;
	e.end_ns = 3000;
	e.pid = e.tgid = BACKEND;
	e.comm = "postgres";
	e.on_cpu_ns = UINT64_MAX / 2;
	e.intervals = UINT32_MAX;
	e.wait = PGOFF_WAIT_OTHER;
	e.has_pg_wait = true;
	e.proc = pg_registry_proc(registry, BACKEND);
	e.cluster = pg_registry_cluster(registry, 1);
	CHECK(e.proc && e.cluster);
	CHECK(event_lines_encode(&ctx, &e, &lines) == 0);
	cl = event_encode_cluster(e.cluster);
	snprintf(want, sizeof(want), "{\"type\":\"episode\",\"seq\":%d,\"pid\":101,"
		 "\"tid\":101,\"comm\":\"postgres\",\"duration_ns\":2000,"
		 "\"blocked_ns\":0,\"runq_ns\":0,\"on_cpu_ns\":9223372036854775807,"
		 "\"intervals\":4294967295,\"boundary\":\"inferred\",\"wait\":"
		 "\"%s\",\"pg\":{\"wait_event_info\":0,\"wait_event_type\":null,"
		 "\"wait_event\":null,\"backend_type\":\"client backend\","
		 "\"database\":\"shop\",\"user\":\"alice\",\"cluster\":%s}}",
		 (int)ctx.seq, pgoff_wait_name(PGOFF_WAIT_OTHER),
		 json_object_to_json_string_ext(cl, JSON_C_TO_STRING_PLAIN |
						JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(cl);
	CHECK_STR(timeless(lines.plain, lines.plain_len), want);
	CHECK(!lines.with_query && !lines.with_ustack && !lines.with_redacted);
}

/* A line's "time" or "start" (RFC 3339 UTC, microseconds) as µs since
 * the epoch; -1 when it is not in that form. */
static int64_t line_time_us(const char *line, const char *key)
{
	char want[16];
	const char *at;
	struct tm tm;
	int us, n = 0;

	snprintf(want, sizeof(want), "\"%s\":\"", key);
	at = strstr(line, want);
	memset(&tm, 0, sizeof(tm));
	if (!at || sscanf(at + strlen(want), "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ\"%n",
			  &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			  &tm.tm_min, &tm.tm_sec, &us, &n) != 7 || n != 28)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000 + us;
}

/* time and start: the wall clock of the stamps, one offset for both (their
 * difference is the duration to the µs), right across second boundaries
 * and from one event to the next. */
static void test_event_times(void)
{
	static const uint64_t spans[][2] = {	/* ns before now: start, end */
		{ 2500000000, 0 }, { 1000001000, 999999000 },
		{ 1000, 0 }, { 2000000000, 1999999000 },
	};
	struct pgoff_record r = interval();
	struct event_lines lines;
	struct event_meta meta;
	struct timespec mono, real;
	int64_t t, st, now_us;

	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		clock_gettime(CLOCK_MONOTONIC, &mono);
		clock_gettime(CLOCK_REALTIME, &real);
		r.start_ns = (uint64_t)mono.tv_sec * 1000000000 +
			     (uint64_t)mono.tv_nsec - spans[i][0];
		r.end_ns = r.start_ns + spans[i][0] - spans[i][1];
		r.wake_ns = r.end_ns;
		CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == 0);
		t = line_time_us(lines.plain, "time");
		st = line_time_us(lines.plain, "start");
		now_us = (int64_t)real.tv_sec * 1000000 + real.tv_nsec / 1000;
		if (t < 0 || st < 0 || t - st != (int64_t)(r.end_ns - r.start_ns) / 1000 ||
		    t > now_us + 2000000 || t < now_us - 2000000 -
		    (int64_t)spans[i][1] / 1000) {
			fprintf(stderr, "span %zu: now %lld us, got %s\n", i,
				(long long)now_us, lines.plain);
			CHECK(!"time and start as the clocks say");
		}
	}
}

static void test_short_records_refused(void)
{
	struct pgoff_record r = interval();
	struct event_lines lines;
	struct event_meta meta;

	CHECK(event_encode(&ctx, &r, 2, &lines, &meta) == -EINVAL);
	CHECK(event_encode(&ctx, &r, sizeof(r) - 1, &lines, &meta) == -EINVAL);
	r.kind = PGOFF_REC_TITLE;
	CHECK(event_encode(&ctx, &r, sizeof(r), &lines, &meta) == -EINVAL);
}

/* An Extension-class episode of backend pid (a dblink call waiting in
 * epoll_wait for its remote server). */
static struct pgoff_episode extension_episode(uint32_t pid, uint32_t cluster)
{
	struct pgoff_episode e;

	memset(&e, 0, sizeof(e));
	e.kind = PGOFF_REC_EPISODE;
	e.pid = e.tgid = pid;
	e.cluster = cluster;
	e.pg_wait_event_info = 0x07000002;
	e.intervals = 1;
	e.flags = PGOFF_F_IN_STATEMENT;
	e.start_ns = 1000000;
	e.end_ns = 3000000;
	e.blocked_ns = 2000000;
	e.kernel_state = PGOFF_AGG_SLEEP;
	e.kernel_syscall = SYS_epoll_wait;
	memcpy(e.comm, "postgres", 9);
	return e;
}

/*
 * Run-time names: each 18 cluster is read once it is found; what the
 * prober read of one names its events (sanitized, sorted, the first of
 * a repeated id) and never another's, whose unnamed event asks for a
 * read of its own; the wait type comes from the system call.
 */
static void test_run_time_names(void)
{
	static struct pg_run_names a;
	struct pgoff_episode e;
	struct event_lines lines;
	struct event_meta meta;
	uint32_t c1, pid, unused, seen = 0;
	int64_t now = 1000000;
	const struct pg_cluster *c;

	/* each cluster found is due once, in turn (15: its tranches) */
	for (int i = 0; i < 3; i++) {
		CHECK(pg_registry_next_names(registry, now, &c1, &pid));
		CHECK(c1 >= 1 && c1 <= 3 && pid == (c1 == 1 ? POSTMASTER :
						    c1 == 2 ? PM18A : PM18B));
		seen |= 1u << c1;
	}
	CHECK(seen == 0xe);
	CHECK(!pg_registry_next_names(registry, now, &unused, &unused));
	memset(&a, 0, sizeof(a));
	a.n = 3;
	a.names[0].wait_event_info = 0x07000002;
	snprintf(a.names[0].name, sizeof(a.names[0].name), "DblinkGetResult");
	a.names[1].wait_event_info = 0x07000001;
	snprintf(a.names[1].name, sizeof(a.names[1].name), "Dblink\x1b[2J\xff");
	a.names[2].wait_event_info = 0x07000002;
	snprintf(a.names[2].name, sizeof(a.names[2].name), "Other");
	/* an answer for another postmaster's pid changes nothing */
	pg_registry_names_answer(registry, 2, PM18B, &a);
	c = pg_registry_cluster(registry, 2);
	CHECK(c && !c->names.read);
	pg_registry_names_answer(registry, 2, PM18A, &a);
	CHECK(c->names.read && c->names.n == 2);
	CHECK_STR(pg_names_find(&c->names, 0x07000001), "Dblink?[2J?");

	e = extension_episode(BE18A, 2);
	CHECK(event_encode(&ctx, &e, sizeof(e), &lines, &meta) == 0);
	CHECK_CONTAINS(lines.plain, "\"wait\":\"poll\",\"pg\":{\"wait_event_info\":"
		       "117440514,\"wait_event_type\":\"Extension\","
		       "\"wait_event\":\"DblinkGetResult\"");
	CHECK_STR(meta.pg_wait_event, "DblinkGetResult");
	CHECK(meta.wait == PGOFF_WAIT_POLL);

	/* cluster 3 has not read it: a raw id, and a read is due */
	e = extension_episode(BE18B, 3);
	CHECK(event_encode(&ctx, &e, sizeof(e), &lines, &meta) == 0);
	CHECK_CONTAINS(lines.plain, "\"wait_event\":\"class 0x07 id 2\"");
	CHECK(!meta.pg_wait_event);
	CHECK(!pg_registry_next_names(registry, now + 10, &unused, &unused));
	CHECK(pg_registry_next_names(registry, now + PG_NAMES_REFRESH_MS,
				     &c1, &pid));
	CHECK(c1 == 3 && pid == PM18B);

	/* a socket wait is net whatever the class says */
	e = extension_episode(BE18A, 2);
	e.kernel_syscall = SYS_recvfrom;
	CHECK(event_encode(&ctx, &e, sizeof(e), &lines, &meta) == 0);
	CHECK(meta.wait == PGOFF_WAIT_NET);
	/* a failed read keeps no names, and says why */
	memset(&a, 0, sizeof(a));
	a.status = -EINVAL;
	snprintf(a.why, sizeof(a.why), "ShmemIndex: bad\n");
	pg_registry_names_answer(registry, 2, PM18A, &a);
	CHECK(c->names.status == -EINVAL && c->names.n == 0);
	CHECK_STR(c->names.why, "ShmemIndex: bad?");
}

int main(void)
{
	char cmd[128];
	int rc;

	if (setup()) {
		fprintf(stderr, "test_event: cannot set up the fake /proc in %s\n",
			proc_root);
		return 1;
	}
	RUN(test_interval_plain);
	RUN(test_woken_in_switch_out);
	RUN(test_switch_in_unseen);
	RUN(test_interval_query_and_ustack);
	RUN(test_interval_redacted);
	RUN(test_interval_unknown_process);
	RUN(test_episode);
	RUN(test_hostile_text);
	RUN(test_episode_nulls);
	RUN(test_event_times);
	RUN(test_short_records_refused);
	RUN(test_run_time_names);
	rc = CHECK_DONE();
	event_ctx_free(&ctx);
	pg_registry_free(registry);
	ksyms_free((struct ksyms *)ctx.ksyms);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", proc_root);
	if (system(cmd))
		rc = 1;
	return rc;
}
