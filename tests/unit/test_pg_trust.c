// SPDX-License-Identifier: GPL-2.0-only
/* Which clusters are traced: a distribution's binary, or what settings allow. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "broker/priv/pg_trust.h"
#include "tests/unit/check.h"

static struct stat exe(unsigned int uid, unsigned int mode)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_uid = uid;
	st.st_mode = S_IFREG | mode;
	return st;
}

static void test_default_trusts_root_only_binaries(void)
{
	struct pg_trust none = { 0 };
	struct stat st;
	char why[200];

	st = exe(0, 0755);
	CHECK(pg_trust_refusal(&none, &st, 110, false, why, sizeof(why)) == NULL);
	st = exe(110, 0755);	/* the postgres user's own build */
	CHECK(pg_trust_refusal(&none, &st, 110, false, why, sizeof(why)) != NULL);
	CHECK(strstr(why, "owner uid 110") != NULL);
	st = exe(0, 0775);	/* root's, but a group may write it */
	CHECK(pg_trust_refusal(&none, &st, 110, false, why, sizeof(why)) != NULL);
	st = exe(0, 0757);
	CHECK(pg_trust_refusal(&none, &st, 110, false, why, sizeof(why)) != NULL);
	st = exe(0, 0755);
	st.st_mode = S_IFIFO | 0755;
	CHECK(pg_trust_refusal(&none, &st, 110, false, why, sizeof(why)) != NULL);
	CHECK(pg_trust_refusal(NULL, &st, 110, false, why, sizeof(why)) != NULL);
}

static void test_settings_widen_it(void)
{
	struct pg_trust t = { 0 };
	struct stat st = exe(1001, 0755);
	char why[200], err[160];

	CHECK(pg_trust_parse_uids(&t, "root, 1001", err, sizeof(err)) == 0);
	CHECK(t.nuids == 2 && t.uids[0] == 0 && t.uids[1] == 1001);
	CHECK(pg_trust_refusal(&t, &st, 1001, false, why, sizeof(why)) == NULL);
	CHECK(pg_trust_refusal(&t, &st, 1002, false, why, sizeof(why)) != NULL);
	/* a trusted data directory trusts whatever runs in it */
	CHECK(pg_trust_refusal(&t, &st, 1002, true, why, sizeof(why)) == NULL);
	CHECK(pg_trust_parse_uids(&t, "", err, sizeof(err)) == 0);
	CHECK(t.nuids == 0);
}

static void test_bad_lists(void)
{
	struct pg_trust t = { 0 };
	char err[160];

	CHECK(pg_trust_parse_uids(&t, "no-such-user-pgoff", err,
				  sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "no-such-user-pgoff") != NULL);
	CHECK(pg_trust_parse_uids(&t, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
				  err, sizeof(err)) == -EINVAL);
	CHECK(pg_trust_parse_dirs(&t, "/srv/a, relative/b", err,
				  sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "relative/b") != NULL);
	CHECK(pg_trust_parse_dirs(&t, " /srv/a ,/srv/b,", err, sizeof(err)) == 0);
	CHECK(t.ndirs == 2);
	CHECK_STR(t.dirs[0], "/srv/a");
	CHECK_STR(t.dirs[1], "/srv/b");
}

int main(void)
{
	RUN(test_default_trusts_root_only_binaries);
	RUN(test_settings_widen_it);
	RUN(test_bad_lists);
	return CHECK_DONE();
}
