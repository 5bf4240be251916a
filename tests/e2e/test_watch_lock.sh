#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A DBA in the group sees a real row-lock wait with `pgoffctl watch --pid`;
# a user outside the group is refused, even on a world-writable socket.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# deadlock_timeout well above the wait: the deadlock check's timer would
# otherwise wake the waiter at 1 s and split the wait into two intervals.
pg_start deadlock_timeout=10s || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
ok "pgoffd starts and answers status"

# Session A holds the row lock; session B waits for it. A lets it go
# 0.5 s after the watch subscribed: B's wait is at least that long, however
# long B's connect and the watch's start took.
hold=0.5
session_open a && session_open b || { not_ok "open psql sessions A and B"; exit 1; }
a_pid=${SESSION_PID[a]} b_pid=${SESSION_PID[b]}
session_run a "begin;" "update t set v = 1 where id = 1;" ||
	{ not_ok "session A takes the row lock"; exit 1; }
b_sent=$EPOCHREALTIME
session_send b "select extract(epoch from clock_timestamp());" \
	"update t set v = 2 where id = 1;" "select extract(epoch from clock_timestamp());"
IFS='|' read -r _ psa_type psa_event <<<"$(psa_wait_for "pid = $b_pid and wait_event_type = 'Lock'")"
note "session A (holds the lock): $a_pid, session B (waits): $b_pid; pg_stat_activity says $psa_type/$psa_event"
[ -n "$psa_type" ] || not_ok "pg_stat_activity shows B waiting for the lock (gave up after 5 s)"

"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --pid "$b_pid" --min 100ms \
	--json --count 1 --timeout 20s >"$E2E_DIR/watch.out" 2>"$E2E_DIR/watch.err" &
w_job=$!
watchers 1 || not_ok "the watch on B subscribed (gave up after 5 s)"
session_run a "select pg_sleep($hold);" "commit;" || not_ok "session A holds the lock and commits"
# B's clock readings (b.out's other lines: its pid, session_open's mark)
b_clock() { grep -E '^[0-9]+\.[0-9]+$' "$E2E_DIR/b.out"; }
# the second one: its UPDATE is over
b_done() { [ "$(b_clock | wc -l)" -ge 2 ]; }
WAIT_STEP=0.01 wait_for 10 b_done
b_over=$EPOCHREALTIME
wait "$w_job"
rc=$?
session_close a
session_close b
check "watch as a group member exits 0 after one event" [ "$rc" = 0 ] ||
	note "watch said: $(head -c 300 "$E2E_DIR/watch.err")"
check "watch printed exactly one JSON line" [ "$(wc -l <"$E2E_DIR/watch.out")" = 1 ]
ev=$(cat "$E2E_DIR/watch.out")
field() { jq -r "$1" <<<"$ev"; }

dur_s=$(field '.duration_ns / 1e9')
b_measured=$(b_clock | awk 'NR==1{t0=$1} NR==2{printf "%.6f", $1 - t0}')
# from before B was told to update until the test saw it done
b_outer=$(awk -v a="${b_sent/,/.}" -v b="${b_over/,/.}" 'BEGIN{printf "%.6f", b - a}')
note "pgoff: B waited ${dur_s}s; B's own clock around its UPDATE: ${b_measured}s; the test's around it: ${b_outer}s"
check "the event is B's" [ "$(field .pid)" = "$b_pid" ]
# B waited before A's hold began and was woken by A's commit after it:
# at least the hold, at most the time the test saw B's UPDATE take. B's
# own clock is the exact reference (next check); this only bounds it.
check "duration within the ${hold} s hold and the time the test saw B's UPDATE take" \
	between "$dur_s" "$hold" "$b_outer"
check "duration within 50 ms of B's own measurement" \
	between "$(awk -v a="$dur_s" -v b="$b_measured" 'BEGIN{print a - b}')" -0.05 0.05
check "wait type is lock" [ "$(field .wait)" = lock ]
check "PG wait event matches pg_stat_activity ($psa_type/$psa_event)" \
	[ "$(field '.pg.wait_event_type + "/" + .pg.wait_event')" = "$psa_type/$psa_event" ]
check "PG wait event is Lock/transactionid" \
	[ "$(field '.pg.wait_event_type + "/" + .pg.wait_event')" = Lock/transactionid ]
