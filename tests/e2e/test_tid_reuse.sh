#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A traced backend's pid, reused as the thread id of a thread (not the
# leader) of a process that is not PostgreSQL, of the cluster's uid: that
# thread blocks far longer than the watch's threshold and is never
# reported, and pgoffctl ps never lists the pid. test_pid_reuse does the
# same with a process; here the kernel sees a thread id that was a traced
# thread's, in a process that was never traced.
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

# a process of the cluster's uid whose second thread gets the pid: the pid
# counter set just below it and a thread started at once, retried if
# another fork came in between
/usr/bin/python3 - "$victim" "$(id -u postgres)" "$(id -g postgres)" >"$E2E_DIR/reuse.out" 2>&1 <<'PY' &
import os, sys, threading, time
want, uid, gid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
# the pid counter is root's to set; the process that starts the threads
# runs as the uid, all four ids: it asks for a thread on a pipe
go_r, go_w = os.pipe()
res_r, res_w = os.pipe()
child = os.fork()
if child == 0:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    got = threading.Event()
    def sleeper():
        if threading.get_native_id() != want:
            return
        got.set()
        # blocks 250 ms, 16 times: far above --min 1ms, and long
        # enough for pgoffd to have noticed under ASan
        for _ in range(16):
            time.sleep(0.25)
    while os.read(go_r, 1):
        t = threading.Thread(target=sleeper)
        t.start()
        t.join(0.05)
        os.write(res_w, b"1" if got.is_set() else b"0")
        t.join()
        if got.is_set():
            os._exit(0)
    os._exit(2)
for attempt in range(500):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    os.write(go_w, b"x")
    if os.read(res_r, 1) == b"1":
        print("reused as a thread of pid %d after %d attempts" % (child, attempt + 1), flush=True)
        _, status = os.waitpid(child, 0)
        sys.exit(0 if status == 0 else 1)
os.close(go_w)
os.waitpid(child, 0)
print("thread id %d not obtained in 500 threads" % want)
sys.exit(2)
PY
reuser=$!
# pgoffd's prober scans /proc once a second (slower under ASan): ps must
# stop listing the pid while the thread still holds it
unlisted_while_reused() {
	ps_json=$(member ps --json)
	! jq -e --argjson p "$victim" 'any(.processes[]; .pid == $p)' <<<"$ps_json" >/dev/null &&
		grep -q reused "$E2E_DIR/reuse.out" && [ -e "/proc/$victim" ]
}
sleep 1
wait_for 2.5 unlisted_while_reused; unlisted=$?
wait "$reuser"; reuse_rc=$?
sleep 1.5	# the events of the last sleeps reach the watch
wait "$w"; watch_rc=$?
note "backend pid $victim; $(cat "$E2E_DIR/reuse.out")"

check "the backend's pid was reused as a thread id, and the thread ran to its end" [ "$reuse_rc" = 0 ]
check "the watch ran to its timeout (exit $watch_rc)" [ "$watch_rc" = 0 ]
# the test can fail: the pid was traced and reported before it was reused
before=$(jq -c --argjson p "$victim" 'select((.pid == $p or .tid == $p) and .comm == "postgres")' \
	"$E2E_DIR/watch.json" | wc -l)
check "the backend's waits were reported ($before events of pid $victim)" [ "$before" -gt 0 ]
# the thread's comm is python3's: anything else of that pid, or of the
# process that holds it, was theirs
holder=$(sed -n 's/^reused as a thread of pid \([0-9]*\) .*/\1/p' "$E2E_DIR/reuse.out")
reused=$(jq -c --argjson p "$victim" --argjson h "${holder:-0}" \
	'select(.pid == $p or .tid == $p or .pid == $h) | select(.comm != "postgres")' "$E2E_DIR/watch.json")
[ -z "$reused" ] || note "reported for the reused thread id: $reused"
check "nothing reported for the thread that reused the pid, nor its process" [ -z "$reused" ]
if [ "$unlisted" != 0 ]; then
	not_ok "pgoffctl ps does not list the reused pid while the thread holds it"; note "ps: $ps_json"
else
	ok "pgoffctl ps does not list the reused pid while the thread holds it"
fi
