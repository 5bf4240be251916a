#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench, PostgreSQL's wait probes next to pg_wait_sampling:
# - pgbench TPC-B TPS, paired rounds (order rotated each round), as the
#   ratio to the run without any tracer in the same round: pg_wait_sampling
#   loaded (shared_preload_libraries, its 10 ms sampling), pgoffd with the
#   probes (one watcher), and pgoffd with --usdt no; the ratio with / without
#   the probes; the load average before and after;
# - a known row-lock wait (the holder sleeps HOLD_MS, then commits), three
#   times: the waiter's own clock, pgoff's exact episode, and
#   pg_wait_sampling's estimate (its Lock samples x its period);
# - side by side, three times: SIDE_SECONDS (20) of TPC-B with 4 clients,
#   pg_wait_sampling (10 ms) and pgoffd watching the same backends; the
#   seconds of each wait event by each (pgoff's episodes, and of them the
#   time on a CPU between their off-CPU intervals).
# Every run restarts the cluster (pg_wait_sampling is loaded at start
# only), so that each starts with the same cold shared buffers.
# pg_wait_sampling is Debian's postgresql-15-pg-wait-sampling: installed
# here when missing, because only this bench uses it (not make deps: no
# build or test of pgoff needs it).
# usage: tests/bench/usdt.sh [RESULTS_FILE]  (ROUNDS=12 SECONDS_PER_RUN=10
#   HOLD_MS=1500). Runs under the e2e lock (it starts PostgreSQL and pgoffd).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/bench/results-usdt-sampling.md}
rounds=${ROUNDS:-12} secs=${SECONDS_PER_RUN:-10} hold_ms=${HOLD_MS:-1500}
side_secs=${SIDE_SECONDS:-20}
cd "$top" || exit 2
. tests/e2e/lib.sh
e2e_require
if [ ! -e /usr/lib/postgresql/15/lib/pg_wait_sampling.so ]; then
	echo "bench: installing postgresql-15-pg-wait-sampling (for this bench only)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15-pg-wait-sampling >/dev/null ||
		{ echo "bench: apt-get install postgresql-15-pg-wait-sampling failed" >&2; exit 2; }
fi
e2e_setup
pg_start autovacuum=off max_connections=50 >/dev/null || { echo "bench: PostgreSQL did not start" >&2; exit 1; }
"$PGBIN/pgbench" -i -q -s 10 >/dev/null 2>&1 || { echo "bench: pgbench -i failed" >&2; exit 1; }
trap 'e2e_cleanup' EXIT
raw=$E2E_DIR/raw.txt; : >"$raw"

# restart_pg [extra postgres options]: the cluster, restarted with them
restart_pg() {
	su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$PGDATA_DIR' -w -m fast -l '$E2E_DIR/pg/log' \
		-o '-p $PGPORT -c listen_addresses= -k $E2E_DIR/pg -c autovacuum=off -c max_connections=50 $*' restart" \
		>/dev/null 2>&1 || { echo "bench: PostgreSQL did not restart ($*)" >&2; tail -5 "$E2E_DIR/pg/log" >&2; exit 1; }
}
PWS_OPTS="-c shared_preload_libraries=pg_wait_sampling"
hits() { "$PGOFFCTL" --socket "$SOCK" status --json | jq '[.counters | to_entries[] |
	select(.key | startswith("usdt_")) | .value] | add'; }

