#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A traced backend's pid, reused by a process that is not PostgreSQL
# (same uid as the cluster, a PostgreSQL-like title): it is never
# reported, though it blocks longer than the watch's threshold, and
# pgoffctl ps never lists it. The kernel keys its per-thread state by pid,
# so a reused pid must not inherit the backend's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/reuse.sh"
e2e_require
e2e_setup

reuse_traced_backend_gone

# the same pid for a shell of the cluster's uid: the pid counter set just
# below it and a fork at once, retried if another fork came in between
/usr/bin/python3 - "$victim" "$(id -u postgres)" "$(id -g postgres)" "$REUSE_RELEASE" \
	>"$E2E_DIR/reuse.out" 2>&1 <<'PY' &
import os, sys
want, uid, gid, release = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for attempt in range(500):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() != want:
            os._exit(3)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        # blocks in wait4 for 250 ms, 16 times at least (far above
        # --min 1ms) and until the test releases it
        title = "postgres: postgres postgres [local] idle"
        os.execv("/bin/sh", [title, "-c",
                             'i=0; while [ $i -lt 16 ] || [ ! -e "$1" ]; do sleep 0.25; i=$((i + 1)); done',
                             title, release])
    if pid == want:
        print("reused after %d attempts" % (attempt + 1), flush=True)
        _, status = os.waitpid(pid, 0)
        sys.exit(0 if status == 0 else 1)
    os.waitpid(pid, 0)
print("pid %d not obtained in 500 forks" % want)
sys.exit(2)
PY
reuser=$!
reuse_check "$reuser" shell
