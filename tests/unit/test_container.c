// SPDX-License-Identifier: GPL-2.0-only
/*
 * Containers named from cgroup files as the kernel writes them under
 * Docker (systemd and cgroupfs drivers), containerd and CRI-O under
 * Kubernetes, Podman (rootless), systemd and this host's v1 hierarchies;
 * and files a user shaped: a newline in a cgroup's name, control bytes,
 * long names, look-alike ids.
 */
#include <errno.h>
#include <stdlib.h>
#include "broker/pg/container.h"
#include "common/units.h"
#include "tests/unit/check.h"

#define ID "3f1c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d3"
#define ID2 "9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615e4d33f1c2b"

static struct container c;
static char unit[CONTAINER_UNIT_LEN];

static int parse(const char *text, size_t lines)
{
	return container_parse(text, strlen(text), lines, &c, unit,
			       sizeof(unit));
}

static void test_docker_systemd_v2(void)
{
	CHECK(parse("0::/system.slice/docker-" ID ".scope\n", 1) == 0);
	CHECK_STR(c.runtime, "docker");
	CHECK_STR(c.id, ID);
	CHECK_STR(c.pod_uid, "");
	CHECK_STR(unit, "");
}

/* cgroupfs driver on a v1 host: every controller, and systemd's own */
static void test_docker_cgroupfs_v1(void)
{
	CHECK(parse("12:pids:/docker/" ID "\n"
		    "11:memory:/docker/" ID "\n"
		    "10:cpu,cpuacct:/docker/" ID "\n"
		    "1:name=systemd:/docker/" ID "\n"
		    "0::/system.slice/containerd.service\n", 5) == 0);
	CHECK_STR(c.runtime, "docker");
	CHECK_STR(c.id, ID);
}

/* this host: v1 hierarchies, the postmaster moved into one (pids) only,
 * and a sandbox's memory cgroup named with 32 hex digits (no container) */
static void test_one_v1_controller(void)
{
	const char *f = "9:name=systemd:/\n8:pids:/docker/" ID "\n7:blkio:/\n"
			"6:freezer:/\n5:devices:/\n"
			"4:memory:/process_api/468fc48a82564a90438d25f49df80f13\n"
			"3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n";

	CHECK(parse(f, 10) == 0);
	CHECK_STR(c.runtime, "docker");
	CHECK_STR(c.id, ID);
	CHECK(parse("9:name=systemd:/\n8:pids:/\n"
		    "4:memory:/process_api/468fc48a82564a90438d25f49df80f13\n0::/\n",
		    4) == 0);
	CHECK_STR(c.runtime, "");
	CHECK_STR(c.id, "");
	CHECK_STR(unit, "");
}

static void test_kubernetes_containerd(void)
{
	CHECK(parse("0::/kubepods.slice/kubepods-burstable.slice/"
		    "kubepods-burstable-pod0f8b9c2e_4d1a_4b7e_9c3f_1a2b3c4d5e6f.slice/"
		    "cri-containerd-" ID ".scope\n", 1) == 0);
	CHECK_STR(c.runtime, "containerd");
	CHECK_STR(c.id, ID);
	CHECK_STR(c.pod_uid, "0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f");
	/* Guaranteed QoS: no class in the slice's name */
	CHECK(parse("0::/kubepods.slice/"
		    "kubepods-pod0f8b9c2e_4d1a_4b7e_9c3f_1a2b3c4d5e6f.slice/"
		    "cri-containerd-" ID ".scope\n", 1) == 0);
	CHECK_STR(c.pod_uid, "0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f");
}

static void test_kubernetes_crio(void)
{
	CHECK(parse("0::/kubepods.slice/kubepods-besteffort.slice/"
		    "kubepods-besteffort-pod7d0c1e2f_3a4b_4c5d_8e9f_0a1b2c3d4e5f.slice/"
		    "crio-" ID ".scope\n", 0) == 0);
	CHECK_STR(c.runtime, "cri-o");
	CHECK_STR(c.id, ID);
	CHECK_STR(c.pod_uid, "7d0c1e2f-3a4b-4c5d-8e9f-0a1b2c3d4e5f");
	/* conmon's scope beside it is not the container */
	CHECK(parse("0::/kubepods.slice/kubepods-besteffort.slice/"
		    "kubepods-besteffort-pod7d0c1e2f_3a4b_4c5d_8e9f_0a1b2c3d4e5f.slice/"
		    "crio-conmon-" ID ".scope\n", 0) == 0);
	CHECK_STR(c.id, "");
	CHECK_STR(c.pod_uid, "7d0c1e2f-3a4b-4c5d-8e9f-0a1b2c3d4e5f");
}

