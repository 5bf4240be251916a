#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench: pgoff's cost side by side with no tracer and with
# libbpf-tools' offcputime, in one session on this machine, and the
# broker's fan-out. Interleaved rounds, the order rotated each round;
# TPS as ratios to the no-tracer run of the same round (this machine is
# noisy: medians and spread are reported, never a single run); BPF time
# per program run from kernel.bpf_stats_enabled, which is far steadier.
# The floor in the same rounds: programs that do nothing on the same hooks
# (empty), programs that only look prev and next up in task-local
# storage, a hash or a slot array (lookups: what each structure costs),
# the least a program that reports PostgreSQL's wait event per switch must
# do (floor: a lookup, the clock, the three reads of the backend's memory
# pgoff makes; floor_noquery: without the debug_query_string read;
# floor_lookup: no read, only the lookups and the clock; floor.bpf.c), and
# pgoffd with one watcher while pgbench runs against a cluster it does
# not trace (untraced: a postgres binary that is not root's).
# PostgreSQL's wait probes: "one" runs with them (the default), "noprobes"
# is the same with --usdt no; pg_usdt's time per hit and hits per second
# come from bpf_stats like the scheduler hooks'.
# BASE_PGOFFD=/path/to/another/build/pgoffd adds base_idle, base_one and
# base_untraced, that broker in the same rounds: a change's effect is the
# ratio of paired rounds.
# usage: tests/bench/bench.sh [RESULTS_FILE]   (ROUNDS=5 SECONDS_PER_RUN=15;
#   WORKLOADS="select tpcb", CONFIGS="none empty lookups floor floor_noquery
#   floor_lookup untraced idle one noprobes sixteen ustack_pid ustack
#   offcputime" and FANOUT_CLIENTS="1 16 64" (empty: no fan-out) choose a
#   part, for more rounds of the figures that need them)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/bench/results.md}
rounds=${ROUNDS:-5} secs=${SECONDS_PER_RUN:-15}
PGBIN=/usr/lib/postgresql/15/bin

need() { command -v "$1" >/dev/null || { echo "bench: $1 is needed ($2)" >&2; exit 2; }; }
[ "$(id -u)" = 0 ] || { echo "bench: run as root (it loads BPF)" >&2; exit 2; }
need bpftool "apt-get install bpftool"
need jq "apt-get install jq"
[ -x "$PGBIN/pgbench" ] || { echo "bench: pgbench is needed (apt-get install postgresql-15)" >&2; exit 2; }
offcpu=$(command -v offcputime || echo /usr/sbin/offcputime)
[ -x "$offcpu" ] || { offcpu=; echo "bench: offcputime not installed (apt-get install libbpf-tools): its column is left out" >&2; }

