#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# e2e-timeout: 1200 (it may build its test roots with debootstrap first)
# Every PostgreSQL major Debian ships, each run like a container from a
# root of its own (roots.sh): 13 (bullseye), 17 (trixie), 18 (sid), 19
# (experimental); 15, the host's, is what the other tests run. For each:
# a row-lock wait, pg_sleep, an idle client, a WAL flush and a cold read,
# each compared with what that server's own pg_stat_activity says for the
# same backend during the wait; ps against pg_stat_activity for every
# process; for 17 and later every name of the live pg_wait_events known to
# pgoff's table for that major. 13 exports no wait event pointer: its
# events must say so (pg.missing) while the kernel's side, the labels from
# the process title and the wakers still work. 18 and 19 read through io
# workers (io_method=worker) and io_uring: the backend shows what
# pg_stat_activity shows, woken by an io worker, and the io workers' own
# reads are their own events.
#
# PGOFF_VERSIONS="13 19" runs some of them; "15" adds the host's own, run
# the same way (chroot /), about 20 s a pass. Roots are built on first use
# (minutes each, cached in /var/cache/pgoff-tests/roots for 7 days).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roots.sh"
e2e_require
for c in debootstrap unshare chroot setpriv findmnt flock; do
	command -v "$c" >/dev/null || { not_ok "$c is needed (make deps)"; exit 1; }
done
e2e_setup

VERSIONS=${PGOFF_VERSIONS:-13 17 18 19}
VCG=/sys/fs/cgroup/blkio/pgoff-versions-$$	# throttled reads and writes
versions_cleanup() {
	local j
	pgroot_stop_all || not_ok "servers stopped and nothing left mounted under $PGOFF_ROOTS"
	# watchers and sessions a failed check left behind (not the broker:
	# e2e_cleanup stops it and shows its log if it died)
	for j in $(jobs -p); do [ "$j" = "${E2E_BROKER_PID:-}" ] || kill "$j" 2>/dev/null; done
	[ -d "$VCG" ] && rmdir "$VCG" 2>/dev/null
	e2e_cleanup
}
trap versions_cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- the roots first: a build (minutes) is not a version's time
for M in $VERSIONS; do
	pg_root_ensure "$M" || not_ok "pg$M: its root file system could be built"
done
# the names work's dump tool (make test builds it for both builds):
# Type:Name lines of pgoff's table
DUMP=$E2E_TOP/$PGOFF_BUILD/tests/pg_wait_names_dump

# every LWLock episode counts, also those under the default floor; no
# record, whose subscription would widen the kernel's filter to every
# interval of pgbench's backends. The ring (32 MiB) and each client's
# queue (64 MiB) hold many times what 5 s of pgbench make: nothing may
# be lost, however long pgoffd or pgoffctl are descheduled.
roots_unlocked e2e_start_broker --min-floor 1ns --record no --ringbuf-size 33554432 \
	--queue-bytes 67108864 || { not_ok "start pgoffd"; exit 1; }
majmin=$(findmnt -no MAJ:MIN -T "$PGOFF_ROOTS")
[ -e "/sys/dev/block/$majmin/partition" ] && majmin=$(cat "/sys/dev/block/$majmin/../dev")
if ! { mkdir -p "$VCG" && echo "$majmin 8388608" >"$VCG/blkio.throttle.read_bps_device" &&
	echo "$majmin 20" >"$VCG/blkio.throttle.write_iops_device"; }; then
	not_ok "a blkio cgroup throttles reads and writes ($VCG, device $majmin)"
	exit 1
fi

# session OUT [psql args...]: a session of $R's server that prints its pid
# first; S_NSPID (as its server sees it), S_PID (here), S_JOB
session() {
	local out=$1; shift
	pgroot_sql "$R" -c "select pg_backend_pid()" "$@" >"$out" 2>&1 &
	S_JOB=$!
	WAIT_STEP=0.01 wait_for 10 test -s "$out"
	S_NSPID=$(head -n1 "$out")
	S_PID=$(hostpid "$S_NSPID")
}

