#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# pgoffd's life: bad requests, clients killed mid-stream, clusters started
# later, SIGTERM (bye, nothing left in the kernel, a stale socket that
# pgoffctl recognizes and the next start replaces), and the raw_tp fallback.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

progs_before=$(our_progs)

pg_start || { not_ok "start PostgreSQL 15"; exit 1; }
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
check "BPF programs are loaded while pgoffd runs" [ "$(our_progs)" -gt "$progs_before" ]
check "socket is 0660 with the access group" \
	[ "$(stat -c '%a %G' "$SOCK")" = "660 $E2E_GROUP" ]
sockdir=$(stat -c '%a %U %G' "$(dirname "$SOCK")")
check "socket directory is 0750 root:$E2E_GROUP (saw $sockdir)" [ "$sockdir" = "750 root $E2E_GROUP" ]
sockfile=$(stat -c '%a %U %G' "$SOCK")
check "socket is 0660 root:$E2E_GROUP (saw $sockfile)" [ "$sockfile" = "660 root $E2E_GROUP" ]

# Requests that are wrong in every way get an error code; the connection
# survives all but a framing error.
/usr/bin/python3 - "$SOCK" >"$E2E_DIR/proto.out" 2>&1 <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rwb")
def ask(raw):
    f.write(raw + b"\n"); f.flush()
    line = f.readline()
    return json.loads(line) if line else None
def code(r): return r["error"]["code"] if r and not r["ok"] else ("ok" if r else "closed")
print("before_hello", code(ask(b'{"op":"status","id":1}')))
print("bad_version", code(ask(b'{"op":"hello","version":99}')))
print("hello", code(ask(b'{"op":"hello","version":1,"id":2}')))
print("garbage", code(ask(b'{"op":')))
print("trailing", code(ask(b'{"op":"status"} x')))
print("not_object", code(ask(b'[1,2]')))
print("unknown_op", code(ask(b'{"op":"frobnicate"}')))
print("string_pid", code(ask(b'{"op":"subscribe","pids":["123"]}')))
print("huge_min", code(ask(b'{"op":"subscribe","min_duration_ns":99999999999999999999999}')))
print("deep", code(ask(b'{"op":"status","x":[[[[[[[[[[1]]]]]]]]]]}')))
print("still_alive", code(ask(b'{"op":"status","id":3}')))
print("too_long", code(ask(b'{"op":"status","pad":"' + b"x" * 5000 + b'"}')))
try:
    print("after_too_long", code(ask(b'{"op":"status"}')))
except OSError:
    print("after_too_long closed")
PY
p() { grep -q "^$1 $2\$" "$E2E_DIR/proto.out"; }
check "a request before hello: hello_required" p before_hello hello_required
check "an unknown protocol version: unsupported_version" p bad_version unsupported_version
check "hello: ok" p hello ok
check "broken JSON: bad_json" p garbage bad_json
check "data after the object: bad_json" p trailing bad_json
check "an array: bad_json" p not_object bad_json
check "an unknown op: unknown_op" p unknown_op unknown_op
check "a pid as a string: bad_request" p string_pid bad_request
check "an overflowing number: bad_request" p huge_min bad_request
check "nesting too deep: bad_json" p deep bad_json
check "the connection survives those errors" p still_alive ok
check "a line over the limit: line_too_long" p too_long line_too_long
check "... and the connection is closed" p after_too_long closed
grep -v '^[a-z_]* [a-z_]*$' "$E2E_DIR/proto.out" | sed 's/^/# /'

# A client killed while events stream to it does not hurt the broker:
# it is killed once its events are seen coming
( while :; do sql -c "select pg_sleep(0.002)" >/dev/null 2>&1; done ) &
load=$!
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --min 1ms --json >"$E2E_DIR/killed.json" 2>&1 &
watcher=$!
watchers 1 || note "the watch to kill did not subscribe"
seen() { grep -cE '"type":"(episode|offcpu)"' "$E2E_DIR/killed.json"; }
streaming() { [ "$(seen)" -ge 10 ] && kill -0 "$watcher" 2>/dev/null; }
wait_for 15 streaming
check "events stream to the client to kill ($(seen) seen, it runs)" streaming ||
	note "its output: $(head -c 300 "$E2E_DIR/killed.json")"
{ kill -KILL "$watcher"; wait "$watcher"; } 2>/dev/null
kill "$load"; wait "$load" 2>/dev/null
check "pgoffd is alive after a client was killed mid-stream" kill -0 "$E2E_BROKER_PID"
# pgoffd learns of the client's end once it reads its side of the
# connection, a loop round or more later
clients=
only_the_asker() { clients=$(member status --json | jq .clients); [ "$clients" = 1 ]; }
wait_for 5 only_the_asker
check "the killed client is gone (clients = ${clients:-?}, want 1: the asker)" [ "$clients" = 1 ]

