// SPDX-License-Identifier: GPL-2.0-only
/*
 * A postmaster is a cluster once it runs in its data directory: probed
 * through a fake /proc whose exe and cwd are symlinks, as the real ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/pg_probe.h"
#include "tests/unit/check.h"

static char root[64], proc[96], data[96];

/* root/bin/postgres (not ELF: the probe goes on without symbols),
 * root/proc/4242/{exe,cwd}, root/data */
static int make_tree(void)
{
	char path[160], target[160];
	int fd;

	snprintf(root, sizeof(root), "/tmp/pgoff-probe.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(data, sizeof(data), "%s/data", root);
	snprintf(path, sizeof(path), "%s/bin", root);
	if (mkdir(path, 0755) || mkdir(proc, 0755) || mkdir(data, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/bin/postgres", root);
	fd = open(path, O_CREAT | O_WRONLY, 0755);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(path, sizeof(path), "%s/4242", proc);
	if (mkdir(path, 0755))
		return -1;
	snprintf(target, sizeof(target), "%s/bin/postgres", root);
	snprintf(path, sizeof(path), "%s/4242/exe", proc);
	if (symlink(target, path))
		return -1;
	snprintf(path, sizeof(path), "%s/4242/cwd", proc);
	return symlink(data, path);
}

/* Replace DIR/NAME with TEXT (NULL: remove it, also as a directory). */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	rmdir(path);
	if (!text)
		return;
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void write_lockfile(const char *text)
{
	put_file(data, "postmaster.pid", text);
}

static void test_starting_postmaster_is_asked_again(void)
{
	struct pg_cluster_info c;

	write_lockfile(NULL);	/* not written yet */
	CHECK(pg_probe_cluster(proc, 4242, &c) == -EAGAIN);
	CHECK(c.status == -EAGAIN);
	/* the cwd it inherited holds another cluster's file */
	write_lockfile("777\n/elsewhere\n1700000000\n5432\n");
	CHECK(pg_probe_cluster(proc, 4242, &c) == -EAGAIN);
}

static void test_postmaster_in_its_data_directory(void)
{
	struct pg_cluster_info c;

	write_lockfile("4242\n/x\n1700000000\n5433\n/tmp\n*\n");
	CHECK(pg_probe_cluster(proc, 4242, &c) == 0);
	CHECK_STR(c.data_dir, data);
	CHECK(c.port == 5433);
	CHECK(c.postmaster_pid == 4242);
	/* a single-user backend writes its pid negated */
	write_lockfile("-4242\n/x\n1700000000\n0\n");
	CHECK(pg_probe_cluster(proc, 4242, &c) == 0);
}

static void write_status(const char *text)
{
	put_file(proc, "4242/status", text);
}

/* In a container the file holds the pid of the container's namespace. */
static void test_postmaster_in_a_pid_namespace(void)
{
	struct pg_cluster_info c;

	write_status("Name:\tpostgres\nTgid:\t4242\nPid:\t4242\n"
		     "NSpid:\t4242\t7\nNSpgid:\t4242\t7\n");
	write_lockfile("7\n/var/lib/postgresql/data\n1700000000\n5432\n");
	CHECK(pg_probe_cluster(proc, 4242, &c) == 0);
	CHECK(c.port == 5432);
	CHECK(c.postmaster_pid == 4242);	/* pgoffd's view of the pid */
	/* the host pid in the file is not this postmaster's own */
	write_lockfile("4242\n/x\n1700000000\n5432\n");
	CHECK(pg_probe_cluster(proc, 4242, &c) == -EAGAIN);
	/* no namespace: the one NSpid is the pid */
	write_status("Name:\tpostgres\nNSpid:\t4242\n");
	CHECK(pg_probe_cluster(proc, 4242, &c) == 0);
	write_status(NULL);
}

/* Unreadable (SELinux may deny it): traced all the same, port unknown. */
static void test_unreadable_lockfile(void)
{
	struct pg_cluster_info c;
	char path[160];

	write_lockfile(NULL);
	snprintf(path, sizeof(path), "%s/postmaster.pid", data);
	CHECK(mkdir(path, 0755) == 0);	/* read() fails with EISDIR */
	CHECK(pg_probe_cluster(proc, 4242, &c) == 0);
	CHECK(c.port == 0);
	CHECK_STR(c.data_dir, data);
}

int main(void)
{
	int fails;

	if (make_tree()) {
		perror("making the fake /proc");
		return 1;
	}
	RUN(test_starting_postmaster_is_asked_again);
	RUN(test_postmaster_in_its_data_directory);
	RUN(test_postmaster_in_a_pid_namespace);
	RUN(test_unreadable_lockfile);
	fails = CHECK_DONE();
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", root);
	}
	return fails;
}
