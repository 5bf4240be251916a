#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Which statement waits: every wait of a backend running a statement
# carries its query id, as pg_stat_statements names it (read from the
# backend's own status entry, PostgreSQL 15 here), top --by query adds
# them up, --query-id picks them, and an inferred episode ends where a
# statement ends: consecutive waits on one event in two statements (a
# client's round trips, ClientRead; 300 short sleeps in one message) are
# as many episodes, not one.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start shared_preload_libraries=pg_stat_statements autovacuum=off ||
	{ not_ok "start PostgreSQL 15 with pg_stat_statements"; exit 1; }
trap 'e2e_cleanup' EXIT
sql -c "create extension pg_stat_statements" -c "create table t (id int primary key, v int)" \
	-c "insert into t values (1, 0)" >/dev/null
e2e_start_broker --min-floor 0 --query-group "$E2E_QUERY_GROUP" || { not_ok "start pgoffd"; exit 1; }
t0=$(date -u -d '-1 sec' +%Y-%m-%dT%H:%M:%SZ)

# queryid as pg_stat_statements shows it, of the statement like $1
queryid() {
	sql -c "select queryid from pg_stat_statements where query like '$1' order by calls desc limit 1"
}

# --- a row-lock wait's query id is its UPDATE's
out=$E2E_DIR/waits.json
member watch --view both --min 0 --json --timeout 120s >"$out" 2>"$E2E_DIR/waits.err" &
watcher=$!
watchers 1 || note "the watcher did not subscribe: $(head -c 300 "$E2E_DIR/waits.err")"
row_lock_wait "update t set v = v + 1 where id = 1"
update_id=$(queryid 'update t set v = v + $1 where id = $2')
note "the UPDATE's queryid: $update_id; the waiter: $B_PID"
lock_ep() { jq -c --argjson p "${B_PID:-0}" 'select(.type == "episode" and .pid == $p and
	.pg.wait_event == "transactionid")' "$out"; }
lock_ep_came() { lock_ep | jqe -s 'length > 0'; }
wait_for 10 lock_ep_came
check "the row-lock episode carries the UPDATE's query id ($update_id)" \
	jqe -s --arg q "$update_id" 'length == 1 and .[0].pg.query_id == $q and
		.[0].pg.state == "active"' <(lock_ep) ||
	note "saw: $(lock_ep | head -c 600)"
check "... and so does every interval of it" \
	jqe -s --arg q "$update_id" --argjson p "${B_PID:-0}" 'map(select(.type == "offcpu" and
		.pid == $p and .pg.wait_event == "transactionid")) | length > 0 and
		all(.pg.query_id == $q)' "$out" ||
	note "saw: $(jq -c --argjson p "${B_PID:-0}" 'select(.pid == $p) | [.type, .pg.wait_event, .pg.query_id]' "$out" | head -c 600)"

# --- 300 sleeps in one message are 300 statements: as many episodes;
# the same in one PL/pgSQL statement is one (nothing marks its waits)
session_open s || not_ok "open a session"
s_pid=${SESSION_PID[s]:-0}
sleeps=$(for _ in $(seq 300); do printf 'select pg_sleep(0.002);'; done)
session_run s "$sleeps" >/dev/null || not_ok "300 sleeps in one message"
session_run s "do \$\$ begin for i in 1..300 loop perform pg_sleep(0.002); end loop; end \$\$;" ||
	not_ok "300 sleeps in one statement"
session_run s "select 1;" >/dev/null
sleep_id=$(queryid 'select pg_sleep($1)')
sleep_eps() { jq -c --argjson p "$s_pid" 'select(.type == "episode" and .pid == $p and
	.pg.wait_event == "PgSleep")' "$out"; }
do_eps_came() { sleep_eps | jqe -s --arg q "$sleep_id" 'map(select(.pg.query_id != $q)) | length > 0'; }
wait_for 10 do_eps_came
n_stmt=$(sleep_eps | jq -s --arg q "$sleep_id" 'map(select(.pg.query_id == $q)) | length')
n_do=$(sleep_eps | jq -s --arg q "$sleep_id" 'map(select(.pg.query_id != $q)) | length')
note "PgSleep episodes: $n_stmt for 300 statements (queryid $sleep_id), $n_do for one DO"
# a sleep whose latch was already set leaves the CPU not at all
check "300 statements' sleeps are ~300 episodes (>= 250, <= 300; saw $n_stmt)" \
	[ "$n_stmt" -ge 250 ] && [ "$n_stmt" -le 300 ]
