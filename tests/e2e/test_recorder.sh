#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight recorder: a lock wait that ended before any client connected
# is replayed by watch --since with the duration PostgreSQL logged; a
# replay goes on live with no gap and no duplicate; the record survives
# kill -9, a corrupted segment, and stays under its size cap; outsiders
# are refused; with record-queries off (the default) stored events carry
# no SQL (test_recorder_queries.sh: redacted and full).
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# log_lock_waits logs "acquired ... after N ms" for a wait longer than
# deadlock_timeout
pg_start log_lock_waits=on deadlock_timeout=100ms autovacuum=off ||
	{ not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
STATE=$E2E_DIR/state
e2e_start_broker --record-min 1ms || { not_ok "start pgoffd"; exit 1; }
check "the state directory is 0700 and pgoffd's user's" \
	[ "$(stat -c '%a %U' "$STATE")" = "700 $E2E_BROKER_USER" ]
check "with no subscriber, the kernel sends what is recorded (1 ms)" \
	[ "$(member status --json | jq .kernel_min_duration_ns)" = 1000000 ]

# A lock wait of ~0.8 s with no client connected: A holds the row 0.8 s
# from the moment B waits for it, however long B's psql took to start.
t_before=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
t_clock=$(date +%H:%M:%S)	# the local time of day, as a DBA types it
{
	echo "begin;"
	echo "update t set v = 1 where id = 1;"
	echo "select pg_backend_pid();	-- printed once the row is A's"
	until_lock_waiter
	echo "select pg_sleep(0.8);"
	echo "commit;"
} >"$E2E_DIR/a.sql"
sql -f "$E2E_DIR/a.sql" >"$E2E_DIR/a.out" &
a_job=$!
wait_for 10 [ -s "$E2E_DIR/a.out" ] || note "A's psql printed nothing in 10 s"
sql -c "update t set v = 2 where id = 1" >/dev/null &
b_job=$!
IFS='|' read -r b_pid _ _ <<<"$(psa_wait_for "wait_event_type = 'Lock'")"
wait "$a_job" "$b_job"
sleep 0.5
pg_ms=$(sed -n "s/.*process $b_pid acquired ShareLock on transaction [0-9]* after \([0-9.]*\) ms.*/\1/p" \
	"$E2E_DIR/pg/log" | head -n1)
check "PostgreSQL logged B's ($b_pid) lock wait (saw '${pg_ms}' ms)" [ -n "$pg_ms" ]

member watch --since 1m --view waits --pg-wait Lock --json --count 1 --timeout 10s \
	>"$E2E_DIR/lock.json" 2>"$E2E_DIR/lock.err"
rc=$?
ev=$(head -n1 "$E2E_DIR/lock.json")
note "replayed: $(cut -c1-300 <<<"$ev")"
note "stderr: $(head -c 300 "$E2E_DIR/lock.err")"
check "watch --since finds the wait that ended before it connected (exit $rc)" \
	bash -c "[ $rc = 0 ] && jq -e '.type == \"episode\" and .pid == $b_pid' <<<'$ev' >/dev/null"
pgoff_ms=$(jq '.duration_ns / 1e6' <<<"$ev")
note "PostgreSQL: ${pg_ms} ms; pgoff: ${pgoff_ms} ms"
# Both time the same wait from inside the backend: PostgreSQL from its
# wait start to the wakeup it handles, pgoff from the wait's start probe
# to its done probe. Between PostgreSQL's clock and the done probe the
# backend logs the wait (log_lock_waits), and on a loaded machine it may
# queue for the CPU there: that run-queue time is the episode's, not
# PostgreSQL's (3 ms once under CI's load), so it may be that much longer.
runq_ms=$(jq '.runq_ns / 1e6' <<<"$ev")
check "its duration is PostgreSQL's within 2 ms, plus its ${runq_ms} ms in the run queue" \
	between "$(awk -v a="${pgoff_ms:-0}" -v b="${pg_ms:-1e9}" 'BEGIN{print a - b}')" -2 \
	"$(awk -v r="${runq_ms:-0}" 'BEGIN{print 2 + r}')"

# top over the past, from the per-second aggregation: B's time in
# Lock:transactionid is the wait's (its off-CPU intervals in it; the
# deadlock check's few microseconds on the CPU are not).
member top --since 1m --pid "$b_pid" --by wait --json >"$E2E_DIR/top.json" 2>"$E2E_DIR/top.err"
rc=$?
note "top --since 1m: $(head -c 600 "$E2E_DIR/top.json") $(head -c 200 "$E2E_DIR/top.err")"
# (all rows of the wait: a preemption inside it is a row of kernel wait cpu)
top_ms=$(jq '[.rows[] | select(.wait_event == "transactionid") | .time_ns] | add / 1e6' "$E2E_DIR/top.json")
note "PostgreSQL: ${pg_ms} ms; top --since: ${top_ms} ms; $(jq -c 'del(.rows)' "$E2E_DIR/top.json")"
note "pgoffd's log on the store: $(grep 'record store' "$E2E_DIR/pgoffd.log" | head -n 3)"
check "top --since finds B's lock wait (exit $rc)" \
	jqe '.seconds > 0 and ([.rows[] | select(.wait_event_type == "Lock" and .wait_event == "transactionid" and .count >= 1)] | length >= 1)' "$E2E_DIR/top.json"
# Intervals leave out the wait's own time on the CPU (the episode's
# on_cpu_ns: waking, rechecking; ms under ASan): that much less is right.
oncpu_ms=$(jq '.on_cpu_ns / 1e6' <<<"$ev")
note "the episode's time on the CPU: ${oncpu_ms} ms"
check "its time is PostgreSQL's within 2 ms, less the wait's ${oncpu_ms} ms on the CPU" \
	between "$(awk -v a="${top_ms:-0}" -v b="${pg_ms:-1e9}" 'BEGIN{print a - b}')" \
	"$(awk -v c="${oncpu_ms:-0}" 'BEGIN{print -2 - c}')" 2
t_end=$(date -u +%Y-%m-%dT%H:%M:%SZ)
member top --at "$t_end" --window 2m --by wait --json >"$E2E_DIR/top_at.json" 2>"$E2E_DIR/top_at.err"
note "top --at $t_end --window 2m: $(jq -c '{seconds, from_time, to_time, rows: [.rows[] | {wait_event, time_ns}]}' "$E2E_DIR/top_at.json") $(head -c 200 "$E2E_DIR/top_at.err")"
check "top --at T --window 2m (RFC 3339) finds it too" \
	jqe '[.rows[] | select(.wait_event == "transactionid")] | length >= 1' "$E2E_DIR/top_at.json"
member top --since "$t_clock" --until "$(date -d '+1 min' +%H:%M)" --by wait --json \
	>"$E2E_DIR/top_clock.json" 2>"$E2E_DIR/top_clock.err"
note "top --since $t_clock (local time of day): $(jq -c '{seconds, from_time, rows: [.rows[] | {wait_event, time_ns}]}' "$E2E_DIR/top_clock.json") $(head -c 200 "$E2E_DIR/top_clock.err")"
check "top --since HH:MM:SS --until HH:MM (local times of day) finds it too" \
	jqe '[.rows[] | select(.wait_event == "transactionid")] | length >= 1' "$E2E_DIR/top_clock.json"
member top --since 1m --until 50s --by wait --json >"$E2E_DIR/top_old.json" 2>"$E2E_DIR/top_old.err"
check "top --since 1m --until 50s, before it: no such row" \
	jqe '[.rows[] | select(.wait_event == "transactionid")] | length == 0' "$E2E_DIR/top_old.json"

# A past window is summed over loop rounds, one per connection at a time:
# a second asked in the same breath is refused (busy), a third after the
# first's reply is answered.
cat >"$E2E_DIR/past2.py" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rb")
s.sendall(b'{"op":"hello","version":1}\n')
f.readline()
since = (time.time_ns() - 60 * 10**9)
req = '{"op":"stats","by":"labels","since_ns":%d,"id":%d}\n'
s.sendall((req % (since, 1) + req % (since, 2)).encode())
got = {}
while len(got) < 2:
    r = json.loads(f.readline())
    got[r["id"]] = r
s.sendall((req % (since, 3)).encode())
r = json.loads(f.readline())
got[r["id"]] = r
print(json.dumps([got[1].get("ok"), got[2].get("error", {}).get("code"), got[3].get("ok"),
                  len(got[1].get("rows", [])), got[2].get("error", {}).get("message")]))
PY
past2=$(as "$E2E_MEMBER" timeout 20 /usr/bin/python3 - "$SOCK" <"$E2E_DIR/past2.py" 2>&1)
note "two past stats at once on one connection, then a third: $past2"
check "a second past window while one is summed: busy; the first answered, and a third after it" \
	jqe '.[0] == true and .[1] == "busy" and .[2] == true and .[3] > 0' <<<"$past2"

# flame over the past, from the stored intervals (1 ms or more here).
member flame --since 1m --folded --pid "$b_pid" >"$E2E_DIR/flame.txt" 2>"$E2E_DIR/flame.err"
rc=$?
flame_ms=$(awk '/^Lock:transactionid;/ { us += $NF } END { print us / 1000 }' "$E2E_DIR/flame.txt")
note "flame --since 1m: $(head -c 300 "$E2E_DIR/flame.txt") $(head -c 200 "$E2E_DIR/flame.err")"
note "PostgreSQL: ${pg_ms} ms; flame --since: ${flame_ms} ms"
check "flame --since: B's Lock:transactionid stacks sum to PostgreSQL's wait within 2 ms, less its time on the CPU (exit $rc)" \
	bash -c "[ $rc = 0 ] && awk -v a='${flame_ms:-0}' -v b='${pg_ms:-1e9}' -v c='${oncpu_ms:-0}' 'BEGIN { exit !(a - b >= -2 - c && a - b <= 2) }'"
member flame --diff "1h..$t_before" "$t_before.." --pid "$b_pid" >"$E2E_DIR/diff.txt" 2>"$E2E_DIR/diff.err"
rc=$?
note "flame --diff: $(grep -m2 '^Lock:transactionid;' "$E2E_DIR/diff.txt") $(head -c 200 "$E2E_DIR/diff.err")"
check "flame --diff before/after: the wait's stacks are 0 before, all of it after (exit $rc)" \
	bash -c "[ $rc = 0 ] && awk '/^Lock:transactionid;/ { n++; if (\$(NF-1) != 0 || \$NF == 0) bad++ } END { exit !(n > 0 && !bad) }' '$E2E_DIR/diff.txt'"

# replay_all OUT ERR WHO [watch options]: watch --since 1h as WHO until
# the replay has reached the store's end (and 0.3 s more), then stop it
replay_all() {
	local out=$1 err=$2 who=$3; shift 3
	as "$who" "$PGOFFCTL" --socket "$SOCK" watch --since 1h --json --timeout 60s "$@" \
		>"$out" 2>"$err" &
	local job=$!
	wait_for 60 grep -q "stored events replayed" "$err"
	sleep 0.3
	kill "$job" 2>/dev/null; wait "$job" 2>/dev/null
}

# Replay while events keep coming: every stored event once, in order.
# (Intervals: the sleeps of one statement are one PostgreSQL wait, one
# episode.)
records() { member history --json | jq .records; }
records0=$(records)
sleep_load 4000
# thousands stored before the watch comes: the replay takes many loop
# rounds (most of what is stored now is the load's PgSleep intervals;
# the cluster's own waits are a few a second)
stored_2500() { [ "$(( $(records) - records0 ))" -ge 2500 ]; }
wait_for 30 stored_2500 || note "the store has $(( $(records) - records0 )) more records after 30 s"
member watch --since 1h --view intervals --pg-wait Timeout:PgSleep --json --timeout 60s \
	>"$E2E_DIR/w1.json" 2>"$E2E_DIR/w1.err" &
w1_job=$!
wait_for 30 grep -q "stored events replayed" "$E2E_DIR/w1.err"
sleep_load_wait
# live events after the replay, however long it took (ASan's is slow)
sleep_load 100
sleep_load_wait
live_followed() {
	local n
	n=$(sed -n 's/.*: \([0-9]*\) stored events replayed.*/\1/p' "$E2E_DIR/w1.err")
	[ "$(grep -c '"seq"' "$E2E_DIR/w1.json")" -gt "${n:-0}" ]
}
wait_for 10 live_followed
kill "$w1_job" 2>/dev/null; wait "$w1_job" 2>/dev/null
replay_all "$E2E_DIR/w2.json" "$E2E_DIR/w2.err" "$E2E_MEMBER" --view intervals --pg-wait Timeout:PgSleep
jq -r .seq "$E2E_DIR/w1.json" >"$E2E_DIR/w1.seq"
jq -r .seq "$E2E_DIR/w2.json" >"$E2E_DIR/w2.seq"
first=$(head -n1 "$E2E_DIR/w1.seq"); last=$(tail -n1 "$E2E_DIR/w1.seq")
awk -v f="$first" -v l="$last" '$1 >= f && $1 <= l' "$E2E_DIR/w2.seq" >"$E2E_DIR/w2.range"
replayed=$(sed -n 's/.*: \([0-9]*\) stored events replayed.*/\1/p' "$E2E_DIR/w1.err")
note "watch --since under load: $(wc -l <"$E2E_DIR/w1.seq") events ($replayed replayed, then live), seq $first..$last; the store holds $(wc -l <"$E2E_DIR/w2.range") of them"
check "the replay says where it ended" grep -q "stored events replayed; live from here" "$E2E_DIR/w1.err"
check "the replay was long and live events followed it" \
	bash -c "[ '${replayed:-0}' -gt 2000 ] && [ $(wc -l <"$E2E_DIR/w1.seq") -gt '${replayed:-0}' ]"
check "replay then live: in seq order, none twice" \
	bash -c "sort -n -c -u '$E2E_DIR/w1.seq'"
check "replay then live: no gap (the same events as a later replay of the store)" \
	cmp -s "$E2E_DIR/w1.seq" "$E2E_DIR/w2.range"

# top over the past after seconds of load: summed over loop rounds,
# every stored second (a second is stored when something went off-CPU);
# a window of days too (the default record-max-age is 7): no cap but
# the record's own
# (seconds go on being stored meanwhile: what top sums lies between what
# history counted before it and after it)
hist_s=$(member history --json | jq .aggregation.seconds)
top_s=$(member top --since 1h --json | jq .seconds)
member top --since 2d --json >"$E2E_DIR/top_2d.json" 2>"$E2E_DIR/top_2d.err"
rc=$?
top2d_s=$(jq .seconds "$E2E_DIR/top_2d.json")
hist_s2=$(member history --json | jq .aggregation.seconds)
note "stored seconds $hist_s, then $hist_s2; top --since 1h summed $top_s; --since 2d: exit $rc, $top2d_s $(head -c 200 "$E2E_DIR/top_2d.err")"
check "top --since 1h sums every stored second ($top_s, stored $hist_s before it and $hist_s2 after)" \
	bash -c "[ '${hist_s:-0}' -ge 3 ] && [ '${top_s:-0}' -ge '${hist_s:-1}' ] && [ '${top_s:-0}' -le '${hist_s2:-0}' ]"
check "top --since 2d is answered, with every stored second ($top2d_s; exit $rc)" \
	bash -c "[ $rc = 0 ] && [ '${top2d_s:-0}' -ge '${hist_s:-1}' ] && [ '${top2d_s:-0}' -le '${hist_s2:-0}' ]"

# With record-queries off, stored events carry no SQL, even for root, who
# sees it live.
hist=$(member history --json)
note "history: $hist"
stored_last=$(jq .last_seq <<<"$hist")
"$PGOFFCTL" --socket "$SOCK" watch --since 1h --view both --json --timeout 60s \
	>"$E2E_DIR/root.json" 2>"$E2E_DIR/root.err" &
root_job=$!
wait_for 60 grep -q "stored events replayed" "$E2E_DIR/root.err"
sql -c "select pg_sleep(0.05)" >/dev/null
live_with_query() {
	jqe -s "any(.[]; .seq > $stored_last and .type == \"offcpu\" and .query != null)" "$E2E_DIR/root.json" 2>/dev/null
}
wait_for 10 live_with_query
kill "$root_job" 2>/dev/null; wait "$root_job" 2>/dev/null
check "root's replay: no stored event carries query" \
	jqe -s "[.[] | select(.seq <= $stored_last)] | (length > 0) and all(has(\"query\") | not)" "$E2E_DIR/root.json"
check "root's live events after the replay do carry it" \
	jqe -s "[.[] | select(.seq > $stored_last and .type == \"offcpu\" and .query != null)] | length > 0" "$E2E_DIR/root.json"
check "history: span, bytes, segments, records, drop counters" \
	jqe '(.first_time | test("^[0-9-]{10}T")) and .bytes > 0 and .segments >= 1 and .records > 0 and .counters.record_dropped_disk_full == 0 and .counters.record_dropped_error == 0' <<<"$hist"
check "status counts the recorder's losses" \
	jqe '.recording and .counters.record_dropped_disk_full == 0' <<<"$(member status --json)"

# The outsider: neither history nor a replay.
as "$E2E_OUTSIDER" "$PGOFFCTL" --socket "$SOCK" history >"$E2E_DIR/o1.out" 2>&1
check "an outsider is refused history (exit 3)" [ $? = 3 ]
as "$E2E_OUTSIDER" "$PGOFFCTL" --socket "$SOCK" watch --since 1h --json --timeout 2s \
	>"$E2E_DIR/o2.out" 2>/dev/null
check "an outsider is refused watch --since (exit 3, no event)" \
	bash -c "[ $? = 3 ] && [ ! -s '$E2E_DIR/o2.out' ]"

# kill -9 while recording, then a restart: everything up to it reads back.
sleep_load 400
sleep 1
before=$(member history --json | jq .last_seq)
kill -KILL "$E2E_BROKER_PID"; wait "$E2E_BROKER_PID" 2>/dev/null; E2E_BROKER_PID=
sleep_load_wait
e2e_start_broker --record-min 1ms || { not_ok "restart pgoffd after kill -9"; exit 1; }
after=$(member history --json)
note "before kill -9: last seq $before; after the restart: $after"
check "after kill -9: the history goes at least to the last seq seen before" \
	jqe ".last_seq >= $before" <<<"$after"
member watch --since 1h --view waits --pg-wait Lock --json --count 1 --timeout 10s \
	>"$E2E_DIR/lock2.json" 2>/dev/null
check "... and the lock wait is still there" jqe ".pid == $b_pid" "$E2E_DIR/lock2.json"
sql -c "select pg_sleep(0.02)" >/dev/null
replay_all "$E2E_DIR/all.json" "$E2E_DIR/all.err" "$E2E_MEMBER" --view both
check "... every record reads back, numbered on after the old ones" \
	bash -c "jq -r .seq '$E2E_DIR/all.json' | sort -n -c -u && [ \$(jq -s 'map(.seq) | max' '$E2E_DIR/all.json') -gt $(jq .last_seq <<<"$after") ]"

# A damaged record: bytes flipped in the oldest segment, garbage after the
# newest one's last record.
e2e_stop_broker TERM
segs=("$STATE"/*.seg)
note "segments: ${segs[*]##*/}"
oldest=${segs[0]}; newest=${segs[-1]}
check "the restart started a segment of its own" [ "${#segs[@]}" -ge 2 ]
printf 'XXXXXXXX' | dd of="$oldest" bs=1 seek=$(( $(stat -c %s "$oldest") / 2 )) conv=notrunc 2>/dev/null
head -c 1000 /dev/urandom >>"$newest"
newest_size=$(stat -c %s "$newest")
e2e_start_broker --record-min 1ms || { not_ok "start pgoffd on a damaged record"; exit 1; }
check "a corrupt record ends its segment's reading, with a log line" \
	grep -q "record store: ${oldest##*/}: a corrupt record at byte" "$E2E_DIR/pgoffd.log"
check "a garbage tail is cut, with a log line" \
	grep -q "record store: ${newest##*/}: .* tail of 1000 bytes cut" "$E2E_DIR/pgoffd.log"
check "... the file is as long as before the garbage" \
	[ "$(stat -c %s "$newest")" = $((newest_size - 1000)) ]
member watch --since 1h --view waits --pg-wait Lock --json --count 1 --timeout 10s \
	>"$E2E_DIR/lock3.json" 2>/dev/null
check "the rest of the record still replays" jqe ".pid == $b_pid" "$E2E_DIR/lock3.json"

# A size cap: filled past it, the store stays under it.
e2e_stop_broker TERM
e2e_start_broker --record-min 0 --record-max-size 1M || { not_ok "start pgoffd, 1 MiB cap"; exit 1; }
sleep_load 3000
sleep_load_wait
sleep 1.5
total=$(cat "$STATE"/*.seg "$STATE"/*.agg | wc -c)
h=$(member history --json)
note "with a 1 MiB cap: $total bytes in segments; history $h"
check "filled past a 1 MiB cap, the store stays under it ($total bytes)" \
	bash -c "[ $total -le 1048576 ] && jq -e '.bytes <= 1048576 and .counters.segments_removed > 0' <<<'$h' >/dev/null"

# The state directory is refused when it is a symbolic link.
e2e_stop_broker TERM
ln -s "$STATE" "$E2E_DIR/link"
timeout 60 "$PGOFFD" --socket "$SOCK" --group "$E2E_GROUP" --user "$E2E_BROKER_USER" \
	--state-directory "$E2E_DIR/link" 2>"$E2E_DIR/link.log"
rc=$?
note "pgoffd on a link: $(tail -n1 "$E2E_DIR/link.log")"
check "a state directory that is a symbolic link is refused (exit $rc)" \
	bash -c "[ $rc = 1 ] && grep -q 'symbolic link' '$E2E_DIR/link.log'"
