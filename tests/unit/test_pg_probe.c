// SPDX-License-Identifier: GPL-2.0-only
/*
 * The prober's reads of a would-be postmaster, through a fake /proc
 * whose exe and cwd are symlinks, as the real ones: a postmaster is a
 * cluster once it runs in its data directory; what any user can put in
 * front of it (a FIFO, a symlink, a file of another user, a huge or
 * foreign binary, a setuid process) is refused without blocking.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include "broker/priv/pg_probe.h"
#include "tests/unit/check.h"

#define PG_BINARY "/usr/lib/postgresql/15/bin/postgres"

static char root[64], proc[96], data[96];
static struct pg_trust trust;	/* the test's own uid */

static int put_link(const char *target, const char *fmt, unsigned int pid,
		    const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), fmt, proc, pid, name);
	unlink(path);
	return symlink(target, path);
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

/* A fake process: stat (comm, parent), status (uids), exe. */
static int fake_proc(unsigned int pid, unsigned int ppid, unsigned int uid,
		     const char *exe)
{
	char dir[128], text[256];

	snprintf(dir, sizeof(dir), "%s/%u", proc, pid);
	mkdir(dir, 0755);
	snprintf(text, sizeof(text), "%u (postgres) S %u %u %u 0 -1 0 0 0 0 0 "
		 "0 0 0 0 20 0 1 0 1000 0 0\n", pid, ppid, ppid, ppid);
	put_file(dir, "stat", text);
	snprintf(text, sizeof(text), "Name:\tpostgres\nUid:\t%u\t%u\t%u\t%u\n"
		 "NSpid:\t%u\n", uid, uid, uid, uid, pid);
	put_file(dir, "status", text);
	return put_link(exe, "%s/%u/%s", pid, "exe");
}

