// SPDX-License-Identifier: GPL-2.0-only
/* container.c - container names from a cgroup file; see container.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "broker/pg/container.h"

/* Hierarchies a cgroup file lists: the kernel has at most 16 controllers
 * and a few named hierarchies; a file with more lines is not its own. */
#define MAX_LINES	64

static bool hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* s[0..n) is exactly n lowercase hex digits. */
static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!hex(s[i]))
			return false;
	return true;
}

/* One path component: [p, p + n). */
struct part {
	const char *p;
	size_t n;
};

static bool starts(struct part c, const char *prefix)
{
	size_t k = strlen(prefix);

	return c.n >= k && memcmp(c.p, prefix, k) == 0;
}

static bool ends(struct part c, const char *suffix)
{
	size_t k = strlen(suffix);

	return c.n >= k && memcmp(c.p + c.n - k, suffix, k) == 0;
}

static bool is(struct part c, const char *s)
{
	return c.n == strlen(s) && memcmp(c.p, s, c.n) == 0;
}

/* PREFIX<64 hex>SUFFIX: the id's start, or NULL. */
static const char *id_in(struct part c, const char *prefix, const char *suffix)
{
	size_t k = strlen(prefix);

	if (c.n != k + CONTAINER_ID_LEN + strlen(suffix) || !starts(c, prefix) ||
	    !ends(c, suffix) || !all_hex(c.p + k, CONTAINER_ID_LEN))
		return NULL;
	return c.p + k;
}

/*
 * A pod UID as the kubelet writes it into a cgroup name: a UUID, with
 * underscores for its dashes under the systemd driver, or 32 hex digits
 * (a static pod's). Into out with dashes; false if it is neither.
 */
static bool pod_uid(const char *s, size_t n, char *out)
{
	static const size_t dash[] = { 8, 13, 18, 23 };

	if (n == 32 && all_hex(s, 32)) {
		memcpy(out, s, 32);
		out[32] = '\0';
		return true;
	}
	if (n != CONTAINER_POD_UID_LEN)
		return false;
	for (size_t i = 0, d = 0; i < n; i++) {
		if (d < 4 && i == dash[d]) {
			if (s[i] != '-' && s[i] != '_')
				return false;
			out[i] = '-';
			d++;
		} else if (!hex(s[i])) {
			return false;
		} else {
			out[i] = s[i];
		}
	}
	out[n] = '\0';
	return true;
}

/* kubepods-pod<uid>.slice, kubepods-<qos>-pod<uid>.slice (systemd), or
 * pod<uid> below kubepods (cgroupfs). */
static bool pod_of(struct part c, bool below_kubepods, char *out)
{
	if (starts(c, "kubepods-") && ends(c, ".slice")) {
		size_t stop = c.n - 6;	/* where ".slice" begins */

		/* the last "-pod": a UID has no dash of its own here */
		for (size_t i = stop; i-- > 8;)
			if (c.p[i] == '-' && i + 4 <= stop &&
			    !memcmp(c.p + i + 1, "pod", 3))
				return pod_uid(c.p + i + 4, stop - (i + 4), out);
		return false;
	}
	return below_kubepods && starts(c, "pod") &&
	       pod_uid(c.p + 3, c.n - 3, out);
}

/* systemd's characters of a unit name (unit_name_is_valid's). */
static bool unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == ':' || c == '-' || c == '_' ||
	       c == '.' || c == '\\' || c == '@';
}

static bool unit_of(struct part c, char *unit, size_t unit_len)
{
	if (!ends(c, ".service") || c.n == 8 || c.n >= unit_len)
		return false;
	for (size_t i = 0; i < c.n; i++)
		if (!unit_char(c.p[i]))
			return false;
	memcpy(unit, c.p, c.n);
	unit[c.n] = '\0';
	return true;
}

/* What one path names: its innermost container, pod and service. */
struct names {
	struct container c;
	char unit[CONTAINER_UNIT_LEN];
};

static void set_id(struct container *c, const char *runtime, const char *id)
{
	snprintf(c->runtime, sizeof(c->runtime), "%s", runtime);
	memcpy(c->id, id, CONTAINER_ID_LEN);
	c->id[CONTAINER_ID_LEN] = '\0';
}

