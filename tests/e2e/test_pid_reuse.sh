#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A traced backend's pid, reused by a process that is not PostgreSQL
# (same uid as the cluster, a PostgreSQL-like title): it is never
# reported, though it blocks longer than the watch's threshold, and
# pgoffctl ps never lists it. The kernel keys its per-thread state by pid,
# so a reused pid must not inherit the backend's.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

member watch --view both --min 1ms --json --timeout 20s >"$E2E_DIR/watch.json" 2>"$E2E_DIR/watch.err" &
w=$!
watchers 1 || { not_ok "the watch subscribed"; exit 1; }

# a backend that waits (traced: it has per-thread state in the kernel), then exits
psql -X -q -At -c "select pg_backend_pid()" -c "select pg_sleep(0.02) from generate_series(1, 20)" \
	>"$E2E_DIR/backend.out" 2>&1
victim=$(head -n1 "$E2E_DIR/backend.out")
wait_for 5 gone "$victim"

# the same pid for a shell of the cluster's uid: the pid counter set just
# below it and a fork at once, retried if another fork came in between
/usr/bin/python3 - "$victim" "$(id -u postgres)" "$(id -g postgres)" >"$E2E_DIR/reuse.out" 2>&1 <<'PY' &
import os, sys
want, uid, gid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
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
        # blocks in wait4 for 250 ms, 16 times: far above --min 1ms,
        # and long enough for pgoffd to have noticed under ASan
        os.execv("/bin/sh", ["postgres: postgres postgres [local] idle", "-c",
                             "for i in $(seq 16); do sleep 0.25; done"])
    if pid == want:
        print("reused after %d attempts" % (attempt + 1), flush=True)
        _, status = os.waitpid(pid, 0)
        sys.exit(0 if status == 0 else 1)
    os.waitpid(pid, 0)
print("pid %d not obtained in 500 forks" % want)
sys.exit(2)
PY
reuser=$!
# pgoffd's prober scans /proc once a second (slower under ASan): ps must
# stop listing the pid while the shell still holds it
unlisted_while_reused() {
	ps_json=$(member ps --json)
	! jq -e --argjson p "$victim" 'any(.processes[]; .pid == $p)' <<<"$ps_json" >/dev/null &&
		grep -q reused "$E2E_DIR/reuse.out" && kill -0 "$victim" 2>/dev/null
}
sleep 1
wait_for 2.5 unlisted_while_reused; unlisted=$?
wait "$reuser"; reuse_rc=$?
sleep 1.5	# the events of the last sleeps reach the watch
wait "$w"; watch_rc=$?
note "backend pid $victim; $(cat "$E2E_DIR/reuse.out")"

check "the backend's pid was reused by the shell, which ran to its end" [ "$reuse_rc" = 0 ]
check "the watch ran to its timeout (exit $watch_rc)" [ "$watch_rc" = 0 ]
# the test can fail: the pid was traced and reported before it was reused
before=$(jq -c --argjson p "$victim" 'select((.pid == $p or .tid == $p) and .comm == "postgres")' \
	"$E2E_DIR/watch.json" | wc -l)
check "the backend's waits were reported ($before events of pid $victim)" [ "$before" -gt 0 ]
# the shell's comm is sh: anything else of that pid was the shell's
reused=$(jq -c --argjson p "$victim" 'select((.pid == $p or .tid == $p) and .comm != "postgres")' \
	"$E2E_DIR/watch.json")
[ -z "$reused" ] || note "reported for the reused pid: $reused"
check "nothing reported for the shell that reused the pid" [ -z "$reused" ]
if [ "$unlisted" != 0 ]; then
	not_ok "pgoffctl ps does not list the reused pid while the shell holds it"; note "ps: $ps_json"
else
	ok "pgoffctl ps does not list the reused pid while the shell holds it"
fi