start_config() {	# none | pws | probes | noprobes
	case $1 in
	pws) restart_pg "$PWS_OPTS" ;;
	*) restart_pg ;;
	esac
	case $1 in
	probes|noprobes)
		opts=(--record no); [ "$1" = noprobes ] && opts+=(--usdt no)
		e2e_start_broker "${opts[@]}" || exit 1
		member watch --view intervals --min 1ms --json >/dev/null 2>&1 &
		watchers 1 ;;
	esac
}
stop_config() {
	pkill -f "pgoffctl --socket $SOCK watch" 2>/dev/null
	e2e_stop_broker TERM
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
configs=(none pws probes noprobes)
for r in $(seq "$rounds"); do
	order=("${configs[@]:$((r % 4))}" "${configs[@]:0:$((r % 4))}")
	for c in "${order[@]}"; do
		start_config "$c"
		h0=0; [ "$c" = probes ] && h0=$(hits)
		tps=$("$PGBIN/pgbench" -c 8 -j 2 -T "$secs" 2>/dev/null | awk '/^tps = /{print $3; exit}')
		h1=0; [ "$c" = probes ] && h1=$(hits)
		[ -n "$tps" ] || { echo "bench: pgbench gave no TPS ($c)" >&2; exit 1; }
		echo "tps $r $c $tps $(( (h1 - h0) / secs ))" >>"$raw"
		stop_config
		echo "bench: round $r $c: $tps tps" >&2
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# the known lock wait, pg_wait_sampling and pgoffd both watching
restart_pg "$PWS_OPTS"
sql -c "create extension if not exists pg_wait_sampling" \
	-c "create table if not exists lk (id int primary key, v int)" \
	-c "insert into lk values (1, 0) on conflict do nothing"
period=$(sql -c "show pg_wait_sampling.profile_period" | tr -dc 0-9)
e2e_start_broker --record no || exit 1
for i in 1 2 3; do
	member watch --view waits --pg-wait Lock --json >"$E2E_DIR/lock$i.json" 2>&1 &
	wj=$!
	watchers 1
	sql -c "select pg_wait_sampling_reset_profile()" >/dev/null
	sql -c "begin" -c "update lk set v = v + 1 where id = 1" -c "select pg_sleep($hold_ms / 1000.0)" \
		-c "commit" >/dev/null &
	hj=$!
	holding() { [ "$(sql -c "select count(*) from pg_stat_activity where wait_event = 'PgSleep'")" = 1 ]; }
	wait_for 5 holding
	sql -c "select pg_backend_pid()" -c "select extract(epoch from clock_timestamp())" \
		-c "update lk set v = v + 1 where id = 1" -c "select extract(epoch from clock_timestamp())" \
		>"$E2E_DIR/waiter$i.out"
	wait "$hj"
	{ read -r wpid; read -r t0; read -r t1; } <"$E2E_DIR/waiter$i.out"
	episode() { jq -e --argjson p "$wpid" 'select(.type == "episode" and .pid == $p)' "$E2E_DIR/lock$i.json" >/dev/null; }
	wait_for 5 episode
	kill "$wj"; wait "$wj" 2>/dev/null
	# the profile is flushed to the view by the collector: wait for it
	samples() { n=$(sql -c "select coalesce(sum(count), 0) from pg_wait_sampling_profile
		where pid = $wpid and event_type = 'Lock'"); [ "$n" -gt 0 ]; }
	wait_for 5 samples
	ep=$(jq -r --argjson p "$wpid" 'select(.type == "episode" and .pid == $p) |
		"\(.boundary) \(.duration_ns / 1e6)"' "$E2E_DIR/lock$i.json" | head -1)
	echo "lock $i $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }') ${ep:-none -} $n $period" >>"$raw"
done
e2e_stop_broker TERM

# side by side over TPC-B: rings and queues that hold the whole run; the
# sampler on time
sampler_on_time || { echo "bench: pg_wait_sampling's collector not found" >&2; exit 1; }
e2e_start_broker --record no --min-floor 0 --ringbuf-size 67108864 \
	--queue-bytes 67108864 || exit 1
for i in 1 2 3; do
	member watch --view waits --min 0 --json --timeout 300s >"$E2E_DIR/side$i.json" 2>&1 &
	wj=$!
	watchers 1
	sql -c "select pg_wait_sampling_reset_profile()" >/dev/null
	"$PGBIN/pgbench" -c 4 -j 2 -T "$side_secs" -n >/dev/null 2>&1 &
	bj=$!
	bench_pids() {
		PIDS=$(sql -c "select string_agg(pid::text, ',') from pg_stat_activity
			where application_name = 'pgbench' having count(*) = 4")
		[ -n "$PIDS" ]
	}
	wait_for 15 bench_pids
	wait "$bj"
	sampled_sums "${PIDS:-0}" >"$E2E_DIR/side$i.sampled"
	# the backends are gone: their last episodes were sent as they exited
	ended() { episode_sums "$E2E_DIR/side$i.json" "${PIDS:-0}" | grep -q .; }
	wait_for 10 ended
	kill "$wj"; wait "$wj" 2>/dev/null
	episode_sums "$E2E_DIR/side$i.json" "${PIDS:-0}" >"$E2E_DIR/side$i.pgoff"
	for ev in Client:ClientRead IO:WALSync Lock:transactionid LWLock:WALWrite; do
		echo "side $i $ev $(sum_of "$E2E_DIR/side$i.sampled" "$ev") $(sum_of "$E2E_DIR/side$i.pgoff" "$ev") $(awk -v k="$ev" '$1 == k { print $3 }' "$E2E_DIR/side$i.pgoff")" >>"$raw"
	done
	echo "bench: side by side $i: $(grep "^side $i " "$raw" | cut -d' ' -f3- | tr '\n' ';')" >&2
done
e2e_stop_broker TERM

/usr/bin/python3 "$top/tests/bench/usdt_report.py" "$raw" "$rounds" "$secs" "$load0" "$load1" >"$out"
echo "bench: results in $out" >&2
cat "$out"