static int make_tree(void)
{
	char path[160];

	snprintf(root, sizeof(root), "/tmp/pgoff-probe.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(data, sizeof(data), "%s/data", root);
	snprintf(path, sizeof(path), "%s/bin", root);
	if (mkdir(path, 0755) || mkdir(proc, 0755) || mkdir(data, 0755))
		return -1;
	if (fake_proc(4242, 1, getuid(), PG_BINARY))
		return -1;
	trust.uids[0] = getuid();
	trust.nuids = 1;
	return put_link(data, "%s/%u/%s", 4242, "cwd");
}

static void write_lockfile(const char *text)
{
	put_file(data, "postmaster.pid", text);
}

static void set_uids(const char *line)
{
	char text[256];

	snprintf(text, sizeof(text), "Name:\tpostgres\n%s\nNSpid:\t4242\n", line);
	put_file(proc, "4242/status", text);
}

static void test_starting_postmaster_is_asked_again(void)
{
	struct pg_cluster_info c;

	write_lockfile(NULL);	/* not written yet */
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EAGAIN);
	CHECK(c.status == -EAGAIN);
	/* the cwd it inherited holds another cluster's file */
	write_lockfile("777\n/elsewhere\n1700000000\n5432\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EAGAIN);
}

static void test_postmaster_in_its_data_directory(void)
{
	struct pg_cluster_info c;

	write_lockfile("4242\n/x\n1700000000\n5433\n/tmp\n*\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK_STR(c.data_dir, data);
	CHECK(c.port == 5433);
	CHECK(c.postmaster_pid == 4242);
	CHECK(c.uid == getuid());
	CHECK(c.major == 15);	/* the real binary, read through exe */
	CHECK(c.exe_ino != 0);
	/* a single-user backend writes its pid negated */
	write_lockfile("-4242\n/x\n1700000000\n0\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
}

/*
 * The executable mappings, from a maps file whose owner chose the file
 * names: an escaped name longer than the reader's line must not let its
 * rest be read as an entry, and no file is on device 0:0.
 */
static void test_exec_maps_from_hostile_names(void)
{
	static const char forged[] =
		"7f0000004000-7f0000005000 r-xp 00000000 08:01 4321 /forged";
	static char text[3 * 4096 + 512];
	struct pg_cluster_info c;
	size_t n, line2;

	line2 = (size_t)snprintf(text, sizeof(text), "7f0000000000-7f0000001000 "
				 "r-xp 00000000 08:01 1234 /lib/libc.so.6\n");
	n = line2 + (size_t)snprintf(text + line2, sizeof(text) - line2,
				     "7f0000002000-7f0000003000 r-xp 00000000 "
				     "08:01 99 /tmp/");
	/* one long line whose rest, from where a reader's buffer of
	 * PATH_MAX + 128 would end, reads as an entry of its own */
	while (n - line2 < PATH_MAX + 127)
		text[n++] = 'A';
	n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", forged);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\n7f0000006000-"
			      "7f0000007000 r-xp 00000000 00:00 77 /zero\n");
	put_file(proc, "4242/maps", text);
	write_lockfile("4242\n/x\n1700000000\n5433\n/tmp\n*\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(c.nmaps == 1);
	CHECK(c.maps[0].ino == 1234);
	for (uint32_t i = 0; i < c.nmaps; i++)
		CHECK(c.maps[i].ino != 4321 && c.maps[i].ino != 77);
	put_file(proc, "4242/maps", NULL);
}

/* In a container the file holds the pid of the container's namespace. */
static void test_postmaster_in_a_pid_namespace(void)
{
	struct pg_cluster_info c;
	char line[64];

	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u\nNSpid:\t4242\t7",
		 getuid(), getuid(), getuid(), getuid());
	set_uids(line);
	write_lockfile("7\n/var/lib/postgresql/data\n1700000000\n5432\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(c.port == 5432);
	CHECK(c.postmaster_pid == 4242);	/* pgoffd's view of the pid */
	/* the host pid in the file is not this postmaster's own */
	write_lockfile("4242\n/x\n1700000000\n5432\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EAGAIN);
	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u", getuid(),
		 getuid(), getuid(), getuid());
	set_uids(line);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
}

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "the probe blocked\n");
	_exit(1);
}

/* What a user may put where postmaster.pid should be: never opened. */
static void test_hostile_lockfiles(void)
{
	struct pg_cluster_info c;
	char path[160], line[64];

	signal(SIGALRM, on_alarm);
	alarm(10);	/* a FIFO opened for reading would block forever */
	snprintf(path, sizeof(path), "%s/postmaster.pid", data);
	write_lockfile(NULL);
	CHECK(mkfifo(path, 0644) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	CHECK(strstr(c.why, "not a regular file") != NULL);
	write_lockfile(NULL);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	write_lockfile(NULL);
	CHECK(symlink("/etc/passwd", path) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	write_lockfile(NULL);
	CHECK(symlink("/dev/zero", path) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	/* larger than any postmaster.pid */
	write_lockfile("4242\n");
	CHECK(truncate(path, 1 << 20) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	/* the postmaster says it runs as another uid than the file's */
	write_lockfile("4242\n/x\n1700000000\n5433\n");
	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u", getuid() + 1,
		 getuid() + 1, getuid() + 1, getuid() + 1);
	set_uids(line);
	CHECK(pg_probe_cluster(proc, 4242, NULL, &c) == -EPERM);
	CHECK(strstr(c.why, "belongs to uid") != NULL);
	alarm(0);
	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u", getuid(),
		 getuid(), getuid(), getuid());
	set_uids(line);
}

/* pg_control's first 8 bytes, in the machine's order, as PostgreSQL
 * writes its ControlFileData; then zeros to 8 KiB, as its file is. */
static void write_control(const char *dir, uint64_t sysid, size_t size)
{
	char path[160], block[8192] = { 0 };
	FILE *f;

	memcpy(block, &sysid, sizeof(sysid));
	snprintf(path, sizeof(path), "%s/pg_control", dir);
	unlink(path);
	f = fopen(path, "w");
	if (!f)
		return;
	fwrite(block, 1, size < sizeof(block) ? size : sizeof(block), f);
	fclose(f);
	if (size > sizeof(block) && truncate(path, (off_t)size))
		return;
}

/*
 * What the cluster's id is made of: the data directory's device and inode
 * (the one the postmaster runs in, whatever its path) and the system
 * identifier in global/pg_control, read with postmaster.pid's rules: a
 * symbolic link at either step, a FIFO, a huge or a short file are not
 * read (and never block), and the cluster is traced all the same.
 */
static void test_system_identifier(void)
{
	struct pg_cluster_info c;
	char global[160], path[192], elsewhere[160];
	struct stat st;

	signal(SIGALRM, on_alarm);
	alarm(10);
	write_lockfile("4242\n/x\n1700000000\n5433\n");
	snprintf(global, sizeof(global), "%s/global", data);
	snprintf(path, sizeof(path), "%s/pg_control", global);
	CHECK(mkdir(global, 0700) == 0);
	write_control(global, 7321456789012345678ull, 8192);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(c.has_sysid == 1);
	CHECK(c.system_identifier == 7321456789012345678ull);
	CHECK(stat(data, &st) == 0);
	CHECK(c.dir_dev == st.st_dev && c.dir_ino == st.st_ino);

	/* pg_control: a symbolic link, a FIFO, too long, too short */
	unlink(path);
	CHECK(symlink("/etc/passwd", path) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(!c.has_sysid && c.system_identifier == 0);
	CHECK_CONTAINS(c.sysid_missing, "not a regular file");
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(!c.has_sysid);
	unlink(path);
	write_control(global, 1, 8193);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(!c.has_sysid);
	write_control(global, 1, 4);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(!c.has_sysid);
	CHECK_CONTAINS(c.sysid_missing, "shorter than 8 bytes");

	/* global: a symbolic link to a directory with a pg_control */
	unlink(path);
	rmdir(global);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", root);
	mkdir(elsewhere, 0700);
	write_control(elsewhere, 42, 8192);
	CHECK(symlink(elsewhere, global) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(!c.has_sysid);
	CHECK_CONTAINS(c.sysid_missing, "not a directory (or a symbolic link)");
	unlink(global);
	/* none at all (a cluster being initialized) */
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(!c.has_sysid);
	snprintf(path, sizeof(path), "%s/pg_control", elsewhere);
	unlink(path);
	rmdir(elsewhere);
	alarm(0);
}

/* A setuid program named postgres is not its user's PostgreSQL. */
static void test_uids_differ(void)
{
	struct pg_cluster_info c;
	char line[64];

	write_lockfile("4242\n/x\n1700000000\n5433\n");
	snprintf(line, sizeof(line), "Uid:\t%u\t0\t0\t0", getuid() + 1);
	set_uids(line);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	CHECK(strstr(c.why, "uids differ") != NULL);
	snprintf(line, sizeof(line), "Uid:\t%u\t%u\t%u\t%u", getuid(),
		 getuid(), getuid(), getuid());
	set_uids(line);
}

/* Binaries: someone else's copy, a foreign one, a huge one, a symlink
 * named postgres to another program. */
static void test_binaries(void)
{
	struct pg_cluster_info c;
	struct pg_trust none = { 0 }, dirs = { 0 };
	char copy[160], cmd[400];

	write_lockfile("4242\n/x\n1700000000\n5433\n");
	snprintf(copy, sizeof(copy), "%s/bin/postgres", root);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0775 %s", PG_BINARY,
		 copy, copy);
	CHECK(system(cmd) == 0);
	CHECK(put_link(copy, "%s/%u/%s", 4242, "exe") == 0);
	/* group-writable: not trusted by default, by uid or data dir it is */
	CHECK(pg_probe_cluster(proc, 4242, &none, &c) == -EPERM);
	CHECK(strstr(c.why, "trust-uids") != NULL);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	snprintf(dirs.dirs[0], sizeof(dirs.dirs[0]), "%s", data);
	dirs.ndirs = 1;
	CHECK(pg_probe_cluster(proc, 4242, &dirs, &c) == 0);
	/* not PostgreSQL, though called postgres */
	snprintf(cmd, sizeof(cmd), "cp /bin/true %s", copy);
	CHECK(system(cmd) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -ENOEXEC);
	/* too large to read */
	CHECK(truncate(copy, (off_t)PG_PROBE_MAX_BINARY + 1) == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -EPERM);
	CHECK(strstr(c.why, "cannot be read") != NULL);
	/* another program, reached through a symlink named postgres */
	CHECK(put_link("/bin/sleep", "%s/%u/%s", 4242, "exe") == 0);
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == -ENOEXEC);
	CHECK(put_link(PG_BINARY, "%s/%u/%s", 4242, "exe") == 0);
	/* the distribution's binary: trusted with no settings */
	CHECK(pg_probe_cluster(proc, 4242, &none, &c) == 0 ||
	      getuid() != 0);
}

static int found[8], nfound;

static int note_found(void *ctx, uint32_t pid)
{
	(void)ctx;
	if (nfound < 8)
		found[nfound++] = (int)pid;
	return 0;
}

/* A cluster's processes: below its postmaster, its uid, its binary. */
static void test_descendants(void)
{
	struct pg_cluster_info c;
	int n;

	write_lockfile("4242\n/x\n1700000000\n5433\n");
	CHECK(pg_probe_cluster(proc, 4242, &trust, &c) == 0);
	CHECK(fake_proc(4243, 4242, getuid(), PG_BINARY) == 0);
	CHECK(fake_proc(4244, 4243, getuid(), PG_BINARY) == 0);
	CHECK(fake_proc(4245, 4242, getuid() + 1, PG_BINARY) == 0);
	CHECK(fake_proc(4246, 4242, getuid(), "/bin/sh") == 0);
	CHECK(fake_proc(4247, 1, getuid(), PG_BINARY) == 0);
	nfound = 0;
	n = pg_probe_descendants(proc, &c, note_found, NULL);
	CHECK(n == 2);
	CHECK((found[0] == 4243 && found[1] == 4244) ||
	      (found[0] == 4244 && found[1] == 4243));
}

/*
 * Run-time names through the fake /proc: its "mem" a sparse file whose
 * offsets are addresses (as /proc/PID/mem's), a 15 segment with one named
 * tranche. The segment is looked for only in shared memory as the kernel
 * names it (not a file its owner's FUSE server could make hang), and only
 * while the pid is the postmaster probed.
 */
#define SEG	0x100000ull
#define VARS	0x200000ull
static void put_at(int fd, uint64_t addr, const void *p, size_t len)
{
	if (pwrite(fd, p, len, (off_t)addr) != (ssize_t)len)
		abort();
}

static void test_names_through_proc(void)
{
	static struct pg_run_names out;
	struct pg_cluster_info c = { .postmaster_pid = 4242, .major = 15 };
	uint32_t magic = 679834894u, id = 73, n = 1;
	uint64_t total = 0x10000, arr = SEG + 0x100, name = SEG + 0x200;
	char path[160], dir[128];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/4242/mem", proc);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	put_at(fd, SEG, &magic, 4);
	put_at(fd, SEG + 8, &total, 8);
	put_at(fd, arr, &id, 4);
	put_at(fd, arr + 8, &name, 8);
	put_at(fd, name, "pg_stat_statements", 19);
	put_at(fd, VARS, &arr, 8);
	put_at(fd, VARS + 8, &n, 4);
	put_at(fd, SEG + total, "", 1);		/* the file's end */
	close(fd);
	/* the executable checked: a real file here */
	snprintf(dir, sizeof(dir), "%s/bin/postgres", root);
	put_file(root, "bin/postgres", "not ELF");
	CHECK(put_link(dir, "%s/%u/%s", 4242, "exe") == 0);
	CHECK(stat(dir, &st) == 0);
	c.uid = getuid();
	c.exe_dev = st.st_dev;
	c.exe_ino = st.st_ino;
	c.tranches_ptr = VARS;
	c.ntranches_ptr = VARS + 8;
	snprintf(dir, sizeof(dir), "%s/4242", proc);
	/* a file of the owner's at the segment's place: not looked at */
	put_file(dir, "maps", "00100000-00110000 rw-s 00000000 00:2a 77 "
		 "/home/u/seg\n00100000-00110000 rw-s 00000000 00:2a 77 "
		 "/tmp/SYSV00000000 (deleted)\n");
	CHECK(pg_probe_names(proc, &c, 1000, 73, &out) == -ENOENT);
	CHECK(strstr(out.why, "no shared mapping") != NULL);
	put_file(dir, "maps", "00100000-00110000 rw-s 00000000 00:01 9 "
		 "/dev/zero (deleted)\n");
	CHECK(pg_probe_names(proc, &c, 1000, 73, &out) == 0);
	CHECK(out.n == 1 && out.names[0].wait_event_info == 0x01000049);
	CHECK_STR(out.names[0].name, "pg_stat_statements");
	put_file(dir, "maps", "00100000-00110000 rw-s 00000000 00:01 32769 "
		 "/SYSV0052e2c1 (deleted)\n");
	CHECK(pg_probe_names(proc, &c, 1000, 73, &out) == 0);
	/* another process at that pid now, another user, another binary */
	CHECK(pg_probe_names(proc, &c, 999, 73, &out) == -ESRCH);
	CHECK(strstr(out.why, "gone") != NULL);
	c.uid++;
	CHECK(pg_probe_names(proc, &c, 1000, 73, &out) == -EPERM);
	c.uid--;
	c.exe_ino++;
	CHECK(pg_probe_names(proc, &c, 1000, 73, &out) == -ESRCH);
	c.exe_ino--;
	/* a major without names is not even looked at */
	c.major = 13;
	CHECK(pg_probe_names(proc, &c, 1000, 73, &out) == -ENOTSUP);
	put_link(PG_BINARY, "%s/%u/%s", 4242, "exe");
	snprintf(path, sizeof(path), "%s/4242/mem", proc);
	unlink(path);
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
	RUN(test_exec_maps_from_hostile_names);
	RUN(test_postmaster_in_a_pid_namespace);
	RUN(test_hostile_lockfiles);
	RUN(test_system_identifier);
	RUN(test_uids_differ);
	RUN(test_binaries);
	RUN(test_descendants);
	RUN(test_names_through_proc);
	fails = CHECK_DONE();
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", root);
	}
	return fails;
}