/* cgroupfs driver: the pod's directory has its UID with dashes, the
 * container's its bare id; a static pod's UID is 32 hex digits */
static void test_kubernetes_cgroupfs(void)
{
	CHECK(parse("4:memory:/kubepods/burstable/"
		    "pod0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f/" ID "\n", 0) == 0);
	CHECK_STR(c.runtime, "kubernetes");
	CHECK_STR(c.id, ID);
	CHECK_STR(c.pod_uid, "0f8b9c2e-4d1a-4b7e-9c3f-1a2b3c4d5e6f");
	CHECK(parse("0::/kubepods.slice/kubepods-burstable.slice/"
		    "kubepods-burstable-pod6b4dcbbd2bb0e1fb4a0b4ea5b5bd0ec6.slice/"
		    "cri-containerd-" ID ".scope\n", 1) == 0);
	CHECK_STR(c.pod_uid, "6b4dcbbd2bb0e1fb4a0b4ea5b5bd0ec6");
	/* a bare id anywhere else is nobody's container */
	CHECK(parse("0::/srv/" ID "\n", 1) == 0);
	CHECK_STR(c.id, "");
}

static void test_podman(void)
{
	CHECK(parse("0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
		    "libpod-" ID ".scope/container\n", 1) == 0);
	CHECK_STR(c.runtime, "podman");
	CHECK_STR(c.id, ID);
	CHECK_STR(unit, "");	/* not the user's manager */
	CHECK(parse("0::/machine.slice/libpod-conmon-" ID ".scope\n", 1) == 0);
	CHECK_STR(c.id, "");
	CHECK(parse("3:memory:/libpod_parent/libpod-" ID "\n", 1) == 0);
	CHECK_STR(c.runtime, "podman");
}

static void test_systemd_service(void)
{
	CHECK(parse("0::/system.slice/system-postgresql.slice/"
		    "postgresql@15-main.service\n", 1) == 0);
	CHECK_STR(unit, "postgresql@15-main.service");
	CHECK_STR(c.id, "");
	/* v1: systemd's hierarchy says it, whatever a controller says */
	CHECK(parse("4:memory:/system.slice/other.service\n"
		    "1:name=systemd:/system.slice/postgresql@15-main.service\n",
		    2) == 0);
	CHECK_STR(unit, "postgresql@15-main.service");
	/* systemd inside a container: the container's own service */
	CHECK(parse("0::/system.slice/docker-" ID ".scope/system.slice/"
		    "postgresql.service\n", 1) == 0);
	CHECK_STR(c.id, ID);
	CHECK_STR(unit, "postgresql.service");
}

/* A cgroup named with a newline: "x\n0::/system.slice/docker-ID.scope"
 * shows as two lines, one of them a forged one. */
static void test_newline_in_a_name(void)
{
	CHECK(parse("0::/user.slice/x\n0::/system.slice/docker-" ID ".scope\n",
		    0) == -EINVAL);
	CHECK_STR(c.id, "");
	/* a hierarchy this host does not have: one line too many */
	CHECK(parse("0::/user.slice/x\n7:pids:/docker/" ID "\n", 1) == -EINVAL);
	CHECK_STR(c.id, "");
	CHECK(parse("0::/user.slice/x\n7:pids:/docker/" ID "\n", 2) == 0);
	/* not a line the kernel writes */
	CHECK(parse("0::/a\nhello docker-" ID ".scope\n", 0) == -EINVAL);
	CHECK(parse("0:/docker/" ID "\n", 0) == -EINVAL);
	CHECK(parse("0::docker/" ID "\n", 0) == -EINVAL);
	CHECK(parse("", 0) == -EINVAL);
	CHECK(container_cgroup_lines("0::/\n", 5) == 1);
	CHECK(container_cgroup_lines("0::/\n0::/\n", 10) == 0);
}

