#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench, the flight recorder's part: what recording costs and holds.
# - BPF ns per sched_switch run, pgoffd with --record no vs yes (default
#   record-min 10ms, no subscriber), pgbench TPC-B -c 8, paired rounds
#   in alternating order (kernel.bpf_stats_enabled);
# - the store's growth under that TPC-B (events and per-second
#   aggregation): bytes per stored event, bytes per second, and how many
#   days of it 1 GiB holds (record-max-size is shared half and half, so
#   the half that fills first decides);
# - pgoffd's CPU (utime + stime) while recording every event (record-min
#   0) of short sleeps at about 7,000 events/s, with --record no, at the
#   default record-min, and not recording with one member watching them;
# - the time top --since 1h and flame --since 1h take, on a store made to
#   span an hour by repeating the TPC-B run's records (stretch_store.c);
# - record-queries off vs redacted vs full under TPC-B, at record-min 10ms
#   and 0 (QUERIES_MIN), and record-user-stacks no vs yes: pgoffd's CPU,
#   BPF ns per switch, bytes per stored event, rounds in rotating order.
# usage: tests/bench/recorder.sh [RESULTS_FILE]  (ROUNDS=3 SECONDS_PER_RUN=20
#   PARTS="tpcb query cpu sql ustack": which of them; query reads tpcb's
#   store)
# Runs under the e2e lock (it starts PostgreSQL and pgoffd).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/bench/results-recorder.md}
rounds=${ROUNDS:-3} secs=${SECONDS_PER_RUN:-20}
parts=" ${PARTS:-tpcb query cpu sql ustack} " queries_min=${QUERIES_MIN:-10ms 0}
part() { [[ $parts == *" $1 "* ]]; }
cd "$top" || exit 2
. tests/e2e/lib.sh
e2e_require
e2e_setup
pg_start autovacuum=off max_connections=50 >/dev/null || { echo "bench: PostgreSQL did not start" >&2; exit 1; }
"$PGBIN/pgbench" -i -q -s 10 >/dev/null 2>&1 || { echo "bench: pgbench -i failed" >&2; exit 1; }
sysctl -qw kernel.bpf_stats_enabled=1
# e2e_cleanup stops PostgreSQL and pgoffd: a PostgreSQL left running
# would hold the e2e lock (its fd) for everyone
trap 'sysctl -qw kernel.bpf_stats_enabled=0; e2e_cleanup' EXIT
raw=$E2E_DIR/raw.txt; : >"$raw"

# "name run_time_ns run_cnt" of the scheduler programs
stats() { bpftool prog show --json | jq -r '.[] | select(.name | test("^sched_")) |
	"\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$E2E_BROKER_PID/stat"; }
hist() { member history --json; }

