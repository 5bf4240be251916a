#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# pgoff beside PostgreSQL's own sampler: over 20 s of pgbench TPC-B with
# 4 clients, pgoff's episodes of the client backends, summed by wait
# event, against pg_wait_sampling's profile of the same backends (10 ms
# samples). Waits wholly off the CPU (a row lock, the WAL write lock:
# both bounded by PostgreSQL's probes) agree within 10 % or 0.3 s, plus
# the sampler's own counting error (3 standard deviations: a sum of n
# samples is off by sqrt(n) of them; 0.62 s of a 4.3 s WALWrite). A
# wait partly spent on the CPU (ClientRead's epoll_wait, WALSync's
# fdatasync) is less in pgoff, which sees only its off-CPU part, by that
# part (noted per event), but never more: an episode no longer spans
# the statements between two waits on one event (it read +20 to +43 %
# before). Then what a DBA reads first: `top --by wait`'s active
# sessions (idle time left out, as ASH does) over the same run, against
# the sampler's profile of the same backends without their idle wait
# (ClientRead: pgbench sends a statement only once it has the last one's
# answer, so the backend then is idle or idle in transaction), its top
# five events, each within 10 % (or 0.3 s) and the sampler's 3 sigma.
# top counts a wait's time on a CPU too (an I/O's system call), from
# pgoffd's own samples (on-cpu-sample, 10 ms): their 3 sigma is added.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start shared_preload_libraries=pg_wait_sampling autovacuum=off \
	pg_wait_sampling.profile_period=10 pg_wait_sampling.profile_pid=on ||
	{ not_ok "start PostgreSQL 15 with pg_wait_sampling (postgresql-15-pg-wait-sampling)"; exit 1; }
trap 'e2e_cleanup' EXIT
sql -c "create extension pg_wait_sampling" >/dev/null ||
	{ not_ok "create extension pg_wait_sampling"; exit 1; }
check "pg_wait_sampling's collector samples on time (real-time priority)" sampler_on_time ||
	note "collector: '$COLLECTOR'; backends: $(sql -c "select string_agg(backend_type, ', ') from pg_stat_activity")"
pgbench -i -s 2 -q >"$E2E_DIR/init.out" 2>&1 || { not_ok "pgbench -i"; exit 1; }
# rings and queues that hold the whole run: a loss would make a sum short
e2e_start_broker --min-floor 0 --ringbuf-size 67108864 --queue-bytes 67108864 ||
	{ not_ok "start pgoffd"; exit 1; }

