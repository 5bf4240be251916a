// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process titles as PostgreSQL sets them: the 15 ones seen on this
 * machine, the others built from each version's sources the way
 * init_ps_display() builds them (GetBackendTypeDesc() or a background
 * worker's bgw_name, see broker/pg/pg_title.c), mapped to the backend_type
 * that version's pg_stat_activity shows.
 */
#include "broker/pg/pg_title.h"
#include "tests/unit/check.h"

static void expect(const char *title, int major, const char *type,
		   const char *user, const char *db, const char *cluster,
		   int *ok)
{
	struct pg_title t;

	*ok = pg_title_parse(title, major, &t) == 0 &&
	      strcmp(t.backend_type, type) == 0 && strcmp(t.user, user) == 0 &&
	      strcmp(t.database, db) == 0 &&
	      strcmp(t.cluster_name, cluster) == 0;
	if (!*ok)
		fprintf(stderr, "%d \"%s\" -> [%s] [%s] [%s] [%s]\n", major,
			title, t.backend_type, t.user, t.database,
			t.cluster_name);
}

#define EXPECT(...) do { int ok_; expect(__VA_ARGS__, &ok_); CHECK(ok_); } while (0)
/* Only the backend type matters. */
#define EXPECT_TYPE(title, major, type) EXPECT(title, major, type, "", "", "")

static void test_client_backends(void)
{
	EXPECT("postgres: 15/main: alice shop [local] idle", 15,
	       "client backend", "alice", "shop", "15/main");
	EXPECT("postgres: postgres postgres [local] UPDATE waiting", 15,
	       "client backend", "postgres", "postgres", "");
	EXPECT("postgres: bob db 10.0.0.7(51234) SELECT", 15, "client backend",
	       "bob", "db", "");
	EXPECT("postgres: bob db ::1(51234) idle in transaction", 19,
	       "client backend", "bob", "db", "");
}

static void test_aux_processes(void)
{
	EXPECT("postgres: checkpointer ", 15, "checkpointer", "", "", "");
	EXPECT("postgres: 15/main: background writer ", 15, "background writer",
	       "", "", "15/main");
	EXPECT_TYPE("postgres: walwriter ", 15, "walwriter");
	EXPECT_TYPE("postgres: autovacuum launcher ", 15, "autovacuum launcher");
	EXPECT_TYPE("postgres: autovacuum worker shop", 15, "autovacuum worker");
	EXPECT_TYPE("postgres: logical replication launcher ", 15,
		    "logical replication launcher");
	EXPECT_TYPE("postgres: parallel worker for PID 4242 ", 15,
		    "parallel worker");
	EXPECT("postgres: walsender repl 10.0.0.8(40000) streaming 0/3000148",
	       15, "walsender", "repl", "", "");
}

/* GetBackendTypeDesc() of each version. */
static void test_backend_types_per_version(void)
{
	EXPECT_TYPE("postgres: stats collector ", 13, "stats collector");
	EXPECT_TYPE("postgres: stats collector ", 14, "stats collector");
	/* 15 has no stats collector process */
	EXPECT_TYPE("postgres: stats collector ", 15, "background worker");
	EXPECT_TYPE("postgres: logger ", 13, "logger");
	EXPECT_TYPE("postgres: logger ", 18, "logger");
	/* 19 calls it syslogger: "logger" would be some worker's name */
	EXPECT_TYPE("postgres: logger ", 19, "background worker");
	EXPECT("postgres: 19/main: syslogger ", 19, "syslogger", "", "",
	       "19/main");
	EXPECT_TYPE("postgres: walsummarizer ", 17, "walsummarizer");
	EXPECT_TYPE("postgres: slotsync worker ", 17, "slotsync worker");
	/* 18 adds io workers: "io worker N" */
	EXPECT_TYPE("postgres: io worker 0", 18, "io worker");
	EXPECT("postgres: 19/main: io worker 2", 19, "io worker", "", "",
	       "19/main");
	EXPECT_TYPE("postgres: startup recovering 000000010000000000000003", 13,
		    "startup");
	EXPECT_TYPE("postgres: walreceiver streaming 0/3000148", 19,
		    "walreceiver");
	EXPECT_TYPE("postgres: archiver last was 000000010000000000000002", 17,
		    "archiver");
	/* 19beta2's data checksums processes are not in 19rc1 */
	EXPECT_TYPE("postgres: datachecksums launcher ", 19,
		    "background worker");
	EXPECT_TYPE("postgres: datachecksums worker ", 19,
		    "background worker");
}

/*
 * Every process type with a title of its own in 18.6 (GetBackendTypeDesc()
 * of its miscinit.c) and 19rc1 (its proctypelist.h): the title starts
 * with the description, which is the backend_type.
 */
static void test_every_type_of_18_6_and_19_rc1(void)
{
	static const char *const both[] = {
		"archiver", "autovacuum launcher", "autovacuum worker",
		"background writer", "checkpointer", "io worker",
		"slotsync worker", "startup", "walreceiver", "walsummarizer",
		"walwriter",
	};
	char title[96];

	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		snprintf(title, sizeof(title), "postgres: %s ", both[i]);
		EXPECT_TYPE(title, 18, both[i]);
		EXPECT_TYPE(title, 19, both[i]);
	}
	/* B_LOGGER: "logger" in 18, "syslogger" in 19 */
	EXPECT_TYPE("postgres: logger ", 18, "logger");
	EXPECT_TYPE("postgres: syslogger ", 18, "background worker");
	EXPECT_TYPE("postgres: syslogger ", 19, "syslogger");
	EXPECT("postgres: walsender u [local] idle", 18, "walsender", "u", "",
	       "");
	EXPECT("postgres: walsender u [local] idle", 19, "walsender", "u", "",
	       "");
}

