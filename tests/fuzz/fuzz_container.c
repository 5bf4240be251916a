// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_container.c - libFuzzer target for the cgroup file parser: any
 * bytes, as a user who names cgroups could shape them. Whatever it names
 * is an id of exactly its pattern (64 lowercase hex digits, a pod UID),
 * a runtime of the known ones, a unit of systemd's characters; and a
 * file that is refused names nothing.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "broker/pg/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool only(const char *s, const char *set)
{
	return strspn(s, set) == strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const runtimes[] = { "", "docker", "containerd",
		"cri-o", "podman", "kubernetes" };
	const char *text = (const char *)data;
	size_t lines = container_cgroup_lines(text, size);
	char unit[CONTAINER_UNIT_LEN];
	struct container c;
	bool known = false;
	int ret = container_parse(text, size, lines, &c, unit, sizeof(unit));

	if (ret && (c.id[0] || c.pod_uid[0] || c.runtime[0] || unit[0]))
		abort();	/* refused: nothing named */
	if (c.id[0] && (strlen(c.id) != CONTAINER_ID_LEN ||
			!only(c.id, "0123456789abcdef")))
		abort();
	if (c.pod_uid[0] && (!only(c.pod_uid, "0123456789abcdef-") ||
			     (strlen(c.pod_uid) != 32 &&
			      strlen(c.pod_uid) != CONTAINER_POD_UID_LEN)))
		abort();
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		known |= strcmp(c.runtime, runtimes[i]) == 0;
	if (!known || !c.id[0] != !c.runtime[0])
		abort();
	if (!only(unit, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		  "0123456789:-_.\\@"))
		abort();
	/* with a line count of its own, a file is refused or not alike */
	if (lines && container_parse(text, size, lines + 1, &c, unit,
				     sizeof(unit)) == 0)
		abort();
	return 0;
}