# 1. BPF cost and the store's growth under TPC-B
part tpcb && for r in $(seq "$rounds"); do
	order=(no yes); [ $((r % 2)) = 0 ] && order=(yes no)
	for rec in "${order[@]}"; do
		rm -rf "$E2E_DIR/state"
		e2e_start_broker --record "$rec" >/dev/null || exit 1
		sleep 1
		[ "$rec" = yes ] && h0=$(hist)
		s0=$(stats); t0=$(date +%s.%N)
		tps=$("$PGBIN/pgbench" -c 8 -j 2 -T "$secs" -n 2>/dev/null | awk '/^tps = /{print $3; exit}')
		t1=$(date +%s.%N); s1=$(stats)
		dt=$(echo "$t1 - $t0" | bc)
		ns=$(join <(sort <<<"$s0") <(sort <<<"$s1") |
			awk '$1 ~ /switch/ { dn += $4 - $2; dc += $5 - $3 } END { if (dc) printf "%.1f", dn / dc }')
		line="tpcb $r $rec ${tps:-?} ${ns:-?} $dt"
		if [ "$rec" = yes ]; then
			sleep 1.2	# the last second stored
			h1=$(hist)
			line+=" $(jq -rn --argjson a "$h0" --argjson b "$h1" '[$b.records - $a.records, $b.bytes - $a.bytes,
				$b.aggregation.seconds - $a.aggregation.seconds, $b.aggregation.bytes - $a.aggregation.bytes] | map(tostring) | join(" ")')"
			line=${line//\"/}
		fi
		echo "$line" >>"$raw"
		echo "bench: recorder tpcb round $r record=$rec: $tps tps, $ns ns/switch" >&2
		e2e_stop_broker TERM
	done
done

# 3. top/flame --since 1h on the last TPC-B run's store, stretched to 1 h
if part query; then
for ext in .agg .seg; do
	"$top/build/bench/stretch_store" "$E2E_DIR/state" $ext 3600 >"$E2E_DIR/stretch$ext" ||
		{ echo "bench: stretch_store $ext failed" >&2; exit 1; }
done
e2e_start_broker >/dev/null || exit 1
h=$(hist)
# pgoffd must read back every event stretched: a query over a store it
# cut would be timed on nothing
stretched=$(awk '{ print $1 }' "$E2E_DIR/stretch.seg")
[ "$(jq .records <<<"$h")" -ge "$stretched" ] ||
	{ echo "bench: pgoffd reads $(jq .records <<<"$h") of the $stretched events stretched" >&2; exit 1; }
timeit() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
top_s=$(for _ in 1 2 3; do timeit member top --since 1h --json; done | sort -n | sed -n 2p)
top_rows=$(member top --since 1h --json 2>/dev/null | jq '.seconds')
flame_s=$(for _ in 1 2 3; do timeit member flame --since 1h --folded; done | sort -n | sed -n 2p)
flame_n=$(member flame --since 1h 2>/dev/null | grep -o '[0-9]* off-CPU intervals' | head -1)
echo "query $top_s $flame_s ${top_rows:-?} $(jq -c '[.records, .bytes, .aggregation.seconds, .aggregation.bytes]' <<<"$h") ${flame_n%% *}" >>"$raw"
# status answered while an hour of the past is summed (three times)
for _ in 1 2 3; do
	echo "pastlat $(as "$E2E_MEMBER" /usr/bin/python3 - "$SOCK" 3600 <tests/bench/past_latency.py)" >>"$raw"
done
e2e_stop_broker TERM
fi

# 2. pgoffd's CPU recording every event of short sleeps (about 7,000/s)
#    watch: not recording, one member watching every interval
part cpu && for rec in yes no default watch; do
	rm -rf "$E2E_DIR/state"
	case $rec in
	default) e2e_start_broker >/dev/null || exit 1 ;;
	watch) e2e_start_broker --record no >/dev/null || exit 1 ;;
	*) e2e_start_broker --record "$rec" --record-min 0 >/dev/null || exit 1 ;;
	esac
	watcher=
	if [ "$rec" = watch ]; then
		member watch --json --view intervals --min 100us >"$E2E_DIR/watch.out" 2>/dev/null & watcher=$!
		watchers 1 || exit 1
	fi
	load=(); for _ in $(seq 8); do ( while :; do psql -X -q -c "select pg_sleep(0.0002) from generate_series(1, 5000)" >/dev/null 2>&1; done ) & load+=($!); done
	sleep 2
	e0=$(member status --json | jq .counters.events); c0=$(ticks); t0=$(date +%s.%N)
	case $rec in yes|default) r0=$(hist | jq .records) ;; watch) r0=$(wc -l <"$E2E_DIR/watch.out") ;; esac
	sleep 10
	e1=$(member status --json | jq .counters.events); c1=$(ticks); t1=$(date +%s.%N)
	case $rec in yes|default) r1=$(hist | jq .records) ;; watch) r1=$(wc -l <"$E2E_DIR/watch.out") ;; esac
	kill "${load[@]}" $watcher 2>/dev/null; wait "${load[@]}" $watcher 2>/dev/null
	dt=$(echo "$t1 - $t0" | bc)
	echo "cpu $rec $(echo "($e1 - $e0) / $dt" | bc) $(echo "scale=2; ($c1 - $c0) * 100 / $(getconf CLK_TCK) / $dt" | bc) $( [ "$rec" != no ] && echo "($r1 - $r0) / $dt" | bc)" >>"$raw"
	e2e_stop_broker TERM
done

