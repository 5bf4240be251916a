#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Slow, stuck and many clients: a client that stops reading loses events
# and is cut off without slowing a watcher beside it; 64 subscribers,
# clients killed mid-stream and a connect/disconnect storm leave the
# broker up, with bounded memory and no leaked fd; one user cannot take
# every slot.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
# stuck-timeout in the file, so that a reload can change it
echo "stuck-timeout = 2" >"$E2E_DIR/pgoffd.conf"
e2e_start_broker -c "$E2E_DIR/pgoffd.conf" --queue-bytes 524288 --max-clients 80 \
	--max-clients-per-user 32 || { not_ok "start pgoffd"; exit 1; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$E2E_BROKER_PID/status"; }
# not counted: the recorder's segment file, opened at its first record
fds() { find "/proc/$E2E_BROKER_PID/fd" -mindepth 1 ! -lname "$E2E_DIR/state/*" | wc -l; }
# (once steady: the connection of the status that e2e_start_broker asked
# may still be open in pgoffd for a loop round, and counted)
fds_before=
fds_steady() { local n; n=$(fds); [ "$n" = "$fds_before" ]; local r=$?; fds_before=$n; return $r; }
WAIT_STEP=0.2 wait_for 5 fds_steady

# load: many short waits, several thousand events a second
load_start() {
	LOAD_PIDS=()
	for _ in 1 2 3 4; do
		( while :; do sql -c "select pg_sleep(0.0005) from generate_series(1, 2000)" >/dev/null 2>&1; done ) &
		LOAD_PIDS+=($!)
	done
}
# (reaped pids are forgotten: the trap below must not signal a reused one)
load_stop() {
	[ ${#LOAD_PIDS[@]} -gt 0 ] || return 0
	kill "${LOAD_PIDS[@]}" 2>/dev/null; wait "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
}
# (a test killed midway must not leave its loops running psql for ever
# against a cluster that is gone)
LOAD_PIDS=()
trap 'load_stop; e2e_cleanup' EXIT
load_start

# a client that never reads: pgoffctl blocked on a full pipe (the reader
# outlives the waits below; it is killed after them)
member watch --view intervals --min 100us --json | sleep 300 &
stuck_job=$!
# a watcher beside it, which reads, until the stuck client is cut off
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 100us --json \
	>"$E2E_DIR/watcher.json" 2>"$E2E_DIR/watcher.err" &
watcher=$!
watchers 2 || note "the stuck client and the watcher did not both subscribe"
got() { grep -c '"type":"offcpu"' "$E2E_DIR/watcher.json"; }
# the stuck client's queue fills (--queue-bytes, 512 KiB) at the load's
# pace, and --stuck-timeout (2 s) later it is cut off: how long that
# takes is the machine's; the events the watcher got in between are
# pgoffd's (a loop that waited on the stuck client would send none)
queue_full() { [ "$(member status --json | jq .counters.client_queue_full)" -gt 0 ]; }
wait_for 30 queue_full || note "no client queue was full in 30 s"
rss=$(rss_kb)
n_full=$(got)
cut_off() { grep -q "disconnected (stopped reading)" "$E2E_DIR/pgoffd.log"; }
wait_for 30 cut_off
n_cut=$(got)
rss_cut=$(rss_kb); [ "$rss_cut" -gt "$rss" ] && rss=$rss_cut
status=$(member status --json)
watching=false; kill -0 "$watcher" 2>/dev/null && watching=true
kill "$watcher"; wait "$watcher" 2>/dev/null
note "watcher got $(got) events, $n_full when a queue was first full, $n_cut when the stuck client was cut off; broker RSS ${rss} kB; $(jq -c .counters <<<"$status")"
check "a watcher beside a stuck client still gets its events ($n_full -> $n_cut while it was stuck)" \
	bash -c "$watching && [ $n_cut -gt $n_full ]"
check "the stuck client lost events, counted as client_queue_full" \
	[ "$(jq .counters.client_queue_full <<<"$status")" -gt 0 ]
check "the stuck client was cut off after --stuck-timeout" cut_off
# ASan's shadow memory and quarantine (16 MiB, see lib.sh) add their share
max_rss=$((64 * 1024)); [ -n "${PGOFF_SANITIZE:-}" ] && max_rss=$((128 * 1024))
check "broker RSS stays bounded under load with a stuck client (${rss} kB < $((max_rss / 1024)) MiB)" \
	[ "$rss" -lt "$max_rss" ]
load_stop
{ pkill -f "pgoffctl --socket $SOCK"; kill "$stuck_job"; wait "$stuck_job"; } 2>/dev/null
# a client that has exited is gone once pgoffd has read its end of the
# connection, a round or more later: the 32 member watchers below must
# not find one of the user's still counted. (The asker is root, whose
# own connection, closed as it returns, counts for no test user.)
clients=
only_the_asker() { clients=$("$PGOFFCTL" --socket "$SOCK" status --json | jq .clients); [ "$clients" = 1 ]; }
wait_for 10 only_the_asker || note "clients still counted before the 64 watchers: $clients"

# 64 subscribers from two users, events flowing (a lighter load: 64
# readers share two CPUs); half of them killed mid-stream. The 2 s
# stuck-timeout above was for the stuck client: 64 ASan readers on two
# CPUs can lag that long, and being cut off for it is right, but not
# what this part checks (CI's ASan run lost 5 of them so)
echo "stuck-timeout = 60" >"$E2E_DIR/pgoffd.conf"
kill -HUP "$E2E_BROKER_PID"
reloaded() { grep -q "SIGHUP: configuration reloaded" "$E2E_DIR/pgoffd.log"; }
wait_for 10 reloaded || note "pgoffd did not say it reloaded: $(tail -n 3 "$E2E_DIR/pgoffd.log")"
LOAD_PIDS=()
( while :; do sql -c "select pg_sleep(0.005) from generate_series(1, 200)" >/dev/null 2>&1; done ) &
LOAD_PIDS+=($!)
watchers_pids=()
for i in $(seq 32); do
	"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 100us --json \
		>/dev/null 2>"$E2E_DIR/w64-m$i.err" &
	watchers_pids+=($!)
	setpriv --reuid="$E2E_QUERIER" --regid="$(id -g "$E2E_QUERIER")" --init-groups -- \
		"$PGOFFCTL" --socket "$SOCK" watch --view intervals --min 100us --json \
		>/dev/null 2>"$E2E_DIR/w64-q$i.err" &
	watchers_pids+=($!)
done
# 64 clients starting at once on two CPUs (ASan builds start slowly)
watchers 64 60
counts=$("$PGOFFCTL" --socket "$SOCK" status --json | jq -c '[.clients, .subscribers]')
check "64 subscribers are served at once ([clients, subscribers] = $counts: the asker does not subscribe)" \
	[ "$counts" = "[65,64]" ] ||
	note "watchers alive: $(for p in "${watchers_pids[@]}"; do kill -0 "$p" 2>/dev/null && echo x; done | wc -l) of ${#watchers_pids[@]};" \
		"what the others said: $(cat "$E2E_DIR"/w64-*.err | sort | uniq -c | head -c 600)"
member watch --count 1 >/dev/null 2>"$E2E_DIR/per-user.err"
check "a 33rd connection of one user is refused: too many per user" \
	grep -q "at most 32 connections per user" "$E2E_DIR/per-user.err"
{ kill -KILL "${watchers_pids[@]:0:32}"; wait "${watchers_pids[@]:0:32}"; } 2>/dev/null
sleep 1
kill -TERM "${watchers_pids[@]:32}"
wait "${watchers_pids[@]}" 2>/dev/null
load_stop

# a connect/disconnect storm
for _ in $(seq 20); do
	storm=()
	for _ in $(seq 10); do member status >/dev/null 2>&1 & storm+=($!); done
	wait "${storm[@]}"	# not a bare wait: pgoffd is a job of this shell too
done
check "pgoffd is up after subscribers were killed and a storm of 200 connections" \
	kill -0 "$E2E_BROKER_PID"
# a client that has exited is gone once pgoffd has read its end of the
# connection, a round or more later (the asker's own one included)
fds_as_before() { [ "$(fds)" = "$fds_before" ]; }
wait_for 5 only_the_asker
check "no client is left behind (clients = ${clients:-?}, want 1: the asker)" [ "$clients" = 1 ]
wait_for 5 fds_as_before
check "no fd leaked ($(fds) open now, $fds_before before)" fds_as_before ||
	note "pgoffd's fds: $(find "/proc/$E2E_BROKER_PID/fd" -mindepth 1 -printf '%l ' | head -c 600)"