# $work stays root's: pgoffd refuses a socket directory that anyone else
# could change (since the socket hardening), so PostgreSQL gets $work/pg
work=$(mktemp -d /tmp/pgoff-bench.XXXXXX); chmod 755 "$work"
cleanup() {
	pkill -f "pgoffctl --socket $work" 2>/dev/null; [ -n "${broker:-}" ] && kill "$broker" 2>/dev/null
	[ -n "$offcpu" ] && pkill -f "$offcpu 3600" 2>/dev/null
	su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $work/pg/data -m immediate stop" >/dev/null 2>&1
	[ -d "$work/pgu/data" ] && su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $work/pgu/data -m immediate stop" >/dev/null 2>&1
	[ -n "${tracer:-}" ] && kill "$tracer" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled=0; userdel pgoffbench 2>/dev/null; groupdel pgoffbench 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
getent group pgoffbench >/dev/null || groupadd --system pgoffbench
# pgoffd runs as a user of its own (never nobody)
id pgoffbench >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin -g pgoffbench pgoffbench
mkdir "$work/pg" && chown postgres "$work/pg"
su postgres -s /bin/sh -c "$PGBIN/initdb -D $work/pg/data -A trust -U postgres" >/dev/null 2>&1
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $work/pg/data -w -l $work/pg/log -o '-p 45500 -k $work/pg -c listen_addresses= -c shared_buffers=256MB' start" >/dev/null ||
	{ echo "bench: PostgreSQL did not start:" >&2; cat "$work/pg/log" >&2; exit 1; }
export PGHOST=$work/pg PGPORT=45500 PGUSER=postgres PGDATABASE=postgres
"$PGBIN/pgbench" -i -s 10 -q >/dev/null 2>&1
make -s -C "$top" all build/bench/empty.bpf.o build/bench/lookups.bpf.o build/bench/empty_load \
	build/bench/floor_load >/dev/null ||
	{ echo "bench: make failed" >&2; exit 1; }
PGOFFD=$top/build/pgoffd PGOFFCTL=$top/build/pgoffctl SOCK=$work/run/pgoffd.sock
[ -z "${BASE_PGOFFD:-}" ] || [ -x "$BASE_PGOFFD" ] || { echo "bench: BASE_PGOFFD=$BASE_PGOFFD is not executable" >&2; exit 2; }
configs=(none empty lookups floor floor_noquery floor_lookup untraced idle one noprobes sixteen ustack_pid ustack); [ -n "$offcpu" ] && configs+=(offcputime)
[ -n "${BASE_PGOFFD:-}" ] && configs+=(base_untraced base_idle base_one)
[ -n "${CONFIGS:-}" ] && read -r -a configs <<<"$CONFIGS"
for c in "${configs[@]}"; do
	case $c in
	base_*) [ -n "${BASE_PGOFFD:-}" ] || { echo "bench: $c needs BASE_PGOFFD" >&2; exit 2; } ;;
	offcputime) [ -n "$offcpu" ] || exit 2 ;;
	none|empty|lookups|floor|floor_noquery|floor_lookup|untraced|idle|one|noprobes|sixteen|ustack_pid|ustack) ;;
	*) echo "bench: unknown configuration $c" >&2; exit 2 ;;
	esac
done
# The untraced cluster: the same postgres, copied and owned by postgres,
# which pgoffd does not trust (so never traces); port 45501.
if [[ " ${configs[*]} " == *untraced* ]]; then
	# (it finds its libraries at ../lib, relative to itself)
	mkdir -p "$work/pgu/bin" && cp "$PGBIN/postgres" "$work/pgu/bin/postgres" && chown -R postgres "$work/pgu"
	ln -s "$PGBIN/../lib" "$work/pgu/lib"
	su postgres -s /bin/sh -c "$PGBIN/initdb -D $work/pgu/data -A trust -U postgres" >/dev/null 2>&1
	su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $work/pgu/data -p $work/pgu/bin/postgres -w -l $work/pgu/log -o '-p 45501 -k $work/pgu -c listen_addresses= -c shared_buffers=256MB' start" >/dev/null ||
		{ echo "bench: the untraced PostgreSQL did not start:" >&2; cat "$work/pgu/log" >&2; exit 1; }
	PGHOST=$work/pgu PGPORT=45501 "$PGBIN/pgbench" -i -s 10 -q >/dev/null 2>&1
	untraced_pm=$(head -1 "$work/pgu/data/postmaster.pid")
fi
sysctl -qw kernel.bpf_stats_enabled=1

# start_broker BINARY [options]: pgoffd in $broker, answering; if it does
# not come up the bench stops with its log (a bench that measures no
# pgoffd must not look like a cheap one)
start_broker() {
	local bin=$1; shift
	# a state directory of its own: never a record another pgoffd left
	"$bin" --socket "$SOCK" --group pgoffbench --user pgoffbench \
		--state-directory "$work/state" "$@" 2>>"$work/pgoffd.log" & broker=$!
	for _ in $(seq 100); do
		"$PGOFFCTL" --socket "$SOCK" status >/dev/null 2>&1 && return 0
		kill -0 "$broker" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench: $bin did not come up; its log:" >&2; cat "$work/pgoffd.log" >&2
	exit 1
}

