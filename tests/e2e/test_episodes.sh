#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Whole waits ("episode"s) against PostgreSQL's own clock: lock waits of
# several lengths against what log_lock_waits logs ("acquired ... after N
# ms"), and pg_sleep(x) against x. Tolerance: 5 % or 5 ms, the larger.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# a short deadlock_timeout: every wait is split by the deadlock check,
# and PostgreSQL logs how long each lock wait took
pg_start log_lock_waits=on deadlock_timeout=100ms autovacuum=off ||
	{ not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t (id int primary key, v int); insert into t select g, 0 from generate_series(1, 10) g"
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
# within MEASURED REFERENCE: |m - r| <= max(5 % of r, 5 ms)
within() {
	awk -v m="$1" -v r="$2" 'BEGIN { d = m - r; if (d < 0) d = -d;
		t = 0.05 * r; if (t < 5) t = 5; exit !(d <= t) }'
}
# pg_logged PID: PostgreSQL's log has PID's lock wait (ms in pgs)
pg_logged() {
	pgs=$(sed -n "s/.*process $1 acquired ShareLock on transaction [0-9]* after \([0-9.]*\) ms.*/\1/p" \
		"$E2E_DIR/pg/log" | tail -n1)
	[ -n "$pgs" ]
}

note "engineered | PostgreSQL (ms) | pgoff episode (ms) | error (ms) | intervals"
row=0
for len in 0.3 0.6 2; do
	row=$((row + 1))
	member watch --pg-wait Lock:transactionid --min 1ms --json --count 1 \
		--timeout 30s >"$E2E_DIR/ep$row.json" 2>"$E2E_DIR/ep$row.err" &
	w=$!
	watchers 1
	# A holds the row until told: B waits about len once it is seen waiting
	coproc A { psql -X -q -At; }
	a_job=$A_PID	# bash unsets A_PID once the coprocess is reaped
	echo "begin; update t set v = v + 1 where id = $row; select pg_backend_pid();" >&"${A[1]}"
	read -r -t 10 a_pid <&"${A[0]}"
	sql -c "update t set v = v + 1 where id = $row" &
	b=$!
	psa_wait_for "wait_event = 'transactionid'" >/dev/null
	sleep "$len"
	echo 'commit; \q' >&"${A[1]}"
	wait "$b" "$w" "$a_job"
	pid=$(jq .pid "$E2E_DIR/ep$row.json")
	ours=$(jq '.duration_ns / 1e6' "$E2E_DIR/ep$row.json")
	n=$(jq .intervals "$E2E_DIR/ep$row.json")
	pgs=
	wait_for 2.5 pg_logged "$pid"
	note "${len}s | ${pgs:-?} | $ours | $(awk -v a="$ours" -v b="${pgs:-0}" 'BEGIN{printf "%.3f", a - b}') | $n"
	check "lock wait ~${len}s: an episode of Lock/transactionid, wait lock" \
		jqe '.type == "episode" and .pg.wait_event == "transactionid" and .wait == "lock"' "$E2E_DIR/ep$row.json"
	check "lock wait ~${len}s: PostgreSQL logged it" [ -n "$pgs" ]
	check "lock wait ~${len}s: pgoff ${ours} ms vs PostgreSQL ${pgs:-?} ms, within 5 % or 5 ms" \
		within "$ours" "${pgs:-0}"
	# split by the deadlock check (deadlock_timeout 100 ms: the wait
	# starts its timer before it first sleeps, and on a loaded machine a
	# shorter one could fire before that sleep) unless the wakeup at
	# 100 ms waited for a CPU until the lock was free: then it never
	# slept again, and that wait is run queue
	split() {
		[ "${n:-0}" -ge 2 ] ||
			jqe '.runq_ns >= .duration_ns - 110e6' "$E2E_DIR/ep$row.json"
	}
	check "lock wait ~${len}s: the deadlock check split it, the episode merged $n intervals (runq $(jq .runq_ns "$E2E_DIR/ep$row.json") ns)" \
		split
	check "lock wait ~${len}s: blocked + runq = duration - on cpu" \
		jqe '.blocked_ns + .runq_ns + .on_cpu_ns == .duration_ns' "$E2E_DIR/ep$row.json"
done

for x in 0.3 1.2; do
	member watch --pg-wait Timeout:PgSleep --min 1ms --json --count 1 --timeout 30s \
		>"$E2E_DIR/sleep.json" 2>"$E2E_DIR/sleep.err" &
	w=$!
	watchers 1
	sql -c "select pg_sleep($x)" >/dev/null
	wait "$w"
	ours=$(jq '.duration_ns / 1e6' "$E2E_DIR/sleep.json")
	note "pg_sleep($x): pgoff episode $ours ms, $(jq .intervals "$E2E_DIR/sleep.json") intervals; stderr: $(cat "$E2E_DIR/sleep.err")"
	check "pg_sleep($x): an episode of Timeout/PgSleep within 5 % or 5 ms of ${x}s (${ours} ms)" \
		within "$ours" "$(awk -v x="$x" 'BEGIN { print x * 1000 }')"
done