# gate NAME: a psql command (-c) that waits, client side, until
# open_gate NAME: what follows it runs once the test is ready (a watch
# subscribed) instead of after a fixed pause that a slow start may
# outlast; it gives up after 60 s (a test that failed before opening it)
gate() {
	printf '\\! i=0; while [ ! -e %s ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done' \
		"'${PGR_SOCK_IN[$R]}/$1.go'"
}
# gate_sql NAME: the same, waited for by the backend itself, in 20 ms
# sleeps: its wait for the client stays short, and the first long
# interval is the statement after it
gate_sql() {
	printf '%s' "do \$\$ declare i int := 0; begin
		while (pg_stat_file('${PGR_SOCK_IN[$R]}/$1.go', true)).size is null and i < 3000 loop
			perform pg_sleep(0.02); i := i + 1; end loop; end \$\$"
}
open_gate() { touch "${PGR_DIR[$R]}/$1.go"; }
# watch_then_open GATE N PID MIN FILE [watch options]: watch_pid in the
# background (W_JOB), and once N watches are subscribed, open GATE
watch_then_open() {
	local g=$1 n=$2; shift 2
	watch_pid "$@" &
	W_JOB=$!
	watchers "$n" 10 || note "  the watch of $1 did not subscribe"
	open_gate "$g"
}

# psa NSPID CONDITION: backend_type|datname|usename|wait_event_type|
# wait_event|state of that pid in $R's pg_stat_activity, polled for up to
# 5 s until CONDITION holds (empty if it never did)
psa() {
	PSA_ROW=
	WAIT_STEP=0.02 wait_for 5 psa_row "$@"
	echo "$PSA_ROW"
}
psa_row() {
	PSA_ROW=$(pgroot_sql "$R" -c "select backend_type, coalesce(datname, ''), coalesce(usename, ''),
		coalesce(wait_event_type, ''), coalesce(wait_event, ''), coalesce(state, '')
		from pg_stat_activity where pid = $1 and ($2)" 2>/dev/null)
	[ -n "$PSA_ROW" ]
}

# agrees WHAT FILE ROW [JQ [WAIT]]: pgoff's first event in FILE says what
# pg_stat_activity's ROW said: wait event (13: none, and why; WAIT, a jq
# test of the event and $wet/$we, replaces "the same"), backend type,
# database, user, the server's major; JQ must hold too. Prints both on
# failure.
agrees() {
	local what=$1 file=$2 row=$3 extra=${4:-true} bt db us wet we st
	IFS='|' read -r bt db us wet we st <<<"$row"
	local want=${5:-'.pg.wait_event_type == $wet and .pg.wait_event == $we'}
	[ "$M" -lt 14 ] && want='.pg.wait_event == null and (.pg.missing.wait_event // "" | test("my_wait_event_info"))'
	if [ -n "$row" ] && head -n1 "$file" | jqe --arg wet "$wet" --arg we "$we" --arg bt "$bt" \
		--arg db "$db" --arg us "$us" --arg v "$M" "$want"' and .pg.backend_type == $bt and
		(.pg.database // "") == $db and (.pg.user // "") == $us and
		(.pg.cluster.version | test("^" + $v + "([.]|beta|rc|devel)")) and ('"$extra"')'; then
		ok "pg$M: $what: pgoff agrees with pg_stat_activity ($bt, $wet:$we)"
	else
		not_ok "pg$M: $what: pgoff agrees with pg_stat_activity"
		note "  pg_stat_activity: ${row:-no such row}"
		note "  pgoff: $(head -c 1500 "$file" | head -n1) $(head -c 300 "$file.err" 2>/dev/null)"
		# what pgoffd knew then: the session's pid here and inside, its
		# client backends, and the counters of what it lost or held
		note "  session: pid ${S_PID:-?} (${S_NSPID:-?} inside); ps's client backends: $(member ps --json |
			jq -c '[.processes[] | select(.backend_type == "client backend") | [.pid, .database]]')"
		note "  status counters not 0: $(member status --json | jq -c '.counters | with_entries(select(.value != 0))')"
	fi
}

# watch_pid PID MIN FILE [watch options]: one interval of PID, at least MIN
watch_pid() {
	local pid=$1 min=$2 file=$3; shift 3
	member watch --view intervals --pid "${pid:-1}" --min "$min" --json --count 1 --timeout 20s \
		"$@" >"$file" 2>"$file.err"
}

# ps_agrees: every process pg_stat_activity shows, as pgoff's ps shows it
ps_agrees() {
	local psaf=$D/psa.txt psf=$D/ps.json n=0 bad=0 nspid host rest want got
	# the session's backend is known once a discovery scan found it
	wait_for 5 listed "$S_PID"
	# autovacuum workers come and go between the two reads: not compared
	pgroot_sql "$R" -F '|' -c "select pid, backend_type, coalesce(datname, '-'), coalesce(usename, '-')
		from pg_stat_activity where pid <> pg_backend_pid() and backend_type <> 'autovacuum worker'
		order by pid" >"$psaf"
	member ps --json >"$psf"
	while IFS='|' read -r nspid rest; do
		host=$(hostpid "$nspid") || continue
		want=$rest
		# titles name the user of client backends and walsenders only
		case ${want%%|*} in "client backend"|walsender) ;; *) want=${want%|*}'|-' ;; esac
		got=$(jq -r --argjson p "$host" '.processes[] | select(.pid == $p) |
			"\(.backend_type)|\(.database // "-")|\(.user // "-")"' "$psf")
		n=$((n + 1))
		[ "$got" = "$want" ] || { bad=$((bad + 1)); note "  pid $host ($nspid inside): pg_stat_activity '$want', ps '$got'"; }
	done <"$psaf"
	check "pg$M: ps agrees with pg_stat_activity on backend type, database, user ($n processes, $bad differ)" \
		[ "$n" -ge 5 -a "$bad" = 0 ]
	if [ "$n" -lt 5 ]; then
		note "  pg_stat_activity (pids inside): $(tr '\n' ';' <"$psaf")"
		note "  the postmaster's children here: $(for p in $(pgrep -P "${PGR_PM[$R]}"); do
			printf '%s=%s ' "$p" "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null)"; done)"
	fi
}