out=$E2E_DIR/episodes.json
member watch --view waits --min 0 --json --timeout 300s >"$out" 2>"$E2E_DIR/watch.err" &
watcher=$!
watchers 1 || note "the watcher did not subscribe: $(head -c 300 "$E2E_DIR/watch.err")"
sql -c "select pg_wait_sampling_reset_profile()" >/dev/null
T0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
pgbench -c 4 -j 2 -T 20 -n -P 5 >"$E2E_DIR/pgbench.out" 2>&1 &
bench=$!
# pgbench's four backends, once connected
bench_pids() {
	PIDS=$(sql -c "select string_agg(pid::text, ',') from pg_stat_activity
		where application_name = 'pgbench' having count(*) = 4")
	[ -n "$PIDS" ]
}
wait_for 15 bench_pids || note "pgbench's 4 backends did not show: $PIDS"
wait "$bench"
T1=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
check "pgbench ran 20 s" grep -q '^tps = ' "$E2E_DIR/pgbench.out" ||
	note "pgbench: $(tail -c 400 "$E2E_DIR/pgbench.out")"
sampled_sums "${PIDS:-0}" >"$E2E_DIR/sampled"
# the backends are gone: their last episodes were sent when they exited
# (the first one found will do: no need to read the rest, 200,000 lines)
wait_for 10 jqe -n --arg p "$PIDS" '($p | split(",") | map(tonumber)) as $ps |
	first(inputs | select(.type == "episode" and (.pid as $x | $ps | index($x)))) | true' "$out"
unwatch "$watcher"
note "intervals whose switch back onto a CPU no tracepoint reported: $(counter switch_in_unseen)" \
	"closed from the scheduler's stamp or at their wakeup, $(counter switch_in_lost) lost"
episode_sums "$out" "$PIDS" >"$E2E_DIR/pgoff"
check "the watch lost nothing (no dropped notice)" \
	bash -c "! grep -q '\"type\":\"dropped\"' '$out'" ||
	note "$(grep '"dropped"' "$out" | head -c 300)"

note "event: pg_wait_sampling s / pgoff s (pgoff's episodes, of it on a CPU between intervals)"
for ev in Client:ClientRead Lock:transactionid IO:WALSync LWLock:WALWrite; do
	s=$(sum_of "$E2E_DIR/sampled" "$ev") p=$(sum_of "$E2E_DIR/pgoff" "$ev")
	note "$ev: $s / $p ($(awk -v k="$ev" '$1 == k { print $4 " episodes, " $3 " s" }' "$E2E_DIR/pgoff"))"
	# 10 % or 0.3 s, whichever is larger, and 3 sigma of the sampler's
	# count (n samples of 10 ms: sqrt(n) of them), which for a short
	# wait is the larger part (CI saw WALWrite at 0.90 of 4.32 s)
	tol=$(awk -v s="$s" 'BEGIN { t = s * 0.1; t = (t > 0.3 ? t : 0.3)
		printf "%.3f", t + 3 * sqrt(s / 0.010) * 0.010 }')
	[ "$ev" = Lock:transactionid ] ||
		check "$ev: pgoff is not above PostgreSQL's count ($p <= $s + $tol s)" \
			awk -v p="$p" -v s="$s" -v t="$tol" 'BEGIN { exit !(p <= s + t) }'
	case $ev in
	Lock:*)	# the probes bound the lock wait whole, the lock manager's
		# LWLock waits inside it too, which the sampler counts apart
		lm=$(sum_of "$E2E_DIR/sampled" LWLock:LockManager)
		check "$ev: pgoff agrees ($s - $tol <= $p <= $s + $lm LWLock:LockManager + $tol s)" \
			awk -v p="$p" -v s="$s" -v t="$tol" -v lm="$lm" \
			'BEGIN { exit !(p >= s - t && p <= s + lm + t) }' ;;
	LWLock:*)	# off the CPU whole, bounded by PostgreSQL's probes
		check "$ev: pgoff agrees ($p >= $s - $tol s)" \
			awk -v p="$p" -v s="$s" -v t="$tol" 'BEGIN { exit !(p >= s - t) }' ;;
	*)	# less by the wait's own time on a CPU (its system call)
		note "$ev: pgoff / PostgreSQL = $(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2f", s ? p / s : 0 }')"
		check "$ev: pgoff has most of it (>= 50 %: $p of $s s)" \
			awk -v p="$p" -v s="$s" 'BEGIN { exit !(s > 0 && p >= s * 0.5) }' ;;
	esac
done

