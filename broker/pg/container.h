/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * container.h - the container a process runs in, as operators name it,
 * from its cgroup file (/proc/PID/cgroup, which anyone may read): the
 * container id of Docker, containerd, CRI-O or Podman, the Kubernetes
 * pod's UID, and the systemd service. Pure: the text in, names out.
 *
 * The file is the kernel's, but the paths in it are not: whoever may
 * create a cgroup (root, or a user in a subtree delegated to them, as
 * rootless Podman is) names it, with any byte but '/' and NUL, newlines
 * included. So nothing of a path is ever passed on: only ids that match
 * their pattern exactly (hex digits, a UUID) and a unit name of systemd's
 * characters. A newline in a path would make lines of its own: a file
 * with a malformed line, a hierarchy twice, or more lines than the
 * caller's own cgroup file has (every process lists the same
 * hierarchies) is not the kernel's, and names nothing.
 */
#ifndef PGOFF_CONTAINER_H
#define PGOFF_CONTAINER_H

#include <stddef.h>

#define CONTAINER_ID_LEN	64	/* hex digits */
#define CONTAINER_POD_UID_LEN	36	/* a UUID, or 32 hex digits */
#define CONTAINER_UNIT_LEN	128	/* with its NUL */
#define CONTAINER_RUNTIME_LEN	12	/* with its NUL */

struct container {
	/* "docker", "containerd", "cri-o", "podman", or "kubernetes" (an id
	 * under a pod with cgroupfs, which says no runtime); "" on the host */
	char runtime[CONTAINER_RUNTIME_LEN];
	char id[CONTAINER_ID_LEN + 1];		/* lowercase hex; "" none */
	char pod_uid[CONTAINER_POD_UID_LEN + 1];	/* dashes; "" none */
};

/*
 * The container and systemd service (into unit, unit_len bytes; "" when
 * none) of a cgroup file's text (len bytes, as read: NULs included).
 * Cgroup v2 ("0::/path") and v1 ("4:memory:/path") lines; a container
 * named in any hierarchy counts (a v1 host may place a process in one
 * controller only), two different ones in two hierarchies are refused.
 * lines: how many lines a cgroup file has on this host (0: unchecked).
 * Returns 0; -EINVAL when the text is not the kernel's (see above) or
 * names two containers; out and unit are then empty.
 */
int container_parse(const char *text, size_t len, size_t lines,
		    struct container *out, char *unit, size_t unit_len);

/* Lines of a cgroup file's text (0 when it is not one: see above). */
size_t container_cgroup_lines(const char *text, size_t len);

#endif