check "backend type is client backend" [ "$(field .pg.backend_type)" = "client backend" ]
check "woken by session A ($a_pid), which committed" [ "$(field .waker.pid)" = "$a_pid" ]
check "the waker is told as a client backend" [ "$(field .waker.backend_type)" = "client backend" ]
# the event as a test: true when EXPR holds
ev_holds() { jqe "$1" <<<"$ev"; }
# PostgreSQL 15 sleeps on its latch in epoll_wait for a heavyweight lock.
# Now and then this VM's scheduler reports no switch back onto a CPU
# (test_runq): pgoffd closes the interval later, says why it has no stack,
# and counts it; that is checked instead.
if ev_holds '.stack_error // "" | startswith("not walked: the kernel reported no switch back")'; then
	note "B's switch back onto a CPU went unseen: $(field .stack_error)"
	check "... which status counts (switch_in_unseen >= 1)" [ "$(counter switch_in_unseen)" -ge 1 ]
else
	check "stack starts at the latch wait (epoll), no scheduler frames" \
		ev_holds '.stack[0] | test("epoll|ep_poll")'
	check "stack has no scheduler or BPF frames" \
		ev_holds '[.stack[] | select(test("^(__schedule|schedule|bpf_|__traceiter)"))] | length == 0'
fi
check "event has seq, RFC 3339 time, blocked and runqueue parts" \
	ev_holds '(.seq > 0) and (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z$")) and (.blocked_ns + .runq_ns == .duration_ns)'

# The outsider: refused with exit 3 and told which group to join.
as "$E2E_OUTSIDER" "$PGOFFCTL" --socket "$SOCK" status >/dev/null 2>"$E2E_DIR/out.err"
rc=$?
check "outsider gets exit code 3" [ "$rc" = 3 ]
check "outsider is told to join group $E2E_GROUP" grep -q "$E2E_GROUP" "$E2E_DIR/out.err"

# Loosen the file modes: the broker's own SO_PEERCRED check still refuses.
chmod 0755 "$(dirname "$SOCK")"
chmod 0666 "$SOCK"
as "$E2E_OUTSIDER" "$PGOFFCTL" --socket "$SOCK" watch --json --count 1 --timeout 5s \
	>"$E2E_DIR/out2.out" 2>"$E2E_DIR/out2.err"
rc=$?
check "outsider on a world-writable socket still gets exit code 3" [ "$rc" = 3 ]
check "... with a message naming group $E2E_GROUP" grep -q "group '$E2E_GROUP'" "$E2E_DIR/out2.err"
check "... and no event" [ ! -s "$E2E_DIR/out2.out" ]
check "the denial is logged with uid and pid" \
	grep -q "client uid $(id -u "$E2E_OUTSIDER") pid [0-9]*: denied" "$E2E_DIR/pgoffd.log"
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" status >/dev/null
check "the member still gets in" [ $? = 0 ]

# Runbook behaviour: usage errors, --timeout, pipes.
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --min 5 2>"$E2E_DIR/usage.err"
rc=$?
check "a duration without unit is a usage error (exit 2) naming the argument" \
	bash -c "[ $rc = 2 ] && grep -q -- '--min' '$E2E_DIR/usage.err'"
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --pid "$a_pid" --min 1s --count 1 \
	--timeout 1s >/dev/null 2>&1
check "--timeout before --count events exits 4" [ $? = 4 ]
( as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --min 100us --json 2>"$E2E_DIR/pipe.err" |
	head -n 1 >"$E2E_DIR/pipe.out" ) &
pipe_job=$!
sql -c "select pg_sleep(0.01)" -c "select pg_sleep(0.01)" >/dev/null
wait "$pipe_job"
# the first event may be any process's: an interval or a wait (episode)
note "watch | head -n 1 read: $(cut -c1-400 "$E2E_DIR/pipe.out")"
note "... and its stderr: $(head -c 600 "$E2E_DIR/pipe.err")"
pipe_quiet() {
	jqe '.type == "offcpu" or .type == "episode"' "$E2E_DIR/pipe.out" &&
		[ ! -s "$E2E_DIR/pipe.err" ]
}
check "watch | head -n 1 ends quietly" pipe_quiet
# into a file (fully buffered stdout): each event is written before watch
# waits for the next, not when a buffer fills
unwatch	# the pipe's watch, gone: not counted as the next one
member watch --pg-wait Timeout:PgSleep --min 1ms --json >"$E2E_DIR/live.json" 2>&1 &
live=$!
watchers 1
sql -c "select pg_sleep(0.02)" >/dev/null
wait_for 10 [ -s "$E2E_DIR/live.json" ]
check "events come with \"type\" first (watch --json passes them on unparsed)" \
	grep -q '^{"type":"episode",' "$E2E_DIR/live.json"
check "watch --json into a file: the one event is there while watch still waits" \
	bash -c "kill -0 $live && [ \"\$(jq -r .pg.wait_event '$E2E_DIR/live.json')\" = PgSleep ]"
kill "$live"; wait "$live" 2>/dev/null
PGOFF_SOCKET=$SOCK as "$E2E_MEMBER" "$PGOFFCTL" status >/dev/null
check "PGOFF_SOCKET names the socket" [ $? = 0 ]