check "300 sleeps in one statement are 1 episode (<= 2 with a preemption; saw $n_do)" \
	[ "$n_do" -ge 1 ] && [ "$n_do" -le 2 ]

# --- a client's round trips: one ClientRead episode each
reads_before=$(jq -s --argjson p "$s_pid" 'map(select(.type == "episode" and .pid == $p and
	.pg.wait_event == "ClientRead")) | length' "$out")
for _ in 1 2 3 4 5; do
	session_run s "select 1;" >/dev/null
	sleep 0.2	# the client thinks: the backend waits in ClientRead
done
session_close s
wait_for 10 jqe -s --argjson p "$s_pid" --argjson n "$reads_before" 'map(select(.type == "episode" and
	.pid == $p and .pg.wait_event == "ClientRead")) | length >= $n + 5' "$out"
reads=$(jq -s --argjson p "$s_pid" 'map(select(.type == "episode" and .pid == $p and
	.pg.wait_event == "ClientRead")) | length' "$out")
check "5 round trips are >= 5 more ClientRead episodes (saw $((reads - reads_before)))" \
	[ $((reads - reads_before)) -ge 5 ]
check "... each outside any statement: idle, no query id" \
	jqe -s --argjson p "$s_pid" 'map(select(.type == "episode" and .pid == $p and
		.pg.wait_event == "ClientRead")) | all(.pg.state == "idle" and .pg.query_id == null)' "$out" ||
	note "saw: $(jq -c --argjson p "$s_pid" 'select(.pg.wait_event == "ClientRead" and .pid == $p) | .pg' "$out" | head -c 400)"
unwatch "$watcher"

# --- top --by query: 4 statements of pg_sleep(0.5) are 2 s, whatever
# the intervals' phase (their deltas add up); the backend exits before
# the last snapshot, its time stays
member top --by query --interval 1s --json >"$E2E_DIR/top.json" 2>"$E2E_DIR/top.err" &
top_job=$!
wait_for 10 [ -s "$E2E_DIR/top.json" ] || note "top printed nothing: $(head -c 300 "$E2E_DIR/top.err")"
psql -X -q -c "select pg_sleep(0.5)" -c "select pg_sleep(0.5)" -c "select pg_sleep(0.5)" \
	-c "select pg_sleep(0.5)" >/dev/null
# two more intervals: the one the last sleep ended in is printed
top_lines_at_least() { [ "$(wc -l <"$E2E_DIR/top.json")" -ge "$1" ]; }
wait_for 10 top_lines_at_least $(($(wc -l <"$E2E_DIR/top.json") + 2))
kill "$top_job"; wait "$top_job" 2>/dev/null
top_sleep=$(jq -s --arg q "$sleep_id" '[.[].rows[] | select(.query_id == $q) | .time_ns] | add // 0' \
	"$E2E_DIR/top.json")
check "top --by query: the pg_sleep(0.5) statement run 4 times is 2.0 s +- 5 % (saw $top_sleep ns)" \
	between "$top_sleep" 1.9e9 2.1e9
check "... top's rows by query show the wait it spent them in" \
	jqe -s --arg q "$sleep_id" '[.[].rows[] | select(.query_id == $q)] | length > 0 and
		all(.top_wait == "sleep Timeout:PgSleep")' "$E2E_DIR/top.json"

# --- a member of the query group sees the statements' texts, normalized
# as pg_stat_statements shows them; a plain member sees only the ids
querier top --by query --interval 1s --json >"$E2E_DIR/qtop.json" 2>"$E2E_DIR/qtop.err" &
qtop=$!
member top --by query --interval 1s --json >"$E2E_DIR/mtop.json" 2>"$E2E_DIR/mtop.err" &
mtop=$!
# the kernel keeps texts from the first request on: statements after it
qtop_lines() { [ "$(wc -l <"$E2E_DIR/qtop.json")" -ge 1 ]; }
wait_for 10 qtop_lines || note "top printed nothing: $(head -c 300 "$E2E_DIR/qtop.err")"
for _ in 1 2 3; do sql -c "select pg_sleep(0.3)" >/dev/null; done
qtext_seen() { jqe --arg q "$sleep_id" 'select(any(.rows[]; .query_id == $q and .query == "select pg_sleep($1)"))' "$E2E_DIR/qtop.json"; }
wait_for 10 qtext_seen
kill "$qtop" "$mtop"; wait "$qtop" "$mtop" 2>/dev/null
check "top --by query, a member of the query group: the statement's text, normalized (select pg_sleep(\$1))" \
	qtext_seen || note "saw: $(jq -c '[.rows[] | {query_id, query}]' "$E2E_DIR/qtop.json" | tail -n 2 | head -c 500)"
