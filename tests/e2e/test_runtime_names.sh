#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# e2e-timeout: 1500 (it may build its test roots with debootstrap first)
# Wait event names a server makes up at run time, read from its shared
# memory, per cluster: for PostgreSQL 15, 17, 18 and 19 (Debian's, each
# run like a container from a root of its own, roots.sh; 15 is the
# host's, run the same way), a dblink call and
# a postgres_fdw scan of the server itself, whose remote side sleeps 2 s,
# are named as that server's pg_stat_activity names them during the
# wait (15 has no custom wait events: Extension), and are net or poll
# (never other); from 17, every Extension and InjectionPoint row of its
# pg_wait_events, read after the calls, is known to pgoff's ps for that
# cluster; pg_stat_statements' LWLock tranche, under contention, is named
# as pg_stat_activity names it.
#
# PGOFF_VERSIONS="18" runs some of them. Roots are built on first use
# (minutes each, cached in /var/cache/pgoff-tests/roots for 7 days).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roots.sh"
e2e_require
for c in debootstrap unshare chroot setpriv findmnt flock pgrep; do
	command -v "$c" >/dev/null || { not_ok "$c is needed (make deps)"; exit 1; }
done
e2e_setup

VERSIONS=${PGOFF_VERSIONS:-15 17 18 19}
names_cleanup() {
	local j
	pgroot_stop_all || not_ok "servers stopped and nothing left mounted under $PGOFF_ROOTS"
	for j in $(jobs -p); do [ "$j" = "${E2E_BROKER_PID:-}" ] || kill "$j" 2>/dev/null; done
	e2e_cleanup
}
trap names_cleanup EXIT
trap 'exit 130' INT TERM HUP

for M in $VERSIONS; do
	pg_root_ensure "$M" || not_ok "pg$M: its root file system could be built"
done
DUMP=$E2E_TOP/$PGOFF_BUILD/tests/pg_wait_names_dump

# every LWLock episode counts; no record (its subscription would widen
# the kernel's filter to every interval)
roots_unlocked e2e_start_broker --min-floor 1ns --record no || { not_ok "start pgoffd"; exit 1; }

# ps_cluster: $R's cluster as pgoff's ps shows it (CL)
ps_cluster() {
	CL=$(member ps --json | jq -c --argjson pm "${PGR_PM[$R]}" '.clusters[] | select(.postmaster_pid == $pm)')
	[ -n "$CL" ]
}

# remote_wait WHAT SQL: a session runs SQL, which waits for the server
# itself; pg_stat_activity is sampled for its Extension waits until it
# ends. pgoff's episode and interval of that wait (1 s or more) name it as
# the samples mostly did, and say net or poll.
remote_wait() {
	local what=$1 sql=$2 f=$D/$1 nspid pid job wjob top got
	member watch --view both --pg-wait Extension --min 1s --json --count 2 --timeout 30s \
		>"$f.json" 2>"$f.err" &
	wjob=$!
	watchers 1
	pgroot_sql "$R" -c "select pg_backend_pid()" -c "$sql" >"$f.out" 2>&1 &
	job=$!
	WAIT_STEP=0.01 wait_for 10 test -s "$f.out"
	nspid=$(head -n1 "$f.out")
	pid=$(hostpid "$nspid")
	: >"$f.psa"
	sampled_until_done() {
		pgroot_sql "$R" -c "select wait_event_type || ':' || wait_event from pg_stat_activity
			where pid = $nspid and wait_event_type = 'Extension'" >>"$f.psa" 2>/dev/null
		gone "$job"
	}
	WAIT_STEP=0.02 wait_for 20 sampled_until_done
	wait "$job" || note "  $what: psql said $(tail -c 300 "$f.out")"
	wait "$wjob"
	top=$(sort "$f.psa" | uniq -c | sort -rn | head -n1 | sed -E 's/^ *[0-9]+ //')
	note "  $what (backend $pid): pg_stat_activity sampled $(sort "$f.psa" | uniq -c | tr -s ' \n' ' ')"
	got=$(jq -c '{type, wait, kernel_wait, t: .pg.wait_event_type, e: .pg.wait_event, pid}' "$f.json" | tr '\n' ' ')
	check "pg$M: $what: pgoff's episode and interval name the wait as pg_stat_activity did (${top:-nothing}): $got" \
		jqe -s --arg top "$top" --argjson pid "${pid:-0}" '
			[.[] | select(.pid == $pid and (.pg.wait_event_type + ":" + .pg.wait_event) == $top)] |
			(map(.type) | sort) == ["episode", "offcpu"]' "$f.json"
	check "pg$M: $what: its wait is net or poll, never other" \
		jqe -s 'length == 2 and all(.[]; .wait == "net" or .wait == "poll") and
			all(.[] | select(.type == "offcpu"); .kernel_wait == "net" or .kernel_wait == "poll")' "$f.json"
	[ -s "$f.json" ] || note "  watch said: $(head -c 300 "$f.err")"
}

