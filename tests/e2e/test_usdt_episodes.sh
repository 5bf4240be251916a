#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Episodes bounded by PostgreSQL's own wait probes (lock__wait__*,
# lwlock__wait__*): back-to-back row-lock waits are one episode each,
# the deadlock check does not split a wait, pg_sleep loops say they are
# inferred, LWLock episodes match the probe's hits, and a binary without
# the probes gives inferred episodes.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start deadlock_timeout=200ms synchronous_commit=off log_lock_waits=on ||
	{ not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);
	create table h(i int, t0 timestamptz, t1 timestamptz, t2 timestamptz);
	create table w(i int, a timestamptz, b timestamptz);
	create table ctl(done bool); insert into ctl values (false);"
# every LWLock wait counts, also those shorter than the default floor;
# no record, whose subscription would widen the kernel's filter to every
# interval of pgbench's backends. The ring (32 MiB) and each client's
# queue (64 MiB) hold many times what the 5 s of pgbench below make
# (about 3,000 episodes here): however long pgoffd or pgoffctl are
# descheduled, nothing may be lost.
e2e_start_broker --min-floor 1ns --record no --ringbuf-size 33554432 --queue-bytes 67108864 ||
	{ not_ok "start pgoffd"; exit 1; }
st=$("$PGOFFCTL" --socket "$SOCK" status --json)
check "status: the cluster's binary is probed with its 8 sites" \
	jqe '.usdt_binaries[] | select(.path == "/usr/lib/postgresql/15/bin/postgres") | .probed and .sites == 8' <<<"$st"
note "usdt_binaries: $(jq -c .usdt_binaries <<<"$st")"
# episode: boundary, event, start and end (epoch s), duration (ms),
# intervals, blocked, runq and on_cpu (ms)
episodes_of() {
	/usr/bin/python3 -c '
import json, sys, datetime
def ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") != "episode" or e["pid"] != int(sys.argv[2]):
        continue
    print(e["boundary"], e["pg"]["wait_event"], "%.6f" % ts(e["start"]),
          "%.6f" % ts(e["time"]), "%.3f" % (e["duration_ns"] / 1e6),
          e["intervals"], "%.3f" % (e["blocked_ns"] / 1e6),
          "%.3f" % (e["runq_ns"] / 1e6), "%.3f" % (e["on_cpu_ns"] / 1e6))
' "$@"
}
# episodes_seen FILE PID [AWK-CONDITION]: FILE has an episode of PID (one
# for which the condition on the fields above holds)
episodes_seen() {
	# (2>/dev/null: the line being written may be cut)
	episodes_of "$1" "$2" 2>/dev/null | awk "${3:-1} { seen = 1 } END { exit !seen }"
}

# 1. A holder takes the row, waits until the waiter queues behind it,
# keeps the row 2 ms more and commits, 200 times; the waiter asks for
# the row again at once: one wait per hold, back to back (when the
# holder takes the row again before the waiter ran, the waiter's next
# wait begins with no switch-out between the two).
cat >"$E2E_DIR/holder.sql" <<'SQL'
select set_config('pgoff.waiter', :'waiter', false) \g /dev/null
do $$
declare w int := current_setting('pgoff.waiter')::int;
        t0s timestamptz[]; t1s timestamptz[]; t2s timestamptz[];
begin
  for i in 1..200 loop
    perform 1 from t where id = 1 for update;
    while not exists (select 1 from pg_locks where pid = w and not granted) loop
    end loop;
    t0s := t0s || clock_timestamp();
    perform pg_sleep(0.002);
    t1s := t1s || clock_timestamp();
    commit;
    t2s := t2s || clock_timestamp();
  end loop;
  insert into h select i, t0s[i], t1s[i], t2s[i] from generate_series(1, 200) i;
  update ctl set done = true;
end $$;
SQL
cat >"$E2E_DIR/waiter.sql" <<'SQL'
select pg_backend_pid();
do $$
begin
  loop
    perform 1 from t where id = 1 for update;
    commit;
    exit when (select done from ctl);
  end loop;
end $$;
SQL
# ("${AS_MEMBER[@]}": $! is pgoffctl itself, which unwatch stops)
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait Lock --json \
	>"$E2E_DIR/w1.json" 2>"$E2E_DIR/w1.err" &
