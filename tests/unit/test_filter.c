// SPDX-License-Identifier: GPL-2.0-only
/* Subscription filters: checking names, matching events, the kernel union. */
#include <errno.h>
#include "broker/serve/filter.h"
#include "broker/pg/pg_wait_names.h"
#include "tests/unit/check.h"

#define LOCK_TXID	0x03000004u	/* Lock/transactionid */
#define LOCK_ADVISORY	0x0300000au	/* Lock/advisory */
#define IO_READ		0x0A000009u	/* an IO event */

static void names(struct pgoff_names *n, const char *a, const char *b)
{
	n->n = 0;
	if (a)
		snprintf(n->v[n->n++], PGOFF_MAX_NAME, "%s", a);
	if (b)
		snprintf(n->v[n->n++], PGOFF_MAX_NAME, "%s", b);
}

static int compile(const struct pgoff_filter *req, struct filter *f,
		   struct pgoff_error *err)
{
	return filter_compile(req, 100000, f, err);
}

static void test_unknown_names_are_refused(void)
{
	static const struct {
		const char *type, *pg_wait, *needle;
	} bad[] = {
		{ "locks", NULL, "unknown wait type \"locks\"" },
		{ "", NULL, "unknown wait type" },
		/* a stats row's wait type, no event's: a watch would get nothing */
		{ "on_cpu", NULL, "wait type \"on_cpu\" is a wait's time on a CPU" },
		{ NULL, "Locks", "unknown PostgreSQL wait event type \"Locks\"" },
		{ NULL, "Lock:rowlock", "unknown PostgreSQL wait event \"Lock:rowlock\"" },
		{ NULL, "IO:", "unknown PostgreSQL wait event \"IO:\"" },
		{ NULL, ":transactionid", "unknown PostgreSQL wait event type \"\"" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pgoff_filter req = { 0 };
		struct pgoff_error err = { 0 };
		struct filter f;

		names(&req.types, bad[i].type, NULL);
		names(&req.pg_waits, bad[i].pg_wait, NULL);
		CHECK(compile(&req, &f, &err) == -EINVAL);
		CHECK_STR(err.code, PGOFF_ERR_BAD_REQUEST);
		if (!strstr(err.message, bad[i].needle))
			fprintf(stderr, "case %zu: %s\n", i, err.message);
		CHECK(strstr(err.message, bad[i].needle) != NULL);
	}
}

/* Names are taken in any case and matched as PostgreSQL spells them. */
static void test_pg_wait_spelling(void)
{
	struct pgoff_filter req = { 0 };
	struct pgoff_error err;
	struct filter f;
	struct event_meta m = { .duration_ns = 1000000, .has_pg_wait = true,
				.pg_wait_event_info = LOCK_TXID,
				.pg_wait_event = "transactionid" };

	names(&req.pg_waits, "lock:TRANSACTIONID", "lwlock");
	CHECK(compile(&req, &f, &err) == 0);
	CHECK(f.npg_waits == 2);
	CHECK(f.pg_waits[0].pg_class == PG_CLASS_LOCK);
	CHECK_STR(f.pg_waits[0].event, "transactionid");
	CHECK(f.pg_waits[1].event == NULL);
	CHECK(filter_match(&f, &m));
	m.pg_wait_event_info = LOCK_ADVISORY;
	m.pg_wait_event = "advisory";
	CHECK(!filter_match(&f, &m));
	m.pg_wait_event_info = 0x01000000u | 10;	/* an LWLock */
	m.pg_wait_event = NULL;
	CHECK(filter_match(&f, &m));			/* whole class */
	m.has_pg_wait = false;
	CHECK(!filter_match(&f, &m));			/* unknown: no match */
}

/* Names a server makes up at run time (dblink's, an extension's
 * tranche) are taken as given for the classes that have them. */
static void test_pg_wait_run_time_names(void)
{
	struct pgoff_filter req = { 0 };
	struct pgoff_error err;
	struct filter f;
	struct event_meta m = { .duration_ns = 1000000, .has_pg_wait = true,
				.pg_wait_event_info = 0x07000002u,
				.pg_wait_event = "DblinkGetResult" };
	char long_name[96];

	names(&req.pg_waits, "Extension:dblinkgetresult", "LWLock:pg_stat_statements");
	CHECK(compile(&req, &f, &err) == 0);
	CHECK(f.pg_waits[0].event == NULL);
	CHECK_STR(f.pg_waits[0].run_event, "dblinkgetresult");
	CHECK(filter_match(&f, &m));
	m.pg_wait_event = "DblinkGetConnect";
	CHECK(!filter_match(&f, &m));
	m.pg_wait_event_info = 0x01000064u;
	m.pg_wait_event = "pg_stat_statements";
	CHECK(filter_match(&f, &m));
	m.pg_wait_event = NULL;			/* not named (yet) */
	CHECK(!filter_match(&f, &m));
	/* not for a class whose names are all built in; not empty, not
	 * longer than a server's name can be */
	memset(&req, 0, sizeof(req));
	names(&req.pg_waits, "Lock:DblinkGetResult", NULL);
	CHECK(compile(&req, &f, &err) == -EINVAL);
	memset(&req, 0, sizeof(req));
	names(&req.pg_waits, "Extension:", NULL);
	CHECK(compile(&req, &f, &err) == -EINVAL);
	memset(long_name, 'x', sizeof(long_name));
	memcpy(long_name, "InjectionPoint:", 15);
	long_name[sizeof(long_name) - 1] = '\0';
	memset(&req, 0, sizeof(req));
	names(&req.pg_waits, long_name, NULL);
	CHECK(compile(&req, &f, &err) == -EINVAL);
}

static void test_match_fields(void)
{
	struct pgoff_filter req = { .min_duration_ns = 5000000, .npids = 1,
				    .pids = { 42 } };
	struct pgoff_error err;
	struct filter f;
	struct event_meta m = { .tgid = 42, .duration_ns = 5000000,
				.wait = PGOFF_WAIT_IO, .database = "shop",
				.backend_type = "client backend" };

	names(&req.types, "io", "lock");
	names(&req.databases, "shop", "crm");
	names(&req.backend_types, "client backend", NULL);
	CHECK(compile(&req, &f, &err) == 0);
	CHECK(filter_match(&f, &m));
	m.duration_ns = 4999999;
	CHECK(!filter_match(&f, &m));
	m.duration_ns = 5000000;
	m.tgid = 43;
	CHECK(!filter_match(&f, &m));
	m.tgid = 42;
	m.wait = PGOFF_WAIT_NET;
	CHECK(!filter_match(&f, &m));
	m.wait = PGOFF_WAIT_LOCK;
	m.database = "Shop";				/* exact, as PostgreSQL */
	CHECK(!filter_match(&f, &m));
	m.database = NULL;				/* not known: no match */
	CHECK(!filter_match(&f, &m));
	m.database = "crm";
	m.backend_type = "autovacuum worker";
	CHECK(!filter_match(&f, &m));
	m.backend_type = "client backend";
	CHECK(filter_match(&f, &m));
}

/* Statements by query id, as PostgreSQL shows them; junk is refused. */
static void test_query_ids(void)
{
	struct pgoff_filter req = { 0 };
	struct pgoff_error err;
	struct filter f;
	struct event_meta m = { .tgid = 42, .wait = PGOFF_WAIT_LOCK,
				.duration_ns = 1000000 };

	names(&req.query_ids, "-9223372036854775808", "42");
	CHECK(compile(&req, &f, &err) == 0);
	CHECK(!filter_match(&f, &m));			/* no statement */
	m.query_id = 42;
	CHECK(filter_match(&f, &m));
	m.query_id = 1ull << 63;			/* INT64_MIN */
	CHECK(filter_match(&f, &m));
	m.query_id = 43;
	CHECK(!filter_match(&f, &m));
	names(&req.query_ids, "0", NULL);		/* 0: no query id */
	CHECK(compile(&req, &f, &err) == -EINVAL);
	names(&req.query_ids, "9223372036854775808", NULL);	/* past INT64_MAX */
	CHECK(compile(&req, &f, &err) == -EINVAL);
	names(&req.query_ids, "4x", NULL);
	CHECK(compile(&req, &f, &err) == -EINVAL);
	CHECK(strstr(err.message, "\"4x\" is not a query id"));
}

/* Clusters by their container: an id or its first 12 digits or more,
 * any case; a cluster on the host is in none; junk is refused. */
static void test_containers(void)
{
	struct pgoff_filter req = { 0 };
	struct pgoff_error err;
	struct filter f;
	struct event_meta m = { .tgid = 42, .wait = PGOFF_WAIT_LOCK,
				.duration_ns = 1000000 };

	names(&req.containers, "3F1C2B9A8E7D", "9a8e7d6c5b4a3928");
	CHECK(compile(&req, &f, &err) == 0);
	CHECK(!filter_match(&f, &m));			/* the host */
	m.container = "3f1c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3";
	CHECK(filter_match(&f, &m));
	m.container = "3f1c2b9a8e7e6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3";
	CHECK(!filter_match(&f, &m));
	names(&req.containers, "3f1c2b9a8e7", NULL);	/* 11 digits */
	CHECK(compile(&req, &f, &err) == -EINVAL);
	CHECK(strstr(err.message, "\"3f1c2b9a8e7\" is not a container id"));
	names(&req.containers, "docker-3f1c2b9a8e7d", NULL);
	CHECK(compile(&req, &f, &err) == -EINVAL);
}

static void test_floor(void)
{
	struct pgoff_filter req = { .min_duration_ns = 10 };
	struct pgoff_error err;
	struct filter f;

	CHECK(compile(&req, &f, &err) == 0);
	CHECK(f.min_duration_ns == 100000);
}

static void add(struct kernel_filter *k, const struct pgoff_filter *req,
		bool query)
{
	struct pgoff_error err;
	struct filter f;

	if (compile(req, &f, &err) == 0)
		kernel_filter_add(k, &f, query);
}

static void test_kernel_union(void)
{
	struct kernel_filter k;
	struct pgoff_filter a = { .min_duration_ns = 5000000, .npids = 2,
				  .pids = { 7, 8 } };
	struct pgoff_filter b = { .min_duration_ns = 1000000, .npids = 1,
				  .pids = { 8 } };
	struct pgoff_filter all = { .min_duration_ns = 9000000 };

	kernel_filter_init(&k);
	CHECK(!kernel_filter_done(&k));			/* nobody: mute */

	names(&a.types, "cpu", NULL);
	names(&a.pg_waits, "Lock", NULL);
	names(&b.types, "cpu", NULL);
	names(&b.pg_waits, "IO:DataFileRead", NULL);
	kernel_filter_init(&k);
	add(&k, &a, false);
	add(&k, &b, false);
	CHECK(kernel_filter_done(&k));
	CHECK(k.min_duration_ns == 1000000);
	CHECK(k.npids == 2);
	CHECK(k.cpu == PGOFF_CPU_ONLY);
	CHECK(k.pg_class_filter);
	CHECK(k.pg_classes[0] == ((1ULL << PG_CLASS_LOCK) | (1ULL << PG_CLASS_IO)));
	CHECK(!k.want_query);

	names(&b.types, "lock", NULL);			/* now someone wants non-cpu */
	kernel_filter_init(&k);
	add(&k, &a, false);
	add(&k, &b, true);
	CHECK(kernel_filter_done(&k));
	CHECK(k.cpu == PGOFF_CPU_ANY);
	CHECK(k.want_query);

	kernel_filter_init(&k);
	add(&k, &b, false);
	CHECK(kernel_filter_done(&k));
	CHECK(k.cpu == PGOFF_CPU_NONE);

	kernel_filter_init(&k);				/* one without filters */
	add(&k, &a, false);
	add(&k, &all, false);
	CHECK(kernel_filter_done(&k));
	CHECK(k.npids == 0);
	CHECK(k.cpu == PGOFF_CPU_ANY);
	CHECK(!k.pg_class_filter);
	CHECK(k.pg_classes[0] == 0);
	CHECK(k.min_duration_ns == 5000000);
}

/* More distinct pids than the kernel set holds: the broker filters. */
static void test_kernel_pid_overflow(void)
{
	struct kernel_filter k;
	struct pgoff_filter req = { .npids = PGOFF_MAX_FILTER_PIDS };

	kernel_filter_init(&k);
	for (uint32_t round = 0; round * PGOFF_MAX_FILTER_PIDS <=
				 PGOFF_MAX_WATCH_PIDS; round++) {
		for (uint32_t i = 0; i < PGOFF_MAX_FILTER_PIDS; i++)
			req.pids[i] = 1 + round * PGOFF_MAX_FILTER_PIDS + i;
		add(&k, &req, false);
	}
	CHECK(kernel_filter_done(&k));
	CHECK(k.npids == 0);
}

/* User stacks are on intervals: a waits-only view is refused, saying so. */
static void test_user_stack_view(void)
{
	struct pgoff_filter req = { .user_stack = true };
	struct pgoff_error err = { 0 };
	struct filter f;

	req.view = PGOFF_VIEW_WAITS;
	CHECK(compile(&req, &f, &err) == -EINVAL);
	CHECK_STR(err.code, PGOFF_ERR_BAD_REQUEST);
	CHECK(strstr(err.message, "user_stack is on intervals") != NULL);
	req.view = PGOFF_VIEW_BOTH;
	CHECK(compile(&req, &f, &err) == 0 && f.user_stack);
	req.view = PGOFF_VIEW_INTERVALS;
	CHECK(compile(&req, &f, &err) == 0 && f.user_stack);
}

int main(void)
{
	RUN(test_unknown_names_are_refused);
	RUN(test_pg_wait_spelling);
	RUN(test_pg_wait_run_time_names);
	RUN(test_match_fields);
	RUN(test_query_ids);
	RUN(test_containers);
	RUN(test_floor);
	RUN(test_kernel_union);
	RUN(test_kernel_pid_overflow);
	RUN(test_user_stack_view);
	return CHECK_DONE();
}
