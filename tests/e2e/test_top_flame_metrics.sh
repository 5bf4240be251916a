#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# pgoffctl top, flame and metrics, as a DBA uses them, on a real row-lock
# wait: top --once --json while the wait goes on (the kernel's aggregation
# plus the part of the wait not over yet), the live screen under tmux, a
# flame graph recorded across the wait (folded and SVG), and the
# Prometheus text checked by promtool, before and after the waiter exits.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# promtool, from Debian's prometheus package, unpacked (not installed:
# that would start a Prometheus server); kept across runs.
promtool_path() {
	local cache=/var/cache/pgoff-tests deb
	if [ ! -x "$cache/usr/bin/promtool" ]; then
		mkdir -p "$cache" && (cd "$cache" &&
			{ apt-get download -qq prometheus >/dev/null 2>&1 ||
			  { apt-get update -qq && apt-get download -qq prometheus >/dev/null 2>&1; }; } &&
			deb=$(ls prometheus_*.deb | head -n1) &&
			dpkg-deb -x "$deb" "$cache" && rm -f "$deb") || return 1
	fi
	echo "$cache/usr/bin/promtool"
}

pg_start deadlock_timeout=10s || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

# A holds the row lock until the test commits it (psql reads a FIFO, so
# no timing is assumed); B waits for it.
mkfifo "$E2E_DIR/a.fifo"
sql <"$E2E_DIR/a.fifo" >"$E2E_DIR/a.out" &
a_job=$!
exec 3>"$E2E_DIR/a.fifo"
# (its pid is printed once the row is A's: B cannot take it first; psql
# may take seconds to start on a loaded machine)
echo "begin; update t set v = 1 where id = 1; select pg_backend_pid();" >&3
check "A holds the row lock (its psql printed its backend's pid)" wait_for 10 [ -s "$E2E_DIR/a.out" ]
sql -c "update t set v = 2 where id = 1" >/dev/null &
b_job=$!
IFS='|' read -r b_pid _ _ <<<"$(psa_wait_for "wait_event_type = 'Lock'")"
note "B ($b_pid) waits for the row lock"

member top --once --json --interval 1s >"$E2E_DIR/top.json" 2>"$E2E_DIR/top.err"
check "top --once --json exits 0 with one JSON line" \
	[ "$?" = 0 -a "$(wc -l <"$E2E_DIR/top.json")" = 1 ]
row=$(jq -c --argjson p "${b_pid:-0}" '.rows[] | select(.pid == $p)' "$E2E_DIR/top.json")
note "top's row for B: $row"
check "top shows the waiting backend B, a client backend" \
	jqe '.backend_type == "client backend"' <<<"$row"
check "B's top wait is the row lock (lock Lock:transactionid), though not over yet" \
	jqe '.top_wait == "lock Lock:transactionid"' <<<"$row"
check "B was off the CPU all the interval (share 0.9-1.05)" \
	jqe '.share >= 0.9 and .share <= 1.05 and .time_ns >= 900000000' <<<"$row"
check "the interval is the broker's, about 1 s" \
	jqe '.interval_ns >= 900000000 and .interval_ns <= 1500000000' "$E2E_DIR/top.json"

member top --once --json --interval 1s --by wait >"$E2E_DIR/top-wait.json"
check "top --by wait: Lock:transactionid has about one backend waiting (AAS 0.9-1.05)" \
	jqe '[.rows[] | select(.wait_event_type == "Lock" and .wait_event == "transactionid" and .wait == "lock")][0] | .share >= 0.9 and .share <= 1.05 and .backends == 1' \
	"$E2E_DIR/top-wait.json"
# idle time (waiting for work, or a client between statements) is not an
# active session's: left out of AAS and the rows, counted apart
check "top --by wait leaves out idle time: no Activity, postmaster or idle row, and says how much (aas_idle >= 3)" \
	jqe '(.rows | all(.wait_event_type != "Activity" and (.idle | not))) and .aas_idle >= 3 and
		.aas_active >= 0.9' "$E2E_DIR/top-wait.json" ||
	note "top --by wait: $(head -c 800 "$E2E_DIR/top-wait.json")"
member top --once --json --interval 1s --by wait --idle >"$E2E_DIR/top-idle.json"
# (the writers wake every 200 ms: the checkpointer may not have left the
# CPU since pgoffd started, and so not be seen yet)
check "top --by wait --idle: the writers' waits for work are rows of their own, idle" \
	jqe 'any(.rows[]; .wait_event == "BgWriterMain" and .idle) and
		any(.rows[]; .wait_event == "WalWriterMain" and .idle)' "$E2E_DIR/top-idle.json"
