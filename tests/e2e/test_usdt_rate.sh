#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# usdt-max-rate, a budget for PostgreSQL's LWLock wait probes: fast
# LWLock waits (TPC-B at scale 1 with 12 clients and the smallest
# shared_buffers: one hot page of branches) go over a low
# usdt-max-rate; the cluster's LWLock probes are then not read (counted,
# logged, in status and ps), its LWLock episodes fall back to inferred
# bounds while lock waits stay exact; after usdt-quiet (20 s here, a
# minute by default) the probes are read again, and a reload to 0 (no limit) keeps them so under the
# same load.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start shared_buffers=128kB max_connections=30 autovacuum=off ||
	{ not_ok "start PostgreSQL 15"; exit 1; }
pgbench -i -s 1 -q >"$E2E_DIR/init.out" 2>&1 || { not_ok "pgbench -i"; exit 1; }
printf "usdt-max-rate = 100\nusdt-quiet = 20s\n" >"$E2E_DIR/pgoffd.conf"
e2e_start_broker -c "$E2E_DIR/pgoffd.conf" --record no --min-floor 0 \
	--ringbuf-size 67108864 --queue-bytes 67108864 || { not_ok "start pgoffd"; exit 1; }
st() { "$PGOFFCTL" --socket "$SOCK" status --json; }
probed() { st | jq -e '[.usdt_binaries[]? | select(.probed)] | length > 0' >/dev/null; }
wait_for 10 probed
check "PostgreSQL's wait probes are linked, usdt_max_rate 100, usdt_quiet_s 20" \
	jqe '.usdt_max_rate == 100 and .usdt_quiet_s == 20 and ([.usdt_binaries[] | select(.probed)] | length > 0)' <<<"$(st)"
PM=$(head -n1 "$PGDATA_DIR/postmaster.pid")
ps_cluster() { "$PGOFFCTL" --socket "$SOCK" ps --json | jq -c --argjson p "$PM" '.clusters[] | select(.postmaster_pid == $p)'; }

# load SECONDS FILE: TPC-B with 12 clients, every wait of the run in FILE
load() {
	member watch --view waits --min 0 --json --timeout 300s >"$2" 2>"$2.err" &
	LOAD_WATCH=$!
	watchers 1
	pgbench -c 12 -j 2 -T "$1" -n >"$2.pgbench" 2>&1
	sleep 1		# the last episodes on their way
	unwatch "$LOAD_WATCH"
}
# episodes FILE CLASS BOUNDARY: how many
episodes() {
	jq -s --arg c "$2" --arg b "$3" '[.[] | select(.type == "episode" and
		.pg.wait_event_type == $c and .boundary == $b)] | length' "$1"
}

# --- over the rate: paused
c0=$(st | jq .counters)
load 6 "$E2E_DIR/over.json"
s=$(st)
note "pgbench: $(grep '^tps' "$E2E_DIR/over.json.pgbench"); status: $(jq -c '{usdt_max_rate, usdt_lwlock_paused_clusters, usdt: (.counters | with_entries(select(.key | startswith("usdt"))))}' <<<"$s")"
note "ps: $(ps_cluster | jq -c .usdt_lwlock)"
check "the cluster went over the rate and its LWLock probes are paused (status)" \
	jqe '.usdt_lwlock_paused_clusters == 1 and .counters.usdt_lwlock_paused > 0' <<<"$s" ||
	note "pgoffd's log: $(tail -n 5 "$E2E_DIR/pgoffd.log")"
check "... ps says so, with the second's count over the rate" \
	jqe '.usdt_lwlock.paused and .usdt_lwlock.pauses == 1 and .usdt_lwlock.last_over_per_second > 100 and .usdt_lwlock.paused_for_s <= 21' <<<"$(ps_cluster)"
check "... and pgoffd logged it" grep -q "over usdt-max-rate 100: its LWLock wait probes are not read" "$E2E_DIR/pgoffd.log"
lw_exact=$(episodes "$E2E_DIR/over.json" LWLock exact)
lw_inferred=$(episodes "$E2E_DIR/over.json" LWLock inferred)
lock_exact=$(episodes "$E2E_DIR/over.json" Lock exact)
lock_inferred=$(episodes "$E2E_DIR/over.json" Lock inferred)
note "episodes: LWLock exact $lw_exact, inferred $lw_inferred; Lock exact $lock_exact, inferred $lock_inferred"
# a wait that never left the CPU has an exact episode, never an inferred one
hits=$(( $(st | jq .counters.usdt_lwlock_wait_start) - $(jq .usdt_lwlock_wait_start <<<"$c0") ))
paused=$(( $(st | jq .counters.usdt_lwlock_paused) - $(jq .usdt_lwlock_paused <<<"$c0") ))
check "while paused, no LWLock wait is exact: exact episodes ($lw_exact) are the hits read before ($hits), the $paused paused ones are not" \
	[ "$lw_exact" -le $((hits + 2)) -a "$paused" -gt "$hits" ]
check "... the LWLock waits that left the CPU have inferred episodes ($lw_inferred)" \
	[ "$lw_inferred" -gt 100 ]
check "... lock waits stay exact ($lock_exact exact, $lock_inferred not)" \
	[ "$lock_exact" -gt 0 -a "$lock_inferred" -le $((lock_exact / 20)) ]

# --- usdt-quiet passes: read again
resumed() { grep -q "its LWLock wait probes are read again (usdt-quiet passed)" "$E2E_DIR/pgoffd.log"; }
wait_for 35 resumed
check "after usdt-quiet (20 s) the probes are read again, logged" resumed
check "... status and ps say so" \
	bash -c "[ \"\$(\"$PGOFFCTL\" --socket '$SOCK' status --json | jq .usdt_lwlock_paused_clusters)\" = 0 ]" &&
	check "... (ps)" jqe '(.usdt_lwlock.paused | not) and .usdt_lwlock.pauses == 1' <<<"$(ps_cluster)"

# --- usdt-max-rate 0 by a reload: the same load stays exact
printf "usdt-max-rate = 0\nusdt-quiet = 20s\n" >"$E2E_DIR/pgoffd.conf"
kill -HUP "$E2E_BROKER_PID"
reloaded() { [ "$(st | jq .usdt_max_rate)" = 0 ]; }
wait_for 10 reloaded
check "a reload sets usdt-max-rate 0" reloaded
load 4 "$E2E_DIR/free.json"
lw_exact=$(episodes "$E2E_DIR/free.json" LWLock exact)
lw_inferred=$(episodes "$E2E_DIR/free.json" LWLock inferred)
note "without a limit: LWLock exact $lw_exact, inferred $lw_inferred; ps: $(ps_cluster | jq -c .usdt_lwlock)"
check "without a limit, the LWLock episodes are exact again ($lw_exact exact, $lw_inferred not)" \
	[ "$lw_exact" -gt 0 -a "$lw_inferred" -le $((lw_exact / 10)) ]
check "... and no new pause" jqe '(.usdt_lwlock.paused | not) and .usdt_lwlock.pauses == 1' <<<"$(ps_cluster)"
e2e_stop_broker TERM
exit "$TAP_FAILED"