# listed PID: pgoff's ps lists PID
listed() { member ps --json | jqe --argjson p "${1:-0}" 'any(.processes[]; .pid == $p)'; }

# traces_cluster: pgoff's ps lists $R's postmaster as a cluster; CL it
traces_cluster() {
	CL=$(member ps --json | jq -c --argjson pm "${PGR_PM[$R]}" '.clusters[] | select(.postmaster_pid == $pm)')
	[ -n "$CL" ]
}

# wait_events_known: every type:name of the live pg_wait_events (17+) is
# in pgoff's table for that major and minor release, as the names work's
# tool prints it (pg_wait_names_dump [-m MINOR] MAJOR: Type:Name lines)
wait_events_known() {
	local live=$D/pg_wait_events.txt known=$D/known.txt
	pgroot_sql "$R" -c "select type || ':' || name from pg_wait_events order by 1" >"$live"
	if [ ! -x "$DUMP" ]; then
		not_ok "pg$M: every one of the $(wc -l <"$live") pg_wait_events is known to pgoff (no $DUMP: the names work is not here)"
		return
	fi
	# the names of this minor release (-m): a later minor may add events
	local minor
	minor=$(pgroot_sql "$R" -c "select current_setting('server_version_num')::int % 100")
	"$DUMP" -m "$minor" "$M" 2>"$known.err" | sort -u >"$known"
	[ -s "$known.err" ] && note "  $DUMP -m $minor $M: $(head -c 300 "$known.err")"
	local missing
	missing=$(sort -u "$live" | comm -23 - "$known")
	check "pg$M: every one of the $(wc -l <"$live") pg_wait_events is known to pgoff ($(grep -c . <<<"$missing") not)" \
		[ -s "$known" -a -z "$missing" ]
	[ -n "$missing" ] && note "  unknown to pgoff: $(head -n 30 <<<"$missing" | tr '\n' ' ')"
}

