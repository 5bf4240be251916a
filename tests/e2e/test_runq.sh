#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The part of each off-CPU interval a backend waited for a CPU (runq_ns)
# holds all of the kernel's own count of it (run_delay in
# /proc/PID/schedstat), with both hooks, and none of its sleep: pgoff
# times it from the wakeup, the kernel from when the wakee is queued, so
# pgoff's is at least the kernel's, and more by the wakeup path (on this
# VM about 10 us a wakeup, more while the host is busy). A backend
# sleeps 2 ms 200 times on one CPU that a SCHED_FIFO spinner shares with
# it (rt_spinner): pinned there, its wakeups wait in that run queue
# whenever they come during a spin. CPU hogs did not make that certain:
# unpinned they could leave a CPU to it, and pinned, nice was moot (the
# backend, started by pg_ctl, has an autogroup of its own) and EEVDF let
# a waking backend preempt them at once.
#
# The kernel's count is compared over a round that the tracepoints saw
# whole: as many switches to the backend as the kernel counted (pcount,
# /proc/PID/schedstat). On this VM the scheduler emits no sched_switch
# when it leaves its agent's threads (tokio-rt-worker, pid 1): a backend
# that ran next is back on the CPU unseen, by pgoff or perf alike, and
# the kernel's count holds a wait no tracer saw (in about a third of
# rounds twice as long as these). pgoff closes such an interval at the
# backend's next switch-out, at the switch-in the scheduler stamped
# (sched_info.last_arrival): a round with one is checked like any other.
# Where the stamp cannot say, it ends at its wakeup, its run-queue part
# unknown (runq_unknown), or is lost (status: switch_in_lost): such a
# round is told and another one run, up to five.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
RT_SPINNER=
trap 'kill $RT_SPINNER 2>/dev/null; e2e_cleanup' EXIT

# run_delay and pcount (times it was switched to)
run_delay() { awk '{ print $2 }' "/proc/$1/schedstat"; }
pcount() { awk '{ print $3 }' "/proc/$1/schedstat"; }
sleeping() { [ "$(awk '{ print $3 }' "/proc/$1/stat")" = S ]; }
no_drop_notice() { ! grep -q '"type":"dropped"' "$1"; }
# the first CPU this shell may run on: the backend and the spinner share it
cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
pin() { taskset -cp "$cpu" "$1" >/dev/null; }
# rfc3339 TIME: EPOCHREALTIME as the events' "time" (UTC, microseconds)
rfc3339() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.%6NZ; }
# ended_after FILE TIME: an interval of FILE ended after TIME (rfc3339):
# pgoffd passes them on in order, so every one that ended before is there
ended_after() { jqe -s --arg t "$2" 'any(.[]; .time > $t)' "$1" 2>/dev/null; }
LOOP='do $$ begin for i in 1..200 loop perform pg_sleep(0.002); end loop; end $$;'

for hook in tp_btf raw_tp; do
	opts=(); [ "$hook" = raw_tp ] && opts=(--raw-tp)
	e2e_start_broker --min-floor 0 "${opts[@]}" || { not_ok "$hook: start pgoffd"; exit 1; }
	out=$E2E_DIR/runq-$hook
	session_open "b-$hook" || { not_ok "$hook: open a psql session"; exit 1; }
	pid=${SESSION_PID[b-$hook]}
	# the kernel's count is taken while the backend waits for its client
	# (state S: a backend preempted on its way into the wait still counts)
	wait_for 5 sleeping "$pid"
	r0=$(run_delay "$pid")
	# (its timeout outlasts five rounds on a busy host)
	member watch --view intervals --pid "${pid:-1}" --min 0 --json --timeout 120s >"$out.json" 2>"$out.err" &
	watcher=$!
	watchers 1 || note "$hook: the watcher did not subscribe: $(head -c 300 "$out.err")"
	check "$hook: subscribed while the backend waited for its client (its count unchanged)" \
		[ "$(run_delay "$pid")" = "$r0" ]
	# on the spinner's CPU, the backend's wakeups during a spin wait
	check "$hook: the backend is pinned to CPU $cpu" pin "$pid"
	rt_spinner "$cpu"
	for round in 1 2 3 4 5; do
		wait_for 5 sleeping "$pid"
		r0=$(run_delay "$pid") c0=$(pcount "$pid") t0=$EPOCHREALTIME
		# (the loop may take many seconds: 23 % of a CPU, on a busy host)
		session_run "b-$hook" "$LOOP" || note "$hook: round $round: the loop did not finish"
		wait_for 5 sleeping "$pid"
		r1=$(run_delay "$pid") c1=$(pcount "$pid") t1=$EPOCHREALTIME
		# an interval that ends after the round: the next statement ends
		# the backend's wait for its client
		session_run "b-$hook" "select 1;"
		wait_for 10 ended_after "$out.json" "$(rfc3339 "$t1")" ||
			note "$hook: no interval after the round came; the watch got $(jq -s 'length' "$out.json" 2>/dev/null) events," \
				"its stderr: $(head -c 300 "$out.err"); the watch $(kill -0 "$watcher" 2>/dev/null && echo runs || echo "had ended")"
		# the intervals that ended in the round (the first one is the
		# wait for the client that the loop's statement ended)
		jq -s -c --arg from "$(rfc3339 "$t0")" --arg to "$(rfc3339 "$t1")" \
			'.[] | select(.type == "offcpu" and .time > $from and .time <= $to)' "$out.json" >"$out.counted"
		n=$(jq -s 'length' "$out.counted")
		unseen=$(jq -s 'map(select(.runq_unknown)) | length' "$out.counted")
		[ "$n" = $((c1 - c0)) ] && [ "$unseen" = 0 ] && break
		note "$hook: round $round: the kernel switched to the backend $((c1 - c0)) times, pgoff saw $n" \
			"($unseen of them ended at their wakeup: their switch-in unseen); a switch no tracer saw, another round"
	done
	note "$hook: intervals whose switch-in no tracer saw, all rounds: $(counter switch_in_unseen)" \
		"ended at the scheduler's stamp or their wakeup, $(counter switch_in_lost) lost"
	kill "$RT_SPINNER"; wait "$RT_SPINNER" 2>/dev/null; RT_SPINNER=
	kill "$watcher"; wait "$watcher" 2>/dev/null
	session_close "b-$hook"
	sum=$(jq -s 'map(.runq_ns) | add // 0' "$out.counted")
	preempted=$(jq -s 'map(select(.blocked_ns == 0) | .runq_ns) | add // 0' "$out.counted")
	woken=$(jq -s 'map(select(.blocked_ns > 0)) | length' "$out.counted")
	kernel=$((r1 - r0))
	note "$hook: round $round: $n intervals (the kernel switched to it $((c1 - c0)) times), $woken of them woken; runq_ns summed $sum ($preempted of it preempted), the kernel's run_delay grew $kernel"
	check "$hook: every interval of the backend came (no drop notice)" \
		no_drop_notice "$out.json"
	# on one CPU with the spinner, some wakeups must wait, or the bound
	# below says nothing
	check "$hook: the RT spinner made the backend wait in run queues (run_delay grew >= 200 us)" \
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