check "... and A, idle in its transaction, in ClientRead with its state" \
	jqe 'any(.rows[]; .wait_event == "ClientRead" and .idle and .state == "idle in transaction")' \
	"$E2E_DIR/top-idle.json" || note "top --idle: $(head -c 800 "$E2E_DIR/top-idle.json")"
member top --once --json --interval 1s --pid "$b_pid" >"$E2E_DIR/top-pid.json"
check "top --pid shows only that process" \
	jqe --argjson p "$b_pid" '(.rows | length) == 1 and .rows[0].pid == $p' "$E2E_DIR/top-pid.json"

# The live screen, as a DBA sees it in a terminal.
tmux kill-session -t pgofftop 2>/dev/null
tmux new-session -d -s pgofftop -x 160 -y 40 \
	"setpriv --reuid=$E2E_MEMBER --regid=$(id -g "$E2E_MEMBER") --init-groups -- $PGOFFCTL --socket $SOCK top --interval 500ms"
shows_b() {
	tmux capture-pane -p -t pgofftop >"$E2E_DIR/screen.txt" 2>/dev/null
	grep -qE "^ *$b_pid .*client backend.* lock Lock:transactionid" "$E2E_DIR/screen.txt"
}
screen_ok=false
wait_for 6 shows_b && screen_ok=true
sed 's/^/# screen: /' "$E2E_DIR/screen.txt" | head -8
check "top on a terminal (tmux) shows B's row with its lock wait" $screen_ok
check "the screen has the title and the column header" \
	grep -q 'PID .*DATABASE .*OFF% .*P99 .*TOP WAIT' "$E2E_DIR/screen.txt"
check "... and the totals: AAS active and idle, processes" \
	grep -qE '^AAS [0-9.]+ active, [0-9.]+ idle \(not shown: --idle\), [0-9]+ processes' "$E2E_DIR/screen.txt"
# keys: another grouping, another sort, the help, a pause
screen_has() {
	tmux capture-pane -p -t pgofftop >"$E2E_DIR/screen.txt" 2>/dev/null
	grep -qE "$1" "$E2E_DIR/screen.txt"
}
key_does() {	# KEY PATTERN WHAT
	tmux send-keys -t pgofftop "$1"
	check "top's key $1: $3" wait_for 5 screen_has "$2" ||
		sed 's/^/# screen: /' "$E2E_DIR/screen.txt" | head -6
}
key_does 2 'by wait .*- \? keys' "group by wait"
key_does s 'by wait, sorted by count' "sort by count"
key_does '?' 'keys \(any key goes back\)' "the keys, shown"
key_does x 'by wait, sorted by count' "any key goes back to the table"
key_does Space 'PAUSED' "pause"
key_does 4 'by query from the next interval' "group by statement: rows of another kind, from the next interval"
key_does Space 'by query, sorted by count .*- \? keys' "go on, by query"
tmux send-keys -t pgofftop q
no_session() { ! tmux has-session -t pgofftop 2>/dev/null; }
check "q quits top" wait_for 3 no_session
tmux kill-session -t pgofftop 2>/dev/null

# flame graphs recorded across the end of B's wait: A commits once both
# recorders are subscribed
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" flame --folded --pid "$b_pid" --min 100ms \
	--duration 4s >"$E2E_DIR/folded.txt" 2>"$E2E_DIR/folded.err" &
folded_job=$!
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" flame --min 100ms --duration 4s \
	--title "row lock" >"$E2E_DIR/flame.svg" 2>"$E2E_DIR/flame.err" &
svg_job=$!
watchers 2
echo "commit;" >&3
exec 3>&-
wait "$a_job" "$b_job"
wait "$folded_job"
check "flame --folded exits 0" [ "$?" = 0 ]
sed 's/^/# folded: /' "$E2E_DIR/folded.txt" | cut -c1-200 | head -3
lock_line=$(grep '^Lock:transactionid;wait: lock;' "$E2E_DIR/folded.txt" | head -n1)
check "folded: the lock wait is rooted at Lock:transactionid, then 'wait: lock'" [ -n "$lock_line" ]
check "folded: its stack goes outermost first, to the latch's epoll wait" \
	bash -c "grep -qE ';(entry_SYSCALL_64[a-z_]*|do_syscall_64);.*(do_epoll_wait|ep_poll)' <<<'$lock_line'"
folded_s=$(awk -v us="${lock_line##* }" 'BEGIN { printf "%.6f", us / 1e6 }')
check "folded: weighted by off-CPU time (B waited ${folded_s} s, at least 2)" \
	between "$folded_s" 2 600
check "folded: only B's waits (--pid): one lock line" \
	[ "$(grep -c '^Lock:' "$E2E_DIR/folded.txt")" = 1 ]