# io_without_wait_event PSA_TOP FILE: 13's cold read: PostgreSQL said
# DataFileRead, pgoff saw the kernel's io, with a stack, and why it has no
# wait event
io_without_wait_event() {
	[ "$1" = IO:DataFileRead ] && jqe -s 'any(.[]; .wait == "io" and .kernel_wait == "io" and
		(.pg.missing.wait_event // "" | test("my_wait_event_info")) and (.stack | length > 0))' "$2"
}

# workers_read PSA_TOP PGOFF_TOP FILE: the io workers' reads
workers_read() {
	[ -n "$1" ] && [ "$2" = "$1" ] && jqe -s 'any(.[]; .wait == "io" and .kernel_wait == "io" and
		.pg.backend_type == "io worker")' "$3"
}

# top COUNTS: the first entry of uniq -c output (names may have spaces)
top() { head -n1 <<<"$1" | sed -E 's/^ *[0-9]+ //'; }

# io_workers: the host pids of $R's io workers, one a line
io_workers() {
	local w
	pgroot_sql "$R" -c "select pid from pg_stat_activity where backend_type = 'io worker'" |
		while read -r w; do hostpid "$w"; done
}

# cold_read METHOD: a sequential scan of a table 3x shared_buffers, page
# cache dropped, reads throttled: the backend's waits as pgoff and
# pg_stat_activity see them; with io workers, theirs too
cold_read() {
	local method=$1 f=$D/cold-$1 workers=() w wflags=() psa_rows=$D/cold-$1.psa
	# the scan starts once the watches have subscribed and the cache is dropped
	session "$f.out" -c "set max_parallel_workers_per_gather = 0" -c "$(gate "cold-$method")" \
		-c "select count(*) from big"
	local backend=$S_PID job=$S_JOB nspid=$S_NSPID
	echo "$backend" >"$VCG/cgroup.procs"
	if [ "$method" = worker ]; then
		# the io workers do the reads: throttle them too
		mapfile -t workers < <(io_workers)
		for w in "${workers[@]}"; do echo "$w" >"$VCG/cgroup.procs"; wflags+=(--pid "$w"); done
		member watch --view intervals "${wflags[@]}" --min 1ms --json >"$f.workers.json" 2>&1 &
		local wjob=$!
	fi
	member watch --view intervals --pid "$backend" --min 1ms --json >"$f.json" 2>"$f.json.err" &
	local bjob=$!
	watchers "$([ "$method" = worker ] && echo 2 || echo 1)"
	sync; echo 3 >/proc/sys/vm/drop_caches
	open_gate "cold-$method"
	: >"$psa_rows"
	# pg_stat_activity sampled until the scan is done
	sampled_until_gone() {
		pgroot_sql "$R" -c "select pid, backend_type, coalesce(wait_event_type, '-') || ':' || coalesce(wait_event, '-')
			from pg_stat_activity where pid = $nspid or backend_type = 'io worker'" >>"$psa_rows" 2>/dev/null
		gone "$job"
	}
	WAIT_STEP=0.01 wait_for 120 sampled_until_gone
	sleep 0.2
	kill "$bjob" ${wjob:+"$wjob"} 2>/dev/null; wait "$bjob" ${wjob:+"$wjob"} 2>/dev/null
	# what each side saw for the backend: pg_stat_activity's samples of
	# it in an IO wait, pgoff's I/O intervals (13: the kernel's)
	local psa_ev pg_ev
	psa_ev=$(awk -F'|' -v p="$nspid" '$1 == p && $3 ~ /^IO:/ { print $3 }' "$psa_rows" | sort | uniq -c | sort -rn)
	pg_ev=$(jq -r 'select(.type == "offcpu" and .wait == "io") |
		"\(.pg.wait_event_type // "-"):\(.pg.wait_event // "-")"' "$f.json" | sort | uniq -c | sort -rn)
	note "  cold read ($method), backend $backend: pg_stat_activity sampled $(tr -s ' \n' ' ' <<<"$psa_ev")"
	note "  cold read ($method), backend $backend: pgoff io intervals $(tr -s ' \n' ' ' <<<"$pg_ev")," \
		"$(jq -s '[.[] | select(.tid != .pid)] | length' "$f.json") of other threads (io_uring's)"
	local top_psa top_pg
	top_psa=$(top "$psa_ev")
	top_pg=$(top "$pg_ev")
	if [ "$M" -lt 14 ]; then
		check "pg$M: cold read: pg_stat_activity said ${top_psa:-nothing} (IO:DataFileRead); pgoff saw kernel io with a stack, no wait event, and why" \
			io_without_wait_event "$top_psa" "$f.json"
	else
		check "pg$M: cold read ($method): the backend's main I/O wait is the same for pgoff and pg_stat_activity (${top_pg:-none} / ${top_psa:-none})" \
			[ -n "$top_psa" -a "$top_pg" = "$top_psa" ]
	fi
	jqe -s 'length > 0' "$f.json" || note "  pgoff: $(head -c 300 "$f.json.err")"
	if [ "$method" = worker ]; then
		local wset
		# 19 grows its pool of io workers under load: those there now too
		wset=$( { printf '%s\n' "${workers[@]}"; io_workers; } | sort -u | paste -sd,)
		# its IO-class waits (class 0x0A of wait_event_info, whatever the
		# names table says), woken by one of them
		check "pg$M: cold read (worker): the backend was woken from its I/O wait by an io worker, with that worker's own wait event" \
			jqe -s --argjson ws "[$wset]" 'any(.[]; (((.pg.wait_event_info // 0) / 16777216 | floor) == 10) and
				(.waker.pid as $w | $ws | index($w)) != null and .waker.backend_type == "io worker" and
				(.waker | has("wait_event_info")))' "$f.json"
		jq -c -s '[.[] | select(((.pg.wait_event_info // 0) / 16777216 | floor) == 10) | .waker |
			{pid, comm, backend_type, wait_event_type, wait_event}] | group_by(.pid) |
			map(.[0] + {n: length})' "$f.json" 2>/dev/null |
			sed "s/^/#   io workers $wset; wakers of the backend's IO waits: /" | cut -c1-700
		psa_ev=$(awk -F'|' '$2 == "io worker" && $3 ~ /^IO:/ { print $3 }' "$psa_rows" | sort | uniq -c | sort -rn)
		pg_ev=$(jq -r 'select(.wait == "io") | "\(.pg.wait_event_type // "-"):\(.pg.wait_event // "-")"' \
			"$f.workers.json" | sort | uniq -c | sort -rn)
		note "  io workers ${workers[*]}: pg_stat_activity sampled $(tr -s ' \n' ' ' <<<"$psa_ev")"
		note "  io workers: pgoff io intervals $(tr -s ' \n' ' ' <<<"$pg_ev")"
		top_psa=$(top "$psa_ev")
		top_pg=$(top "$pg_ev")
		check "pg$M: cold read (worker): the io workers' own reads are their own wait event (${top_pg:-none} / ${top_psa:-none}), kernel io, backend type io worker" \
			workers_read "$top_psa" "$top_pg" "$f.workers.json"
	fi
	wait "$job"
}