check "... a plain member: the ids, no text" \
	jqe -s --arg q "$sleep_id" 'any(.[].rows[]; .query_id == $q) and all(.[].rows[]; has("query") | not)' \
	"$E2E_DIR/mtop.json"

# --- the flight record keeps them: top --since, by query
past=$(member top --since "$t0" --by query --json 2>"$E2E_DIR/past.err")
past_sleep=$(jq --arg q "$sleep_id" '[.rows[] | select(.query_id == $q) | .time_ns] | add // 0' <<<"$past")
check "top --since --by query has the sleeps' statement: 4 x 0.5 s and 300 x 2 ms, >= 2.6 s (saw $past_sleep ns)" \
	between "$past_sleep" 2.6e9 10e9 ||
	note "top --since: $(head -c 600 <<<"$past") $(head -c 300 "$E2E_DIR/past.err")"
check "top --by query,wait shows the UPDATE in Lock:transactionid" \
	jqe --arg q "$update_id" 'any(.rows[]; .query_id == $q and .wait_event == "transactionid")' \
		<(member top --since "$t0" --by query,wait --json 2>/dev/null)

# --- --query-id picks a statement's waits; junk is a usage error
member watch --view both --min 0 --query-id "$sleep_id" --pg-wait Timeout --json --count 1 --timeout 60s \
	>"$E2E_DIR/pick.json" 2>"$E2E_DIR/pick.err" &
picker=$!
watchers 1
# another statement's sleep first: not this one's
sql -c "select pg_sleep(0.05), 'another statement'" >/dev/null
sql -c "select pg_sleep(0.05)" >/dev/null
wait "$picker"; rc=$?
check "watch --query-id: the sleep's wait, none of another statement (exit $rc)" \
	jqe --arg q "$sleep_id" '.pg.query_id == $q and .pg.wait_event == "PgSleep"' "$E2E_DIR/pick.json" ||
	note "got: $(head -c 400 "$E2E_DIR/pick.json") $(head -c 200 "$E2E_DIR/pick.err")"
# flame --by query: the statement is the root frame
member flame --by query --folded --min 1ms --duration 3s >"$E2E_DIR/flame.txt" 2>"$E2E_DIR/flame.err" &
flamer=$!
watchers 1
sql -c "select pg_sleep(0.3)" >/dev/null
wait "$flamer"
check "flame --by query: the sleep's stack is rooted at its statement" \
	grep -q "^query $sleep_id;Timeout:PgSleep;wait: sleep;" "$E2E_DIR/flame.txt" ||
	note "flame: $(head -c 400 "$E2E_DIR/flame.txt") $(head -c 200 "$E2E_DIR/flame.err")"
member watch --query-id 12x >/dev/null 2>"$E2E_DIR/bad.err"; rc=$?
check "watch --query-id 12x: a usage error (exit 2, saw $rc)" [ "$rc" = 2 ]

# --- compute_query_id = off: no query id, and why
member watch --view waits --min 0 --pg-wait Timeout --json --count 1 --timeout 60s \
	>"$E2E_DIR/off.json" 2>"$E2E_DIR/off.err" &
offer=$!
watchers 1
sql -c "set compute_query_id = off" -c "select pg_sleep(0.2)" >/dev/null
wait "$offer"
check "with compute_query_id off, a statement's wait has no query id and says why" \
	jqe '.pg.query_id == null and .pg.state == "active" and
		(.pg.missing.query_id | test("compute_query_id"))' "$E2E_DIR/off.json" ||
	note "got: $(head -c 500 "$E2E_DIR/off.json")"

e2e_stop_broker TERM
exit "$TAP_FAILED"
