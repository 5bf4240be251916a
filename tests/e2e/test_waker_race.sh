#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A wakeup that comes while the waiting backend is still inside its own
# switch-out (off its runqueue, its interval not yet started) belongs to
# the interval that starts then: it is recorded with its waker, and the
# interval is all waiting for a CPU (runq_ns), not blocked without a
# waker. Under pgbench's contention on 2 CPUs this race comes hundreds of
# times in a few seconds.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off max_connections=50 || { not_ok "start PostgreSQL 15"; exit 1; }
"$PGBIN/pgbench" -i -q -s 2 >/dev/null 2>&1 || { not_ok "pgbench -i"; exit 1; }
e2e_start_broker --min-floor 0 || { not_ok "start pgoffd"; exit 1; }
out=$E2E_DIR/intervals.json
# (stopped once enough races came; its timeout outlasts the rounds)
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 0 --json --timeout 120s \
	>"$out" 2>"$E2E_DIR/watch.err" &
watcher=$!
watchers 1 || not_ok "the watcher subscribed"
# how often the race comes is the machine's (a faster CPU, a busier
# host): pgbench runs in rounds of 4 s until 10 of them were seen, for
# 60 s at most, so that the checks below are never vacuous
racing() { jq -c 'select(.type == "offcpu" and .blocked_ns == 0 and .kernel_wait != "cpu" and .waker != null) | 1' \
	"$out" 2>/dev/null | wc -l; }
tps=() t0=$SECONDS
while [ "$(racing)" -lt 10 ] && [ $((SECONDS - t0)) -lt 60 ]; do
	tps+=("$("$PGBIN/pgbench" -c 8 -j 2 -T 4 -n 2>/dev/null | awk '/^tps = /{ print $3 }')")
done
unwatch "$watcher"
# (whole lines: the watch was stopped while it wrote)
jq -R -c 'fromjson? // empty' "$out" >"$out.whole"
counts=$(jq -s -c '(map(select(.type == "dropped")) | map(.count // 0) | add // 0) as $dropped |
	map(select(.type == "offcpu")) | {
	intervals: length, dropped: $dropped,
	blocked: map(select(.blocked_ns > 0)) | length,
	blocked_no_waker: map(select(.blocked_ns > 0 and .waker == null)) | length,
	woken_in_switch_out: map(select(.blocked_ns == 0 and .kernel_wait != "cpu" and .waker != null)) | length,
	racing_longest: map(select(.blocked_ns == 0 and .kernel_wait != "cpu" and .waker != null) | .duration_ns) | (max // 0),
	runq_longest: map(select(.blocked_ns > 0 or .kernel_wait == "cpu") | .runq_ns) | (max // 0)}' "$out.whole")
note "pgbench rounds of 4 s: ${#tps[@]}, ${tps[*]} tps; $counts"
# (drops, counted above, only make fewer of them)
n=$(jq .woken_in_switch_out <<<"$counts")
check "wakeups during the switch-out are recorded with their waker (${n:-?} intervals, >= 10)" \
	[ "${n:-0}" -ge 10 ]
# a wakeup recorded for an interval it did not belong to (one that did
# not follow at once) would turn a whole wait into waiting for a CPU:
# these are run-queue waits, no longer than the run queue made the other
# intervals wait (the longest runq_ns of the woken and preempted ones,
# a few ms here; 50 ms at least, with half again for chance)
racing=$(jq .racing_longest <<<"$counts") runq=$(jq .runq_longest <<<"$counts")
bound=$(( ${runq:-0} * 3 / 2 > 50000000 ? ${runq:-0} * 3 / 2 : 50000000 ))
check "... each of them a run-queue wait (the longest $((${racing:-0} / 1000)) us, bound $((bound / 1000)) us)" \
	[ "${racing:-x}" -le "$bound" ]