static void test_control_bytes(void)
{
	CHECK(parse("0::/system.slice/post\x1b[2Jgres.service\n", 1) == 0);
	CHECK_STR(unit, "");
	CHECK(parse("0::/system.slice/postgres\xc2\x9b.service\n", 1) == 0);
	CHECK_STR(unit, "");
	/* a NUL (the kernel writes none) ends nothing early */
	static const char nul[] = "0::/system.slice/docker-\0" ID ".scope\n";

	CHECK(container_parse(nul, sizeof(nul) - 1, 1, &c, unit,
			      sizeof(unit)) == 0);
	CHECK_STR(c.id, "");
}

static void test_long_names(void)
{
	size_t n = 5000;
	char *f = malloc(n + 64), *p = f;

	CHECK(f);
	p += sprintf(p, "0::/system.slice/");
	memset(p, 'a', n);
	p += n;
	strcpy(p, ".service\n");
	CHECK(parse(f, 1) == 0);	/* past a unit's length: no unit */
	CHECK_STR(unit, "");
	/* cut short (a read of part of the file): not the kernel's */
	CHECK(container_parse(f, strlen(f) - 1, 1, &c, unit, sizeof(unit)) ==
	      -EINVAL);
	free(f);
	/* ids of 63 and 65 digits, upper case: not a container's */
	CHECK(parse("0::/system.slice/docker-" ID "a.scope\n", 1) == 0);
	CHECK_STR(c.id, "");
	CHECK(parse("0::/system.slice/docker-3F1C2B9A8E7D6C5B4A39281706F5E4D3"
		    "C2B1A09F8E7D6C5B4A3928170615E4D3.scope\n", 1) == 0);
	CHECK_STR(c.id, "");
	CHECK(parse("0::/kubepods.slice/kubepods-podzz.slice/x\n", 1) == 0);
	CHECK_STR(c.pod_uid, "");
}

/* two hierarchies that name two containers: neither is told */
static void test_two_containers(void)
{
	CHECK(parse("8:pids:/docker/" ID "\n4:memory:/docker/" ID2 "\n", 2) ==
	      -EINVAL);
	CHECK_STR(c.id, "");
	CHECK(parse("8:pids:/docker/" ID "\n"
		    "4:memory:/system.slice/docker-" ID ".scope\n", 2) == 0);
	CHECK_STR(c.id, ID);
}

static void test_prefixes(void)
{
	CHECK(pgoff_container_prefix_valid("3f1c2b9a8e7d"));
	CHECK(pgoff_container_prefix_valid("3F1C2B9A8E7D"));
	CHECK(pgoff_container_prefix_valid(ID));
	CHECK(!pgoff_container_prefix_valid("3f1c2b9a8e7"));	/* 11 */
	CHECK(!pgoff_container_prefix_valid(ID "0"));	/* 65 */
	CHECK(!pgoff_container_prefix_valid("3f1c2b9a8e7g"));
	CHECK(!pgoff_container_prefix_valid(""));
	CHECK(!pgoff_container_prefix_valid(NULL));
	CHECK(pgoff_container_matches(ID, "3f1c2b9a8e7d"));
	CHECK(pgoff_container_matches(ID, "3F1C2B9A8E7D6C"));
	CHECK(pgoff_container_matches(ID, ID));
	CHECK(!pgoff_container_matches(ID2, "3f1c2b9a8e7d"));
	CHECK(!pgoff_container_matches("", "3f1c2b9a8e7d"));
	CHECK(!pgoff_container_matches("3f1c2b9a8e7d", "3f1c2b9a8e7d6c"));
}

int main(void)
{
	RUN(test_docker_systemd_v2);
	RUN(test_docker_cgroupfs_v1);
	RUN(test_one_v1_controller);
	RUN(test_kubernetes_containerd);
	RUN(test_kubernetes_crio);
	RUN(test_kubernetes_cgroupfs);
	RUN(test_podman);
	RUN(test_systemd_service);
	RUN(test_newline_in_a_name);
	RUN(test_control_bytes);
	RUN(test_long_names);
	RUN(test_two_containers);
	RUN(test_prefixes);
	return CHECK_DONE();
}
