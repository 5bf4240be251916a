#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A traced backend's pid, reused as the thread id of a thread (not the
# leader) of a process that is not PostgreSQL, of the cluster's uid: that
# thread blocks far longer than the watch's threshold and is never
# reported, and pgoffctl ps never lists the pid. test_pid_reuse does the
# same with a process; here the kernel sees a thread id that was a traced
# thread's, in a process that was never traced.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/reuse.sh"
e2e_require
e2e_setup

reuse_traced_backend_gone

# the pid for the second thread of a process of the cluster's uid: it
# starts a thread as soon as root has set the pid counter just below the
# pid, again until no other fork came in between
/usr/bin/python3 - "$victim" "$(id -u postgres)" "$(id -g postgres)" "$REUSE_RELEASE" \
	>"$E2E_DIR/reuse.out" 2>&1 <<'PY' &
import os, sys, threading, time
want, uid, gid, release = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
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
        # blocks 250 ms, 16 times at least (far above --min 1ms) and
        # until the test releases it
        n = 0
        while n < 16 or not os.path.exists(release):
            time.sleep(0.25)
            n += 1
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
# the process that holds the thread: its other threads' events are its too
holder() { sed -n 's/^reused as a thread of pid \([0-9]*\) .*/\1/p' "$E2E_DIR/reuse.out"; }
wait_for 10 grep -qs reused "$E2E_DIR/reuse.out"
reuse_check "$reuser" thread "$(holder)"