# BPF programs: "name run_time_ns run_cnt" (ours end in _btf/_raw, cut at 15)
stats() { bpftool prog show --json | jq -r '.[] | select(.name | test("^(sched_|pg_usdt|on_cpu_tick)")) |
	"\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'; }
start_tracer() {	# CONFIG, see configs
	local bin=$PGOFFD mode=${1#base_}
	[ "$mode" != "$1" ] && bin=$BASE_PGOFFD
	case $mode in
	none) ;;
	offcputime) "$offcpu" 3600 >/dev/null 2>&1 & tracer=$!; sleep 2 ;;
	empty|lookups)	"$top/build/bench/empty_load" "$top/build/bench/$mode.bpf.o" & tracer=$!; sleep 1
		kill -0 "$tracer" || { echo "bench: empty_load failed" >&2; exit 1; } ;;
	floor*)	# the reads of the backend's memory each switch-out makes
		case $mode in floor) reads="all" ;; floor_noquery) reads="wait" ;; *) reads="none" ;; esac
		"$top/build/bench/floor_load" $reads "$(head -1 "$work/pg/data/postmaster.pid")" & tracer=$!
		tracer_checks=1; sleep 1
		kill -0 "$tracer" || { echo "bench: floor_load failed" >&2; exit 1; } ;;
	*)	opts=(); [ "$mode" = noprobes ] && opts=(--usdt no)
		start_broker "$bin" "${opts[@]}"
		n=0; [ "$mode" = one ] || [ "$mode" = noprobes ] || [ "$mode" = untraced ] || [ "$mode" = ustack_pid ] && n=1
		[ "$mode" = sixteen ] && n=16
		for _ in $(seq $n); do "$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 1ms --json >/dev/null 2>&1 & done
		# user stacks: walked for one process (the postmaster: the
		# backends pay the check only), or for every interval
		[ "$mode" = ustack_pid ] && "$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 1ms \
			--user-stack --pid "$(head -1 "$work/pg/data/postmaster.pid")" --json >/dev/null 2>&1 &
		[ "$mode" = ustack ] && "$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 1ms \
			--user-stack --json >/dev/null 2>&1 &
		sleep 1
		if [ "$mode" = untraced ] && "$PGOFFCTL" --socket "$SOCK" ps --json | jq -e --argjson p "$untraced_pm" \
			'any(.processes[]; .pid == $p)' >/dev/null; then
			echo "bench: pgoffd traces the untraced cluster (postmaster $untraced_pm)" >&2; exit 1
		fi ;;
	esac
}
stop_tracer() {
	if [ -n "${broker:-}" ] && ! kill -0 "$broker" 2>/dev/null; then
		echo "bench: pgoffd died during the run; its log:" >&2; cat "$work/pgoffd.log" >&2
		exit 1
	fi
	pkill -f "pgoffctl --socket $SOCK" 2>/dev/null
	[ -n "${broker:-}" ] && { kill "$broker"; wait "$broker"; } 2>/dev/null; broker=
	if [ -n "${tracer:-}" ]; then
		kill "$tracer" 2>/dev/null; wait "$tracer" 2>/dev/null; rc=$?
		# floor_load exits non-zero if its programs measured nothing
		[ "$rc" = 0 ] || [ -z "${tracer_checks:-}" ] ||
			{ echo "bench: floor_load failed (status $rc)" >&2; tracer=; exit 1; }
	fi
	tracer='' tracer_checks=''
	sleep 1	# the kernel frees programs a little after their fds close
}
raw=$work/raw.txt; : >"$raw"	# workload round config tps prog ns_per_run runs_per_s cpu_pct
[ -n "${FANOUT_ONLY:-}" ] && rounds=0	# for working on the fan-out part
for w in ${WORKLOADS:-select tpcb}; do
	[ "$rounds" = 0 ] && break
	flag=; [ $w = select ] && flag=-S
	for r in $(seq "$rounds"); do
		# rotate the order every round; "none" runs twice, first and in turn
		order=("${configs[@]:$((r % ${#configs[@]}))}" "${configs[@]:0:$((r % ${#configs[@]}))}")
		for c in "${order[@]}"; do
			start_tracer "$c"
			s0=$(stats); t0=$(date +%s.%N)
			db=(PGHOST="$work/pg" PGPORT=45500)
			[ "${c#base_}" = untraced ] && db=(PGHOST="$work/pgu" PGPORT=45501)
			tps=$(env "${db[@]}" "$PGBIN/pgbench" $flag -c 8 -j 2 -T "$secs" 2>/dev/null | awk '/^tps = /{print $3; exit}')
			t1=$(date +%s.%N); s1=$(stats)
			[ -n "$tps" ] || { echo "bench: pgbench gave no TPS ($w, $c)" >&2; exit 1; }
			echo "$w $r $c $tps - 0 0 0" >>"$raw"
			join <(sort <<<"$s0") <(sort <<<"$s1") | awk -v w=$w -v r=$r -v c=$c -v tps="$tps" \
				-v dt="$(echo "$t1 - $t0" | bc)" '{ dn = $4 - $2; dc = $5 - $3;
				if (dc > 0) printf "%s %s %s %s %s %.0f %.0f %.2f\n", w, r, c, tps, $1, dn / dc, dc / dt, dn / dt / 1e7 }' >>"$raw"
			stop_tracer
			echo "bench: $w round $r $c: $tps tps" >&2
		done
	done
