#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Off-CPU profiles in pprof's format, as a fleet's Pyroscope or Parca
# keeps them, on a real row-lock wait (B waits 2 s for A's row lock) and
# a few sleeps, every file read by go tool pprof (Debian's golang-go):
# - flame --pprof FILE recording live across the wait: -raw has the
#   sample types off_cpu/nanoseconds then count/count, B's lock wait with
#   the labels wait_event_type, wait_event, wait, backend_type,
#   database, cluster, cluster_id, query_id, and pid and owner (numbers), period type and
#   duration; -top's heaviest frame is the leaf of B's kernel stack; the
#   kernel wait type and the wait event are frames at the root;
# - totals agree for one recorded window (flame --since T0 --until T1):
#   the pprof profile's off_cpu total is the sum of the window's
#   intervals' duration_ns (as watch --since replays them), to the
#   nanosecond; the folded stacks' total is the sum of their whole
#   microseconds; with --folded too, both come from one recording;
# - pgoff_exporter's /debug/pprof/profile?seconds=N behind basic auth:
#   401 without the password; with it, a gzipped profile go tool pprof
#   reads, whose lock samples for B hold exactly B's lock intervals; a
#   bad seconds is 400; the requests are counted in /metrics;
# - against a pgoffd whose replay never ends (stall_broker.py): two
#   requests wait, a third gets 503 with Retry-After at once, /metrics
#   is served meanwhile, the two get 503 at the 20 s replay deadline
#   (not cut at the 10 s header deadline);
# - --pprof refuses a FIFO (no hang) and a symlink to a FIFO, and
#   --diff.
# e2e-timeout: 180
. "$(dirname "$0")/lib.sh"
e2e_require
for tool in go curl /usr/bin/python3 gzip; do
	command -v "$tool" >/dev/null && continue
	why="$tool is needed (make deps)"
	if [ "${CI:-}" = true ]; then not_ok "$why"; exit 1; fi
	echo "# SKIP: $why"; exit 0
done
note "$(date +%T) start"
e2e_setup
EXPORTER=$E2E_DIR/prefix/bin/pgoff_exporter
EXPORTER_PID=
trap '[ -n "$EXPORTER_PID" ] && kill "$EXPORTER_PID" 2>/dev/null && wait "$EXPORTER_PID"; e2e_cleanup' EXIT
# go tool pprof wants a home and a cache it can write
export HOME=$E2E_DIR GOCACHE=$E2E_DIR/gocache PPROF_TMPDIR=$E2E_DIR
PROF=$E2E_DIR/prof
mkdir -p "$PROF" && chown "$E2E_MEMBER" "$PROF"

now_rfc3339() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
# raw FILE: go tool pprof -raw, its output kept in FILE.raw
raw() { go tool pprof -raw "$1" >"$1.raw" 2>"$1.err"; }
# raw_sum FILE.raw [AWK-CONDITION on the sample's labels]: the off_cpu
# nanoseconds of the samples whose label lines match
raw_sum() {
	awk -v want="${2:-}" '
		function flush() { if (have && (want == "" || labels ~ want)) t += v; have = 0 }
		/^Samples:/ { s = 1; next }
		/^Locations/ { flush(); s = 0 }
		s && $2 ~ /^[0-9]+:$/ { flush(); v = $1; have = 1; labels = ""; next }
		s && have { labels = labels " " $0 }
		END { flush(); printf "%.0f\n", t }' "$1"
}
# a bcrypt hash of $1, cost 10, with libxcrypt through Debian's python3
bcrypt_hash() {
	/usr/bin/python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$1"
}
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

pg_start deadlock_timeout=10s compute_query_id=on || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
# intervals of 1 ms or more are recorded, so that the record holds the
# waits the live recording sees
e2e_start_broker --record-min 1ms || { not_ok "start pgoffd"; exit 1; }

note "$(date +%T) set up"
# --- a live recording across a real row-lock wait ---------------------------
T0=$(now_rfc3339)
session_open a || { not_ok "session A"; exit 1; }
session_open b || { not_ok "session B"; exit 1; }
B_PID=${SESSION_PID[b]}
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" flame --duration 6s --min 1ms \
	--pprof "$PROF/live.pb.gz" >"$E2E_DIR/live.out" 2>"$E2E_DIR/live.err" &
