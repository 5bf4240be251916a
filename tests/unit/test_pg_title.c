// SPDX-License-Identifier: GPL-2.0-only
/* Process titles as PostgreSQL 15 sets them (seen on this machine). */
#include "broker/pg_title.h"
#include "tests/unit/check.h"

static void expect(const char *title, const char *type, const char *user,
		   const char *db, const char *cluster, int *ok)
{
	struct pg_title t;

	*ok = pg_title_parse(title, &t) == 0 &&
	      strcmp(t.backend_type, type) == 0 && strcmp(t.user, user) == 0 &&
	      strcmp(t.database, db) == 0 &&
	      strcmp(t.cluster_name, cluster) == 0;
	if (!*ok)
		fprintf(stderr, "\"%s\" -> [%s] [%s] [%s] [%s]\n", title,
			t.backend_type, t.user, t.database, t.cluster_name);
}

#define EXPECT(...) do { int ok_; expect(__VA_ARGS__, &ok_); CHECK(ok_); } while (0)

static void test_client_backends(void)
{
	EXPECT("postgres: 15/main: alice shop [local] idle", "client backend",
	       "alice", "shop", "15/main");
	EXPECT("postgres: postgres postgres [local] UPDATE waiting",
	       "client backend", "postgres", "postgres", "");
	EXPECT("postgres: bob db 10.0.0.7(51234) SELECT", "client backend",
	       "bob", "db", "");
	EXPECT("postgres: bob db ::1(51234) idle in transaction",
	       "client backend", "bob", "db", "");
}

static void test_aux_processes(void)
{
	EXPECT("postgres: checkpointer ", "checkpointer", "", "", "");
	EXPECT("postgres: 15/main: background writer ", "background writer",
	       "", "", "15/main");
	EXPECT("postgres: walwriter ", "walwriter", "", "", "");
	EXPECT("postgres: autovacuum launcher ", "autovacuum launcher", "", "", "");
	EXPECT("postgres: autovacuum worker shop", "autovacuum worker", "", "", "");
	EXPECT("postgres: logical replication launcher ",
	       "logical replication launcher", "", "", "");
	EXPECT("postgres: parallel worker for PID 4242 ", "parallel worker",
	       "", "", "");
	EXPECT("postgres: walsender repl 10.0.0.8(40000) streaming 0/3000148",
	       "walsender", "repl", "", "");
}

static void test_others(void)
{
	struct pg_title t;

	EXPECT("/usr/lib/postgresql/15/bin/postgres -D /var/lib/pg", "postmaster",
	       "", "", "");
	EXPECT("postgres: pg_cron launcher ", "background worker", "", "", "");
	CHECK(pg_title_parse("", &t) != 0);
	CHECK(pg_title_parse(NULL, &t) != 0);
}

int main(void)
{
	RUN(test_client_backends);
	RUN(test_aux_processes);
	RUN(test_others);
	return CHECK_DONE();
}