# custom_events_known: every Extension and InjectionPoint row of the
# server's pg_wait_events is a built-in one of pgoff's table or one of
# the run-time names ps lists for the cluster
custom_events_known() {
	local live=$D/custom.txt known=$D/known.txt missing
	pgroot_sql "$R" -c "select type || ':' || name from pg_wait_events
		where type in ('Extension', 'InjectionPoint') order by 1" >"$live"
	"$DUMP" "$M" 2>/dev/null | grep -E '^(Extension|InjectionPoint):' >"$known"
	all_listed() {
		ps_cluster || return 1
		missing=$(jq -r '.run_time_wait_events[]?' <<<"$CL" | cat "$known" - | sort -u |
			comm -23 <(sort -u "$live") -)
		[ -z "$missing" ]
	}
	# ps asks for a read; its reply is made once a second at most
	wait_for 5 all_listed
	check "pg$M: every one of the $(wc -l <"$live") Extension and InjectionPoint rows of pg_wait_events is known to ps ($(grep -c . <<<"$missing") not): $(tr '\n' ' ' <"$live")" \
		[ -s "$live" -a -z "$missing" ]
	note "  ps: $(jq -c '{run_time_names, run_time_wait_events, run_time_names_missing}' <<<"${CL:-null}")"
}

# pgss_tranche: pg_stat_statements' LWLock, contended (one session resets
# it in a loop, others make statements it must enter again), sampled in
# pg_stat_activity; pgoff names the waits on it as the samples do
pgss_tranche() {
	local f=$D/pgss jobs=() name
	printf 'select pg_stat_statements_reset();\n' >"${PGR_DIR[$R]}/reset.sql"
	printf 'select 1;\nselect 2 + 2;\nselect now();\nselect current_user;\n' >"${PGR_DIR[$R]}/q.sql"
	chmod 0644 "${PGR_DIR[$R]}/reset.sql" "${PGR_DIR[$R]}/q.sql"
	member watch --view waits --pg-wait LWLock --min 1ns --json >"$f.json" 2>"$f.err" &
	local wjob=$!
	watchers 1
	# for 6 s: they end on their own (they run in the root, chrooted)
	local pgbench=(_pgr_run "$R" "${PGR_BIN[$R]}/pgbench" -n -h "${PGR_SOCK_IN[$R]}"
		-p "${PGR_PORT[$R]}" -U postgres -T 6 postgres)
	"${pgbench[@]}" -c 2 -f "${PGR_SOCK_IN[$R]}/reset.sql" >"$f.reset.log" 2>&1 &
	jobs+=($!)
	"${pgbench[@]}" -c 6 -j 2 -f "${PGR_SOCK_IN[$R]}/q.sql" >"$f.q.log" 2>&1 &
	jobs+=($!)
	# sampled every millisecond or so for 5.5 s from one session (a new
	# psql every few ms caught none in one run of 18,591 such waits): a
	# COMMIT a sample, as pg_stat_activity is read once a transaction
	pgroot_sql "$R" -c "create temp table pgss_seen (w text)" \
		-c "do \$\$ declare t timestamptz := clock_timestamp(); begin
			while clock_timestamp() < t + interval '5.5 s' loop
				insert into pgss_seen select wait_event from pg_stat_activity
				where wait_event_type = 'LWLock' and wait_event ilike '%statements%';
				commit;
				perform pg_sleep(0.001);
			end loop; end \$\$" \
		-c "select w from pgss_seen" >"$f.psa" 2>"$f.psa.err"
	wait "${jobs[@]}"
	sleep 0.2	# the last episodes reach the watcher within its read interval
	kill "$wjob"; wait "$wjob" 2>/dev/null
	name=$(sort "$f.psa" | uniq -c | sort -rn | head -n1 | sed -E 's/^ *[0-9]+ //')
	note "  pg_stat_statements' lock: pg_stat_activity sampled $(sort "$f.psa" | uniq -c | tr -s ' \n' ' ') $(head -c 300 "$f.psa.err")"
	note "  pgoff's LWLock episodes by name: $(jq -r '.pg.wait_event' "$f.json" | sort | uniq -c | sort -rn | head -n 8 | tr -s ' \n' ' ')"
	check "pg$M: pg_stat_statements' LWLock is named as pg_stat_activity names it (${name:-never sampled})" \
		jqe -s --arg n "$name" '$n != "" and any(.[]; .pg.wait_event == $n and .pg.wait_event_type == "LWLock")' "$f.json"
	check "pg$M: no LWLock episode of an extension's tranche is left as \"extension\" or a raw id" \
		jqe -s '(length > 0) and all(.[]; .pg.wait_event != "extension" and (.pg.wait_event | test("^class ") | not))' "$f.json"
}

