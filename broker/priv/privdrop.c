// SPDX-License-Identifier: GPL-2.0-only
/*
 * privdrop.c - see privdrop.h. Order matters: the bounding set first
 * (needs CAP_SETPCAP), then uid/gid with PR_SET_KEEPCAPS so the kept
 * capabilities survive, then the capability sets, then no_new_privs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "broker/priv/privdrop.h"
#include "common/log.h"

/* The kernel's overflow uid, which NFS and user namespaces show too. */
#define OVERFLOW_UID 65534

int privdrop_lookup(const char *user, uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam(user);

	/* no fallback to nobody: every other process running as nobody
	 * would share pgoffd's uid (signal it, read its /proc) */
	if (!pw && strcmp(user, "pgoffd") == 0) {
		log_warnx("user pgoffd does not exist; create it with "
			  "'systemd-sysusers' (pgoff's sysusers.d entry) or "
			  "'useradd --system --no-create-home --shell "
			  "/usr/sbin/nologin pgoffd', or name a user of "
			  "pgoffd's own with --user");
		return -ENOENT;
	}
	if (!pw) {
		log_warnx("user '%s' does not exist", user);
		return -ENOENT;
	}
	if (strcmp(pw->pw_name, "nobody") == 0 || pw->pw_uid == OVERFLOW_UID) {
		log_warnx("--user must not be %s (uid %u): other processes "
			  "run as it; create a user of pgoffd's own "
			  "('useradd --system pgoffd')", pw->pw_name,
			  (unsigned int)pw->pw_uid);
		return -EINVAL;
	}
	if (pw->pw_uid == 0) {
		log_warnx("--user must not be root");
		return -EINVAL;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static int kept(cap_value_t c, const cap_value_t *keep, int nkeep)
{
	for (int i = 0; i < nkeep; i++)
		if (keep[i] == c)
			return 1;
	return 0;
}

/* A "CapXxx:\t<hex>" line of /proc/self/status. */
static int status_caps(const char *field, unsigned long long *v)
{
	char line[256];
	size_t len = strlen(field);
	FILE *f = fopen("/proc/self/status", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, len) == 0 && line[len] == ':' &&
		    sscanf(line + len + 1, "%llx", v) == 1) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* Getting root or a capability back must fail now. */
static int verify(uid_t uid, const cap_value_t *keep, int nkeep)
{
	static const char *const sets[] = { "CapEff", "CapPrm", "CapBnd",
					    "CapInh", "CapAmb" };
	unsigned long long want = 0, got, nnp;

	for (int i = 0; i < nkeep; i++)
		want |= 1ULL << keep[i];
	if (setuid(0) == 0 || getuid() != uid || geteuid() != uid) {
		log_warnx("privilege drop failed: root could be regained");
		return -EPERM;
	}
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		unsigned long long w = i < 3 ? want : 0;

		if (status_caps(sets[i], &got) || got != w) {
			log_warnx("privilege drop failed: %s is %llx, want %llx",
				  sets[i], got, w);
			return -EPERM;
		}
	}
	if (status_caps("NoNewPrivs", &nnp) || nnp != 1) {
		log_warnx("privilege drop failed: no_new_privs is not set");
		return -EPERM;
	}
	return 0;
}

int privdrop(uid_t uid, gid_t gid, const cap_value_t *keep, int nkeep)
{
	cap_t caps;
	int err = 0;

	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++)
		if (!kept(c, keep, nkeep) && cap_drop_bound(c)) {
			log_warn("cannot drop capability %d from the bounding set",
				 c);
			return -errno;
		}
	if (prctl(PR_SET_KEEPCAPS, nkeep > 0, 0, 0, 0) ||
	    setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		log_warn("cannot switch to uid %u gid %u", uid, gid);
		return -errno;
	}
	caps = cap_init();
	if (!caps)
		return -ENOMEM;
	if ((nkeep && (cap_set_flag(caps, CAP_PERMITTED, nkeep, keep, CAP_SET) ||
		       cap_set_flag(caps, CAP_EFFECTIVE, nkeep, keep, CAP_SET))) ||
	    cap_set_proc(caps)) {
		log_warn("cannot set the capabilities");
		err = -errno;
	}
	cap_free(caps);
	if (err)
		return err;
	/* not dumpable whatever fs.suid_dumpable says (1 leaves a process
	 * dumpable after its uid change): no core, its /proc files root's,
	 * so its own uid cannot read its memory or take its descriptors */
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) || cap_reset_ambient() ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		log_warn("cannot lock the privilege drop");
		return -errno;
	}
	return verify(uid, keep, nkeep);
}