# 4, 5. pgoffd's options under TPC-B, no subscriber
# variants TAG MINS NAME=OPTIONS...: for each round and record-min of
# MINS, a pgbench run under pgoffd with each NAME's options (split at
# commas), in rotating order: TPS, BPF ns per switch, pgoffd's CPU, and
# the events stored with their bytes
variants() {
	local tag=$1 mins=$2; shift 2
	local all=("$@") n=$# r min i v o h0 h1 s0 s1 c0 c1 t0 t1 tps ns dt
	for r in $(seq "$rounds"); do
		for min in $mins; do
			for i in $(seq 0 $((n - 1))); do
				v=${all[$(( (i + r) % n ))]}; o=${v#*=}
				rm -rf "$E2E_DIR/state"
				# shellcheck disable=SC2086
				e2e_start_broker --record-min "$min" ${o//,/ } >/dev/null || exit 1
				sleep 1
				h0=$(hist); s0=$(stats); c0=$(ticks); t0=$(date +%s.%N)
				tps=$("$PGBIN/pgbench" -c 8 -j 2 -T "$secs" -n 2>/dev/null | awk '/^tps = /{print $3; exit}')
				t1=$(date +%s.%N); c1=$(ticks); s1=$(stats)
				sleep 1.2	# the last second stored
				h1=$(hist)
				dt=$(echo "$t1 - $t0" | bc)
				ns=$(join <(sort <<<"$s0") <(sort <<<"$s1") |
					awk '$1 ~ /switch/ { dn += $4 - $2; dc += $5 - $3 } END { if (dc) printf "%.1f", dn / dc }')
				echo "$tag $r $min ${v%%=*} ${tps:-?} ${ns:-?} $(echo "scale=3; ($c1 - $c0) * 100 / $(getconf CLK_TCK) / $dt" | bc) $(jq -rn --argjson a "$h0" --argjson b "$h1" '"\($b.records - $a.records) \($b.bytes - $a.bytes)"') $dt" >>"$raw"
				echo "bench: $tag round $r min $min ${v%%=*}: $tps tps, $ns ns/switch" >&2
				e2e_stop_broker TERM
			done
		done
	done
}
part sql && variants sql "$queries_min" off=--record-queries,off \
	redacted=--record-queries,redacted full=--record-queries,full
part ustack && variants ustack 10ms no=--record-user-stacks,no \
	yes=--record-user-stacks,yes

/usr/bin/python3 - "$raw" "$rounds" "$secs" >"$out" <<'PY'
import statistics as st, sys
raw, rounds, secs = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [l.split() for l in open(raw)]
tp = {"no": [], "yes": []}; ns = {"no": [], "yes": []}; grow = []
def med(v):
    return st.median(v) if v else float("nan")
pairs = {}
for r in rows:
    if r[0] == "tpcb":
        tp[r[2]].append(float(r[3])); ns[r[2]].append(float(r[4]))
        pairs.setdefault(r[1], {})[r[2]] = float(r[4])
        if r[2] == "yes" and len(r) >= 10:
            # records, event bytes, seconds, aggregation bytes, run time
            grow.append([float(x) for x in r[6:10]] + [float(r[5])])
d = [p["yes"] - p["no"] for p in pairs.values() if len(p) == 2]
print("# Flight recorder: cost and capacity\n")
if d:
    print("%s paired rounds of pgbench TPC-B (-c 8 -j 2, scale 10, %s s), pgoffd with"
          " --record no vs yes (record-min 10ms), no subscriber; 2 CPUs shared with"
          " other work: medians.\n" % (rounds, secs))
    print("| | record no | record yes | paired difference |\n|---|---|---|---|")
    print("| BPF ns per sched_switch run | %.0f | %.0f | %+.0f (min %+.0f, max %+.0f) |" %
          (st.median(ns["no"]), st.median(ns["yes"]), st.median(d), min(d), max(d)))
    print("| TPS | %.0f | %.0f | |" % (st.median(tp["no"]), st.median(tp["yes"])))
if grow:
    ev = [g[1] / g[0] for g in grow if g[0] > 0]
    evs = [g[1] / g[4] for g in grow]; aggs = [g[3] / g[4] for g in grow]
    recs = [g[0] / g[4] for g in grow]
    ev_day, agg_day = st.median(evs) * 86400, st.median(aggs) * 86400
    half = (1 << 30) / 2
    print("\nStore growth under that TPC-B (record yes runs):\n")
    print("| events stored/s | bytes/event | event bytes/s | aggregation bytes/s | total MB/day |"
          " days per GiB (shared freely) | days per GiB (half and half) |\n|---|---|---|---|---|---|---|")
    print("| %.1f | %s | %.0f | %.0f | %.1f | %.1f | %.1f |" % (
        st.median(recs), "%.0f" % st.median(ev) if ev else "-", st.median(evs),
        st.median(aggs), (ev_day + agg_day) / 1e6, (1 << 30) / (ev_day + agg_day),
        min(half / ev_day if ev_day else 1e9, half / agg_day if agg_day else 1e9)))
for r in rows:
    if r[0] == "query":
        print("\nQueries over an hour (the last run's store repeated to span 3600 s;"
              " [records, bytes, seconds, aggregation bytes] = %s):\n" % r[4])
        print("| top --since 1h | flame --since 1h | seconds summed | intervals drawn |\n|---|---|---|---|")
        print("| %.3f s | %.3f s | %s | %s |" % (float(r[1]), float(r[2]), r[3], r[5] if len(r) > 5 else "?"))
pl = [r for r in rows if r[0] == "pastlat"]
if pl:
    print("\nWhile that hour is summed for one connection (stats since 1 h), another"
          " asks status every 5 ms (tests/bench/past_latency.py), 3 runs:\n")
    print("| stats over 1 h took | status replies | median wait | longest wait |"
          " seconds summed |\n|---|---|---|---|---|")
    for r in pl:
        print("| %s ms | %s | %s ms | %s ms | %s |" % (r[1], r[4], r[2], r[3], r[5]))
cpu = [r for r in rows if r[0] == "cpu"]
if cpu:
    print("\npgoffd CPU (utime + stime, 10 s) under 8 sessions of pg_sleep(0.0002) loops,"
          " no subscriber: yes = record-min 0 (every event stored), default ="
          " record-min 10ms (the sleeps are shorter: only the per-second aggregation"
          " and the few longer waits are stored), watch = not recording, one"
          " member watching every interval (watch --json --view intervals --min 100us;"
          " its stored/s are"
          " the lines it received):\n")
    print("| record | kernel events/s | stored/s | pgoffd CPU % of one core |\n|---|---|---|---|")
    for r in cpu:
        print("| %s | %s | %s | %s |" % (r[1], r[2], r[4] if len(r) > 4 else "-", r[3]))
titles = {
    "sql": ("record-queries", "off", "record-queries off, redacted and full"),
    "ustack": ("record-user-stacks", "no", "record-user-stacks no and yes"),
}
for tag, (opt, base, what) in titles.items():
    vs = [r for r in rows if r[0] == tag]
    if not vs:
        continue
    print("\n%s under pgbench TPC-B (-c 8 -j 2, %s s), no subscriber, %s rounds in"
          " rotating order; medians, and the paired difference of pgoffd's CPU and"
          " of BPF ns per switch against %s in the same round and record-min:\n"
          % (what, secs, rounds, base))
    print("| record-min | %s | TPS | BPF ns/switch | ns vs %s (paired) | pgoffd CPU %% |"
          " CPU vs %s (paired) | stored/s | bytes/event |\n|---|---|---|---|---|---|---|---|---|"
          % (opt, base, base))
    b_cpu = {(r[1], r[2]): float(r[6]) for r in vs if r[3] == base}
    b_ns = {(r[1], r[2]): float(r[5]) for r in vs if r[3] == base}
    for m in dict.fromkeys(r[2] for r in vs):
        for name in dict.fromkeys(r[3] for r in vs):
            rs = [r for r in vs if r[2] == m and r[3] == name]
            if not rs:
                continue
            print("| %s | %s | %.0f | %.0f | %+.0f | %.2f | %+.2f | %.1f | %.0f |" % (
                m, name, med([float(r[4]) for r in rs]), med([float(r[5]) for r in rs]),
                med([float(r[5]) - b_ns[(r[1], m)] for r in rs if (r[1], m) in b_ns]),
                med([float(r[6]) for r in rs]),
                med([float(r[6]) - b_cpu[(r[1], m)] for r in rs if (r[1], m) in b_cpu]),
                med([float(r[7]) / float(r[9]) for r in rs]),
                med([float(r[8]) / float(r[7]) for r in rs if float(r[7]) > 0])))
PY
echo "bench: results in $out" >&2
cat "$out"