# A cluster started after pgoffd is found by the next scan (once a
# second), and ps, cached for up to a second, shows it. The check is
# that it is found, within 15 s (a pgoffd that never finds it); how
# long it took is a figure (the prober's answer on a loaded machine, a
# sanitizer build). It is told by its postmaster: initdb's bootstrap
# postgres is one too.
second=$E2E_DIR/pg2
mkdir -p "$second" && chown postgres "$second"
su postgres -s /bin/sh -c "$PGBIN/initdb -D '$second/data' -A trust -U postgres" >/dev/null 2>&1
port2=$((PGPORT + 1))
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$second/data' -w -l '$second/log' -o '-p $port2 -k $second -c listen_addresses=' start" >/dev/null 2>&1
started=${EPOCHREALTIME/./}
postmaster2=$(head -n1 "$second/data/postmaster.pid")
lists_second() {
	as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" ps --json |
		jqe --arg d "$second/data" --argjson p "$port2" --argjson pm "${postmaster2:-0}" \
			'any(.clusters[]; .data_dir == $d and .port == $p and .postmaster_pid == $pm)'
}
found=false
WAIT_STEP=0.1 wait_for 15 lists_second && found=true
note "the cluster started after pgoffd was found in $(( (${EPOCHREALTIME/./} - started) / 1000 )) ms"
check "a cluster started after pgoffd is traced: its postmaster ${postmaster2:-?}, port $port2" $found ||
	note "clusters: $(as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" ps --json | jq -c '[.clusters[] | [.data_dir, .port, .postmaster_pid]]')"
# its backend sleeps once the watch has subscribed: none of it is missed
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --pg-wait Timeout:PgSleep --min 200ms \
	--json --count 1 --timeout 15s >"$E2E_DIR/second.out" 2>&1 &
w=$!
watchers 1 || note "the watch on the second cluster did not subscribe: $(head -c 300 "$E2E_DIR/second.out" | tr "\n" " ")"
sql -h "$second" -p "$port2" -U postgres -c "select pg_sleep(0.5)" >/dev/null
wait "$w"
sed "s/^/# second cluster: /" "$E2E_DIR/second.out" | head -3
check "... and its backends' waits are reported" \
	[ "$(jq -r '.pg.cluster.port' "$E2E_DIR/second.out" 2>/dev/null)" = "$port2" ]
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$second/data' -m fast stop" >/dev/null 2>&1

# SIGTERM: subscribers are told, nothing stays loaded; the socket file
# stays (pgoffd, no longer root, cannot remove it from root's directory).
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --json >/dev/null 2>"$E2E_DIR/bye.err" &
w3=$!
# --follow: the same subscription goes on with the next broker
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --follow --json --pg-wait Timeout:PgSleep \
	--min 200ms --count 1 --timeout 30s >"$E2E_DIR/follow.out" 2>"$E2E_DIR/follow.err" &
w4=$!
watchers 2
# systemd's stop sends SIGTERM to the unit's every process, Ctrl-C SIGINT
# to the foreground group: the prober must not go first and make pgoffd
# exit 1 ("the prober is gone"), as it did one stop in four
prober=$(pgrep -P "$E2E_BROKER_PID" | head -n1)
# (never pid 0: that would signal this test's own process group)
if [ -n "$prober" ]; then
	kill -TERM "$prober" 2>/dev/null
	kill -INT "$prober" 2>/dev/null
else
	note "pgoffd ($E2E_BROKER_PID) has no child: no prober to signal"
fi
sleep 0.3
pstate=$(awk '{ print $3 }' "/proc/${prober:-0}/stat" 2>/dev/null)
check "the prober ($prober) ignores SIGTERM and SIGINT sent to the group (state ${pstate:-gone})" \
	[ -n "$pstate" -a "$pstate" != Z ]
e2e_stop_broker TERM
wait "$w3"
check "pgoffd exits 0 on SIGTERM (status $E2E_BROKER_RC)" [ "$E2E_BROKER_RC" = 0 ]
wait_for 5 gone "${prober:-0}"
check "... and the prober ends with it" bash -c "! kill -0 ${prober:-0} 2>/dev/null"
check "a subscriber is told the broker is shutting down" grep -q "closed the stream (shutdown)" "$E2E_DIR/bye.err"
check "the socket file stays after SIGTERM, refusing connections" \
	bash -c "[ -S '$SOCK' ] && ! /usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' '$SOCK' 2>/dev/null"
member status >"$E2E_DIR/stale.out" 2>&1
rc=$?
note "pgoffctl on the stale socket: $(cat "$E2E_DIR/stale.out") (exit $rc)"
check "pgoffctl says pgoffd is not running (stale socket), exit 3" \
	bash -c "[ $rc = 3 ] && grep -q 'pgoffd is not running (stale socket $SOCK)' '$E2E_DIR/stale.out'"
