#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench, the full cost of a wait probe hit: the uprobe trap and
# pgoff's pg_usdt. trap_site runs a one-byte nop (the site of a USDT
# probe) in a loop, timed in ns per call, in paired rounds (order rotated
# each round) with
#   none     nothing attached;
#   empty    an empty uprobe program linked to the site (the trap alone);
#   pg_usdt  pgoff's pg_usdt linked as pgoffd links it (uprobe_multi, a
#            cookie): trap_site is not traced, so it returns after one
#            map lookup, as for PostgreSQL processes nobody traces.
# First, with bpf_stats on, a check that each program ran once per call
# (and pg_usdt's untraced time per run); the timed rounds run with
# bpf_stats off, as pgoffd does. pg_usdt's time for a traced backend
# comes from bpf_stats in the pgbench bench (USDT_RESULTS).
# usage: tests/bench/usdt_trap.sh [RESULTS_FILE]  (ROUNDS=12
#   ITERATIONS=200000 RUNS=5 USDT_RESULTS=tests/bench/results-usdt.md).
# Runs under the e2e lock (it loads BPF programs).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/bench/results-usdt-trap.md}
rounds=${ROUNDS:-12} iterations=${ITERATIONS:-200000} runs=${RUNS:-5}
usdt_results=${USDT_RESULTS:-tests/bench/results-usdt.md}
cd "$top" || exit 2
. tests/tap.sh
build=${PGOFF_BUILD:-build}
site=$build/bench/trap_site load=$build/bench/trap_load
empty_obj=$build/bench/trap_empty.bpf.o pgoff_obj=$build/offcpu.bpf.o
for f in "$site" "$load" "$empty_obj" "$pgoff_obj"; do
	[ -e "$f" ] || { echo "bench: $f not built (make bench builds it)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench: usdt_trap.sh needs root (it loads BPF programs)" >&2; exit 2; }

work=$(mktemp -d /tmp/pgoff-trap.XXXXXX)
stats0=$(sysctl -n kernel.bpf_stats_enabled)
loader=
stop_loader() {
	[ -n "$loader" ] || return 0
	kill -TERM "$loader" 2>/dev/null
	wait "$loader" 2>/dev/null
	loader=
}
cleanup() { stop_loader; sysctl -qw kernel.bpf_stats_enabled="$stats0"; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

offset=$("$site" --offset) || exit 1
attached() { grep -qx attached "$work/load.out" || ! kill -0 "$loader" 2>/dev/null; }
# start_loader none|empty|pg_usdt: that program linked to the site
start_loader() {
	case $1 in
	none) return 0 ;;
	empty) set -- "$empty_obj" trap_empty ;;
	pg_usdt) set -- "$pgoff_obj" pg_usdt ;;
	esac
	: >"$work/load.out"
	# cookie 0: PGOFF_USDT_LOCK_START, as pgoffd gives lock__wait__start
	"$load" "$1" "$2" "$site" "$offset" 0 >"$work/load.out" 2>"$work/load.err" &
	loader=$!
	wait_for 10 attached
	grep -qx attached "$work/load.out" ||
		{ echo "bench: $2 not attached:" >&2; cat "$work/load.err" >&2; exit 1; }
}
# prog_stats NAME: "run_cnt run_time_ns" of the loaded program NAME
prog_stats() {
	bpftool prog show name "$1" --json | jq -r '(if type == "array" then .[0] else . end) |
		"\(.run_cnt // 0) \(.run_time_ns // 0)"'
}

# Each program runs once per call, or the timings below mean nothing.
sysctl -qw kernel.bpf_stats_enabled=1
checks=$work/checks.txt; : >"$checks"
for c in empty pg_usdt; do
	start_loader "$c"
	name=$c; [ "$c" = empty ] && name=trap_empty
	"$site" "$iterations" 1 >/dev/null || exit 1
	read -r cnt ns < <(prog_stats "$name")
	stop_loader
	[ "$cnt" = "$iterations" ] ||
		{ echo "bench: $name ran $cnt times for $iterations calls of the site" >&2; exit 1; }
	echo "$c $cnt $ns" >>"$checks"
done
sysctl -qw kernel.bpf_stats_enabled=0

raw=$work/raw.txt; : >"$raw"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
configs=(none empty pg_usdt)
for r in $(seq "$rounds"); do
	order=("${configs[@]:$((r % 3))}" "${configs[@]:0:$((r % 3))}")
	for c in "${order[@]}"; do
		start_loader "$c"
		read -r min med < <("$site" "$iterations" "$runs") || exit 1
		stop_loader
		echo "$r $c $min $med" >>"$raw"
	done
	echo "bench: round $r: $(grep "^$r " "$raw" | cut -d' ' -f2,4 | tr '\n' ' ')" >&2
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 tests/bench/usdt_trap_report.py "$raw" "$checks" "$usdt_results" \
	"$rounds" "$iterations" "$runs" "$load0" "$load1" >"$out" || exit 1
echo "bench: wrote $out" >&2