w1=$!
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait Lock --min 50ms --json \
	>"$E2E_DIR/w50.json" 2>&1 &
w50=$!
watchers 2 || not_ok "two watchers subscribed"
sql -f "$E2E_DIR/waiter.sql" >"$E2E_DIR/waiter.out" &
wj=$!
# psql may take seconds to connect on a loaded machine (the ASan run)
WAIT_STEP=0.01 wait_for 10 [ -s "$E2E_DIR/waiter.out" ] ||
	not_ok "the waiter's psql printed its backend's pid (gave up after 10 s)"
wpid=$(head -n1 "$E2E_DIR/waiter.out")
sql -v waiter="$wpid" -f "$E2E_DIR/holder.sql"
wait "$wj"
# the last wait ended at the holder's last commit (after its t1): once
# that episode is there, all are (pgoffd passes them on in order)
last_t1=$(sql -c "select extract(epoch from max(t1)) from h")
wait_for 10 episodes_seen "$E2E_DIR/w1.json" "$wpid" "\$4 >= ${last_t1:-0} - 0.001"
unwatch "$w1" "$w50"
sql -c "copy (select i, extract(epoch from t0), extract(epoch from t1), extract(epoch from t2) from h order by i) to stdout" >"$E2E_DIR/h.txt"
episodes_of "$E2E_DIR/w1.json" "$wpid" >"$E2E_DIR/w.txt"
note "waiter $wpid: $(wc -l <"$E2E_DIR/w.txt") Lock episodes; boundaries: $(cut -d' ' -f1 "$E2E_DIR/w.txt" | sort | uniq -c | tr -s ' \n' ' ')"
n=$(wc -l <"$E2E_DIR/w.txt")
check "200 holds give 200 +- 2 waiter episodes ($n)" between "$n" 198 202
# (one more kind is PostgreSQL's own: when the holder comes back for the
# row before the waiter's commit, the holder queues behind the waiter
# holding the row's tuple lock, and the waiter's next request waits on
# that tuple lock first; seen once in 200 holds under ASan)
n_xid=$(grep -c '^exact transactionid ' "$E2E_DIR/w.txt")
n_tuple=$(grep -c '^exact tuple ' "$E2E_DIR/w.txt")
check "all of them exact, on the holder's transactionid ($n_xid), or on the row's tuple lock where the holder queued behind the waiter ($n_tuple, at most 2)" \
	bash -c "! grep -v '^exact transactionid \|^exact tuple ' '$E2E_DIR/w.txt' && [ $n_tuple -le 2 ] && [ $n_xid -ge 198 ]" ||
	grep -v '^exact transactionid ' "$E2E_DIR/w.txt" | head -n 5 | sed 's/^/#   /'
# against the holder's own clock: it saw the waiter queued (t0), slept
# 2 ms and committed between t1 and t2. Each wait began before t0, and
# its waiter was woken by that commit: within 0.5 ms of [t1, t2], its end
# less the time it then waited for a CPU (runq_ns; on this 2-CPU VM up
# to ms) and at most its time counted on the CPU in the wait (on_cpu_ns:
# from the switch-in to the done probe, where a stalled vCPU's time goes,
# and that of a switch no tracer saw: test_runq). Measured against the
# end less runq_ns alone, in about 2,000 episodes of 10 runs 5 were 2-6
# ms late under load. The median must be within 0.5 ms and 95 % of them
# too; every outlier is printed.
/usr/bin/python3 - "$E2E_DIR/w.txt" "$E2E_DIR/h.txt" >"$E2E_DIR/cmp.txt" <<'PY'
import sys
w = [l.split() for l in open(sys.argv[1])]
h = [l.split() for l in open(sys.argv[2])]
bad, far, offs, runq = 0, 0, [], []
for x in w:
    start, end, rq, oncpu = float(x[2]), float(x[3]), float(x[7]) / 1000, float(x[8]) / 1000
    # woken in [end - runq - on_cpu, end - runq]
    woken, earliest = end - rq, end - rq - oncpu
    hold = min(h, key=lambda r: abs(float(r[2]) - woken))
    t0, t1, t2 = float(hold[1]), float(hold[2]), float(hold[3])
    off = 0 if earliest <= t2 and woken >= t1 else min(abs(earliest - t2), abs(woken - t1)) * 1000
    offs.append(abs(off))
    runq.append(rq * 1000)
    if start > t0 or off > 5:
        far += 1
    if start > t0 or off > 0.5:
        bad += 1
        print("#   episode %.6f..%.6f (runq %.3f ms, on cpu %.3f ms) vs hold %s %.6f, commit %.6f..%.6f" %
              (start, end, rq * 1000, oncpu * 1000, hold[0], t0, t1, t2))
