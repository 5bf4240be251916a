// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cluster ids: the same facts give the same id (across builds and runs:
 * the bytes hashed are fixed, checked against Python's hashlib), and any
 * fact that differs gives another: a replica's directory, a copy's, a
 * look-alike's.
 */
#include "broker/pg/cluster_ident.h"
#include "tests/unit/check.h"

#define SYSID 7321456789012345678ull

static char a[CLUSTER_ID_LEN + 1], b[CLUSTER_ID_LEN + 1];

/* python3: sha256(b"pgoff cluster id 1\0" + bytes([has]) +
 * struct.pack("<QQQ", sysid, dev, ino)).hexdigest()[:16] */
static void test_known_ids(void)
{
	cluster_id_make(true, SYSID, 0x10301, 131074, a);
	CHECK_STR(a, "13e382a564cd7b20");
	cluster_id_make(false, 0, 0x10301, 131074, a);
	CHECK_STR(a, "53cb7d2583ee2a70");
	/* without pg_control the number given is not used */
	cluster_id_make(false, SYSID, 0x10301, 131074, b);
	CHECK_STR(b, a);
}

static void test_each_fact_counts(void)
{
	cluster_id_make(true, SYSID, 0x10301, 131074, a);
	/* a replica: its primary's system identifier, its own directory */
	cluster_id_make(true, SYSID, 0x10301, 131075, b);
	CHECK(strcmp(a, b) != 0);
	/* the same inode number on another file system (a container's) */
	cluster_id_make(true, SYSID, 0x10302, 131074, b);
	CHECK(strcmp(a, b) != 0);
	/* a new initdb in the same directory */
	cluster_id_make(true, SYSID + 1, 0x10301, 131074, b);
	CHECK(strcmp(a, b) != 0);
	/* a zero system identifier read is not "none read" */
	cluster_id_make(true, 0, 0x10301, 131074, a);
	cluster_id_make(false, 0, 0x10301, 131074, b);
	CHECK(strcmp(a, b) != 0);
	CHECK(strlen(a) == CLUSTER_ID_LEN && strspn(a, "0123456789abcdef") ==
	      CLUSTER_ID_LEN);
}

static void test_compare(void)
{
	struct cluster_ident x = { .owner = 105 }, y;

	cluster_id_make(true, SYSID, 1, 2, x.id);
	y = x;
	CHECK(cluster_ident_cmp(&x, &y) == 0);
	y.owner = 1001;	/* another user's, at the same id */
	CHECK(cluster_ident_cmp(&x, &y) < 0);
	y = x;
	snprintf(y.container.id, sizeof(y.container.id), "%064d", 1);
	CHECK(cluster_ident_cmp(&x, &y) != 0);
}

int main(void)
{
	RUN(test_known_ids);
	RUN(test_each_fact_counts);
	RUN(test_compare);
	return CHECK_DONE();
}