# --- top --by wait, active sessions, against the sampler's active profile
pid_opts=()
for p in ${PIDS//,/ }; do pid_opts+=(--pid "$p"); done
# (the record's aggregation is stored once a second: the run's last one)
sleep 2
(member top --by wait --json --since "$T0" --until "$T1" --limit 1000 "${pid_opts[@]}") \
	>"$E2E_DIR/top.json" 2>"$E2E_DIR/top.err"
# "Type:Event seconds", summed over the kernel's wait types, and the idle
# rows a second top shows with --idle
top_sums() {
	jq -r '.rows[] | select(.wait_event_type != null and .wait_event_type != "") |
		"\(.wait_event_type):\(.wait_event) \(.time_ns)"' "$1" |
		awk '{ t[$1] += $2 } END { for (k in t) printf "%s %.3f\n", k, t[k] / 1e9 }'
}
top_sums "$E2E_DIR/top.json" >"$E2E_DIR/top"
(member top --by wait --json --idle --since "$T0" --until "$T1" --limit 1000 "${pid_opts[@]}") \
	>"$E2E_DIR/top-idle.json" 2>>"$E2E_DIR/top.err"
idle_cr=$(jq '[.rows[] | select(.idle and .wait_event == "ClientRead") | .time_ns] | add // 0 | . / 1e9' "$E2E_DIR/top-idle.json")
active_cr=$(sum_of "$E2E_DIR/top" Client:ClientRead)
note "top --by wait (active): $(sort -k2 -nr "$E2E_DIR/top" | head -n 8 | tr '\n' ';')"
note "... ClientRead: $active_cr s active, $idle_cr s idle (--idle); the sampler's ClientRead: $(sum_of "$E2E_DIR/sampled" Client:ClientRead) s"
check "top --by wait answered for the run ($(jq '.rows | length' "$E2E_DIR/top.json" 2>/dev/null) rows)" \
	jqe '.rows | length > 0' "$E2E_DIR/top.json" || note "top: $(head -c 300 "$E2E_DIR/top.err")"
check "top leaves the backends' ClientRead out as idle ($active_cr s active, $idle_cr s idle)" \
	awk -v a="$active_cr" -v i="$idle_cr" 'BEGIN { exit !(i > 1 && a <= i * 0.05) }'
grep -v '^Client:ClientRead ' "$E2E_DIR/sampled" | sort -k2 -nr | head -n 5 >"$E2E_DIR/sampled-top5"
note "the sampler's active top five: $(tr '\n' ';' <"$E2E_DIR/sampled-top5")"
# top's time on a CPU inside each wait (pgoffd's samples, 10 ms each)
jq -r '.rows[] | select(.wait == "on_cpu") |
	"\(.wait_event_type):\(.wait_event) \(.time_ns)"' "$E2E_DIR/top.json" |
	awk '{ t[$1] += $2 } END { for (k in t) printf "%s %.3f\n", k, t[k] / 1e9 }' \
	>"$E2E_DIR/top-on-cpu"
check "pgoffd samples every CPU for the wait of a running backend ($(status_field on_cpu_sample_cpus) of $(nproc), every $(status_field on_cpu_sample_us) us)" \
	[ "$(status_field on_cpu_sample_cpus)" = "$(nproc)" ] && [ "$(status_field on_cpu_sample_us)" = 10000 ]
check "... and found backends in a wait on a CPU ($(counter on_cpu_samples) samples)" \
	[ "$(counter on_cpu_samples)" -gt 0 ]
note "top's time on a CPU inside a wait (sampled): $(sort -k2 -nr "$E2E_DIR/top-on-cpu" | head -n 5 | tr '\n' ';')" \
	"samples: $(counter on_cpu_samples)"
while read -r ev s; do
	p=$(sum_of "$E2E_DIR/top" "$ev") c=$(sum_of "$E2E_DIR/top-on-cpu" "$ev")
	tol=$(awk -v s="$s" -v c="$c" 'BEGIN { t = s * 0.1; t = (t > 0.3 ? t : 0.3)
		printf "%.3f", t + 3 * sqrt(s / 0.010) * 0.010 + 3 * sqrt(c / 0.010) * 0.010 }')
	note "top --by wait, $ev: pgoff / PostgreSQL = $(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2f", s ? p / s : 0 }') ($c s of it on a CPU)"
	check "top --by wait, $ev: $p s of active sessions, PostgreSQL's sampler $s s (within $tol s)" \
		awk -v p="$p" -v s="$s" -v t="$tol" 'BEGIN { exit !(p >= s - t && p <= s + t) }'
done <"$E2E_DIR/sampled-top5"

e2e_stop_broker TERM
exit "$TAP_FAILED"