live_job=$!
watchers 1
session_run a "begin; update t set v = 1 where id = 1;" || not_ok "A takes the row lock"
session_send b "update t set v = 2 where id = 1;"
session_run a "$(until_queued "$B_PID")" || not_ok "B waits for A's row lock"
sleep 2	# the wait's length: not a condition
session_run a "commit;" "select pg_sleep(0.05);" "select pg_sleep(0.05);" ||
	not_ok "A commits"
session_run b "select 1;" || not_ok "B's update ends"
started=$EPOCHREALTIME
wait "$live_job"
rc=$?
note "flame --pprof said: $(tr '\n' ' ' <"$E2E_DIR/live.err" | head -c 400)"
check "flame --duration 6s --pprof FILE exits 0, and writes nothing on stdout (exit $rc)" \
	[ $rc = 0 -a ! -s "$E2E_DIR/live.out" ]
check "the file is the member's, mode 0600, gzipped" \
	bash -c "[ \"\$(stat -c '%U %a' '$PROF/live.pb.gz')\" = '$E2E_MEMBER 600' ] && gzip -t '$PROF/live.pb.gz'"
note "live.pb.gz: $(stat -c %s "$PROF/live.pb.gz") bytes"
raw "$PROF/live.pb.gz"
check "go tool pprof -raw reads it" [ $? = 0 ] || sed 's/^/# /' "$PROF/live.pb.gz.err"
LR=$PROF/live.pb.gz.raw
check "sample types: off_cpu/nanoseconds (the default), then count/count" \
	grep -qE '^off_cpu/nanoseconds\[dflt\] +count/count$' "$LR"
check "period type off_cpu nanoseconds, and a duration of about 6 s" \
	bash -c "grep -qx 'PeriodType: off_cpu nanoseconds' '$LR' && grep -qE '^Duration: (5\.9|6\.0|6s)' '$LR'" ||
	grep -E '^(PeriodType|Duration)' "$LR" | cat -A | sed 's/^/# /'