offs.sort()
runq.sort()
print(bad, far, "%.3f %.3f %.3f" % (offs[len(offs) // 2], offs[-1], runq[-1]) if offs else "- - -")
PY
grep '^#' "$E2E_DIR/cmp.txt" | head -5
read -r bad far emed emax rqmax <<<"$(grep -v '^#' "$E2E_DIR/cmp.txt")"
note "waiter woken outside the holder's commit: median $emed ms, largest $emax ms; largest run-queue wait after it $rqmax ms"
check "episodes start before the holder saw them and are woken within 0.5 ms of its commit: median $emed ms (<= 0.5), $bad of $n are not (<= 5 %)" \
	/usr/bin/python3 -c "import sys; sys.exit(not ($n > 0 and $emed <= 0.5 and $bad * 20 <= $n))"
# (a hold the machine stretched past 50 ms is one of them: the same ones)
n50=$(episodes_of "$E2E_DIR/w50.json" "$wpid" | wc -l)
long=$(awk '$5 >= 50' "$E2E_DIR/w.txt" | wc -l)
check "watch --pg-wait Lock --min 50ms prints only those of 50 ms or more ($n50, of $long)" [ "$n50" = "$long" ]

# 2. One 1 s wait, split by the deadlock check at deadlock_timeout
# (200 ms) and by log_lock_waits' line: one episode.
# A holds the row 1 s after it sees B queued for it.
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait Lock --json \
	>"$E2E_DIR/dl.json" 2>&1 &
wdl=$!
watchers 1 || not_ok "watcher subscribed"
session_open a && session_open b || { not_ok "open psql sessions A and B"; exit 1; }
bpid=${SESSION_PID[b]}
session_run a "begin;" "update t set v = 1 where id = 1;" || not_ok "session A takes the row lock"
session_send b "update t set v = 2 where id = 1;"
session_run a "$(until_queued "$bpid")" "select pg_sleep(1);" "commit;" ||
	not_ok "session A holds the lock 1 s after B waits for it, then commits"
session_run b || not_ok "session B gets the row"
session_close a
session_close b
wait_for 10 episodes_seen "$E2E_DIR/dl.json" "$bpid"
unwatch "$wdl"
episodes_of "$E2E_DIR/dl.json" "$bpid" >"$E2E_DIR/dl.txt"
note "the 1 s wait: $(cat "$E2E_DIR/dl.txt")"
check "the deadlock check did not split it: one exact episode of the 1 s hold (0.95-2 s) with several intervals" \
	awk 'END { exit !(NR == 1 && $1 == "exact" && $5 >= 950 && $5 <= 2000 && $6 >= 2) }' "$E2E_DIR/dl.txt"
check "PostgreSQL logged the deadlock check's 'still waiting' for it" \
	grep -q "process $bpid still waiting" "$E2E_DIR/pg/log"

# 3. 300 x pg_sleep(0.002) in a PL/pgSQL loop: no probe. With a query id
# computed, the nested statements leave the backend's status entry alone:
# one inferred episode for the lot, its intervals counting the sleeps.
# With none computed, each nested statement writes its (zero) query id
# into the entry, so pgoff sees a statement between two sleeps: each
# sleep is an episode of its own (PROTOCOL.md).
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait Timeout:PgSleep --json \
	>"$E2E_DIR/sl.json" 2>&1 &
wsl=$!
watchers 1 || not_ok "watcher subscribed"
declare -A sleep_pid=()
for ids in on off; do
	sql -c "select pg_backend_pid()" -c "set compute_query_id = $ids" \
		-c "do \$\$ begin for i in 1..300 loop perform pg_sleep(0.002); end loop; end \$\$" \
		>"$E2E_DIR/s-$ids.out"
	spid=$(head -n1 "$E2E_DIR/s-$ids.out")
	# the session's last episode comes when it exits
	wait_for 10 episodes_seen "$E2E_DIR/sl.json" "$spid"
	sleep_pid[$ids]=$spid
done
unwatch "$wsl"
episodes_of "$E2E_DIR/sl.json" "${sleep_pid[on]}" >"$E2E_DIR/sl.txt"
note "the pg_sleep loop, query ids on: $(cat "$E2E_DIR/sl.txt")"
# (a sleep whose latch was already set never leaves the CPU: no interval)
check "the pg_sleep loop with query ids is one inferred episode of 0.6 s or more, with about 300 intervals" \
	awk 'END { exit !(NR == 1 && $1 == "inferred" && $2 == "PgSleep" && $6 >= 270 && $5 >= 600) }' "$E2E_DIR/sl.txt"
episodes_of "$E2E_DIR/sl.json" "${sleep_pid[off]}" >"$E2E_DIR/sl-off.txt"
note "the pg_sleep loop, query ids off: $(wc -l <"$E2E_DIR/sl-off.txt") episodes, $(awk '{ n += $6 } END { print n }' "$E2E_DIR/sl-off.txt") intervals"
check "... without query ids, each sleep is its own episode (>= 270 of one interval)" \
	awk '$1 == "inferred" && $2 == "PgSleep" && $6 == 1 { n++ } END { exit !(n >= 270 && NR <= 300) }' \
		"$E2E_DIR/sl-off.txt"

# 3b. A lock wait that ends in an error (lock_timeout) has no done probe:
# the episode ends when the backend waits for its client again.
# A holds the row until B has given up.
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait Lock --json \
	>"$E2E_DIR/lt.json" 2>&1 &
wlt=$!
watchers 1 || not_ok "watcher subscribed"
session_open a || { not_ok "open psql session A"; exit 1; }
session_run a "begin;" "update t set v = 1 where id = 1;" || not_ok "session A takes the row lock"
psql -X -q -At -c "select pg_backend_pid()" -c "set lock_timeout = '300ms'" \
	-c "update t set v = 2 where id = 1" >"$E2E_DIR/lt.out" 2>"$E2E_DIR/lt.err"
ltpid=$(head -n1 "$E2E_DIR/lt.out")
session_run a "commit;" || not_ok "session A commits"
session_close a
wait_for 10 episodes_seen "$E2E_DIR/lt.json" "$ltpid"
unwatch "$wlt"
episodes_of "$E2E_DIR/lt.json" "$ltpid" >"$E2E_DIR/lt.txt"
note "the wait cut by lock_timeout ($(head -c 100 "$E2E_DIR/lt.err")): $(cat "$E2E_DIR/lt.txt")"
check "a wait cut by lock_timeout is one episode of about 300 ms, its end inferred" \
	awk 'END { exit !(NR == 1 && $1 == "inferred" && $2 == "transactionid" && $5 > 250 && $5 < 600) }' "$E2E_DIR/lt.txt"

# 4. pgbench: an episode for every lwlock__wait__start in traced
# processes, whether the wait left the CPU or not.
su postgres -s /bin/sh -c "$PGBIN/pgbench -h '$PGHOST' -p $PGPORT -i -s 1 -q postgres" >"$E2E_DIR/pgbench-i.log" 2>&1 ||
	not_ok "pgbench -i: $(tail -3 "$E2E_DIR/pgbench-i.log")"
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait LWLock --min 1ns --json \
	>"$E2E_DIR/lw.json" 2>"$E2E_DIR/lw.err" &
wlw=$!
watchers 1 || not_ok "watcher subscribed"
st0=$("$PGOFFCTL" --socket "$SOCK" status --json)
su postgres -s /bin/sh -c "$PGBIN/pgbench -h '$PGHOST' -p $PGPORT -c 8 -j 2 -T 5 postgres" >"$E2E_DIR/pgbench.log" 2>&1
st1=$("$PGOFFCTL" --socket "$SOCK" status --json)
# delta COUNTER [TO]: its growth from st0 to TO (st1)
delta() { echo $(( $(jq ".counters.$1" <<<"${2:-$st1}") - $(jq ".counters.$1" <<<"$st0") )); }
hits=$(delta usdt_lwlock_wait_start)
done_hits=$(delta usdt_lwlock_wait_done)
# what was lost so far, in the kernel's ring or this client's queue
lost_now() { st2=$("$PGOFFCTL" --socket "$SOCK" status --json); lost=$(( $(delta ringbuf_full "$st2") + $(delta client_queue_full "$st2") )); }
# the last episodes reach the watch a little later
exact_lw() { nlw=$(jq -s '[.[] | select(.type == "episode" and .boundary == "exact")] | length' "$E2E_DIR/lw.json"); }
# ... then none for 0.5 s: an extra one still on its way is counted too
all_there() { exact_lw; lost_now; [ "$((nlw + lost))" -ge $((hits - 2)) ]; }
settled() { local n=$nlw; sleep 0.5; exact_lw; [ "$nlw" = "$n" ]; }
wait_for 10 all_there && wait_for 5 settled
unwatch "$wlw"
exact_lw
lost_now	# a slow watcher's queue may have overflowed until the end
ninf=$(jq -s '[.[] | select(.type == "episode" and .boundary != "exact")] | length' "$E2E_DIR/lw.json")
note "pgbench: $(grep -E '^tps' "$E2E_DIR/pgbench.log" | head -1); lwlock__wait__start $hits, done $done_hits; exact LWLock episodes $nlw, others $ninf; lost $lost; watch said: $(head -c 300 "$E2E_DIR/lw.err")"
# the ring and the queues hold the whole run (see pgoffd's options above):
# nothing lost, and one exact episode for each hit
check "LWLock contention: exact episodes ($nlw) == lwlock__wait__start hits ($hits), +-2 at the edges, none lost ($lost)" \
	bash -c "[ $hits -gt 0 ] && [ $lost = 0 ] && [ \$(( $nlw - $hits )) -le 2 ] && [ \$(( $nlw - $hits )) -ge -2 ]"

# 5. Binaries that appear after pgoffd started: the prober links a
# root-owned one (exact episodes), says why a build without probes is
# not linked (inferred episodes), and refuses the trusted outsider's own
# copy of postgres: no uprobe is ever placed in a file someone else may
# change.
# copy_postgres DIR [objcopy options]: a copy of postgres that finds its
# libraries and share files through DIR (relative to itself)
copy_postgres() {
	mkdir -p "$1/lib/postgresql/15/bin"
	if [ $# -gt 1 ]; then
		objcopy "${@:2}" "$PGBIN/postgres" "$1/lib/postgresql/15/bin/postgres"
	else
		cp "$PGBIN/postgres" "$1/lib/postgresql/15/bin/postgres"
	fi
	ln -s "$PGBIN/../lib" "$1/lib/postgresql/15/lib"
	ln -s /usr/share "$1/share"
}
# restart_cluster_with BINARY: the test's cluster, anew, from BINARY
restart_cluster_with() {
	su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$PGDATA_DIR' -m fast stop" >/dev/null 2>&1
	rm -rf "$E2E_DIR/pg"
	PGCTL_POSTGRES="-p $1" pg_start deadlock_timeout=10s &&
		sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
}
# binary_row PATH: its row in status.usdt_binaries, once the prober told
binary_row() {
	row=$("$PGOFFCTL" --socket "$SOCK" status --json |
		jq -c --arg p "$1" '.usdt_binaries[] | select(.path == $p)')
	[ -n "$row" ]
}
# a row-lock wait of a new backend: the holder keeps the row 0.4 s after
# the waiter queued for it; the wait's episodes in $1.txt
lock_wait_episodes() {
	"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view waits --pg-wait Lock --json \
		>"$E2E_DIR/$1.json" 2>&1 &
	local wj=$! wpid
	watchers 1 || not_ok "$1: watcher subscribed"
	session_open "$1-a" && session_open "$1-b" || { not_ok "$1: open psql sessions"; exit 1; }
	wpid=${SESSION_PID[$1-b]}
	session_run "$1-a" "begin;" "update t set v = 1 where id = 1;" || not_ok "$1: the holder takes the row lock"
	session_send "$1-b" "update t set v = 2 where id = 1;"
	session_run "$1-a" "$(until_queued "$wpid")" "select pg_sleep(0.4);" "commit;" ||
		not_ok "$1: the holder keeps the row 0.4 s after the waiter queued, then commits"
	session_run "$1-b" || not_ok "$1: the waiter gets the row"
	session_close "$1-a"
	session_close "$1-b"
	wait_for 10 episodes_seen "$E2E_DIR/$1.json" "$wpid"
	unwatch "$wj"
	episodes_of "$E2E_DIR/$1.json" "$wpid" >"$E2E_DIR/$1.txt"
	note "$1: $(cat "$E2E_DIR/$1.txt")"
}

late=$E2E_DIR/late
copy_postgres "$late"
restart_cluster_with "$late/lib/postgresql/15/bin/postgres" ||
	{ not_ok "start a copy of postgres after pgoffd"; exit 1; }
wait_for 10 binary_row "$late/lib/postgresql/15/bin/postgres"
note "the copy started after pgoffd: ${row:-no row}"
check "a root-owned binary started after pgoffd is probed with its 8 sites" \
	jqe '.probed and .sites == 8' <<<"${row:-null}"
lock_wait_episodes late
check "its lock wait is one exact episode of the 0.4 s hold (0.35-1 s)" \
	awk 'END { exit !(NR == 1 && $1 == "exact" && $2 == "transactionid" && $5 >= 350 && $5 <= 1000) }' "$E2E_DIR/late.txt"

# start_in_overlay DIR COPY: the test's cluster started anew, in a mount
# namespace of its own, from an overlay of COPY mounted at DIR/m
start_in_overlay() {
	mkdir -p "$1/m" "$1/up" "$1/work"
	su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$PGDATA_DIR' -m fast stop" >/dev/null 2>&1
	unshare --mount --propagation private sh -c "mount -t overlay overlay \
		-o 'lowerdir=$2,upperdir=$1/up,workdir=$1/work' '$1/m' &&
		exec su postgres -s /bin/sh -c \"$PGBIN/pg_ctl -D '$PGDATA_DIR' \
		-p '$1/m/lib/postgresql/15/bin/postgres' -w -l '$E2E_DIR/pg/log' \
		-o '-p $PGPORT -c listen_addresses= -k $E2E_DIR/pg -c deadlock_timeout=10s' start\"" \
		>"$1.log" 2>&1 || { cat "$1.log"; return 1; }
}
# The same file seen through a mount of another namespace (an overlay of
# the copy, as a user namespace may make of /usr/lib/postgresql): a new
# device and inode for the file underneath, which is probed already. It
# is refused, or the kernel would place the probes a second time and
# every hit would run twice.
ovl=$E2E_DIR/ovl
ovl_bin=$ovl/m/lib/postgresql/15/bin/postgres
start_in_overlay "$ovl" "$late" || { not_ok "start the cluster from an overlay of the copy"; exit 1; }
wait_for 10 binary_row "$ovl_bin"
note "the overlay's view of the copy: ${row:-no row}"
check "status: another mount's view of a probed binary is not linked again, and says why" \
	jqe '(.probed | not) and (.why | test("mount namespace"))' <<<"${row:-null}"
hits0=$(counter usdt_lock_wait_start)
lock_wait_episodes ovl
counter_past() { [ "$(counter usdt_lock_wait_start)" -gt "$1" ]; }
wait_for 5 counter_past "$hits0"
hits1=$(counter usdt_lock_wait_start)
note "usdt counters: $("$PGOFFCTL" --socket "$SOCK" status --json | jq -c '.counters | with_entries(select(.key | startswith("usdt")))')"
check "through the overlay the lock wait is one exact episode, its probe fired once ($hits0 -> $hits1)" \
	awk -v h="$((hits1 - hits0))" 'END { exit !(NR == 1 && $1 == "exact" && $2 == "transactionid" && h == 1) }' "$E2E_DIR/ovl.txt"

# The same again, of another copy (the kernel may give this overlay the
# device number the last one had: the same file again), where in
# pgoffd's namespace the path of that view is a FIFO of the user's (whose
# open would wait for them): refused at once, saying so, never opened.
fifo=$E2E_DIR/fifo
fifo_bin=$fifo/m/lib/postgresql/15/bin/postgres
copy_postgres "$fifo/copy"
mkdir -p "$(dirname "$fifo_bin")" && mkfifo "$fifo_bin"
start_in_overlay "$fifo" "$fifo/copy" || { not_ok "start the cluster from an overlay over a FIFO"; exit 1; }
wait_for 10 binary_row "$fifo_bin"
note "the overlay over a FIFO: ${row:-no row}"
check "status: a binary whose path in pgoffd's namespace is a FIFO is refused at once, and says so" \
	jqe '(.probed | not) and (.why | test("is a FIFO, not a regular file"))' <<<"${row:-null}"

nb=$E2E_DIR/noprobes/lib/postgresql/15/bin
copy_postgres "$E2E_DIR/noprobes" --remove-section .note.stapsdt
restart_cluster_with "$nb/postgres" || { not_ok "start the copy without probes"; exit 1; }
wait_for 10 binary_row "$nb/postgres"
note "the copy without probes: ${row:-no row}"
check "status: the copy without probes is not probed, and says why" \
	jqe '(.probed | not) and (.why | test("no wait probes"))' <<<"${row:-null}"
lock_wait_episodes np
check "without probes the lock wait is one inferred episode" \
	awk 'END { exit !(NR == 1 && $1 == "inferred" && $2 == "transactionid") }' "$E2E_DIR/np.txt"

# the outsider, trusted (--trust-uids), runs a cluster from a copy of
# postgres they own: traced, never probed
own=$E2E_DIR/outsider
mkdir -m 0755 "$own" && chown "$E2E_OUTSIDER" "$own"
as "$E2E_OUTSIDER" bash -c "$(declare -f copy_postgres); PGBIN=$PGBIN; copy_postgres '$own'"
as "$E2E_OUTSIDER" "$PGBIN/initdb" -D "$own/data" -A trust -U outsider >"$E2E_DIR/out-initdb.log" 2>&1 ||
	{ not_ok "the outsider's initdb"; cat "$E2E_DIR/out-initdb.log"; exit 1; }
e2e_stop_broker TERM
e2e_start_broker --trust-uids "$E2E_OUTSIDER" || { not_ok "start pgoffd trusting the outsider"; exit 1; }
oport=$((20000 + RANDOM % 20000))
as "$E2E_OUTSIDER" "$PGBIN/pg_ctl" -D "$own/data" -p "$own/lib/postgresql/15/bin/postgres" -w \
	-l "$own/log" -o "-p $oport -k $own -c listen_addresses=" start >/dev/null 2>&1 ||
	{ not_ok "the outsider's cluster"; cat "$own/log"; exit 1; }
opm=$(head -n1 "$own/data/postmaster.pid")
wait_for 10 binary_row "$own/lib/postgresql/15/bin/postgres"
note "the outsider's copy: ${row:-no row}; the cluster: $(member ps --json | jq -c --argjson p "$opm" '[.processes[] | select(.pid == $p)] | length') traced postmaster"
check "status: the outsider's copy of postgres is refused, and says why" \
	jqe '(.probed | not) and (.why | test("owned by root"))' <<<"${row:-null}"
# its backends are traced: a lock wait there is an inferred episode, and
# no probe fired (none is placed in their file)
export PGHOST=$own PGPORT=$oport PGUSER=outsider
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
hits0=$(counter usdt_lock_wait_start)
lock_wait_episodes outsider
hits1=$(counter usdt_lock_wait_start)
check "the outsider's lock wait is one inferred episode, and no lock probe fired ($hits0 -> $hits1)" \
	awk -v h="$((hits1 - hits0))" 'END { exit !(NR == 1 && $1 == "inferred" && $2 == "transactionid" && h == 0) }' "$E2E_DIR/outsider.txt"
as "$E2E_OUTSIDER" "$PGBIN/pg_ctl" -D "$own/data" -m immediate stop >/dev/null 2>&1