done

# fan-out: N clients (one of them timing each event's arrival, the others
# pgoffctl into /dev/null, so that readers do not starve the broker on two
# CPUs); delivered = kernel events x N - client queue drops, from status
fanout=$work/fanout.txt; : >"$fanout"
start_broker "$PGOFFD" --max-clients 80 --max-clients-per-user 80
counter() { "$PGOFFCTL" --socket "$SOCK" status --json | jq ".counters.$1"; }
# "pid ticks" (user + system) of each watching client
clients_ticks() {
	for p in $(pgrep -f "pgoffctl --socket $SOCK watch"); do cat "/proc/$p/stat" 2>/dev/null; done |
		awk '{ print $1, $14 + $15 }' | sort
}
for n in ${FANOUT_CLIENTS-1 16 64}; do
	# 8 sessions of short sleeps: about 6000 events/s, so that 16
	# clients are offered 100,000 lines/s
	load=(); for _ in $(seq 8); do ( while :; do psql -X -q -c "select pg_sleep(0.0002) from generate_series(1, 5000)" >/dev/null 2>&1; done ) & load+=($!); done
	# latency counts from the measured window on: while N clients start
	# (exec, connect) on two CPUs, lines wait for a CPU, not for pgoffd
	# the clients live until killed after the window (with 64, starting
	# them and asking status under load takes seconds)
	"$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 100us --json 2>/dev/null |
		/usr/bin/python3 "$top/tests/bench/latency.py" 2 >"$work/lat.$n" &
	timer=$!
	for _ in $(seq $((n - 1))); do
		"$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 100us --json >/dev/null 2>&1 &
	done
	sleep 2
	e0=$(counter events); q0=$(counter client_queue_full)
	read -r u0 s0 <<<"$(awk '{print $14, $15}' /proc/$broker/stat)"; t0=$(date +%s.%N)
	c0=$(clients_ticks)
	sleep 6
	read -r u1 s1 <<<"$(awk '{print $14, $15}' /proc/$broker/stat)"; t1=$(date +%s.%N)
	c1=$(clients_ticks)
	e1=$(counter events); q1=$(counter client_queue_full)
	rss=$(awk '$1 == "VmRSS:" {print $2}' /proc/$broker/status)
	pkill -f "pgoffctl --socket $SOCK watch" 2>/dev/null
	wait "$timer"
	kill "${load[@]}" 2>/dev/null; wait "${load[@]}" 2>/dev/null
	dt=$(echo "$t1 - $t0" | bc)
	cpu=$(echo "scale=1; ($u1 + $s1 - $u0 - $s0) * 100 / $(getconf CLK_TCK) / $dt" | bc)
	# clients alive at both ends of the window (a client cut off for not
	# reading has exited)
	ccpu=$(join <(echo "$c0") <(echo "$c1") | awk -v hz="$(getconf CLK_TCK)" -v dt="$dt" \
		'{ t += $3 - $2 } END { printf "%.1f", t * 100 / hz / dt }')
	delivered=$(echo "(($e1 - $e0) * $n - ($q1 - $q0)) / $dt" | bc 2>/dev/null)
	read -r _ _ p50 p99 <"$work/lat.$n"
	# a status that did not answer (an overloaded broker) leaves a '?'
	kernel=$(echo "($e1 - $e0) / $dt" | bc 2>/dev/null)
	echo "$n ${kernel:-?} ${delivered:-?} ${cpu:-?} ${ccpu:-?} ${rss:-?} ${p50:-?} ${p99:-?} $(( ${q1:-0} - ${q0:-0} ))" >>"$fanout"
	sleep 1
done
kill "$broker"; wait "$broker" 2>/dev/null; broker=

/usr/bin/python3 "$top/tests/bench/report.py" "$raw" "$fanout" "$rounds" "$secs" >"$out"
echo "bench: results in $out" >&2
cat "$out"