wait "$svg_job"
check "flame (SVG) exits 0" [ "$?" = 0 ]
check "the SVG is well-formed XML (xmllint)" xmllint --noout "$E2E_DIR/flame.svg"
check "the SVG has the title and the lock wait's frame with its time on hover" \
	bash -c "grep -q '>row lock<' '$E2E_DIR/flame.svg' &&
		grep -qE '<title>Lock:transactionid \([0-9.]+ s' '$E2E_DIR/flame.svg'"
check "the SVG leaves out idle time (no Activity wait: the writers waiting for work) and says so" \
	bash -c "! grep -q '<title>Activity:' '$E2E_DIR/flame.svg' &&
		grep -q 'idle intervals .* are left out' '$E2E_DIR/flame.err'" ||
	note "flame said: $(head -c 300 "$E2E_DIR/flame.err")"
note "SVG: $(wc -c <"$E2E_DIR/flame.svg") bytes; $(grep -c '<g' "$E2E_DIR/flame.svg") frames"
PROMTOOL=$(promtool_path)
member metrics >"$E2E_DIR/metrics.txt" 2>"$E2E_DIR/metrics.err"
check "metrics exits 0" [ "$?" = 0 ]
if [ -n "$PROMTOOL" ]; then
	"$PROMTOOL" check metrics <"$E2E_DIR/metrics.txt" >"$E2E_DIR/promtool.out" 2>&1
	rc=$?
	sed 's/^/# promtool: /' "$E2E_DIR/promtool.out" | head -5
	check "promtool check metrics accepts the output" [ "$rc" = 0 ]
else
	not_ok "promtool from Debian's prometheus package (apt-get download failed)"
fi
lock_series() {
	grep '^pgoff_offcpu_seconds_total{' "$1" |
		grep 'backend_type="client backend"' |
		grep 'wait_event_type="Lock",wait_event="transactionid",wait="lock"' |
		awk '{ s += $NF } END { printf "%.3f", s }'
}
before=$(lock_series "$E2E_DIR/metrics.txt")
note "lock seconds of client backends: $before"
check "metrics count B's lock wait as the flame graph does (${folded_s} s), within 50 ms" \
	between "$(awk -v a="$before" -v b="$folded_s" 'BEGIN { print a - b }')" -0.05 0.05
check "metrics has the cluster's data directory as a label" \
	grep -q "cluster=\"$PGDATA_DIR\"" "$E2E_DIR/metrics.txt"
check "metrics has the loss counters and gauges" \
	bash -c "grep -q '^pgoff_lost_events_total{cause=\"ringbuf_full\"} ' '$E2E_DIR/metrics.txt' &&
		grep -q '^pgoff_traced_processes [0-9]' '$E2E_DIR/metrics.txt'"
check "no per-pid labels by default" bash -c "! grep -q 'pid=' '$E2E_DIR/metrics.txt'"

# B's session is over: its process exits; its time must stay counted.
wait_for 5 gone "$b_pid"
# pgoffd folds exited processes once a second: until B's pid is no
# longer a label
b_folded() {
	member metrics --per-pid >"$E2E_DIR/metrics3.txt" &&
		grep -q 'pid="[0-9]*"' "$E2E_DIR/metrics3.txt" &&
		! grep -q "pid=\"$b_pid\"" "$E2E_DIR/metrics3.txt"
}
wait_for 10 b_folded
member metrics >"$E2E_DIR/metrics2.txt"
after=$(lock_series "$E2E_DIR/metrics2.txt")
note "after B exited: $after"
check "after the waiter exited its lock time is still counted, the same" \
	between "$(awk -v a="$after" -v b="$before" 'BEGIN { print a - b }')" -0.001 0.001
check "metrics --per-pid labels series with pids" grep -q 'pid="[0-9]*"' "$E2E_DIR/metrics3.txt"
check "... and B, gone, has none: its rows were folded into the labels" \
	bash -c "! grep -q 'pid=\"$b_pid\"' '$E2E_DIR/metrics3.txt'"

member top --by nonsense 2>"$E2E_DIR/bad.err"
rc=$?
check "top --by nonsense: exit 2 naming the value" \
	bash -c "[ $rc = 2 ] && grep -q nonsense '$E2E_DIR/bad.err'" ||
	note "exit $rc: $(head -c 200 "$E2E_DIR/bad.err" | tr "\n" " ")"
member top --interval 1ms 2>"$E2E_DIR/bad.err"
check "top --interval 1ms: exit 2" [ "$?" = 2 ]
as "$E2E_OUTSIDER" "$PGOFFCTL" --socket "$SOCK" metrics >/dev/null 2>&1
check "metrics as a user outside the group: exit 3" [ "$?" = 3 ]
