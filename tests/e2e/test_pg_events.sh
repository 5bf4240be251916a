#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Events told in PostgreSQL's terms, each compared with what PostgreSQL
# itself says (pg_stat_activity) for the same backend: ps, an advisory
# lock, pg_sleep and who sees its SQL, filters, an idle client, and a
# cold read from disk in a restarted cluster.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start deadlock_timeout=10s shared_buffers=16MB ||
	{ not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create database other"
e2e_start_broker --query-group "$E2E_QUERY_GROUP" || { not_ok "start pgoffd"; exit 1; }

# --- ps: every process pg_stat_activity shows, with the same backend type
backend_sleep 20	# cancelled once ps has been read
# the sleeper is known once a discovery scan (every 1 s) found it
listed() { member ps --json | jqe --argjson p "${1:-0}" 'any(.processes[]; .pid == $p)'; }
wait_for 5 listed "$SLEEPER_PID" || note "the sleeper ($SLEEPER_PID) is not listed by ps"
member ps --json >"$E2E_DIR/ps.json"
check "ps --json as a group member exits 0" [ $? = 0 ]
# autovacuum workers come and go between the two reads: not compared
sql -F ' ' -c "select pid, backend_type, coalesce(datname, '-'), coalesce(usename, '-')
	from pg_stat_activity where pid <> pg_backend_pid() and backend_type <> 'autovacuum worker'
	order by pid" >"$E2E_DIR/psa.txt"
mismatch=0 compared=0
while read -r pid btype_and_rest; do
	want=$(sed 's/ \([^ ]*\) \([^ ]*\)$/|\1|\2/' <<<"$btype_and_rest")
	# the title names the user of client backends only
	[ "${want%%|*}" = "client backend" ] || want=${want%|*}'|-'
	got=$(jq -r --argjson p "$pid" '.processes[] | select(.pid == $p) |
		"\(.backend_type)|\(.database // "-")|\(.user // "-")"' "$E2E_DIR/ps.json")
	compared=$((compared + 1))
	[ "$got" = "$want" ] || { mismatch=$((mismatch + 1)); note "pid $pid: pg_stat_activity '$want', ps '$got'"; }
done <"$E2E_DIR/psa.txt"
check "ps agrees with pg_stat_activity on backend type, database, user ($compared processes)" \
	[ "$compared" -ge 5 -a "$mismatch" = 0 ]
check "ps shows the cluster: data directory, port, version 15" \
	jqe --arg d "$PGDATA_DIR" --argjson port "$PGPORT" \
	'any(.clusters[]; .data_dir == $d and .port == $port and (.version | startswith("15.")))' \
	"$E2E_DIR/ps.json"
member ps >"$E2E_DIR/ps.txt"
check "ps (table) names the sleeping backend" grep -qE "^ *$SLEEPER_PID +1 +client backend +postgres +postgres" "$E2E_DIR/ps.txt" ||
	note "ps: $(tr '\n' '|' <"$E2E_DIR/ps.txt" | head -c 1200)"
sql -c "select pg_cancel_backend($SLEEPER_PID)" >/dev/null
wait "$SLEEPER_JOB"

# --- an advisory lock: Lock/advisory, woken by the session that unlocked
# The holder's session stays open: it unlocks once the watcher has
# subscribed, 0.3 s later, however long psql and pgoffctl took to start.
session_open holder && session_run holder "select pg_advisory_lock(42);" ||
	not_ok "the holder took the advisory lock"
holder=${SESSION_PID[holder]}
psql -X -q -At -c "select pg_advisory_lock(42)" >/dev/null &
waiter_job=$!
IFS='|' read -r waiter psa_type psa_event <<<"$(psa_wait_for "wait_event = 'advisory'")"
note "holder $holder, waiter $waiter: pg_stat_activity says $psa_type/$psa_event"
member watch --pid "${waiter:-0}" --min 100ms --json --count 1 --timeout 20s >"$E2E_DIR/adv.out" &
adv_job=$!
watchers 1 || note "the watcher did not subscribe"
sleep 0.3
session_run holder "select pg_advisory_unlock(42);"
session_close holder
wait "$adv_job" "$waiter_job"
ev=$(cat "$E2E_DIR/adv.out")
note "advisory lock episode: $(jq -c "{intervals, blocked_ns, runq_ns, on_cpu_ns, waker: .waker.pid}" <<<"$ev")"
check "advisory lock: the same wait event as pg_stat_activity (Lock/advisory)" \
	[ "$(jq -r '.pg.wait_event_type + "/" + .pg.wait_event' <<<"$ev")" = "$psa_type/$psa_event" -a "$psa_event" = advisory ]
check "advisory lock: wait type lock" [ "$(jq -r .wait <<<"$ev")" = lock ]
check "advisory lock: woken by the session that unlocked ($holder)" [ "$(jq -r .waker.pid <<<"$ev")" = "$holder" ]
check "advisory lock: the waker's own wait event at wake time is given" \
	jqe '.waker.backend_type == "client backend" and (.waker | has("wait_event_info"))' <<<"$ev"

# --- pg_sleep: Timeout/PgSleep; SQL only for the query group
unwatch	# until pgoffd has seen the last watcher go
marker="pgoff-e2e-$RANDOM"
querier watch --view intervals --pg-wait Timeout:PgSleep --db postgres --min 200ms --json --count 1 \
	--timeout 20s >"$E2E_DIR/q.out" 2>&1 &
q_job=$!
member watch --view intervals --pg-wait timeout:pgsleep --db postgres --backend-type "client backend" --min 200ms \
	--json --count 1 --timeout 20s >"$E2E_DIR/m.out" 2>&1 &
m_job=$!
member watch --db other --type sleep --min 200ms --json --count 1 --timeout 20s \
	>"$E2E_DIR/d.out" 2>&1 &
d_job=$!
# every event of the two sessions, to say what the filters saw if one fails
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --min 100ms --json --timeout 20s \
	>"$E2E_DIR/all.out" 2>"$E2E_DIR/all.err" &
all_job=$!
watchers 4 || note "watchers did not all connect"
sleep 0.2
# Each session stays a moment after its sleep (idle: ClientRead, which
# no watcher here wants): pgoffd learns a backend's database and type
# from its title, which cannot be read once it has exited, and a backend
# younger than the 1 s scan is titled when its first event is read
# (README, "Using pgoffctl", filters).
psql -X -q -At -c "select pg_backend_pid(), pg_sleep(0.3) /* $marker */" -c '\! sleep 0.3' \
	>"$E2E_DIR/s1.out" &
s1_job=$!
psql -X -q -At -d other -c "select pg_backend_pid(), pg_sleep(0.4)" -c '\! sleep 0.3' >"$E2E_DIR/s2.out" &
wait "$s1_job" $!
wait "$q_job"; q_rc=$?
wait "$m_job"; m_rc=$?
wait "$d_job"; d_rc=$?
s1=$(cut -d'|' -f1 "$E2E_DIR/s1.out") s2=$(cut -d'|' -f1 "$E2E_DIR/s2.out")
check "pg_sleep: watchers with --pg-wait/--db/--type/--backend-type each got one event" \
	[ "$q_rc$m_rc$d_rc" = 000 ]
check "pg_sleep(0.3): Timeout/PgSleep, wait sleep, from its backend" \
	jqe --argjson p "$s1" '.pid == $p and .pg.wait_event_type == "Timeout" and .pg.wait_event == "PgSleep" and .wait == "sleep"' "$E2E_DIR/q.out"
dur=$(jq '.duration_ns / 1e9' "$E2E_DIR/q.out")
check "pg_sleep(0.3) lasted 0.3 s (pgoff: ${dur}s)" between "$dur" 0.29 0.5
check "a member of the query group sees the SQL" \
	jqe --arg m "$marker" '.query | contains($m)' "$E2E_DIR/q.out"
check "a plain member gets the same event without any query field" \
	jqe --argjson s "$(jq .seq "$E2E_DIR/q.out")" '.seq == $s and (has("query") | not)' "$E2E_DIR/m.out"
check "--db other --type sleep: only the backend in database other ($s2)" \
	jqe --argjson p "$s2" '.pid == $p and .pg.database == "other" and .wait == "sleep"' "$E2E_DIR/d.out" ||
	note "--db other watcher (exit $d_rc): $(head -c 300 "$E2E_DIR/d.out")"
unwatch "$all_job"
if [ "$q_rc$m_rc$d_rc" != 000 ]; then
	for p in "$s1" "$s2"; do
		note "all of $p's events of 100 ms or more:" $(jq -c --argjson p "${p:-0}" 'select(.pid? == $p) |
			{seq, type, duration_ns, wait, pg: (.pg | {wait_event, database, backend_type})}' "$E2E_DIR/all.out")
	done
fi

# --- names the broker does not know are usage errors, not empty streams
# usage_error RC TEXT: the exit code was 2 and bad.err says TEXT
usage_error() {
	[ "$1" = 2 ] && grep -qF "$2" "$E2E_DIR/bad.err" ||
		{ note "exit $1: $(head -c 300 "$E2E_DIR/bad.err")"; return 1; }
}
member watch --pg-wait Locks --count 1 >/dev/null 2>"$E2E_DIR/bad.err"
rc=$?
check "--pg-wait Locks: exit 2 naming the bad type" \
	usage_error "$rc" 'unknown PostgreSQL wait event type "Locks"' 
member watch --pg-wait Lock:rowlock --count 1 >/dev/null 2>"$E2E_DIR/bad.err"
rc=$?
check "--pg-wait Lock:rowlock: exit 2 naming the bad event" \
	usage_error "$rc" 'unknown PostgreSQL wait event "Lock:rowlock"' 
member watch --type disk --count 1 >/dev/null 2>"$E2E_DIR/bad.err"
check "--type disk: exit 2" [ $? = 2 ]

# --- an idle client: Client/ClientRead, the kernel sees an epoll wait
# The session stays open: idle from its first statement until the next,
# sent 1.3 s after the watcher has subscribed.
unwatch
session_open idle || not_ok "the idle session started"
idle=${SESSION_PID[idle]}
member watch --view intervals --pid "${idle:-0}" --min 1s --json --count 1 --timeout 20s \
	>"$E2E_DIR/idle.json" &
idle_watch=$!
watchers 1 || note "the watcher did not subscribe"
psa=$(sql -c "select state, wait_event_type, wait_event from pg_stat_activity where pid = ${idle:-0}")
sleep 1.3
session_run idle "select 1;"
session_close idle
wait "$idle_watch"
check "idle client: pg_stat_activity said idle|Client|ClientRead" [ "$psa" = "idle|Client|ClientRead" ]
check "idle client: Client/ClientRead, wait poll, kernel_wait poll, >= 1.2 s" \
	jqe '.pg.wait_event_type == "Client" and .pg.wait_event == "ClientRead" and .wait == "poll" and .kernel_wait == "poll" and .duration_ns >= 1200000000' "$E2E_DIR/idle.json"

# --- a cold read from disk, in a restarted cluster
# Sparse random ids defeat readahead; a blkio throttle on this one backend
# makes reads block long enough on a fast virtual disk.
sql -c "create table big (id int, x int, pad text)" \
	-c "insert into big select g, g % 100, repeat('x', 100) from generate_series(1, 200000) g order by random()" \
	-c "create index big_id on big (id)" -c "vacuum analyze big" -c "checkpoint"
old_cluster=$(jq --arg d "$PGDATA_DIR" '.clusters[] | select(.data_dir == $d) | .id' "$E2E_DIR/ps.json")
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$PGDATA_DIR' -m fast -w restart" >/dev/null 2>&1
# the new postmaster is found by a scan (every 1 s)
restarted() {
	member ps --json | jqe --argjson old "${old_cluster:-0}" --arg d "$PGDATA_DIR" \
		'any(.clusters[]; .data_dir == $d and .id != $old)'
}
wait_for 5 restarted || note "ps does not list the restarted cluster"
# (a failure in CI, with its reason: a cold read needs a disk under
# $PGDATA_DIR, and a throttle on it)
if ! on_block_device "$PGDATA_DIR"; then
	tap_skip "cold read from disk" "$BLOCK_DEV_WHY"
elif ! io_cgroup "$BLOCK_DEV" 200; then
	tap_skip "cold read from disk" "$E2E_CGROUP_WHY"
else
	unwatch
	# --type io: a tick's preemption inside a read the page cache holds
	# (the first query's catalog reads) is a DataFileRead interval too
	member watch --view intervals --pg-wait IO:DataFileRead --type io --db postgres --min 1ms --json --count 1 \
		--timeout 30s >"$E2E_DIR/io.out" 2>&1 &
	io_job=$!
	watchers 1 || note "the io watcher did not subscribe"
	cat >"$E2E_DIR/cold.sql" <<SQL
set max_parallel_workers_per_gather = 0;
set enable_seqscan = off;
set enable_bitmapscan = off;
select sum(x) from big where id = any(array(select generate_series(-10, -1)));
select pg_backend_pid() \g $E2E_CGROUP/cgroup.procs
\! sync; echo 3 > /proc/sys/vm/drop_caches
select sum(x) from big where id = any(array(select generate_series(1, 200000, 1000)));
SQL
	sql -f "$E2E_DIR/cold.sql" >/dev/null
	wait "$io_job"
	check "cold read: IO/DataFileRead waited for the disk (an io interval came), and the kernel saw io" \
		jqe '.pg.wait_event_type == "IO" and .pg.wait_event == "DataFileRead" and .wait == "io" and .kernel_wait == "io"' "$E2E_DIR/io.out" ||
		note "the watch got: $(head -c 400 "$E2E_DIR/io.out")"
	note "cold read's kernel stack: $(jq -r '.stack | join(" < ")' "$E2E_DIR/io.out" 2>/dev/null | head -c 600)"
	# waiting for a page or buffer the disk fills: the folio or buffer
	# wait, or the page cache's read path above it (inlining moves which
	# of them the kernel's stack shows)
	check "cold read: the kernel stack is the page cache waiting for the disk" \
		jqe '.stack | map(test("folio_wait|__folio_lock|wait_on_buffer|wait_on_page|io_schedule|filemap_")) | any' "$E2E_DIR/io.out"
	check "a restarted cluster is traced again, under a new cluster id" \
		jqe --argjson old "$old_cluster" --arg d "$PGDATA_DIR" '.pg.cluster.id != $old and .pg.cluster.data_dir == $d' "$E2E_DIR/io.out"

	# pg_read_binary_file reads with plain read(): no wait event is reported
	unwatch
	"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --type io --db postgres \
		--min 100us --json --timeout 60s >"$E2E_DIR/uninstr.out" 2>"$E2E_DIR/uninstr.err" &
	io_job=$!
	watchers 1 || note "the io watcher did not subscribe"
	cat >"$E2E_DIR/cold2.sql" <<SQL
select pg_relation_filepath('big');
select pg_backend_pid() \g $E2E_CGROUP/cgroup.procs
\! sync; echo 3 > /proc/sys/vm/drop_caches
select length(pg_read_binary_file(pg_relation_filepath('big')));
SQL
	sql -f "$E2E_DIR/cold2.sql" >/dev/null
	uninstrumented() {
		jqe -s 'any(.[]; .kernel_wait == "io" and .pg.wait_event == null and (.mismatch // "" | test("uninstrumented I/O")))' \
			"$E2E_DIR/uninstr.out"
	}
	wait_for 10 uninstrumented
	unwatch "$io_job"
	check "uninstrumented I/O: kernel io while PostgreSQL reported no wait event is flagged" \
		uninstrumented || note "io events seen: $(jq -c '{kernel_wait, wait_event: .pg.wait_event, mismatch}' "$E2E_DIR/uninstr.out" 2>/dev/null | head -5 | tr '\n' ' ')"
fi