# exact_lock_wait PID WATCH_JOB: PID's row-lock wait, as $D/waiter.out
# timed it (its pid, then the update's start and end, epoch seconds), is
# one exact episode of the same length in WATCH_JOB's $D/lock-ep.json
exact_lock_wait() {
	local t0 t1 span ep
	wait_for 5 jqe -s --argjson p "$1" 'any(.[]; .type == "episode" and .pid == $p)' "$D/lock-ep.json"
	kill "$2"; wait "$2" 2>/dev/null
	{ read -r _; read -r t0; read -r t1; } <"$D/waiter.out"
	span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
	ep=$(jq -c --argjson p "$1" 'select(.type == "episode" and .pid == $p) |
		{boundary, ms: (.duration_ns / 1e6), intervals, wait_event: .pg.wait_event}' "$D/lock-ep.json")
	check "pg$M: the row-lock wait is one exact episode as long as the update ($span ms): ${ep:-none}" \
		jqe -s --argjson span "${span:-0}" 'length == 1 and .[0].boundary == "exact" and
			.[0].ms <= $span and .[0].ms >= $span - 50 and $span > 1000' <<<"$ep"
	[ -n "$ep" ] || note "  watch said: $(head -c 300 "$D/lock-ep.err")"
}

# lwlock_episodes: pgbench in $R's root; every lwlock__wait__start that
# fired in its backends is one exact LWLock episode (14 and later: 13
# exports no wait event, so its episodes cannot be told apart by class).
# 4 clients: every interval of the cluster reaches the kernel's ring
# (--min 1ns), and with 8 the sanitizer build's pgoffd fell behind on 19
lwlock_episodes() {
	local st0 st1 st2 hits lost nlw ninf
	_pgr_run "$R" "${PGR_BIN[$R]}/pgbench" -h "${PGR_SOCK_IN[$R]}" -p "${PGR_PORT[$R]}" -U postgres \
		-i -s 1 -q postgres >"$D/pgbench-i.log" 2>&1 || not_ok "pg$M: pgbench -i: $(tail -3 "$D/pgbench-i.log")"
	member watch --view waits --pg-wait LWLock --min 1ns --json >"$D/lw.json" 2>"$D/lw.err" &
	local wlw=$!
	watchers 1
	st0=$("$PGOFFCTL" --socket "$SOCK" status --json)
	_pgr_run "$R" "${PGR_BIN[$R]}/pgbench" -h "${PGR_SOCK_IN[$R]}" -p "${PGR_PORT[$R]}" -U postgres \
		-c 4 -j 2 -T 5 postgres >"$D/pgbench.log" 2>&1
	st1=$("$PGOFFCTL" --socket "$SOCK" status --json)
	# (0 when a status did not answer: the check then says so)
	# delta COUNTER [TO]: its growth from st0 to TO (st1)
	delta() { local to=${2:-$st1}; echo $(( $(jq ".counters.$1 // 0" <<<"${to:-{\}}") - $(jq ".counters.$1 // 0" <<<"${st0:-{\}}") )); }
	hits=$(delta usdt_lwlock_wait_start)
	# what was lost so far, in the kernel's ring or this client's queue
	lost_now() { st2=$("$PGOFFCTL" --socket "$SOCK" status --json); lost=$(( $(delta ringbuf_full "$st2") + $(delta client_queue_full "$st2") )); }
	# the last episodes reach the watcher within its read interval
	exact_lw() { nlw=$(jq -s '[.[] | select(.type == "episode" and .boundary == "exact")] | length' "$D/lw.json"); }
	all_there() { exact_lw; lost_now; [ "$((nlw + lost))" -ge $((hits - 2)) ]; }
	wait_for 5 all_there
	kill "$wlw"; wait "$wlw" 2>/dev/null
	exact_lw
	lost_now	# a slow watcher's queue may have overflowed until the end
	ninf=$(jq -s '[.[] | select(.type == "episode" and .boundary != "exact")] | length' "$D/lw.json")
	note "  pgbench: $(grep -E '^tps' "$D/pgbench.log" | head -1); lwlock__wait__start $hits; exact LWLock episodes $nlw, others $ninf; lost $lost; watch said: $(head -c 200 "$D/lw.err")"
	# the ring and the queues hold the whole run (pgoffd's options above):
	# nothing lost, and one exact episode for each hit
	check "pg$M: LWLock contention: exact episodes ($nlw) == lwlock__wait__start hits ($hits), +-2 at the edges, none lost ($lost)" \
		bash -c "[ $hits -gt 0 ] && [ $lost = 0 ] && [ \$(( $nlw - $hits )) -le 2 ] && [ \$(( $nlw - $hits )) -ge -2 ]"
}

# probed: $R's binary, started after pgoffd, is in status.usdt_binaries
probed() {
	ROW=$("$PGOFFCTL" --socket "$SOCK" status --json | jq -c --arg p "$(_pgr_root "$R")${PGR_BIN[$R]}/postgres" \
		'.usdt_binaries[] | select(.path == $p and .probed)')
	[ -n "$ROW" ]
}

# query_id_agrees FILE QUERY: the first event in FILE carries the query
# id pg_stat_statements gives QUERY (14 and later); 13 computes none:
# the event says why
query_id_agrees() {
	local want
	want=$(pgroot_sql "$R" -c "select queryid from pg_stat_statements where query = '$2'")
	if [ "$M" -lt 14 ]; then
		check "pg$M: no query id, and why: $(head -n1 "$1" | jq -c .pg.missing.query_id)" \
			jqe '.pg.query_id == null and (.pg.missing.query_id | test("MyBEEntry"))' <(head -n1 "$1")
	else
		check "pg$M: the wait's query id is pg_stat_statements' ($want): $(head -n1 "$1" | jq -c '[.pg.state, .pg.query_id]')" \
			jqe --arg q "$want" '.pg.query_id == $q and .pg.state == "active" and $q != ""' <(head -n1 "$1")
	fi
}

# --- one version: its server, its waits, compared
version() {
	local opts=(shared_buffers=16MB deadlock_timeout=10s autovacuum=off
		shared_preload_libraries=pg_stat_statements)
	R=$(pg_root_name "$M") D=$E2E_DIR/pg$M
	mkdir -p "$D"
	[ "$M" -ge 18 ] && opts+=(io_method=worker)
	if ! pgroot_start "$R" "$M" "${opts[@]}"; then
		not_ok "pg$M: the server starts in its root, own mount and pid namespaces"
		return
	fi
	ok "pg$M: the server starts in its root, own mount and pid namespaces (postmaster ${PGR_PM[$R]})"
	pgroot_sql "$R" -c "create table t (id int primary key, x int)" \
		-c "insert into t select g, g from generate_series(1, 1000) g" -c "create table w (v int)" \
		-c "create table big (id int, pad text)" \
		-c "insert into big select g, repeat('x', 200) from generate_series(1, 100000) g" \
		-c "vacuum analyze big" -c "checkpoint" -c "create extension pg_stat_statements" >/dev/null

	# pgoff traces the cluster: its version, its port
	local cl
	CL=
	WAIT_STEP=0.1 wait_for 5 traces_cluster
	cl=$CL
	check "pg$M: pgoffd traces the cluster, version $M, port ${PGR_PORT[$R]}" \
		jqe --arg v "$M" --argjson port "${PGR_PORT[$R]}" \
		'(.version | test("^" + $v + "([.]|beta|rc|devel)")) and .port == $port' <<<"${cl:-null}"
	note "  ps: ${cl:-no such cluster}"
	ROW=
	wait_for 5 probed
	check "pg$M: its binary, started after pgoffd, is probed: ${ROW:-$("$PGOFFCTL" --socket "$SOCK" status --json | jq -c .usdt_binaries)}" \
		[ -n "$ROW" ]

	# pg_sleep, once the watch has subscribed (each step waits until the
	# last one's watches are gone: "watchers N" counts them)
	wait_for 5 no_subscribers
	session "$D/sleep.out" -c "$(gate_sql sleep)" -c "select pg_sleep(2)"
	local row
	watch_then_open sleep 1 "$S_PID" 1s "$D/sleep.json"
	row=$(psa "$S_NSPID" "wait_event = 'PgSleep'")
	wait "$W_JOB"
	# (a stack, or the reason it has none: this VM's scheduler now and then
	# reports no switch back onto a CPU; test_runq)
	agrees "pg_sleep" "$D/sleep.json" "$row" '.kernel_wait == "poll" and ((.stack | length > 0) or
		(.stack_error // "" | startswith("not walked: the kernel reported no switch back")))'
	wait "$S_JOB"

	# a row lock: woken by the session that held it; its episode is
	# exact (the wait probes of the root's binary, which started after
	# pgoffd) and lasts what the waiter's own clock says the update did.
	# The holder keeps the row until both watches have subscribed, then
	# 1.5 s more.
	wait_for 5 no_subscribers
	member watch --view waits --min 500ms --json >"$D/lock-ep.json" 2>"$D/lock-ep.err" &
	local ep_job=$!
	watchers 1
	session "$D/holder.out" -c "begin" -c "update t set x = x where id = 1" -c "$(gate holder)" \
		-c "select pg_sleep(1.5)" -c "commit"
	local holder=$S_PID holder_job=$S_JOB
	psa "$S_NSPID" "state = 'idle in transaction' and query like 'update%'" >/dev/null
	session "$D/waiter.out" -c "select extract(epoch from clock_timestamp())" \
		-c "update t set x = x + 1 where id = 1" -c "select extract(epoch from clock_timestamp())"
	local waiter=$S_PID
	row=$(psa "$S_NSPID" "wait_event_type = 'Lock'")
	watch_then_open holder 2 "$S_PID" 500ms "$D/lock.json"
	wait "$W_JOB"
	agrees "row lock" "$D/lock.json" "$row" \
		".waker.pid == $holder and .waker.backend_type == \"client backend\" and (.stack | length > 0)"
	wait "$holder_job" "$S_JOB"
	exact_lock_wait "$waiter" "$ep_job"
	query_id_agrees "$D/lock.json" 'update t set x = x + $1 where id = $2'

	# an idle client: idle until the watch has subscribed, then 1.2 s more
	wait_for 5 no_subscribers
	session "$D/idle.out" -c "$(gate idle)" -c '\! sleep 1.2' -c "select 1"
	row=$(psa "$S_NSPID" "state = 'idle'")
	watch_then_open idle 1 "$S_PID" 1s "$D/idle.json"
	wait "$W_JOB"
	agrees "idle client" "$D/idle.json" "$row" '.wait == "poll" and .kernel_wait == "poll"'
	wait "$S_JOB"

	# a WAL flush, slowed by the cgroup's write throttle
	local inserts=()
	for _ in $(seq 10); do inserts+=(-c "insert into w values (1)"); done
	# (the inserts start once the backend is throttled and watched)
	wait_for 5 no_subscribers
	session "$D/wal.out" -c "$(gate wal)" "${inserts[@]}"
	echo "$S_PID" >"$VCG/cgroup.procs"
	watch_then_open wal 1 "$S_PID" 20ms "$D/wal.json" --type io
	row=$(psa "$S_NSPID" "wait_event_type = 'IO'")
	wait "$W_JOB"
	# a commit writes, then syncs: pg_stat_activity's sample and pgoff's
	# first long interval may each be either (WALSync before 17)
	agrees "WAL flush" "$D/wal.json" "$row" '.wait == "io" and .kernel_wait == "io"' \
		'$wet == "IO" and ($we | ascii_downcase | IN("walwrite", "walsync")) and
		.pg.wait_event_type == "IO" and (.pg.wait_event | ascii_downcase | IN("walwrite", "walsync"))'
	wait "$S_JOB"

	# ps, with a client backend in it (and 18's io workers)
	session "$D/ps-idle.out" -c "$(gate ps)"
	ps_agrees
	open_gate ps
	wait "$S_JOB"

	# before the cold read, which leaves 18 and later on io_uring
	[ "$M" -ge 14 ] && lwlock_episodes

	# a cold read
	if [ "$M" -ge 18 ]; then
		cold_read worker
		if pgroot_restart "$R" "${opts[@]/io_method=worker/io_method=io_uring}"; then
			ok "pg$M: io_method=io_uring starts here"
			# the new postmaster is found by the next scan
			wait_for 5 traces_cluster
			cold_read io_uring
		else
			not_ok "pg$M: io_method=io_uring starts here (io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled))"
			pgroot_restart "$R" "${opts[@]}"
		fi
	else
		cold_read sync
	fi

	[ "$M" -ge 17 ] && wait_events_known
	pgroot_stop "$R"
	check "pg$M: stopped, nothing of its root mounted on the host" \
		eval '! findmnt -rn -o TARGET | grep -q "^$PGOFF_ROOTS/$R/"'
}

for M in $VERSIONS; do
	[ "$M" = 15 ] || [ -f "$PGOFF_ROOTS/pg$M/.pgoff-root" ] || continue	# not_ok'd above
	t0=$SECONDS
	version
	note "pg$M: $((SECONDS - t0)) s"
done
