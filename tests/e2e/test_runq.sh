#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The part of each off-CPU interval a backend waited for a CPU (runq_ns)
# holds all of the kernel's own count of it (run_delay in
# /proc/PID/schedstat), with both hooks, and none of its sleep: pgoff
# times it from the wakeup, the kernel from when the wakee is queued, so
# pgoff's is at least the kernel's, and more by the wakeup path (on this
# VM about 10 us a wakeup, more while the host is busy). A backend
# sleeps 2 ms 400 times on one CPU that four CPU hogs share with it:
# pinned there, and niced, its wakeups must wait in that run queue
# (unpinned, the hogs could leave a CPU to it on a quiet machine).
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
hogs=()
trap 'kill "${hogs[@]}" 2>/dev/null; e2e_cleanup' EXIT

run_delay() { awk '{ print $2 }' "/proc/$1/schedstat"; }
sleeping() { [ "$(awk '{ print $3 }' "/proc/$1/stat")" = S ]; }
no_drop_notice() { ! grep -q '"type":"dropped"' "$1"; }
# the first CPU this shell may run on: the backend and the hogs share it
cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
pin() { taskset -cp "$cpu" "$1" >/dev/null; }

for hook in tp_btf raw_tp; do
	opts=(); [ "$hook" = raw_tp ] && opts=(--raw-tp)
	e2e_start_broker --min-floor 0 "${opts[@]}" || { not_ok "$hook: start pgoffd"; exit 1; }
	out=$E2E_DIR/runq-$hook
	# first sleep: time to subscribe and take the kernel's count; the
	# last one (3.01 s, not counted) is where the count is taken again
	psql -X -q -At -c "select pg_backend_pid()" -c "select pg_sleep(4.01)" \
		-c "do \$\$ begin for i in 1..400 loop perform pg_sleep(0.002); end loop; end \$\$" \
		-c "select pg_sleep(3.01)" >"$out.psql" 2>&1 &
	job=$!
	WAIT_STEP=0.01 wait_for 5 [ -s "$out.psql" ]
	pid=$(head -n1 "$out.psql")
	# the kernel's count is taken while the backend sleeps (state S: a
	# backend preempted on its way into the sleep still counts)
	psa_wait_for "pid = ${pid:-0} and query like '%4.01%' and wait_event = 'PgSleep'" >/dev/null
	wait_for 5 sleeping "$pid"
	r0=$(run_delay "$pid")
	# (its timeout outlasts the loop's 60 s and the last sleep's 10 s below)
	member watch --view intervals --pid "${pid:-1}" --min 0 --json --timeout 120s >"$out.json" 2>"$out.err" &
	watcher=$!
	watchers 1 || note "$hook: the watcher did not subscribe: $(head -c 300 "$out.err")"
	check "$hook: subscribed while the backend slept (its count unchanged)" \
		[ "$(run_delay "$pid")" = "$r0" ]
	# on the hogs' CPU, niced, the backend's wakeups preempt them
	# rarely: they wait
	check "$hook: the backend is pinned to CPU $cpu" pin "$pid"
	renice -n 5 -p "$pid" >/dev/null
	for _ in 1 2 3 4; do taskset -c "$cpu" bash -c 'while :; do :; done' & hogs+=($!); done
	# (the loop may take many seconds: niced, among four hogs, on a busy host)
	WAIT_STEP=0.05 wait_for 60 has_rows "select 1 from pg_stat_activity where pid = $pid
		and query like '%3.01%' and wait_event = 'PgSleep'" ||
		note "$hook: the backend did not reach its last sleep in 60 s"
	kill "${hogs[@]}"; wait "${hogs[@]}" 2>/dev/null; hogs=()
	wait_for 5 sleeping "$pid"
	r1=$(run_delay "$pid")
	# the 3.01 s sleep's interval comes after every one counted, and
	# is not
	wait_for 10 jqe -s 'any(.[]; .duration_ns > 3e9 and .duration_ns < 4e9)' "$out.json" ||
		note "$hook: no 3.01 s interval; the watch got $(jq -s 'length' "$out.json" 2>/dev/null) events," \
			"the longest $(jq -s -c 'map(.duration_ns // 0) | sort | .[-3:]' "$out.json" 2>/dev/null) ns;" \
			"its stderr: $(head -c 300 "$out.err"); psql: $(head -c 300 "$out.psql");" \
			"the watch $(kill -0 "$watcher" 2>/dev/null && echo runs || echo "had ended")," \
			"the backend's wait: $(sql -c "select state, wait_event, left(query, 60) from pg_stat_activity where pid = ${pid:-0}" 2>&1 | head -c 200)"
	kill "$watcher"; wait "$watcher" "$job" 2>/dev/null
	# the intervals before it (after it, psql leaves and the backend exits)
	jq -s '(map(select(.duration_ns > 3e9 and .duration_ns < 4e9)) | .[0].seq) as $upto |
		.[] | select(.type == "offcpu" and .seq < $upto)' "$out.json" >"$out.counted"
	sum=$(jq -s 'map(.runq_ns) | add // 0' "$out.counted")
	preempted=$(jq -s 'map(select(.blocked_ns == 0) | .runq_ns) | add // 0' "$out.counted")
	n=$(jq -s 'length' "$out.counted")
	woken=$(jq -s 'map(select(.blocked_ns > 0)) | length' "$out.counted")
	kernel=$((r1 - r0))
	note "$hook: $n intervals, $woken of them woken; runq_ns summed $sum ($preempted of it preempted), the kernel's run_delay grew $kernel"
	check "$hook: every interval of the backend came (no drop notice)" \
		no_drop_notice "$out.json"
	# on one CPU with four hogs, some wakeups must wait, or the bound
	# below says nothing
	check "$hook: the hogs made the backend wait in run queues (run_delay grew >= 200 us)" \
		[ "$kernel" -ge 200000 ]
	# the kernel's count, and more only by the wakeup paths: a sleep
	# counted as waiting for a CPU would be 2 ms a wakeup; 0.5 ms a
	# wakeup on average is far beyond any wakeup path seen here (up to
	# 50 us when quiet, single ones of some ms while the host is busy)
	check "$hook: runq_ns summed holds the kernel's run_delay (>= 99 % - 100 us)" \
		[ "$sum" -ge "$(( kernel * 99 / 100 - 100000 ))" ]
	check "$hook: ... and less than 0.5 ms a wakeup more ($(( (sum - kernel) / 1000 )) us over $woken wakeups)" \
		[ "$(( sum - kernel ))" -lt "$(( woken * 500000 ))" ]
	e2e_stop_broker TERM
done