note "$(date +%T) live part done"
b_lock=$(awk -v pid="pid:[$B_PID]" '/^Samples:/ { s = 1 } /^Locations/ { s = 0 }
	s && $2 ~ /^[0-9]+:$/ { cur = $0; next }
	s && /wait_event:\[transactionid\]/ { lab = $0; getline; if (index($0, pid)) { print cur; print lab; print $0 } }' "$LR")
note "B's lock sample: $(tr -s ' ' <<<"$b_lock" | head -c 600)"
check "B's lock wait is a sample labelled wait_event_type Lock, wait lock, client backend, database postgres, the cluster's data directory, a query id, and pid $B_PID" \
	bash -c "grep -q 'backend_type:\[client backend\] cluster:\[$PGDATA_DIR\] cluster_id:\[[0-9a-f]\{16\}\] database:\[postgres\] query_id:\[-\?[0-9]\+\] wait:\[lock\] wait_event:\[transactionid\] wait_event_type:\[Lock\]' <<<'$b_lock'"
b_lock_ns=$(awk -v pid="pid:[$B_PID]" '/^Samples:/ { s = 1 } /^Locations/ { s = 0 }
	s && $2 ~ /^[0-9]+:$/ { v = $1; next }
	s && /wait_event:\[transactionid\]/ { getline; if (index($0, pid)) t += v } END { printf "%.0f", t }' "$LR")
check "B's lock samples weigh about the 2 s it waited (${b_lock_ns} ns)" \
	between "${b_lock_ns:-0}" 1900000000 4000000000
lock_loc=$(sed -n 's/^ *\([0-9]*\): 0x0 M=[0-9]* Lock:transactionid :0.*/\1/p' "$LR")
kind_loc=$(sed -n 's/^ *\([0-9]*\): 0x0 M=[0-9]* wait: lock :0.*/\1/p' "$LR")
first=$(grep -A0 -E '^ +[0-9]+ +[0-9]+: ' <<<"$b_lock" | head -n1)
check "the wait event, then the kernel wait type, are the root frames of B's lock sample (locations $lock_loc, $kind_loc)" \
	bash -c "[ -n '$lock_loc' ] && [ -n '$kind_loc' ] && grep -qE ' $kind_loc $lock_loc \$' <<<'$first'"
go tool pprof -top "$PROF/live.pb.gz" >"$PROF/live.top" 2>&1
sed 's/^/# top: /' "$PROF/live.top" | head -14
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --since "$T0" --view intervals --min 1ms \
	--pid "$B_PID" --pg-wait Lock:transactionid --json --timeout 3s >"$E2E_DIR/b.json" 2>/dev/null
leaf=$(jq -r 'select(.type == "offcpu") | .stack[0] // empty' "$E2E_DIR/b.json" | head -n1)
heaviest=$(grep -A1 'flat  flat%' "$PROF/live.top" | tail -n1 | awk '{ print $NF }')
check "go tool pprof -top: the heaviest frame ($heaviest) is the leaf of B's kernel stack (${leaf:-none})" \
	[ -n "$leaf" -a "$heaviest" = "$leaf" ]

# --- one recorded window: the totals agree ------------------------------------
# T1 after everything above; wait until pgoffd has stored past it (it
# writes its batches every 50 ms)
sleep 0.2
T1=$(now_rfc3339)
stored_past_t1() {
	local last
	last=$("$PGOFFCTL" --socket "$SOCK" history --json | jq -r '.last_time // empty')
	[[ -n $last && $last > $T1 ]]
}
sql -c "select pg_sleep(0.01)" >/dev/null
wait_for 10 stored_past_t1 || note "pgoffd stored nothing after $T1"
t_start=$EPOCHREALTIME
member flame --since "$T0" --until "$T1" --min 1ms --folded >"$E2E_DIR/past.folded" \
	2>"$E2E_DIR/past-folded.err"
rc1=$?
member flame --since "$T0" --until "$T1" --min 1ms --pprof "$PROF/past.pb.gz" \
	>"$E2E_DIR/past.out" 2>"$E2E_DIR/past-pprof.err"
rc2=$?
member flame --since "$T0" --until "$T1" --min 1ms --folded --pprof "$PROF/both.pb.gz" \
	>"$E2E_DIR/both.folded" 2>"$E2E_DIR/both.err"
rc3=$?
t_flame=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", (b - a) / 3 }')
check "flame --since T0 --until T1: --folded, --pprof, and both at once exit 0 ($rc1 $rc2 $rc3)" \
	[ "$rc1$rc2$rc3" = 000 ]
member watch --since "$T0" --view intervals --min 1ms --json --timeout 3s \
	>"$E2E_DIR/window.json" 2>"$E2E_DIR/window.err"
# the window's intervals, as flame takes them: replayed since T0, ended
# at T1 or before, not idle
jq -r --arg t1 "$T1" 'select(.type == "offcpu" and .time <= $t1 and (.idle | not)) |
	.duration_ns' "$E2E_DIR/window.json" >"$E2E_DIR/window.ns"
n_ivl=$(wc -l <"$E2E_DIR/window.ns")
sum_ns=$(awk '{ t += $1 } END { printf "%.0f", t }' "$E2E_DIR/window.ns")
sum_us=$(awk '{ t += int($1 / 1000) } END { printf "%.0f", t }' "$E2E_DIR/window.ns")
raw "$PROF/past.pb.gz"
pprof_ns=$(raw_sum "$PROF/past.pb.gz.raw")
pprof_n=$(go tool pprof -raw -sample_index=count "$PROF/past.pb.gz" 2>/dev/null |
	awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && $2 ~ /^[0-9]+:$/ { c += $2 } END { print c + 0 }')
folded_us=$(awk '{ t += $NF } END { printf "%.0f", t }' "$E2E_DIR/past.folded")
note "window $T0 .. $T1: $n_ivl intervals, $sum_ns ns ($sum_us whole us); pprof $pprof_ns ns in $pprof_n intervals; folded $folded_us us"
note "past.pb.gz: $(stat -c %s "$PROF/past.pb.gz") bytes, $(grep -cE '^ +[0-9]+ +[0-9]+: ' "$PROF/past.pb.gz.raw") samples; folded: $(wc -c <"$E2E_DIR/past.folded") bytes, $(wc -l <"$E2E_DIR/past.folded") lines; $t_flame s a flame --since"
check "the window has B's lock wait (more than 1.9 s of intervals)" [ "${sum_ns:-0}" -gt 1900000000 ]
check "pprof's off_cpu total is the sum of the window's intervals, to the ns ($pprof_ns = $sum_ns)" \
	[ -n "$pprof_ns" -a "$pprof_ns" = "$sum_ns" ] || {
	sed -n '/^Samples:/,/^Locations/p' "$PROF/past.pb.gz.raw" | sed 's/^/# pprof: /'
	jq -c --arg t1 "$T1" 'select(.type == "offcpu" and (.idle | not)) | [.seq, .time, .start, .pid, .duration_ns, .pg.wait_event, (.time <= $t1)]' \
		"$E2E_DIR/window.json" | sed 's/^/# watch: /' | head -40
	sed 's/^/# watch stderr: /' "$E2E_DIR/window.err"
}
check "pprof's count total is the number of intervals ($pprof_n = $n_ivl)" [ "$pprof_n" = "$n_ivl" ]
check "the folded total is the sum of the intervals' whole microseconds ($folded_us = $sum_us)" \
	[ -n "$folded_us" -a "$folded_us" = "$sum_us" ]
check "... so pprof/1000 and folded differ by less than a microsecond an interval" \
	awk -v p="$pprof_ns" -v f="$folded_us" -v n="$n_ivl" 'BEGIN { d = p / 1000 - f; exit !(d >= 0 && d < n) }'
both_us=$(awk '{ t += $NF } END { printf "%.0f", t }' "$E2E_DIR/both.folded")
raw "$PROF/both.pb.gz"
both_ns=$(raw_sum "$PROF/both.pb.gz.raw")
check "--folded --pprof in one recording: the same totals ($both_us us, $both_ns ns)" \
	[ "$both_us" = "$folded_us" -a "$both_ns" = "$pprof_ns" ]
check "flame --pprof says what it wrote on stderr" \
	grep -q -- "--pprof $PROF/past.pb.gz: [0-9]* samples, $n_ivl intervals" "$E2E_DIR/past-pprof.err" ||
	note "$(cat "$E2E_DIR/past-pprof.err")"

note "$(date +%T) window done"
# --- what --pprof refuses -------------------------------------------------------
mkfifo "$PROF/fifo" && chown "$E2E_MEMBER" "$PROF/fifo"
ln -s "$PROF/fifo" "$PROF/link"
for target in fifo link; do
	timeout 10 "${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" flame --duration 1s \
		--pprof "$PROF/$target" >/dev/null 2>"$E2E_DIR/$target.err"
	rc=$?
	check "--pprof on a $target: refused at once, exit 1 (got $rc: $(head -c 120 "$E2E_DIR/$target.err"))" \
		bash -c "[ $rc = 1 ] && grep -q 'not a regular file\\|cannot write' '$E2E_DIR/$target.err'"
done
member flame --diff 2h..1h 1h.. --pprof "$PROF/diff.pb.gz" >/dev/null 2>"$E2E_DIR/diff.err"
check "--pprof with --diff: a usage error (exit $?)" [ $? = 2 ]

note "$(date +%T) refusals done"
# --- the exporter's profile endpoint -------------------------------------------
EXP_PORT=$(free_port)
printf 'basic_auth_users:\n  prometheus: %s\n' "$(bcrypt_hash 'pw pw')" >"$E2E_DIR/web.yml"
"${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" --web.listen-address="127.0.0.1:$EXP_PORT" \
	--web.config.file="$E2E_DIR/web.yml" 2>"$E2E_DIR/exporter.log" &
EXPORTER_PID=$!
EXP=http://127.0.0.1:$EXP_PORT
wait_for 10 curl -s -o /dev/null "$EXP/"
code=$(curl -s -o "$E2E_DIR/noauth.out" -w '%{http_code}' "$EXP/debug/pprof/profile")
check "the profile endpoint without a password: 401 (got $code)" [ "$code" = 401 ]
# B's wait ended more than a second ago (the window ends 1 s back)
t_start=$EPOCHREALTIME
code=$(curl -s -u 'prometheus:pw pw' -D "$E2E_DIR/prof.headers" -o "$PROF/exp.pb.gz" \
	-w '%{http_code}' "$EXP/debug/pprof/profile?seconds=120")
t_exp=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
note "exporter: $code in $t_exp s, $(stat -c %s "$PROF/exp.pb.gz") bytes"
check "with it, ?seconds=120: 200, application/octet-stream, gzipped (got $code)" \
	bash -c "[ '$code' = 200 ] && grep -qi '^content-type: application/octet-stream' '$E2E_DIR/prof.headers' && gzip -t '$PROF/exp.pb.gz'" ||
	head -c 300 "$PROF/exp.pb.gz" | sed 's/^/# /'
raw "$PROF/exp.pb.gz"
check "go tool pprof -raw reads it: off_cpu/nanoseconds, count/count, a 120 s duration" \
	bash -c "grep -qE '^off_cpu/nanoseconds\[dflt\] +count/count$' '$PROF/exp.pb.gz.raw' && grep -qx 'Duration: 2m0s' '$PROF/exp.pb.gz.raw'" ||
	sed 's/^/# /' "$PROF/exp.pb.gz.err"
exp_b=$(awk -v pid="pid:[$B_PID]" '/^Samples:/ { s = 1 } /^Locations/ { s = 0 }
	s && $2 ~ /^[0-9]+:$/ { v = $1; next }
	s && /wait_event:\[transactionid\]/ { getline; if (index($0, pid)) t += v } END { printf "%.0f", t }' "$PROF/exp.pb.gz.raw")
want_b=$(jq -s '[.[] | select(.type == "offcpu") | .duration_ns] | add // 0' "$E2E_DIR/b.json")
check "its Lock:transactionid samples of pid $B_PID are B's lock intervals, to the ns ($exp_b = $want_b)" \
	[ -n "$exp_b" -a "$exp_b" = "$want_b" ]
check "... labelled in PostgreSQL's terms, the cluster by its data directory" \
	grep -q "cluster:\[$PGDATA_DIR\] cluster_id:\[[0-9a-f]\{16\}\] database:\[postgres\] query_id:\[-\?[0-9]*\] wait:\[lock\] wait_event:\[transactionid\] wait_event_type:\[Lock\]" "$PROF/exp.pb.gz.raw"
go tool pprof -top "$PROF/exp.pb.gz" >"$PROF/exp.top" 2>&1
check "go tool pprof -top reads it too" grep -q 'Type: off_cpu' "$PROF/exp.top"
bad=
for arg in 0 301 abc -5 '15s'; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -u 'prometheus:pw pw' "$EXP/debug/pprof/profile?seconds=$arg")
	[ "$code" = 400 ] || bad+=" seconds=$arg: $code"
done
check "a bad seconds (0, 301, abc, -5, 15s) is 400${bad:+ (got$bad)}" [ -z "$bad" ]
code=$(curl -s -o "$PROF/default.pb.gz" -w '%{http_code}' -u 'prometheus:pw pw' "$EXP/debug/pprof/profile")
raw "$PROF/default.pb.gz"
check "without seconds: the last 15 s ($code)" grep -qx 'Duration: 15s' "$PROF/default.pb.gz.raw"
curl -s -u 'prometheus:pw pw' "$EXP/metrics" >"$E2E_DIR/metrics.txt"
check "/metrics counts them: 2 served, 5 bad" \
	bash -c "grep -qx 'pgoff_exporter_profile_requests_total{result=\"served\"} 2' '$E2E_DIR/metrics.txt' &&
		grep -qx 'pgoff_exporter_profile_requests_total{result=\"bad_request\"} 5' '$E2E_DIR/metrics.txt'" ||
	grep '^pgoff_exporter_profile' "$E2E_DIR/metrics.txt" | sed 's/^/# /'

kill "$EXPORTER_PID"; wait "$EXPORTER_PID"; EXPORTER_PID=
check "the exporter's log has no sanitizer report" bash -c "! grep -q 'Sanitizer' '$E2E_DIR/exporter.log'" ||
	sed 's/^/# /' "$E2E_DIR/exporter.log" | tail -20

# --- the bounds, against a pgoffd whose replay never ends ----------------------
note "$(date +%T) bounds"
/usr/bin/python3 "$E2E_TOP/tests/e2e/stall_broker.py" "$E2E_DIR/stall.sock" "$E2E_DIR/stall.log" &
STALL_PID=$!
trap '[ -n "$EXPORTER_PID" ] && kill "$EXPORTER_PID" 2>/dev/null && wait "$EXPORTER_PID"; kill "$STALL_PID" 2>/dev/null; e2e_cleanup' EXIT
stall_ready() { grep -qs ready "$E2E_DIR/stall.log"; }
wait_for 5 stall_ready
EXP_PORT=$(free_port)
"${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$E2E_DIR/stall.sock" --web.insecure-no-auth \
	--web.listen-address="127.0.0.1:$EXP_PORT" 2>"$E2E_DIR/exporter-stall.log" &
EXPORTER_PID=$!
EXP=http://127.0.0.1:$EXP_PORT
wait_for 10 curl -s -o /dev/null "$EXP/"
slow_profile() {
	curl -s -o "$E2E_DIR/slow$1.out" -D "$E2E_DIR/slow$1.headers" \
		-w '%{http_code} %{time_total}' "$EXP/debug/pprof/profile?seconds=5" >"$E2E_DIR/slow$1.code"
}
slow_profile 1 & s1=$!
slow_profile 2 & s2=$!
subscribed() { [ "$(grep -cs subscribe "$E2E_DIR/stall.log")" -ge 2 ]; }
wait_for 10 subscribed
check "two profile requests wait for a replay that does not end" [ $? = 0 ]
code=$(curl -s -D "$E2E_DIR/busy.headers" -o "$E2E_DIR/busy.out" -w '%{http_code} %{time_total}' \
	"$EXP/debug/pprof/profile")
# code_in "CODE SECONDS" WANT MAX: the status was WANT, within MAX seconds
code_in() { [ "${1% *}" = "$2" ] && between "${1#* }" 0 "$3"; }
code_in "$code" 503 2 && grep -qi '^retry-after: 5' "$E2E_DIR/busy.headers"
check "a third, meanwhile: 503 at once, with Retry-After: 5 (got $code)" [ $? = 0 ]
code=$(curl -s -o "$E2E_DIR/stall-metrics.txt" -w '%{http_code} %{time_total}' "$EXP/metrics")
code_in "$code" 200 2 && grep -qx 'pgoff_broker_up 0' "$E2E_DIR/stall-metrics.txt"
check "/metrics meanwhile: 200 at once, pgoff_broker_up 0 (got $code)" [ $? = 0 ]
wait "$s1" "$s2"
for i in 1 2; do
	got=$(cat "$E2E_DIR/slow$i.code")
	note "slow request $i: $got: $(head -c 200 "$E2E_DIR/slow$i.out")"
	[ "${got% *}" = 503 ] && between "${got#* }" 19.5 25 &&
		grep -q 'did not end within 20 s' "$E2E_DIR/slow$i.out"
	check "... waiting request $i: 503 after the 20 s replay deadline, not cut at the 10 s header deadline ($got)" \
		[ $? = 0 ]
done
curl -s "$EXP/metrics" >"$E2E_DIR/stall-metrics.txt"
check "... counted: 1 busy, 2 failed" \
	bash -c "grep -qx 'pgoff_exporter_profile_requests_total{result=\"busy\"} 1' '$E2E_DIR/stall-metrics.txt' &&
		grep -qx 'pgoff_exporter_profile_requests_total{result=\"failed\"} 2' '$E2E_DIR/stall-metrics.txt'"
kill "$EXPORTER_PID"; wait "$EXPORTER_PID"; EXPORTER_PID=
kill "$STALL_PID"; wait "$STALL_PID" 2>/dev/null
check "... and its log has no sanitizer report" bash -c "! grep -q 'Sanitizer' '$E2E_DIR/exporter-stall.log'" ||
	sed 's/^/# /' "$E2E_DIR/exporter-stall.log" | tail -20
session_close a
session_close b
exit "$TAP_FAILED"