static void path_names(const char *p, size_t n, struct names *out)
{
	struct part prev = { "", 0 };
	bool kubepods = false;
	const char *end = p + n, *id;
	char uid[CONTAINER_POD_UID_LEN + 1];

	memset(out, 0, sizeof(*out));
	while (p < end) {
		struct part c;

		while (p < end && *p == '/')
			p++;
		c.p = p;
		while (p < end && *p != '/')
			p++;
		c.n = (size_t)(p - c.p);
		if (!c.n)
			break;
		id = NULL;
		if ((id = id_in(c, "docker-", ".scope")) ||
		    (is(prev, "docker") && (id = id_in(c, "", ""))))
			set_id(&out->c, "docker", id);
		else if ((id = id_in(c, "cri-containerd-", ".scope")))
			set_id(&out->c, "containerd", id);
		else if ((id = id_in(c, "crio-", ".scope")))
			set_id(&out->c, "cri-o", id);
		else if ((id = id_in(c, "libpod-", ".scope")) ||
			 (id = id_in(c, "libpod-", "")))
			set_id(&out->c, "podman", id);
		else if (kubepods && starts(prev, "pod") && (id = id_in(c, "", "")))
			set_id(&out->c, "kubernetes", id);
		if (id)	/* the container's scope is its unit: the services
			 * above it are the user's or the runtime's */
			out->unit[0] = '\0';
		else if (pod_of(c, kubepods, uid))
			memcpy(out->c.pod_uid, uid, sizeof(uid));
		else
			unit_of(c, out->unit, sizeof(out->unit));
		if (starts(c, "kubepods"))
			kubepods = true;
		prev = c;
	}
}

/* A controller's or a named hierarchy's ("name=systemd") characters. */
static bool controller_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == ',' || c == '=' ||
	       c == '.' || c == '-';
}

/*
 * The lines of text: each "ID:CONTROLLERS:/PATH\n", IDs distinct. Returns
 * how many, 0 when one is not such a line. paths[] gets each line's
 * path, unified[] and systemd[] whether it is cgroup v2's line or the
 * name=systemd hierarchy's.
 */
static size_t split(const char *text, size_t len, struct part *paths,
		    bool *unified, bool *systemd)
{
	unsigned long seen[MAX_LINES];
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		unsigned long id = 0;
		const char *ctl;
		size_t ctl_n = 0, digits = 0;

		if (n == MAX_LINES)
			return 0;
		for (; i < len && text[i] >= '0' && text[i] <= '9' && digits < 9;
		     i++, digits++)
			id = id * 10 + (unsigned long)(text[i] - '0');
		if (!digits || i == len || text[i++] != ':')
			return 0;
		ctl = text + i;
		for (; i < len && text[i] != ':'; i++, ctl_n++)
			if (!controller_char(text[i]))
				return 0;
		if (i == len || text[i++] != ':' || i == len || text[i] != '/')
			return 0;
		for (size_t k = 0; k < n; k++)
			if (seen[k] == id)
				return 0;
		seen[n] = id;
		paths[n].p = text + i;
		while (i < len && text[i] != '\n')
			i++;
		if (i == len)	/* cut short: the read did not get it all */
			return 0;
		paths[n].n = (size_t)(text + i - paths[n].p);
		unified[n] = id == 0 && ctl_n == 0;
		systemd[n] = ctl_n == 12 && memcmp(ctl, "name=systemd", 12) == 0;
		i++;
		n++;
	}
	return n;
}

/* What another hierarchy names into what is known: false when the two
 * disagree (a hierarchy that names less, as a v1 controller the process
 * was not moved in, agrees). */
static bool merge(struct container *into, const struct container *c)
{
	if ((into->id[0] && c->id[0] && (strcmp(into->id, c->id) ||
					  strcmp(into->runtime, c->runtime))) ||
	    (into->pod_uid[0] && c->pod_uid[0] &&
	     strcmp(into->pod_uid, c->pod_uid)))
		return false;
	if (c->id[0]) {
		memcpy(into->id, c->id, sizeof(into->id));
		memcpy(into->runtime, c->runtime, sizeof(into->runtime));
	}
	if (c->pod_uid[0])
		memcpy(into->pod_uid, c->pod_uid, sizeof(into->pod_uid));
	return true;
}

size_t container_cgroup_lines(const char *text, size_t len)
{
	struct part paths[MAX_LINES];
	bool unified[MAX_LINES], systemd[MAX_LINES];

	return split(text, len, paths, unified, systemd);
}

int container_parse(const char *text, size_t len, size_t lines,
		    struct container *out, char *unit, size_t unit_len)
{
	struct part paths[MAX_LINES];
	bool unified[MAX_LINES], systemd[MAX_LINES];
	size_t n = split(text, len, paths, unified, systemd);
	bool unit_from_systemd = false;

	memset(out, 0, sizeof(*out));
	if (unit_len)
		unit[0] = '\0';
	if (!n || (lines && n != lines))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct names got;

		path_names(paths[i].p, paths[i].n, &got);
		if (!merge(out, &got.c)) {
			memset(out, 0, sizeof(*out));
			if (unit_len)
				unit[0] = '\0';
			return -EINVAL;	/* two containers */
		}
		/* systemd's own hierarchy says the service; a controller's
		 * may lag behind (a process moved in one only) */
		if (got.unit[0] && unit_len && (!unit[0] ||
		    (!unit_from_systemd && (unified[i] || systemd[i])))) {
			snprintf(unit, unit_len, "%s", got.unit);
			unit_from_systemd = unified[i] || systemd[i];
		}
	}
	return 0;
}