version() {
	R=$(pg_root_name "$M") D=$E2E_DIR/pg$M
	mkdir -p "$D"
	if ! pgroot_start "$R" "$M" shared_preload_libraries=pg_stat_statements autovacuum=off; then
		not_ok "pg$M: the server starts in its root"
		return
	fi
	local sock=${PGR_SOCK_IN[$R]} port=${PGR_PORT[$R]}
	pgroot_sql "$R" -c "create extension dblink" -c "create extension postgres_fdw" \
		-c "create extension pg_stat_statements" \
		-c "create server loopback foreign data wrapper postgres_fdw
			options (host '$sock', port '$port', dbname 'postgres')" \
		-c "create user mapping for postgres server loopback options (user 'postgres')" \
		-c "create view slow as select pg_sleep(2)::text as x" \
		-c "create foreign table slow_ft (x text) server loopback options (table_name 'slow')" \
		>"$D/setup.log" 2>&1 || note "  setup: $(head -c 400 "$D/setup.log")"
	CL=
	# found within a second's scan, its names read right after
	names_read() { ps_cluster && jqe '.run_time_names_missing == null' <<<"$CL"; }
	WAIT_STEP=0.1 wait_for 5 names_read
	check "pg$M: pgoffd traces the cluster and has read its run-time names: ${CL:-none}" \
		jqe '.run_time_names_missing == null and (.run_time_wait_events | type) == "array"' <<<"${CL:-null}"

	remote_wait dblink "select * from dblink('host=$sock port=$port dbname=postgres user=postgres',
		'select pg_sleep(2)') as t(x text)"
	remote_wait postgres_fdw "select * from slow_ft"
	[ "$M" -ge 17 ] && custom_events_known	# no pg_wait_events before
	pgss_tranche
	pgroot_stop "$R"
}

for M in $VERSIONS; do
	[ "$M" = 15 ] || [ -f "$PGOFF_ROOTS/pg$M/.pgoff-root" ] || continue	# not_ok'd above
	t0=$SECONDS
	version
	note "pg$M: $((SECONDS - t0)) s"
done