# Preempted between two sleeps of one wait: still one episode. B burns
# the CPU between three pg_sleep calls, by the clock: 20 ms, within the
# 100 ms bridge, or 300 ms, far longer, which ends the episode instead.
# B is SCHED_FIFO on rt_spinner's CPU, below the spinner: the spinner
# preempts it there (outside any PostgreSQL wait) every 1.3 ms, and no
# normal task, however busy the machine, delays it past the bridge. (A
# burn counted in iterations ran past the bridge on a busy machine, and
# a CPU hog beside B preempted it when EEVDF and autogroups chose.)
# The burn's expressions are planned, and the catalog pages that takes
# read, before the first sleep (i = 1 exits at once): a read there, under
# IO:DataFileRead, preempted, would end the episode as another wait.
# (With a query id computed, the loop's nested statements leave B's
# status entry alone; without, each would show pgoff a statement between
# two sleeps, and end the episode there: test_usdt_episodes.)
burn_between_sleeps() {	# MS: the DO block B runs
	echo "set compute_query_id = on;"
	echo "do \$\$ declare t0 timestamptz; begin for i in 1..3 loop
		t0 := clock_timestamp();
		loop exit when clock_timestamp() > t0 + interval '$1 ms' or i = 1; end loop;
		perform pg_sleep(0.05); end loop; end \$\$;"
}
cpu=$(($(nproc) - 1))
pin_rt() { taskset -pc "$cpu" "$1" >/dev/null && chrt -f -p 1 "$1"; }
RT_SPINNER=
trap 'kill $RT_SPINNER 2>/dev/null; e2e_cleanup' EXIT
rt_spinner "$cpu" 2
for burn in short long; do
	coproc B { psql -X -q -At; }
	b_job=$B_PID	# bash unsets B_PID once the coprocess is reaped
	echo "select pg_backend_pid();" >&"${B[1]}"
	read -r -t 10 b_pid <&"${B[0]}"
	check "$burn burn: B (${b_pid:-no pid}) is pinned to the spinner's CPU $cpu, SCHED_FIFO below it" \
		pin_rt "${b_pid:-0}"
	ms=20
	count=1
	[ "$burn" = long ] && ms=300 count=3
	member watch --pid "$b_pid" --pg-wait Timeout:PgSleep --min 1ms --json --count "$count" \
		--timeout 30s >"$E2E_DIR/pre-$burn.json" 2>&1 &
	w=$!
	member watch --pid "$b_pid" --type cpu --min 1us --json \
		>"$E2E_DIR/pre-$burn-cpu.json" 2>&1 &
	wc=$!
	watchers 2
	burn_between_sleeps "$ms" >&"${B[1]}"
	echo '\q' >&"${B[1]}"
	wait "$b_job" "$w"
	kill "$wc"; wait "$wc" 2>/dev/null
	first=$(head -n1 "$E2E_DIR/pre-$burn.json")
	note "$burn burn: $(grep -c . "$E2E_DIR/pre-$burn.json") episodes, the first $(jq -c '{intervals, duration_ns, runq_ns, on_cpu_ns}' <<<"$first"); B preempted $(grep -c . "$E2E_DIR/pre-$burn-cpu.json") times"
	# the preemptions that matter: after the first sleep, before the last
	check "$burn burn: B was preempted between its sleeps" \
		jqe -s --arg from "$(jq -r .start <<<"$first")" \
			--arg to "$(tail -n1 "$E2E_DIR/pre-$burn.json" | jq -r .time)" \
			'any(.[]; .wait == "cpu" and .start > $from and .time < $to)' \
		"$E2E_DIR/pre-$burn-cpu.json"
	# A preemption inside a sleep's wait (the few microseconds around
	# epoll_wait while the wait event is set) is an interval of that
	# wait: rare, and one more interval each. The ~15 preemptions of the
	# burn, between the waits, are none.
	if [ "$burn" = short ]; then
		check "short burn: the three sleeps are one episode of 3 intervals (up to 2 more: preempted inside a wait)" \
			jqe '.type == "episode" and .intervals >= 3 and .intervals <= 5 and .pg.wait_event == "PgSleep"' <<<"$first"
		check "short burn: the preempted time is in its runq_ns" \
			jqe '.runq_ns > 0 and .blocked_ns + .runq_ns + .on_cpu_ns == .duration_ns' <<<"$first"
	else
		check "long burn: each sleep is an episode of its own (3, none as long as a burn)" \
			jqe -s 'length == 3 and all(.[]; .intervals >= 1 and .intervals <= 3 and .duration_ns < 3e8)' \
			"$E2E_DIR/pre-$burn.json"
	fi
done
kill "$RT_SPINNER"; wait "$RT_SPINNER" 2>/dev/null; RT_SPINNER=

# The view decides what is streamed: intervals inside a PostgreSQL wait
# come only with --view intervals/both; episodes only with waits/both.
member watch --view both --pg-wait Timeout:PgSleep --min 100ms --json --count 2 --timeout 20s \
	>"$E2E_DIR/both.json" 2>&1 &
w=$!
watchers 1
sql -c "select pg_sleep(0.2)" >/dev/null
wait "$w"
check "--view both: the interval and its episode, in that order" \
	[ "$(jq -r .type "$E2E_DIR/both.json" | tr '\n' ' ')" = "offcpu episode " ]