check "no pgoff BPF program stays loaded" progs_settle "$progs_before"
check "watch --follow is still running without a broker" kill -0 "$w4"
e2e_start_broker || { not_ok "start pgoffd again"; exit 1; }
# the sleep once the new broker traces the cluster and the watch is back
traced_again() { member ps --json 2>/dev/null | jqe --arg d "$PGDATA_DIR" 'any(.clusters[]; .data_dir == $d)'; }
wait_for 10 traced_again || note "the new broker does not trace the cluster after 10 s"
wait_for 10 grep -q reconnected "$E2E_DIR/follow.err"
watchers 1 || note "the --follow watch did not subscribe again"
backend_sleep 0.4
wait "$SLEEPER_JOB"
wait "$w4"
rc=$?
sed 's/^/# follow: /' "$E2E_DIR/follow.err"
check "watch --follow got the event from the new broker and exited 0" \
	[ "$rc" = 0 -a "$(jq -r .pg.wait_event "$E2E_DIR/follow.out")" = PgSleep ] ||
	sed 's/^/# pgoffd: /' "$E2E_DIR/pgoffd.log" | tail -n 15
check "... saying on stderr that it reconnected" \
	bash -c "grep -q 'reconnecting' '$E2E_DIR/follow.err' && grep -q 'reconnected' '$E2E_DIR/follow.err'"
e2e_stop_broker TERM

# A stale socket from a crashed broker is replaced; raw_tp fallback works.
e2e_start_broker --raw-tp || { not_ok "start pgoffd --raw-tp"; exit 1; }
kill -KILL "$E2E_BROKER_PID"; wait "$E2E_BROKER_PID" 2>/dev/null; E2E_BROKER_PID=
check "a killed broker leaves a stale socket" [ -S "$SOCK" ]
check "... and its BPF programs are gone with it" progs_settle "$progs_before"
e2e_start_broker --raw-tp
check "a new broker replaces the stale socket" [ $? = 0 ]
check "... saying so in its log" grep -q "removing stale socket $SOCK" "$E2E_DIR/pgoffd.log"
"$PGOFFD" --socket "$SOCK" --group "$E2E_GROUP" --user "$E2E_BROKER_USER" --record no \
	2>"$E2E_DIR/second-broker.log"
check "a second broker on a live socket refuses to start" \
	grep -q "another pgoffd is already serving" "$E2E_DIR/second-broker.log"
hook=$(as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" status --json | jq -r .hook)
check "--raw-tp uses the raw_tp programs" [ "$hook" = raw_tp ]
# the sleep's backend is traced once the new broker's scan found its
# postmaster (a sanitizer build's first scan may come seconds later)
wait_for 10 traced_again || note "the raw_tp broker does not trace the cluster after 10 s"
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --pg-wait Timeout:PgSleep \
	--min 200ms --json --count 1 --timeout 15s >"$E2E_DIR/raw.out" 2>&1 &
w=$!
watchers 1 || note "the raw_tp watch did not subscribe: $(head -c 300 "$E2E_DIR/raw.out" | tr "\n" " ")"
sql -c "select pg_sleep(0.5)" >/dev/null
wait "$w"
sed "s/^/# raw_tp: /" "$E2E_DIR/raw.out" | head -3
check "raw_tp: pg_sleep is reported as sleep, Timeout/PgSleep" \
	[ "$(jq -r '.wait + " " + .pg.wait_event_type + "/" + .pg.wait_event' "$E2E_DIR/raw.out")" = "sleep Timeout/PgSleep" ]
check "raw_tp: the event says why it has no stack" \
	[ "$(jq -r .stack_error "$E2E_DIR/raw.out")" = "not available with the raw_tp fallback" ]
# the on-CPU sampler reads its task untyped: it runs beside raw_tp too
check "raw_tp: the on-CPU sampler runs on every CPU ($(status_field on_cpu_sample_cpus) of $(nproc))" \
	[ "$(status_field on_cpu_sample_cpus)" = "$(nproc)" ]
e2e_stop_broker TERM
sampler_progs() { bpftool prog show 2>/dev/null | grep -c 'name on_cpu_tick'; }
no_sampler() { [ "$(sampler_progs)" = 0 ]; }
e2e_start_broker --on-cpu-sample 0s || { not_ok "start pgoffd --on-cpu-sample 0s"; exit 1; }
check "--on-cpu-sample 0s: status says the sampler is off ($(status_field on_cpu_sample_cpus) CPUs, every $(status_field on_cpu_sample_us) us)" \
	[ "$(status_field on_cpu_sample_cpus)" = 0 -a "$(status_field on_cpu_sample_us)" = 0 ]
# (the last broker's is freed a little after it exited)
wait_for 3 no_sampler
check "... and its program is not loaded ($(sampler_progs) loaded)" no_sampler