/* A background worker's title is its bgw_name, its type its bgw_type. */
static void test_logical_replication_workers(void)
{
	const char *apply = "postgres: logical replication apply worker for "
			    "subscription 16398 ";
	const char *apply_old = "postgres: logical replication worker for "
				"subscription 16398 ";
	const char *sync_old = "postgres: logical replication worker for "
			       "subscription 16398 sync 16390 ";
	const char *sync = "postgres: logical replication tablesync worker "
			   "for subscription 16398 sync 16390 ";
	const char *pa = "postgres: logical replication parallel apply worker "
			 "for subscription 16398 ";

	EXPECT_TYPE(apply_old, 13, "logical replication worker");
	EXPECT_TYPE(apply_old, 14, "logical replication worker");
	EXPECT_TYPE(sync_old, 15, "logical replication worker");
	/* 16 renamed the apply worker's bgw_name, not its bgw_type */
	EXPECT_TYPE(apply, 16, "logical replication worker");
	EXPECT_TYPE(sync_old, 16, "logical replication worker");
	EXPECT_TYPE(pa, 16, "logical replication parallel worker");
	/* 17 gave each its own bgw_type */
	EXPECT_TYPE(apply, 17, "logical replication apply worker");
	EXPECT_TYPE(sync, 17, "logical replication tablesync worker");
	EXPECT_TYPE(pa, 17, "logical replication parallel worker");
	EXPECT_TYPE(apply, 18, "logical replication apply worker");
	EXPECT_TYPE(sync, 19, "logical replication tablesync worker");
	EXPECT_TYPE("postgres: logical replication sequencesync worker for "
		    "subscription 16398 ", 19,
		    "logical replication sequencesync worker");
	EXPECT_TYPE("postgres: REPACK decoding worker for relation \"t\" ", 19,
		    "REPACK decoding worker");
	EXPECT_TYPE("postgres: logical replication launcher ", 13,
		    "logical replication launcher");
}

/* A major without a table (0: not read) takes the newest spelling. */
static void test_unknown_major(void)
{
	const char *apply = "postgres: logical replication apply worker for "
			    "subscription 1 ";

	EXPECT_TYPE(apply, 0, "logical replication apply worker");
	EXPECT_TYPE(apply, 20, "logical replication apply worker");
	EXPECT_TYPE("postgres: logger ", 0, "logger");
	EXPECT_TYPE("postgres: io worker 1", 12, "io worker");
	EXPECT_TYPE("postgres: checkpointer ", 0, "checkpointer");
	EXPECT("postgres: alice shop [local] idle", 0, "client backend",
	       "alice", "shop", "");
}

static void test_others(void)
{
	struct pg_title t;

	EXPECT_TYPE("/usr/lib/postgresql/15/bin/postgres -D /var/lib/pg", 15,
		    "postmaster");
	EXPECT_TYPE("postgres: pg_cron launcher ", 15, "background worker");
	/* a title of another version is not taken for this one's */
	EXPECT_TYPE("postgres: io worker 0", 17, "background worker");
	CHECK(pg_title_parse("", 15, &t) != 0);
	CHECK(pg_title_parse(NULL, 15, &t) != 0);
}

int main(void)
{
	RUN(test_client_backends);
	RUN(test_aux_processes);
	RUN(test_backend_types_per_version);
	RUN(test_every_type_of_18_6_and_19_rc1);
	RUN(test_logical_replication_workers);
	RUN(test_unknown_major);
	RUN(test_others);
	return CHECK_DONE();
}
